"""Typed records passed between stages: every stage boundary is one of these models."""

from __future__ import annotations

from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

OPEN_START = date(1, 1, 1)
OPEN_END = date(9999, 12, 31)


class State(StrEnum):
    """Manifest states of one document version (see DESIGN.md)."""

    CREATED = "CREATED"
    MILVUS_READY = "MILVUS_READY"
    ES_READY = "ES_READY"
    NEO4J_READY = "NEO4J_READY"
    READY = "READY"
    FAILED = "FAILED"
    TOMBSTONED = "TOMBSTONED"


StoreRole = Literal["vectors", "lexical", "graph"]

# The store roles in write order, each with the state a version enters once that role holds it.
# The pipeline writes by this table and the manifest derives its forward path from it, so adding
# a role is a change here (and a writer for it in ingest/pipeline/write.py).
ROLE_STEPS: tuple[tuple[StoreRole, State], ...] = (
    ("vectors", State.MILVUS_READY),
    ("lexical", State.ES_READY),
    ("graph", State.NEO4J_READY),
)


class ChunkKind(StrEnum):
    CLAUSE = "clause"
    TABLE_ROW = "table_row"
    PARAGRAPH = "paragraph"
    PARENT = "parent"


class BlockKind(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    TABLE_ROW = "table_row"
    TABLE = "table"  # a whole table as Markdown, for reading; its rows follow as TABLE_ROW blocks


class RepealStatement(BaseModel):
    """A sentence of a document that repeals or replaces another one, named by its 《title》."""

    title: str  # as named, with its version marker when the sentence gives one
    sentence: str


class VersionLink(BaseModel):
    """Why two files were taken as versions of one document."""

    # "repeal" (one names the other as repealed/replaced) | "reissue" (one is the other's
    # title re-issued: （更正）, （修订）, 第二版) | "same_title" (equal titles, told apart by
    # marker or date)
    rule: str
    other: str  # the other version's key (doc_id@version_id)
    other_path: str
    other_is: str = ""  # "older" | "newer": which side of the pair the other version is
    detail: str  # the repeal sentence(s), or the two titles
    similarity: float | None = None  # body similarity, required for generic titles
    org_prefix: str | None = None  # the organisation name one title carries, the other not


class DocumentIdentity(BaseModel):
    """What the text says about a sidecar-less document's identity, and how it was grouped
    (ingest/parse/identity.py); stored in the manifest so later runs can match against it."""

    inferred: bool = False  # doc id and version were decided by grouping with other files
    title: str
    base_title: str  # the title without version markers
    marker: str | None = None  # the version marker the title carried: "2025", "v2.0", "修订版"
    effective_from: date | None = None
    effective_basis: str | None = None  # the text that states the effective date
    # the latest adoption or amendment date a law-style opening states: parts of one law in
    # several files share it, versions do not
    amended: date | None = None
    repeals: list[RepealStatement] = Field(default_factory=list)
    links: list[VersionLink] = Field(default_factory=list)


class DocumentMeta(BaseModel):
    """Who a document belongs to and when it is in force (from sidecar, text and defaults)."""

    doc_id: str
    version_id: str
    title: str
    tenant_id: str
    acl: list[str]
    authority: str | None = None  # a configured level (KBFLOW_AUTHORITY_LEVELS), if declared
    source_uri: str
    source_path: str
    effective_from: date | None = None
    effective_to: date | None = None
    file_hash: str
    identity: DocumentIdentity | None = None  # set for documents without sidecar ids
    warnings: list[str] = Field(default_factory=list)  # optional metadata fields dropped


class Block(BaseModel):
    """One unit of parsed text in reading order, with the page it came from."""

    kind: BlockKind
    text: str
    page: int = 1
    level: int | None = None  # heading level when the format states it (Markdown #, DOCX Heading n)
    ocr: bool = False  # the text was read from a page image, so it may contain recognition errors
    ocr_confidence: float | None = None  # mean recognizer score of the block's lines (0..1)
    near_duplicate_of: int | None = None  # index of an earlier block with nearly the same text
    # Where it sits on its page (PDFs and images): x0, y0, x1, y1 as shares of the page's width
    # and height, top-left origin; the console outlines a chunk's blocks with it.
    bbox: tuple[float, float, float, float] | None = None


class ParseReport(BaseModel):
    """How well a document was read; stored in the manifest and aggregated per run."""

    pages: int = 0
    ocr_pages: int = 0
    ocr_mean_confidence: float | None = None
    tables: int = 0
    table_rows: int = 0
    empty_pages: int = 0
    headers_footers_removed: int = 0
    near_duplicate_blocks: int = 0
    missing_title: bool = False
    repaired: bool = False  # PyMuPDF rebuilt a damaged PDF: pages may be missing
    pages_read: int | None = None  # pages that gave text (PDF), when fewer than `pages` matter
    encoding: str | None = None  # how a text file was decoded (utf-8, gb18030, cp950, utf-16 …)
    encoding_confidence: float | None = None  # 1.0: a byte-order mark or valid UTF-8
    # doubts about what was read (a guessed encoding) and metadata fields ignored, with why
    warnings: list[str] = Field(default_factory=list)
    chars_seen: int = 0  # all text the file holds: body, tables, notes, footnotes, text boxes …
    chars_indexed: int = 0  # the text of the blocks that go on to be chunked
    skipped: dict[str, int] = Field(default_factory=dict)  # parts left out on purpose, by kind
    chars_skipped: int = 0  # characters of those parts
    title_source: str = ""  # where the title came from: sidecar, metadata, heading, first line …
    turned_pages: list[int] = Field(default_factory=list)  # scans read after turning upright
    attachments: int = 0  # attached or embedded files read as sections (mail, OLE objects)
    parse_error: str | None = None
    seconds: float = 0.0


    @property
    def coverage(self) -> float:
        """Share of the text meant to be read that was indexed: parts skipped on purpose
        (comments, boilerplate, hidden sheets) are not held against it."""
        meant = self.chars_seen - self.chars_skipped
        return min(1.0, self.chars_indexed / meant) if meant > 0 else 1.0


class ParsedDocument(BaseModel):
    meta: DocumentMeta
    blocks: list[Block]
    parser_version: str
    pages: int = 1
    report: ParseReport = Field(default_factory=ParseReport)


def embed_text(prefix: str, text: str, context: str = "") -> str:
    """What is embedded and BM25-indexed: the contextual prefix and situating context (when
    there are any), then the source text. The chunker budgets a chunk's tokens on it before the
    chunk exists."""
    return "\n".join(part for part in (prefix, context, text) if part)


class Region(BaseModel):
    """A part of a page a chunk's text came from: `box` as in Block.bbox."""

    page: int
    box: tuple[float, float, float, float]


class Chunk(BaseModel):
    """A retrievable unit with everything a citation needs (DESIGN.md data model)."""

    doc_id: str
    version_id: str
    chunk_id: str
    parent_chunk_id: str | None = None
    prev_chunk_id: str | None = None
    next_chunk_id: str | None = None
    kind: ChunkKind
    text: str
    prefix: str
    context: str = ""  # LLM-written situating context: embedded and indexed, never quoted
    title_path: list[str] = Field(default_factory=list)
    clause_no: str | None = None
    structural_path: str
    page_start: int
    page_end: int
    char_start: int
    char_end: int
    regions: list[Region] = Field(default_factory=list)  # on its pages (PDFs and images)
    tenant_id: str
    acl: list[str]
    authority: str | None = None  # its document's level (KBFLOW_AUTHORITY_LEVELS), if declared
    source_uri: str
    effective_from: date | None = None
    effective_to: date | None = None
    parser_version: str
    chunker_version: str
    embedding_model: str = ""
    content_hash: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def version_key(self) -> str:
        return version_key(self.doc_id, self.version_id)

    @property
    def embed_text(self) -> str:
        return embed_text(self.prefix, self.text, self.context)


class Triple(BaseModel):
    subject: str
    predicate: str
    object: str
    subject_type: str
    object_type: str
    source_chunk_id: str
    doc_id: str
    version_id: str
    extractor: str
    confidence: float
    # A citation's text as written (《公司法》第十条) and how its title resolved (graph/titles.py)
    surface: str = ""
    rule: str = ""


class SearchFilter(BaseModel):
    """Constraints every store applies inside its own query (never after it)."""

    tenant_id: str  # the reader's own tenant
    # Its parent, grandparent … (ingest.scopes.TenantTree): their documents are seen too.
    ancestors: list[str] = Field(default_factory=list)
    groups: list[str]
    as_of: date
    # Versions a reader must not see although the store may hold rows of them: in flight,
    # failed, or tombstoned and not yet cleaned (ManifestStore.hidden_keys). Few, whatever the
    # size of the corpus, so the filter costs the same at 100 versions as at 100,000.
    hidden_keys: list[str]

    @property
    def tenants(self) -> list[str]:
        """Every tenant whose documents the reader sees, its own first: a tenant's position
        is its distance from the reader."""
        return [self.tenant_id, *self.ancestors]

    def admits(self, tenant_id: str | None, acl: list[str]) -> bool:
        """Whether this reader may see a version of that tenant and ACL at all, its state and
        dates aside: the tenant and group terms every store's query applies, for callers that
        list versions instead of searching them (the console)."""
        return tenant_id in self.tenants and not set(acl).isdisjoint(self.groups)


class GraphNode(BaseModel):
    name: str
    type: str


class GraphPath(BaseModel):
    """A walk through the graph from a start entity: `relations[i]` joins `nodes[i]` and
    `nodes[i + 1]` (in either direction; the triple says which), and names its source chunk."""

    nodes: list[GraphNode]
    relations: list[Triple]


class Hit(BaseModel):
    chunk_id: str
    score: float


def version_key(doc_id: str, version_id: str) -> str:
    return f"{doc_id}@{version_id}"


def day_number(value: date | None, default: date) -> int:
    """Dates as YYYYMMDD integers: every store can range-filter them."""
    d = value or default
    return d.year * 10000 + d.month * 100 + d.day
