"""Document metadata: the sidecar `<file>.meta.yaml` first, then its folders' `_meta.yaml`
(ingest.parse.folder_meta), then the text, then configured defaults.

A missing tenant or ACL falls back to the configured default, never to "public". A sidecar or
folder file that sets one must set it to something: an empty tenant or `acl: []` is refused,
never widened to the default. Identifiers go into store filters and keys, so control characters
are refused.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import xxhash
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ingest.config import AUTHORITY_LEVELS
from ingest.models import Block, BlockKind, DocumentMeta
from ingest.parse.names import (
    MAX_ID_CHARS,
    TENANT_SEPARATOR,
    has_invisible_chars,
    identifier_problem,
    parse_yaml,
)
from ingest.parse.opening import read_checked
from ingest.parse.roots import has_control_chars
from ingest.text import numbered_heading_level

if TYPE_CHECKING:
    from ingest.scopes import TenantTree

SIDECAR_SUFFIX = ".meta.yaml"
MAX_SIDECAR_BYTES = 1024 * 1024
# Every chunk carries its ACL into every store and every search filters on it: 16,000 groups
# over 5 files took 1.3 GB at ingest and slowed every tenant's search fivefold.
MAX_ACL_GROUPS = 256
# Business dates outside these are typing mistakes, and dates near date.min/max overflow when
# a version's end is computed from the next one's start.
EARLIEST_DATE, LATEST_DATE = date(1900, 1, 1), date(9998, 12, 31)
# A source URI is any well-formed one (companies name places `intranet://`, `notes://`,
# `dms://` …), kept as text; only schemes that run or embed content where a link is shown are
# refused.
URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
UNSAFE_SCHEMES = frozenset({"javascript", "data", "vbscript"})
# Sidecar fields that neither identify a document nor govern who reads it or when: a bad one
# is dropped with a warning in the parse report, and the document goes on.
OPTIONAL_FIELDS = frozenset({"title", "source_uri"})
_CN_DATE = re.compile(
    r"(?:生效日期|施行日期|实施日期)\s*[:：]?\s*(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日"
)
M = TypeVar("M", bound=BaseModel)
_ISO_DATE = re.compile(r"(?:生效日期|Effective date)\s*[:：]?\s*(\d{4})-(\d{1,2})-(\d{1,2})", re.I)


class DeclaredMeta(BaseModel):
    """What a folder's `_meta.yaml` may declare for every file under it, and a sidecar for its
    own file; anything else is a mistake worth failing on."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: str | None = None
    acl: list[str] | None = None
    authority: str | None = None  # one of the configured levels (checked against them later)
    effective_from: date | None = None
    effective_to: date | None = None

    @field_validator("tenant_id", "authority")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and (problem := identifier_problem(value)):
            raise ValueError(problem)
        return value

    @field_validator("effective_from", "effective_to")
    @classmethod
    def _plausible(cls, value: date | None) -> date | None:
        if value is not None and not EARLIEST_DATE <= value <= LATEST_DATE:
            raise ValueError(f"{value} is outside {EARLIEST_DATE} … {LATEST_DATE}")
        return value

    @field_validator("acl")
    @classmethod
    def _groups(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        if not value:
            raise ValueError("is empty: list at least one group (an empty ACL never means "
                             "all staff; leave acl out to get the default)")
        if len(value) > MAX_ACL_GROUPS:
            raise ValueError(f"lists {len(value)} groups, over the {MAX_ACL_GROUPS} an ACL may "
                             "hold: grant a group that holds these readers instead")
        for group in value:
            if (not group.strip() or has_control_chars(group) or has_invisible_chars(group)
                    or len(group) > MAX_ID_CHARS):
                raise ValueError(f"group {group!r} is empty, too long or has control or "
                                 "invisible characters")
        return value

    @model_validator(mode="after")
    def _dates_in_order(self) -> DeclaredMeta:
        if self.effective_from and self.effective_to and self.effective_to < self.effective_from:
            raise ValueError(f"effective_to {self.effective_to} is before effective_from "
                             f"{self.effective_from}: the document would be in force on no date")
        return self


class Sidecar(DeclaredMeta):
    """A file's own metadata: what a folder may declare, and the document's identity."""

    doc_id: str | None = None
    version: str | None = None
    title: str | None = None
    source_uri: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("doc_id", "version", "title", "source_uri")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and has_control_chars(value):
            raise ValueError("must not contain control characters or line breaks")
        return value

    @field_validator("source_uri")
    @classmethod
    def _place(cls, value: str | None) -> str | None:
        if value is None:
            return value
        scheme = URI_SCHEME.match(value.strip())
        if scheme is None:
            raise ValueError("must be a URI: a scheme, ':' and a place (intranet://policy/7)")
        if (name := scheme.group()[:-1].lower()) in UNSAFE_SCHEMES:
            raise ValueError(f"scheme {name!r} runs or embeds content where a link is shown")
        return value

    @field_validator("doc_id", "version")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        if value is not None and (problem := identifier_problem(value)):
            raise ValueError(problem)
        return value


def validated(model: type[M], data: object, name: str) -> M:
    """`data` as `model`, or ValueError naming the file and every problem."""
    if not isinstance(data, dict):
        raise ValueError(f"{name}: expected a mapping of metadata fields")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{name}: {_problems(exc)}") from None


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'metadata'}: "
                     f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def read_sidecar(path: Path) -> tuple[Sidecar, bytes, list[str]]:
    """The parsed sidecar, its raw bytes (part of the version's fingerprint) and the warnings
    about the optional fields it dropped. It is read as documents are (ingest.parse.opening):
    a regular file beside its document, never through a link, at most MAX_SIDECAR_BYTES;
    anything else is refused, its content never shown."""
    side = sidecar_path(path)
    if not os.path.lexists(side):
        return Sidecar(), b"", []
    raw = read_checked(side, [side.parent.resolve()], MAX_SIDECAR_BYTES, what="sidecar")
    data = parse_yaml(raw, side.name) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{side.name}: expected a mapping of metadata fields")
    try:
        return Sidecar.model_validate(data), raw, []
    except ValidationError as exc:
        bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
        if len(bad) < len(exc.errors()) or not bad <= OPTIONAL_FIELDS:
            raise ValueError(f"{side.name}: {_problems(exc)}") from None
        warnings = [f"{side.name}: {e['loc'][0]} ignored: "
                    f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors()]
    kept = {key: value for key, value in data.items() if key not in bad}
    return validated(Sidecar, kept, side.name), raw, warnings


def default_doc_id(path: Path, root: Path, *, keep_suffix: bool = False) -> str:
    """A stable id from the path inside the ingested folder (not the absolute path), without
    the file's extension unless `keep_suffix`."""
    relative = path.relative_to(root) if path.is_relative_to(root) else Path(path.name)
    stem = str(relative if keep_suffix else relative.with_suffix(""))
    return re.sub(r"[^\w]+", "-", stem).strip("-").lower()


def file_doc_id(path: Path, root: Path, tenant: str, default_tenant: str, *,
                published: Collection[str] = (), shared_stem: bool = False) -> str:
    """The doc id of a file whose sidecar names none. A file keeps the id it was published
    under (`published`); otherwise it is its path without the extension, or with it when
    another file in its folder has the same stem (`shared_stem`): a draft `policy.docx`
    beside the approved `policy.pdf` is two documents, `policy-docx` and `policy-pdf`, never
    one whose text flips between them from run to run. They stay two: renditions cannot be
    told from drafts by their names, and each file's text is served as what it says."""
    plain, spelled = (scoped_doc_id(default_doc_id(path, root, keep_suffix=keep), tenant,
                                    default_tenant) for keep in (False, True))
    if plain in published or spelled in published:
        return plain if plain in published else spelled
    return spelled if shared_stem else plain


def scoped_doc_id(doc_id: str, tenant: str, default_tenant: str) -> str:
    """Doc ids are unique per tenant: the same name in two tenants is two documents (a tenant's
    file can neither overwrite nor close another tenant's version). The default tenant's ids
    stay as given; another tenant's carry its name, "<tenant>:<doc id>" (neither may hold ':')."""
    return doc_id if tenant == default_tenant else f"{tenant}{TENANT_SEPARATOR}{doc_id}"


def unscoped_doc_id(doc_id: str) -> str:
    """The doc id as its tenant named it ("procurement" of "subsidiary-b:procurement")."""
    return doc_id.split(TENANT_SEPARATOR, 1)[-1]


def file_hash(data: bytes) -> str:
    return xxhash.xxh64_hexdigest(data)


@dataclass(frozen=True)
class FolderDefaults:
    """What the `_meta.yaml` files of a file's folders declare for it (ingest.parse.folder_meta),
    the nearest folder's value per key; `tenant_from` names the file that set the tenant."""

    declared: DeclaredMeta = field(default_factory=DeclaredMeta)
    tenant_from: str = ""


def base_meta(path: Path, root: Path, data: bytes, default_tenant: str,
              default_acl: list[str], *, folder: FolderDefaults | None = None,
              authority_levels: Sequence[str] = AUTHORITY_LEVELS,
              scopes: TenantTree | None = None, published: Collection[str] = (),
              shared_stem: bool = False) -> DocumentMeta:
    """Metadata known before parsing, so even a file that fails to parse gets a manifest row:
    the sidecar's, else its folders', else the configured defaults. A sidecar may narrow its
    folder's tenant to a child tenant (`scopes`), never name another one: a file dropped into a
    subsidiary's folder must not publish as its group's (or a sibling's) document. `published`
    and `shared_stem` decide a doc id the sidecar leaves open (see file_doc_id). A folder that
    declares no tenant is the default tenant's: its sidecars may name the default tenant or a
    child of it, never an unrelated tenant (a subsidiary's files sit in a folder naming it)."""
    side, side_raw, warnings = read_sidecar(path)
    folder = folder or FolderDefaults()
    declared = folder.declared
    outer = declared.tenant_id or default_tenant
    if side.tenant_id is not None and not (scopes.within(side.tenant_id, outer) if scopes
                                           else side.tenant_id == outer):
        whose = (f"{folder.tenant_from}'s tenant {outer!r}" if declared.tenant_id else
                 f"the default tenant {outer!r} (no folder above it declares one)")
        raise ValueError(
            f"{sidecar_path(path).name}: tenant_id {side.tenant_id!r} is not {whose} "
            "nor a child of it: a file may narrow its folder's tenant, never move to its parent "
            "or a sibling (put it in a folder whose _meta.yaml names its tenant, or declare the "
            "tenant a child in the tenant parents file)")
    tenant = side.tenant_id or declared.tenant_id or default_tenant
    authority = side.authority or declared.authority
    if authority is not None and authority not in authority_levels:
        raise ValueError(f"authority {authority!r} is not one of the configured levels "
                         f"{', '.join(authority_levels)} (KBFLOW_AUTHORITY_LEVELS)")
    effective_from = side.effective_from or declared.effective_from
    effective_to = side.effective_to or declared.effective_to
    if effective_from and effective_to and effective_to < effective_from:
        raise ValueError(f"effective_to {effective_to} (sidecar or folder) is before "
                         f"effective_from {effective_from}: in force on no date")
    # What the folders decide for this file joins its hash: a folder file's edit rewrites the
    # versions it changes, and a file without folder metadata keeps the hash it always had.
    decided = declared.model_dump(mode="json", exclude_none=True,
                                  exclude=set(side.model_dump(exclude_none=True)))
    hashed = data + b"\0" + side_raw + (
        b"\0" + json.dumps(decided, sort_keys=True).encode() if decided else b"")
    return DocumentMeta(
        doc_id=(scoped_doc_id(side.doc_id, tenant, default_tenant) if side.doc_id else
                file_doc_id(path, root, tenant, default_tenant, published=published,
                            shared_stem=shared_stem)),
        version_id=side.version or "1",
        title=side.title or "",
        tenant_id=tenant,
        acl=list(side.acl or declared.acl or default_acl),
        authority=authority,
        source_uri=side.source_uri or path.resolve().as_uri(),
        source_path=str(path),
        effective_from=effective_from,
        effective_to=effective_to,
        file_hash=file_hash(hashed),
        warnings=warnings,
    )


def complete_meta(meta: DocumentMeta, blocks: list[Block], stated_title: str = "",
                  stated_source: str = "") -> tuple[DocumentMeta, str]:
    """Fill title and effective date from the text where the sidecar left them open; with
    where the title came from (sidecar; what the format states, e.g. a title slide or PDF
    metadata; the first heading; a first short line; "" when none was found)."""
    title, source = meta.title, "sidecar" if meta.title else ""
    if not title and stated_title and not _not_a_title(stated_title):
        title, source = stated_title.strip("《》 "), stated_source
    if not title:
        title, source = _title(blocks)
    effective_from = meta.effective_from or _effective_date(blocks)
    return meta.model_copy(update={"title": title, "effective_from": effective_from}), source


# A revision or version line, a date or a page number says which copy, not what the document is;
# the page margins' heading (ingest.parse.boilerplate) names no document.
_NOT_A_TITLE = re.compile(
    r"^(?:rev(?:ision)?\.?|version|ver\.?|v\d|draft|page|第\s*\d+\s*页|版本|修订|修改记录|页)"
    r"|^[\d\s./\-年月日:：]+$|^(?:页眉页脚|header and footer)$", re.I)


def _not_a_title(text: str) -> bool:
    return bool(_NOT_A_TITLE.match(text.strip())) or bool(_CN_DATE.search(text))


def _title(blocks: list[Block]) -> tuple[str, str]:
    for block in blocks[:8]:
        numbered = numbered_heading_level(block.text) is not None  # "第一章 总则" is no title
        if (block.kind == BlockKind.HEADING and len(block.text) <= 60 and not numbered
                and not _not_a_title(block.text)):
            return block.text.strip("《》 "), "heading"
    for block in blocks[:3]:
        if (block.kind != BlockKind.TABLE_ROW and len(block.text) <= 40
                and not _not_a_title(block.text)):
            return block.text.strip("《》 "), "first line"
    return "", ""


def _effective_date(blocks: list[Block]) -> date | None:
    for block in blocks[:30]:
        match = _CN_DATE.search(block.text) or _ISO_DATE.search(block.text)
        if match:
            year, month, day = (int(g) for g in match.groups())
            try:
                found = date(year, month, day)
            except ValueError:  # 2025年13月1日: no date, so none is taken from the text
                continue
            if EARLIEST_DATE <= found <= LATEST_DATE:
                return found
    return None
