"""Run an ingest (or a delete) in this process and SIGKILL it at a chosen point.

    python tests/crashing_run.py ingest STATE DATA_DIR SOURCE
    python tests/crashing_run.py delete cleanup DATA_DIR DOC_ID

The first dies right after the first document version enters STATE; the second between the
tombstone and the cleanup of a delete.
The kill is real (no exception handlers run, nothing is flushed), so the next run must recover
from whatever the stores and the manifest hold at that instant.
"""

from __future__ import annotations

import os
import signal
import sys

from flows.quiet import quiet


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    quiet()
    import ingest.lifecycle
    from ingest.config import Settings
    from ingest.manifest.store import ManifestStore
    from ingest.models import State

    mode, point, data_dir, target = sys.argv[1:5]
    if mode == "delete":
        ingest.lifecycle.cleanup_tombstones = lambda *_: die()
        ingest.lifecycle.delete_documents(Settings(data_dir=data_dir), [target], "deleted",
                                          "crash-run")
        return

    begin, advance, publish = ManifestStore.begin, ManifestStore.advance, ManifestStore.publish

    def begin_then_die(self, *args, **kwargs):
        begin(self, *args, **kwargs)
        if point == State.CREATED:
            die()

    def advance_then_die(self, doc_id, version_id, to, run_id):
        advance(self, doc_id, version_id, to, run_id)
        if point == to:
            die()

    def publish_then_die(self, *args, **kwargs):
        publish(self, *args, **kwargs)
        if point == State.READY:
            die()

    ManifestStore.begin = begin_then_die
    ManifestStore.advance = advance_then_die
    ManifestStore.publish = publish_then_die
    from flows.ingest import ingest_flow

    ingest_flow(target, data_dir)
    sys.exit(f"the run finished without reaching {point}")


if __name__ == "__main__":
    main()
