"""One writer per data directory: ingest, rebuild, delete and rollback take `<data dir>/writer.lock`
before they do any work; a second writer is refused at once with who holds it.

An advisory flock, so the kernel releases it when its holder dies (SIGKILL included): a crashed
run never leaves a stale lock. Readers (search, status, the search API) never take it. A process
that holds it may take it again (a rebuild flow run from the CLI, which took it first): so holding
it proves that no other writer of the data directory is alive.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = "writer.lock"
_held: set[Path] = set()  # the data directories this process holds the lock of


class DataDirBusy(RuntimeError):
    """Another process is writing this data directory."""


@contextmanager
def writer_lock(data_dir: Path, what: str) -> Iterator[None]:
    """Hold the data directory's writer lock for `what` (shown to a refused second writer)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    key = data_dir.resolve()
    if key in _held:
        yield
        return
    fd = os.open(data_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another process"
            raise DataDirBusy(f"{data_dir} is busy: {holder}; try again when it has finished")\
                from None
        os.ftruncate(fd, 0)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        os.pwrite(fd, f"kbflow {what} (pid {os.getpid()}) since {stamp}\n".encode(), 0)
        _held.add(key)
        try:
            yield
        finally:
            _held.discard(key)
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the last descriptor releases the flock
