"""Paths and helpers shared by tests."""

import logging
import os
from pathlib import Path

from ingest.config import Settings
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
