"""An unchanged re-run without Prefect's temporary server (issue #43).

`kbflow ingest FOLDER` over a folder that has not changed parses, embeds and writes nothing: its
own work is one read and hash per file (about 5 ms), while starting Prefect's temporary server
costs 15-30 s (importing prefect.server, then waiting for its uvicorn subprocess), more under
load, and importing Prefect alone 3-15 s. So when the environment names no Prefect API
(PREFECT_API_URL) and a read-only look finds nothing to do, the CLI runs the same pipeline in
this process (ingest.pipeline.InProcess steps) without importing Prefect: the run is recorded in
the manifest's run log and its summary is the one the flow returns.

The look is a gate, not the judge: the pipeline still decides every file itself, so a file that
changes between the look and the run is still ingested, only without Prefect tasks around its
steps. Anything the look is unsure of (a file it cannot read, a refused link, a file gone, a
tombstone, a pending cleanup) sends the run through Prefect as before.
"""

from __future__ import annotations

import logging
from pathlib import Path
from uuid import uuid4

from flows.scan import folder_scan
from ingest.chunk import chunk_params
from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.parse.roots import OutsideRoots, resolve_under
from ingest.pipeline import IngestSummary, InProcess, RunContext, run_pipeline
from ingest.pipeline.prepare import MIN_DUPLICATE_BYTES, Places, published_as_is, read_at
from ingest.scopes import TenantTree

log = logging.getLogger(__name__)


def nothing_to_do(settings: Settings, source: Path) -> bool:
    """Whether ingesting `source` would only hash its files: an ingested folder, no file gone
    and no cleanup pending, and every file published (READY, not deleted) from the same bytes
    by today's parser, parse settings, chunker and model, at the same path and root, or an
    identical copy of such a file (ingested once)."""
    root = source.resolve()
    try:
        if settings.document_roots:
            resolve_under(root, settings.document_roots)
    except OutsideRoots:
        return False  # the flow refuses it with its reason
    with ManifestStore(settings.manifest) as manifest:
        if manifest.generation is None or manifest.pending_cleanups():
            return False
        files, gone, refused = folder_scan(manifest, root)
        if gone or refused or not files:
            return False
        look = _Look(settings, manifest)
        return all(look.unchanged(path, folder) for path, folder in files)


class _Look:
    """prepare.select's questions, asked without writing anything."""

    def __init__(self, settings: Settings, manifest: ManifestStore) -> None:
        self.settings, self.manifest = settings, manifest
        self.places = Places(manifest)
        self.scopes = TenantTree.load(settings)
        self.chunker_version = chunk_params(settings).version
        self.hashes: set[str] = set()

    def unchanged(self, path: Path, folder: Path) -> bool:
        try:
            where = self.places.of(path, folder)
            meta, data = read_at(self.settings, self.scopes, path, where)
        except Exception:  # noqa: BLE001 - a bad file: the flow fails it with its reason
            return False
        if len(data.strip()) >= MIN_DUPLICATE_BYTES:
            if meta.file_hash in self.hashes:
                return True  # a copy of a file of this run, which is ingested once
            self.hashes.add(meta.file_hash)
        source_path = str(path.resolve())
        key = (meta.doc_id, meta.version_id)
        if known := self.manifest.inferred_version(source_path, meta.file_hash):
            key = (known.doc_id, known.version_id)
        record = self.manifest.get(*key)
        return (record is not None
                and published_as_is(record, meta.file_hash, self.settings, self.chunker_version)
                and not self.manifest.is_tombstoned(*key)
                and (record.source_path, record.source_root) == (source_path, str(where.root)))


def ingest_here(settings: Settings, source: str) -> IngestSummary:
    """ingest_flow's run with its steps in this process and no flow run around it."""
    root = Path(source).resolve()
    with ManifestStore(settings.manifest) as manifest:
        files, gone, refused = folder_scan(manifest, root)
        ctx = RunContext(settings=settings, manifest=manifest, run_id=str(uuid4()),
                         steps=InProcess(), log=log, failures=refused)
        summary = run_pipeline(ctx, source, files, gone)
    log.info("%s into %s (no Prefect run: nothing to do): %s", source, summary.generation,
             summary.model_dump_json())
    return summary
