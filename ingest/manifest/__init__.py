"""The manifest: what each document version is, which state it reached, and its published chunks."""

from ingest.manifest.records import ChunkTrace, DocumentRecord, ManifestExport, RunRecord
from ingest.manifest.store import ManifestStore

__all__ = ["ChunkTrace", "DocumentRecord", "ManifestExport", "ManifestStore", "RunRecord"]
