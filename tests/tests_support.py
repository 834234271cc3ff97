"""Paths and helpers shared by tests."""

import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ingest.config import Settings
from ingest.lifecycle import open_generation
from ingest.manifest import ManifestStore
from ingest.parse import discover
from ingest.pipeline import InProcess, RunContext, run_pipeline
from ingest.pipeline.report import IngestSummary

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = REPO / "sample_docs"

# The PostgreSQL server that deploy/local/engines.sh starts (the servers profile's manifest).
POSTGRES_URL = os.environ.get("KBFLOW_PG_URL", "postgresql://kbflow@127.0.0.1:55432/kbflow")


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def ingest(settings: Settings, root: Path, run_id: str = "r1") -> IngestSummary:
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=run_id, steps=InProcess(),
                         log=logging.getLogger("tests"))
        return run_pipeline(ctx, str(root), [(path, root) for path in discover(root)])


def profile_settings(request: pytest.FixtureRequest, tmp_path: Path,
                     **fields: Any) -> Iterator[Settings]:
    """Settings of the profile `request.param` names: embedded files, or the servers under a
    fresh namespace with the manifest in a fresh PostgreSQL database, whose generation is
    dropped afterwards. A parametrized fixture yields from it."""
    if request.param == "embedded":
        yield Settings(data_dir=tmp_path / "data", **fields)
        return
    settings = Settings(data_dir=tmp_path / "data", profile="servers",
                        manifest_url=request.getfixturevalue("postgres_database"),
                        namespace=f"t{uuid.uuid4().hex[:10]}", **fields)
    yield settings
    drop_generation(settings)


def drop_generation(settings: Settings) -> None:
    """The stores of the manifest's generation dropped (a servers test's namespace)."""
    with ManifestStore(settings.manifest) as manifest:
        generation = manifest.generation
    if generation:
        stores = open_generation(settings, generation)
        stores.drop()
        stores.close()
