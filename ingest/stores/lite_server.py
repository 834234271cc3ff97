"""One Milvus Lite server per data directory, shared by every kbflow process that uses it.

Milvus Lite admits one process per data directory (a flock on its LOCK file), so with the
in-process default a search failed while an ingest held the vectors, and the reverse. Instead,
the first kbflow process that needs the vectors starts this module as a detached process. It
serves the directory over gRPC on a free localhost port and records the port in
`milvus.server.json` beside it. Every other process (CLI searches, the search API, the next
ingest) connects to that port.

Users hold a shared flock on `milvus.users.lock` while they have the store open. The server
exits once it can take that lock exclusively and has held it for `idle_seconds`, that is, once
no process has used it for that long. The kernel releases a dead user's lock, so a killed
client never keeps the server alive, and the server never outlives its last user by more than
the idle window. Starting takes `milvus.start.lock`, so concurrent first users start one server.

    python -m ingest.stores.lite_server DB_PATH IDLE_SECONDS   (run by `lease`, not by hand)
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

STATE = "milvus.server.json"
USERS = "milvus.users.lock"
STARTING = "milvus.start.lock"
LOG = "milvus.server.log"


class LiteServerError(RuntimeError):
    """The shared Milvus Lite server could not be started."""


class Lease:
    """A user's hold on the shared server: its URI, kept alive until `close`."""

    def __init__(self, uri: str, fd: int) -> None:
        self.uri = uri
        self._fd: int | None = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the shared lock
            self._fd = None


def lease(db_path: Path, idle_seconds: float, start_timeout: float = 120) -> Lease:
    """The URI of the server of `db_path` (started if none runs), held until the lease closes."""
    db_path = db_path.resolve()
    folder = db_path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / USERS, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while an idle server is shutting down
        uri = _running(db_path)
        if uri is None:
            starting = os.open(folder / STARTING, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(starting, fcntl.LOCK_EX)
                uri = _running(db_path) or _start(db_path, idle_seconds, start_timeout)
            finally:
                os.close(starting)
        return Lease(uri, fd)
    except BaseException:
        os.close(fd)
        raise


def _running(db_path: Path) -> str | None:
    """The URI of a live server of exactly this directory (a copied data directory's state file
    names the original's server, which must not be used)."""
    try:
        state = json.loads((db_path.parent / STATE).read_text())
        if state["db"] != str(db_path):
            return None
        os.kill(int(state["pid"]), 0)
        with socket.create_connection(("127.0.0.1", int(state["port"])), timeout=2):
            return f"http://127.0.0.1:{int(state['port'])}"
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _start(db_path: Path, idle_seconds: float, timeout: float) -> str:
    folder = db_path.parent
    (folder / STATE).unlink(missing_ok=True)
    with open(folder / LOG, "ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "ingest.stores.lite_server", str(db_path), str(idle_seconds)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        uri = _running(db_path)
        if uri is not None:
            return uri
        if child.poll() is not None:
            tail = (folder / LOG).read_text(errors="replace").strip().splitlines()[-1:]
            raise LiteServerError(f"Milvus Lite server for {db_path} exited with code "
                                  f"{child.returncode}: {' '.join(tail)} (log: {folder / LOG})")
        time.sleep(0.05)
    child.kill()
    raise LiteServerError(f"Milvus Lite server for {db_path} did not start within {timeout} s")


def serve(db_path: Path, idle_seconds: float) -> None:
    """Serve `db_path` until no user has held the users lock for `idle_seconds` (or SIGTERM)."""
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)  # probes of unimplemented calls
    from milvus_lite.adapter.grpc.server import start_server_in_thread

    server, db, port = start_server_in_thread(str(db_path), host="127.0.0.1", port=0)
    state = db_path.parent / STATE
    partial = state.with_suffix(".tmp")
    partial.write_text(json.dumps({"pid": os.getpid(), "port": port, "db": str(db_path)}))
    partial.replace(state)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    users = os.open(db_path.parent / USERS, os.O_RDWR | os.O_CREAT, 0o644)
    idle_since: float | None = None
    while not stop.wait(min(1.0, idle_seconds / 4)):
        try:
            fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            idle_since = None
            continue
        now = time.monotonic()
        if idle_since is not None and now - idle_since >= idle_seconds:
            break  # keep the lock: a new user waits until this server is gone, then starts one
        if idle_since is None:
            idle_since = now
        fcntl.flock(users, fcntl.LOCK_UN)
    try:
        if json.loads(state.read_text()).get("pid") == os.getpid():
            state.unlink()
    except (OSError, ValueError):
        pass
    server.stop(grace=2).wait()
    db.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), float(sys.argv[2]))
