# Set-up and entry points. `make ingest` and `make test` work on a fresh machine: they create
# .venv and install kbflow first (uv, from PyPI; its cache makes later installs take seconds).

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kbflow-installed

.PHONY: install ingest test lint

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e ".[dev]"
	touch $(STAMP)

ingest: $(STAMP)
	$(BIN)/kbflow ingest sample_docs/

# Tests run against real Elasticsearch, Neo4j and Milvus servers: start them (idempotent; they
# stay up for the next run, `deploy/local/engines.sh stop` ends them).
test: $(STAMP)
	$(BIN)/ruff check .
	deploy/local/engines.sh start
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
