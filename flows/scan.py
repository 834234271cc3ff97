"""What a re-scan of a folder touches, without Prefect: flows/ingest.py's flows and the CLI's
unchanged re-run (flows/unchanged.py, which must not pay for importing Prefect) share it."""

from __future__ import annotations

from pathlib import Path

from ingest.manifest import ManifestStore
from ingest.models import State
from ingest.parse import walk
from ingest.pipeline import Failure


def folder_scan(manifest: ManifestStore, root: Path
                ) -> tuple[list[tuple[Path, Path]], list[str], list[Failure]]:
    """What a re-scan of `root` touches: its files, each with the folder its doc id derives
    from; the files ingested from it that are gone (to tombstone); what the walk refused."""
    kept = manifest.documents(under=str(root)) if root.is_dir() else []
    gone = [r.source_path for r in kept if r.state != State.TOMBSTONED
            and not any(Path(p).exists() for p in [r.source_path, *r.duplicate_paths])]
    found, links = walk(root)
    files = [(path, root if root.is_dir() else path.parent) for path in found]
    return files, gone, [Failure.refused("source", reason, link) for link, reason in links]
