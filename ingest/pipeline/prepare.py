"""From files to chunked versions: read every file, pick the new, changed or unfinished ones
(unchanged files cost one hash), parse them in windows side by side, chunk them."""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import xxhash

from ingest.chunk import ChunkParams, chunk_document
from ingest.config import Settings
from ingest.embed import TokenCounter
from ingest.manifest import ManifestStore
from ingest.manifest.records import DocumentRecord
from ingest.models import Chunk, ChunkKind, DocumentMeta, ParsedDocument, State
from ingest.parse import PARSER_VERSION, ParseError, ParseLimits, ParsePool, read_meta
from ingest.parse.coverage import reached_chars
from ingest.parse.folder_meta import FOLDER_META_NAME
from ingest.parse.identity import identify
from ingest.parse.metadata import SIDECAR_SUFFIX, default_doc_id
from ingest.pipeline.context import RunContext
from ingest.pipeline.failures import Failure
from ingest.pipeline.job import Parsed, Prepared, VersionJob
from ingest.scopes import TenantTree

PARSE_WINDOW = 16  # files read into memory and parsed side by side at a time
# Identical files are ingested once only when they hold this much: two empty or one-line files
# with the same bytes are unrelated documents, not copies of one.
MIN_DUPLICATE_BYTES = 256


@dataclass
class Selection:
    """What choosing the files to parse found besides them."""

    skipped: int = 0  # unchanged and published
    lifted: list[str] = field(default_factory=list)  # deleted versions whose file came back
    # version → the other paths of identical files, ingested as that version
    duplicates: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    claimed: dict[str, str] = field(default_factory=dict)  # version → the path declaring it
    kept: dict[str, tuple[str, str]] = field(default_factory=dict)  # file hash → version


@dataclass
class Preparing:
    """What preparing keeps from one window of a run's files to the next: the parse pool (its
    processes start once a run, not once a window), the chunk parameters and tokenizer, the
    files' places, and what choosing found so far (a copy in a later window is still a copy of
    the version an earlier one kept)."""

    parser: ParsePool
    params: ChunkParams
    tokens: TokenCounter
    places: Places
    selection: Selection = field(default_factory=Selection)


def prepare(ctx: RunContext, run: Preparing, files: Sequence[tuple[Path, Path]],
            window: range) -> list[VersionJob]:
    """Parse and chunk every new, changed or unfinished version among the `window` of `files`
    (each path with the folder its doc id derives from).

    Identical files (same bytes, same sidecar, at least MIN_DUPLICATE_BYTES) are ingested once;
    the other paths are collected under the version they are copies of. A deleted version comes
    back when its file does (it was tombstoned because the file had gone) or with new content;
    one deleted by `kbflow delete` and unchanged stays deleted (and is listed). Files are parsed
    PARSE_WINDOW at a time, a window's documents side by side (`KBFLOW_PARSE_WORKERS`
    processes)."""
    parsed: list[Parsed] = []
    batch: list[Prepared] = []
    for i in window:
        path, folder = files[i]
        ctx.progress(i, len(files), path.name)
        if item := select(ctx, run.params, run.selection, path, folder, run.places):
            batch.append(item)
        if len(batch) >= PARSE_WINDOW:
            parsed += parse_window(ctx, run.parser, batch)
            batch = []
    parsed += parse_window(ctx, run.parser, batch)
    # versions recognised from the text decide doc ids and versions, so before chunking
    with ctx.clock.stage("parse"):
        docs = identify([p.doc for p in parsed], ctx.manifest)
    return chunk_all(ctx, run.params, run.tokens,
                     [Parsed(p.path, p.root, doc) for p, doc in zip(parsed, docs, strict=True)])


@dataclass(frozen=True)
class Place:
    """Where a file belongs, whatever folder a run was given: the folder its doc id derives
    from (`root`), the doc ids it was published under, and whether another file in its folder
    has its stem. (Which folders' metadata apply is the file's own, see read_meta.)"""

    root: Path
    doc_ids: frozenset[str]
    shared_stem: bool


class Places:
    """The places of a run's files, from the manifest's history and the folders on disk."""

    def __init__(self, manifest: ManifestStore) -> None:
        self.manifest = manifest
        self.known = [Path(r) for r in manifest.source_roots()]
        self.stems: dict[Path, Counter[str]] = {}

    def of(self, path: Path, given: Path) -> Place:
        """A file keeps the doc id of the folder it was first published from:
        `kbflow ingest docs/sub-a/east/` after `kbflow ingest docs/` does not rename `docs/…`
        documents (tombstoning their history). Without history the folder given is the place.
        Folder metadata follows the file's own place whatever the run (see read_meta)."""
        real, given = path.resolve(), given.resolve()
        history = self.manifest.documents(source_paths=[str(real)])
        recorded = [Path(r.source_root) for r in history
                    if r.source_root and real.is_relative_to(r.source_root)]
        above = [root for root in self.known if real.is_relative_to(root)]
        root = min(recorded or above or [given], key=lambda p: len(p.parts))
        return Place(root, frozenset(r.doc_id for r in history),
                     self._stems(real.parent)[real.stem] > 1)

    def _stems(self, folder: Path) -> Counter[str]:
        """How many document files of `folder` have each stem (read once per folder and run)."""
        if folder not in self.stems:
            try:
                with os.scandir(folder) as entries:
                    names = [e.name for e in entries if not e.is_dir()]
            except OSError:
                names = []
            self.stems[folder] = Counter(Path(n).stem for n in names
                                         if not n.startswith(".") and n != FOLDER_META_NAME
                                         and not n.endswith(SIDECAR_SUFFIX))
        return self.stems[folder]


def select(ctx: RunContext, params: ChunkParams, selection: Selection, path: Path,
           folder: Path, places: Places | None = None) -> Prepared | None:
    """The file read, if it must be parsed; None when it is unchanged, a copy, deleted or bad
    (a bad file fails alone, with its reason). Its place comes from `places` (the run's),
    else from the manifest."""
    root = folder.resolve()
    item: Prepared | None = None
    try:
        where = (places or Places(ctx.manifest)).of(path, folder)
        root = where.root
        with ctx.clock.stage("parse"):
            meta, data = read_at(ctx.settings, ctx.scopes, path, where)
        meta.source_path = str(path.resolve())
        item = Prepared(path, root, meta, data)
        return _choose(ctx, params, selection, item)
    except Exception as exc:  # noqa: BLE001 - a bad document fails alone, with its reason
        key = item.key if item else (default_doc_id(path, root), "1")
        ctx.fail(Failure.raised("parse" if isinstance(exc, ParseError) else "read", exc, path,
                                key))
        return None


def _choose(ctx: RunContext, params: ChunkParams, selection: Selection,
            item: Prepared) -> Prepared | None:
    meta, manifest = item.meta, ctx.manifest
    substantial = len(item.data.strip()) >= MIN_DUPLICATE_BYTES
    if substantial and meta.file_hash in selection.kept:
        selection.duplicates.setdefault(selection.kept[meta.file_hash], []).append(
            meta.source_path)
        return None
    if known := manifest.inferred_version(meta.source_path, meta.file_hash):
        meta.doc_id, meta.version_id, meta.identity = (  # recognised by its text before
            known.doc_id, known.version_id, known.identity)
    _check_owner(ctx, item)
    if substantial:
        selection.kept[meta.file_hash] = item.key
    selection.duplicates.setdefault(item.key, [])
    record = manifest.get(*item.key)
    if manifest.is_tombstoned(*item.key) and not _lift(ctx, selection, item):
        return None
    if _unchanged(ctx, params, record, item):
        selection.skipped += 1
        return None
    version = f"{meta.doc_id}@{meta.version_id}"
    if version in selection.claimed:
        raise ValueError(f"{version} is also declared by {selection.claimed[version]}")
    selection.claimed[version] = str(item.path)
    return item


def _check_owner(ctx: RunContext, item: Prepared) -> None:
    """Versions of one document live in one folder (see ingest.parse.identity.same_folder): a
    file may not add a version to, or rewrite one of, a document whose files are elsewhere, or
    a sidecar anywhere could serve its text as another team's policy. "The same folder" is the
    same folder on disk, or the same place under the folder ingested (a corpus ingested again
    from a copy, a root that moved). A file whose old path is gone keeps its document."""
    meta = item.meta
    folder = Path(meta.source_path).parent
    for record in ctx.manifest.documents(doc_ids=[meta.doc_id]):
        owner = Path(record.source_path).parent
        if (owner != folder and not _same_place(folder, item.root, owner, record.source_root)
                and record.state != State.TOMBSTONED and os.path.lexists(record.source_path)):
            raise PermissionError(
                f"doc id {meta.doc_id} belongs to the files in {owner} ({record.version_key}); "
                f"a file in {folder} may not add a version to it "
                "(keep a document's versions in one folder, or give this file its own doc_id)")


def _same_place(folder: Path, root: Path, other: Path, other_root: str | None) -> bool:
    """Whether two folders sit at the same relative path under the folders they were ingested
    from."""
    if other_root is None or not folder.is_relative_to(root):
        return False
    return other.is_relative_to(other_root) and (
        folder.relative_to(root) == other.relative_to(other_root))


def _lift(ctx: RunContext, selection: Selection, item: Prepared) -> bool:
    """Whether a deleted version comes back: only when its file was gone, or has changed."""
    version = f"{item.meta.doc_id}@{item.meta.version_id}"
    if not ctx.manifest.lift_tombstone_for(*item.key, item.meta.file_hash):
        ctx.refuse(Failure.refused(
            "read", f"{version} was deleted; change the file, or run `kbflow undelete "
            f"{item.meta.doc_id}`, to publish it again", item.path, item.key))
        return False
    selection.lifted.append(version)
    return True


def read_at(settings: Settings, scopes: TenantTree, path: Path,
            where: Place) -> tuple[DocumentMeta, bytes]:
    """A file's metadata and bytes, read with the run's settings at the place it belongs."""
    return read_meta(path, where.root, settings.default_tenant, settings.default_acl,
                     document_roots=settings.document_roots, max_file_mb=settings.max_file_mb,
                     authority_levels=settings.authority_levels, scopes=scopes,
                     published=where.doc_ids, shared_stem=where.shared_stem)


def published_as_is(record: DocumentRecord, file_hash: str, settings: Settings,
                    chunker_version: str) -> bool:
    """READY from these bytes by today's parser, parse settings, chunker and model."""
    return (record.state == State.READY and record.file_hash == file_hash
                and record.parser_version == parse_version(settings)
                and record.chunker_version == chunker_version
                and record.embedding_model == settings.embedding_model)


def parse_version(settings: Settings) -> str:
    """The parser's version and a fingerprint of the settings that change what a parse of the
    same bytes yields (ParseLimits: what is read, what fails; the ACL of files that declare
    none), recorded with each version: a file's unchanged bytes (its hash also covers its
    sidecar and folder metadata) are parsed again when either changed."""
    decides = json.dumps([dataclasses.asdict(ParseLimits.of(settings)), settings.default_acl],
                         sort_keys=True)
    return f"{PARSER_VERSION}+{xxhash.xxh64_hexdigest(decides.encode())}"


def _unchanged(ctx: RunContext, params: ChunkParams, record: DocumentRecord | None,
               item: Prepared) -> bool:
    """Published from these bytes by today's parser, parse settings, chunker and model (a
    moved file is relocated): nothing to read again, only the hash was computed."""
    meta = item.meta
    if record is None or not published_as_is(record, meta.file_hash, ctx.settings,
                                             params.version):
        return False
    if (record.source_path, record.source_root) != (meta.source_path, str(item.root)):
        ctx.manifest.relocate(*item.key, meta.source_path, str(item.root))
    return True


def parse_one(parser: ParsePool, item: Prepared) -> ParsedDocument | Failure:
    """A bad document is an outcome, not a crash: its ParseError (a timeout too: the worker
    process is killed) comes back as its failure."""
    try:
        return parser.parse(item.meta, item.data)
    except ParseError as exc:
        return Failure(stage="parse", kind="ParseError", message=str(exc), path=str(item.path),
                       doc_id=item.meta.doc_id, version_id=item.meta.version_id)


def parse_many(parser: ParsePool, window: Sequence[Prepared]) -> list[ParsedDocument | Failure]:
    """A window's documents side by side: the pool's processes take them as they come free."""
    if not window:
        return []
    with ThreadPoolExecutor(len(window)) as threads:
        return list(threads.map(lambda item: parse_one(parser, item), window))


def chunk_one(doc: ParsedDocument, params: ChunkParams,
              tokens: TokenCounter) -> list[Chunk] | Failure:
    """Chunks budgeted in the embedding model's own tokens, so none is truncated when
    embedded; a document that cannot be chunked is a failure, and the others go on."""
    try:
        return chunk_document(doc, params, tokens.count, tokens.max_tokens)
    except Exception as exc:  # noqa: BLE001 - a bad document fails alone, with its reason
        return Failure.raised("chunk", exc, doc.meta.source_path,
                              (doc.meta.doc_id, doc.meta.version_id))


def parse_window(ctx: RunContext, parser: ParsePool,
                 window: Sequence[Prepared]) -> list[Parsed]:
    with ctx.clock.stage("parse"):
        outcomes = ctx.steps.parse(parser, window)
    parsed = []
    for item, outcome in zip(window, outcomes, strict=True):
        if isinstance(outcome, Failure):
            ctx.fail(outcome.model_copy(update={"tenant_id": item.meta.tenant_id,
                                                "acl": item.meta.acl}))
        else:
            parsed.append(Parsed(item.path, item.root, outcome))
    return parsed


def chunk_all(ctx: RunContext, params: ChunkParams, tokens: TokenCounter,
              parsed: Sequence[Parsed]) -> list[VersionJob]:
    """Every parsed document's chunks in one step (with LLM contexts when configured)."""
    settings = ctx.settings
    with ctx.clock.stage("chunk"):
        outcomes = ctx.steps.chunk([p.doc for p in parsed], params, tokens)
    jobs = []
    for item, chunks in zip(parsed, outcomes, strict=True):
        doc = item.doc
        if isinstance(chunks, Failure):
            ctx.fail(chunks.model_copy(update={"tenant_id": doc.meta.tenant_id,
                                               "acl": doc.meta.acl}))
            continue
        if not _indexed(doc, chunks):
            ctx.fail(_nothing_indexed(item))
            continue
        try:
            with ctx.clock.stage("chunk"):
                if settings.llm_situates:
                    chunks = ctx.steps.situate(chunks, settings, tokens)
                for c in chunks:
                    if c.kind != ChunkKind.PARENT:
                        c.embedding_model = settings.embedding_model
        except Exception as exc:  # noqa: BLE001 - a bad document fails alone, with its reason
            ctx.fail(Failure.raised("chunk", exc, item.path,
                                    (doc.meta.doc_id, doc.meta.version_id)))
            continue
        jobs.append(VersionJob(meta=doc.meta, chunks=chunks, chunker_version=params.version,
                               source_root=str(item.root),
                               parser_version=parse_version(settings),
                               parse_report=doc.report.model_dump(mode="json")))
    return jobs


def _indexed(doc: ParsedDocument, chunks: list[Chunk]) -> bool:
    """Whether any text reached an embedded chunk; the parse report's chars_indexed is set to
    what reached the chunks (a block the chunker dropped is not indexed, whatever the parser
    returned), so coverage and the PARTLY READ warning tell what is searchable."""
    report = doc.report
    report.chars_indexed = reached_chars(
        doc.blocks, [(c.char_start, c.char_end) for c in chunks], doc.meta.title)
    return report.chars_indexed > 0 and any(c.kind != ChunkKind.PARENT for c in chunks)


def _nothing_indexed(item: Parsed) -> Failure:
    report = item.doc.report
    return Failure(stage="chunk", kind="NothingIndexed", path=str(item.path),
                   doc_id=item.doc.meta.doc_id, version_id=item.doc.meta.version_id,
                   message=f"{report.chars_seen} characters seen, none reached a chunk "
                           f"({len(item.doc.blocks)} blocks parsed): nothing would be searchable")
