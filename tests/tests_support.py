"""Paths shared by tests."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = REPO / "sample_docs"
