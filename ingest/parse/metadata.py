"""Document metadata: the sidecar `<file>.meta.yaml` first, then the text, then configured defaults.

A missing tenant or ACL falls back to the configured default, never to "public". A sidecar that
sets one must set it to something: an empty tenant or `acl: []` is refused, never widened to
the default. Identifiers go into store filters and keys, so control characters are refused.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import xxhash
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ingest.models import Block, BlockKind, DocumentMeta
from ingest.parse.roots import has_control_chars
from ingest.text import numbered_heading_level

SIDECAR_SUFFIX = ".meta.yaml"
MAX_ID_CHARS = 128  # the vector store keeps tenant and group names up to 128 characters
_CN_DATE = re.compile(
    r"(?:生效日期|施行日期|实施日期)\s*[:：]?\s*(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日"
)
_ISO_DATE = re.compile(r"(?:生效日期|Effective date)\s*[:：]?\s*(\d{4})-(\d{1,2})-(\d{1,2})", re.I)


class Sidecar(BaseModel):
    """The fields a sidecar may set; anything else is a mistake worth failing on."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str | None = None
    version: str | None = None
    title: str | None = None
    tenant_id: str | None = None
    acl: list[str] | None = None
    effective_from: date | None = None
    effective_to: date | None = None
    source_uri: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("doc_id", "version", "tenant_id", "title", "source_uri")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and has_control_chars(value):
            raise ValueError("must not contain control characters or line breaks")
        return value

    @field_validator("doc_id", "version", "tenant_id")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not value.strip() or value != value.strip():
            raise ValueError("must not be empty or start or end with spaces")
        if len(value) > MAX_ID_CHARS:
            raise ValueError(f"must be at most {MAX_ID_CHARS} characters")
        if "@" in value:  # version keys are doc_id@version: one "@" only
            raise ValueError("must not contain '@'")
        return value

    @field_validator("acl")
    @classmethod
    def _groups(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        if not value:
            raise ValueError("is empty: list at least one group (an empty ACL never means "
                             "all staff; leave acl out to get the default)")
        for group in value:
            if not group.strip() or has_control_chars(group) or len(group) > MAX_ID_CHARS:
                raise ValueError(f"group {group!r} is empty, too long or has control characters")
        return value

    @model_validator(mode="after")
    def _dates_in_order(self) -> Sidecar:
        if self.effective_from and self.effective_to and self.effective_to < self.effective_from:
            raise ValueError(f"effective_to {self.effective_to} is before effective_from "
                             f"{self.effective_from}: the document would be in force on no date")
        return self


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def read_sidecar(path: Path) -> tuple[Sidecar, bytes]:
    """The parsed sidecar and its raw bytes (part of the version's fingerprint)."""
    side = sidecar_path(path)
    if not side.exists():
        return Sidecar(), b""
    raw = side.read_bytes()
    try:
        data = yaml.safe_load(raw.decode("utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"{side.name} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{side.name}: expected a mapping of metadata fields")
    try:
        return Sidecar.model_validate(data), raw
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'sidecar'}: "
                             f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise ValueError(f"{side.name}: {problems}") from None


def default_doc_id(path: Path, root: Path) -> str:
    """A stable id from the path inside the ingested folder (not the absolute path)."""
    relative = path.relative_to(root) if path.is_relative_to(root) else Path(path.name)
    stem = str(relative.with_suffix(""))
    return re.sub(r"[^\w]+", "-", stem).strip("-").lower()


def file_hash(data: bytes) -> str:
    return xxhash.xxh64_hexdigest(data)


def base_meta(path: Path, root: Path, data: bytes, default_tenant: str,
              default_acl: list[str]) -> DocumentMeta:
    """Metadata known before parsing, so even a file that fails to parse gets a manifest row."""
    side, side_raw = read_sidecar(path)
    return DocumentMeta(
        doc_id=side.doc_id or default_doc_id(path, root),
        version_id=side.version or "1",
        title=side.title or "",
        tenant_id=default_tenant if side.tenant_id is None else side.tenant_id,
        acl=list(default_acl) if side.acl is None else side.acl,
        source_uri=side.source_uri or path.resolve().as_uri(),
        source_path=str(path),
        effective_from=side.effective_from,
        effective_to=side.effective_to,
        file_hash=file_hash(data + b"\0" + side_raw),
    )


def complete_meta(meta: DocumentMeta, blocks: list[Block]) -> DocumentMeta:
    """Fill title and effective date from the text where the sidecar left them open."""
    title = meta.title or _title(blocks)
    effective_from = meta.effective_from or _effective_date(blocks)
    return meta.model_copy(update={"title": title, "effective_from": effective_from})


def _title(blocks: list[Block]) -> str:
    for block in blocks[:5]:
        numbered = numbered_heading_level(block.text) is not None  # "第一章 总则" is no title
        if block.kind == BlockKind.HEADING and len(block.text) <= 60 and not numbered:
            return block.text.strip("《》 ")
    for block in blocks[:3]:
        if len(block.text) <= 40 and not _CN_DATE.search(block.text):
            return block.text.strip("《》 ")
    return ""


def _effective_date(blocks: list[Block]) -> date | None:
    for block in blocks[:30]:
        match = _CN_DATE.search(block.text) or _ISO_DATE.search(block.text)
        if match:
            year, month, day = (int(g) for g in match.groups())
            return date(year, month, day)
    return None
