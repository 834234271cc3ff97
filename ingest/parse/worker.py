"""Parsing under a time limit: a document is parsed in a child process that is killed when it
runs past the limit (a pathological PDF, OCR of a huge page), so the run goes on without it.

The child also runs under a memory limit (RLIMIT_DATA: the heap and every private writable
mapping, so numpy and ONNX buffers count; not the shared libraries): a document that would
need more fails with a reason instead of taking the machine's memory.

The child is spawned, not forked: the parent may run threads (Prefect, ONNX Runtime), and a
forked copy of a threaded process can deadlock. It is reused from one document to the next (it
keeps the OCR model loaded) and replaced after a timeout or a crash.
"""

from __future__ import annotations

import multiprocessing
import queue
import resource
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import TracebackType

from ingest.models import DocumentMeta, ParsedDocument
from ingest.parse.errors import ParseError
from ingest.parse.result import DEFAULT_LIMITS, ParseLimits

STARTUP_TIMEOUT_S = 120.0  # importing the parsers in a fresh process, on a busy machine
DEFAULT_MEMORY_MB = 3072  # OCR of a 200-dpi page peaks near 1 GB of data in the worker


class ParseWorker:
    """`with ParseWorker(timeout_s, limits) as worker: doc = worker.parse(meta, data)`;
    raises ParseError for a bad document, a timeout or a crashed parser."""

    def __init__(self, timeout_s: float, limits: ParseLimits = DEFAULT_LIMITS,
                 memory_mb: float = DEFAULT_MEMORY_MB) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.limits = limits
        self._lock = threading.Lock()
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    def parse(self, meta: DocumentMeta, data: bytes) -> ParsedDocument:
        with self._lock:
            conn = self._ready()
            try:
                conn.send((meta, data, self.limits))
            except OSError:  # the child died between documents
                self.close()
                raise ParseError("the parser process died before reading the document") from None
            if not conn.poll(self.timeout_s):
                self.close()
                raise ParseError(f"parsing took longer than {self.timeout_s:g} s "
                                 "(the parse_timeout_s setting)")
            try:
                status, value = conn.recv()
            except EOFError:
                code = self._process.exitcode if self._process else None
                self.close()
                raise ParseError(f"the parser process died (exit code {code}; it may have run "
                                 f"out of its {self.memory_mb:g} MB, the parse_memory_mb "
                                 "setting)") from None
        if status == "error":
            raise ParseError(value)
        if not isinstance(value, ParsedDocument):
            raise ParseError(f"the parser process sent {type(value).__name__}, not a document")
        return value

    def _ready(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self.close()
        parent, child = multiprocessing.Pipe()
        process = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(child, self.memory_mb), name="kbflow-parse", daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        if not parent.poll(STARTUP_TIMEOUT_S):
            self.close()
            raise ParseError("the parser process did not start")
        parent.recv()  # "ready"
        return parent

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


class ParsePool:
    """A few ParseWorkers: documents handed over from several threads at once are parsed side
    by side (OCR keeps a core busy for seconds per page). Workers start on first use."""

    def __init__(self, workers: int, timeout_s: float, limits: ParseLimits = DEFAULT_LIMITS,
                 memory_mb: float = DEFAULT_MEMORY_MB) -> None:
        self._all = [ParseWorker(timeout_s, limits, memory_mb)
                     for _ in range(max(workers, 1))]
        self._idle: queue.SimpleQueue[ParseWorker] = queue.SimpleQueue()
        for worker in self._all:
            self._idle.put(worker)

    def parse(self, meta: DocumentMeta, data: bytes) -> ParsedDocument:
        worker = self._idle.get()
        try:
            return worker.parse(meta, data)
        finally:
            self._idle.put(worker)

    def start(self) -> None:
        """Start every worker now: a long-lived process (flows/warm.py) pays for the starts
        before its first document instead of during it."""
        for worker in self._all:
            with worker._lock:
                worker._ready()

    def close(self) -> None:
        for worker in self._all:
            worker.close()

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _serve(conn: Connection, memory_mb: float) -> None:
    from ingest.parse import parse_document

    limit = int(memory_mb * 1024 * 1024)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    conn.send("ready")
    while True:
        try:
            meta, data, limits = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("ok", parse_document(meta, data, limits)))
        except MemoryError:
            conn.send(("error", f"parsing needed more than {memory_mb:g} MB of memory (the "
                                "parse_memory_mb setting)"))
        except Exception as exc:  # noqa: BLE001 - every failure goes back as a reason
            reason = str(exc) if isinstance(exc, ParseError) else f"{type(exc).__name__}: {exc}"
            conn.send(("error", reason))
