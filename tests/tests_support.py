"""Paths shared by tests."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = REPO / "sample_docs"

# The PostgreSQL server that deploy/local/engines.sh starts (the servers profile's manifest).
POSTGRES_URL = os.environ.get("KBFLOW_PG_URL", "postgresql://kbflow@127.0.0.1:55432/kbflow")
