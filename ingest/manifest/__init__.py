"""The manifest: what each document version is, which state it reached, and its published chunks."""

from ingest.manifest.store import (
    ChunkTrace,
    DocumentRecord,
    ManifestExport,
    ManifestStore,
    RunRecord,
)

__all__ = ["ChunkTrace", "DocumentRecord", "ManifestExport", "ManifestStore", "RunRecord"]
