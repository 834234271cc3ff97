"""The manifest: what each document version is, which state it reached, and its published chunks."""

from ingest.manifest.store import DocumentRecord, ManifestExport, ManifestStore

__all__ = ["DocumentRecord", "ManifestExport", "ManifestStore"]
