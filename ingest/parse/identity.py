"""Which sidecar-less files are versions of one document, decided from their own text.

Two files are linked as versions of one document when
- `repeal`: one names the other by its 《title》 as repealed or replaced (…同时废止, 代替《…》,
  不再执行), the named title matching the other's title with or without its version marker; or
- `same_title`: their titles are equal once version markers are stripped ((2024版), 2025年修订,
  修订版, v2, V2.0, dates, 试行) and something tells the versions apart (marker or effective date).

Conservative on purpose: a generic title (通知, 办法, README, very short titles) links only when
the bodies are also alike; a document never links to itself (a repeal of its own earlier
version names its own title); files of different tenants never link; versions must be in the
order their effective dates give (that order closes the older one): the repealed one takes
effect before the one repealing it, and an undated version never links where it would sort
before a newer one; versions of one document lie in one folder (who may write the folder
decides: see `same_folder`). Linked files share one doc id and get version ids from their markers or
effective dates; a sidecar that sets doc_id or version is never overridden.

The rules (`facts`, `links`, `decide`) are pure; `identify` applies them to a run's parsed
documents and the versions its manifest already published. A new version that links to a
published one takes that one's doc id (published chunks are never rekeyed); published versions
with a generic title are not compared (their bodies are not at hand), and versions published
before identities were recorded (manifest migration 002) are not either.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import xxhash

from ingest.models import (
    BlockKind,
    DocumentIdentity,
    ParsedDocument,
    RepealStatement,
    VersionLink,
    version_key,
)
from ingest.parse.metadata import TENANT_SEPARATOR, read_sidecar

if TYPE_CHECKING:  # the manifest imports the parsers' models; only its type is needed here
    from ingest.manifest import ManifestStore

GENERIC_TITLES = frozenset({
    "通知", "公告", "通告", "说明", "办法", "规定", "制度", "决定", "意见", "方案", "报告", "纪要",
    "会议纪要", "简报", "函", "请示", "批复", "目录", "附件", "说明书", "管理办法", "管理制度",
    "管理规定", "实施细则", "细则", "须知", "指南", "手册", "操作手册", "用户手册", "工作总结",
    "总结", "计划", "工作计划", "常见问题", "问答", "新建文档", "文档", "草稿", "备忘录",
    "readme", "index", "notes", "note", "untitled", "document", "draft", "changelog", "faq",
    "manual", "guide", "policy", "memo", "summary", "report", "introduction", "overview",
})
MIN_SIMILARITY = 0.4  # body 3-gram Jaccard a generic title needs to link
MAX_GENERIC_SHARED = 20  # more files than this sharing a generic title are never compared

_YEAR = r"(?<!\d)(?:19|20)\d{2}(?!\d)"
_CN_DATE = rf"({_YEAR})\s*年\s*(\d{{1,2}})\s*月\s*(\d{{1,2}})\s*日"
_ISO_DATE = rf"({_YEAR})-(\d{{1,2}})-(\d{{1,2}})"
_BRACKET = re.compile(r"[(\[【〔]([^()\[\]【】〔〕]{0,24})[)\]】〕]")
_VERSIONISH = re.compile(rf"{_YEAR}|版|修订|修正|试行|[vV]\s*\d|第.{{1,3}}次")
_MARKERS = (
    re.compile(rf"{_YEAR}\s*年\s*\d{{1,2}}\s*月(?:\s*\d{{1,2}}\s*日)?(?:版|修订版?|修正版?)?"),
    re.compile(rf"{_YEAR}[-./]\d{{1,2}}(?:[-./]\d{{1,2}})?"),
    # a year, but not of an annual document (2025年度计划 is no version of 2024年度计划)
    re.compile(rf"{_YEAR}(?!\s*年度)\s*年?\s*(?:版|修订版?|修正版?)?"),
    re.compile(r"(?<![A-Za-z])[vV](?:ersion)?\s*\d+(?:\.\d+)*"),
    re.compile(r"第[一二三四五六七八九十\d]+(?:版|次修订|次修正)"),
    re.compile(r"(?:修订|修正)(?:版|稿)?|试行"),
)
_VERSION_NO = re.compile(r"[vV](?:ersion)?\s*(\d+(?:\.\d+)*)")
_YEAR_RE = re.compile(_YEAR)
_MARKER_DATE = re.compile(rf"({_YEAR})\s*[-./年]\s*(\d{{1,2}})\s*(?:[-./月]\s*(\d{{1,2}}))?")
_NOT_TITLE_CHARS = re.compile(r"[\W_]+")

_LABELLED = re.compile(
    rf"(?:生效日期|施行日期|实施日期|执行日期|Effective date)\s*[:：]?\s*"
    rf"(?:{_CN_DATE}|{_ISO_DATE})", re.I)
_STATED = re.compile(rf"自\s*{_CN_DATE}\s*起\s*(?:正式)?(?:施行|执行|生效|实施)")
_ON_ISSUE = re.compile(r"自(?:发布|印发|公布|颁布|下发)之日起\s*(?:正式)?(?:施行|执行|生效|实施)")
_ISSUED = re.compile(
    rf"(?:发布日期|印发日期|发文日期|颁布日期|发布时间|印发时间)\s*[:：]?\s*(?:{_CN_DATE}|{_ISO_DATE})")
_FINISHED = ("。", "；", ";", "！", "!", "？", "?", "：", ":")
_SENTENCE_END = re.compile(r"[。；;！!？?\n]")
_TITLE_REF = re.compile(r"《([^《》]{1,60})》")
_REPEAL_AFTER = re.compile(
    r"^[^，,。《》]{0,15}?(?:同时|一并|予以|即行|自行|随之)?(?:废止|停止执行|不再执行|失效|作废)")
_REPEAL_BEFORE = re.compile(r"(?:代替|替代|取代|废止|替换)(?:原|公司原|原有的?|此前的?)?\s*$")
_REFERENCE = re.compile(r"(?:根据|依据|按照|参照|遵照|结合|依照)\s*$")
_CONJUNCTION = re.compile(r"^\s*(?:和|及|与|以及|、|,|，)\s*$")


# ---- facts one document states about itself -----------------------------------------------------

def normalize(text: str) -> str:
    """NFKC, and line breaks inside CJK text removed (PDF lines break mid-sentence)."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"(?<=[^\x00-\x7f])[ \t]*\n[ \t]*(?=[^\x00-\x7f])", "", text)


def split_title(title: str) -> tuple[str, str | None]:
    """(base title, version marker): the title compared across files, and what told it apart."""
    text = unicodedata.normalize("NFKC", title).strip().strip("《》")
    found: list[str] = []

    def bracketed(match: re.Match[str]) -> str:
        if _VERSIONISH.search(match.group(1)):
            found.append(match.group(1))
            return ""
        whole: str = match.group(0)
        return whole

    text = _BRACKET.sub(bracketed, text)
    for pattern in _MARKERS:
        found += [m.group(0) for m in pattern.finditer(text)]
        text = pattern.sub("", text)
    base = _NOT_TITLE_CHARS.sub("", text).lower()
    return base, _marker(" ".join(found)) if found else None


def _marker(raw: str) -> str:
    """"2025" for a year, "2024-03-01" for a date, "v2.0" for a version number, else the text."""
    day = _MARKER_DATE.search(raw)
    if day:
        return "-".join(f"{int(g):02d}" for g in day.groups() if g)
    year = _YEAR_RE.search(raw)
    if year:
        return year.group(0)
    number = _VERSION_NO.search(raw)
    if number:
        return f"v{number.group(1)}"
    return _NOT_TITLE_CHARS.sub("", raw)


def is_generic(base_title: str) -> bool:
    """Too common to identify a document by itself: listed, or very short."""
    if base_title in GENERIC_TITLES:
        return True
    cjk = sum(1 for ch in base_title if "\u4e00" <= ch <= "\u9fff")
    return cjk <= 3 if cjk else len(base_title) <= 6


def effective_date(text: str, known: date | None = None) -> tuple[date | None, str | None]:
    """The date a document takes effect and the text that says so: a 生效日期 line, "自2025年1月1日
    起施行", or "自发布之日起执行" with a 发布日期. `known` (sidecar or parser) wins."""
    stated_dates: list[tuple[date | None, str]] = []
    for match in _LABELLED.finditer(text):
        stated_dates.append((_date(match), match.group(0)))
    for sentence in _sentences(text):
        stated = _STATED.search(sentence) or _ON_ISSUE.search(sentence)
        if stated is None or "《" in sentence[: stated.start()]:
            continue  # no start date, or another document's (《…》自…起施行)
        if stated.re is _STATED:
            stated_dates.append((_date(stated), sentence))
        elif issued := _ISSUED.search(text):
            stated_dates.append((_date(issued), f"{sentence}; {issued.group(0)}"))
    candidates = [(d, s) for d, s in stated_dates if d is not None]
    if known is not None:
        basis = next((s for d, s in candidates if d == known), None)
        return known, basis
    return candidates[0] if candidates else (None, None)


def _date(match: re.Match[str]) -> date | None:
    numbers = [int(g) for g in match.groups() if g is not None][:3]
    try:
        return date(*numbers)
    except (TypeError, ValueError):
        return None


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def repeal_statements(text: str) -> list[RepealStatement]:
    """Sentences that repeal or replace a document named by its 《title》. 代替 without a 《title》
    object ("不得代替下一级审批人审批") and references (根据《…》) are not repeals."""
    found: list[RepealStatement] = []
    for sentence in _sentences(text):
        refs = list(_TITLE_REF.finditer(sentence))
        repealed: list[bool] = [False] * len(refs)
        for i in range(len(refs) - 1, -1, -1):
            ref = refs[i]
            end = refs[i + 1].start() if i + 1 < len(refs) else len(sentence)
            after = sentence[ref.end():end]
            marker = _BRACKET.match(after)
            if marker and _VERSIONISH.search(marker.group(1)):
                after = after[marker.end():]
            before = sentence[refs[i - 1].end() if i else 0: ref.start()]
            if _REFERENCE.search(before):
                continue  # 根据《…》…: the title is what the text relies on
            if _REPEAL_AFTER.match(after) or _REPEAL_BEFORE.search(before):
                repealed[i] = True
            elif i + 1 < len(refs) and _CONJUNCTION.match(after):
                repealed[i] = repealed[i + 1]  # 《A》和《B》同时废止
        for ref, hit in zip(refs, repealed, strict=True):
            if hit:
                following = sentence[ref.end():]
                marker = _BRACKET.match(following)
                named = ref.group(1)
                if marker and _VERSIONISH.search(marker.group(1)):
                    named += f"({marker.group(1)})"
                found.append(RepealStatement(title=named, sentence=sentence))
    return found


def facts(title: str, text: str, known_from: date | None = None) -> DocumentIdentity:
    """What a document's own title and text say about which document and version it is."""
    text = normalize(text)
    base, marker = split_title(title)
    effective, basis = effective_date(text, known_from)
    return DocumentIdentity(title=title, base_title=base, marker=marker, effective_from=effective,
                            effective_basis=basis, repeals=repeal_statements(text))


def body_text(doc: ParsedDocument) -> str:
    """The text the rules read: every block but whole-table Markdown (its rows follow). A block
    that ends mid-sentence (a paragraph split at a page break) runs on into the next one; a
    heading or a finished sentence does not."""
    parts: list[str] = []
    for block in doc.blocks:
        if block.kind == BlockKind.TABLE:
            continue
        text = block.text.strip()
        finished = block.kind == BlockKind.HEADING or text.endswith(_FINISHED)
        parts += [text, "\n\n" if finished else "\n"]
    return "".join(parts)


# ---- links between documents and the decision ---------------------------------------------------

@dataclass
class Candidate:
    """A sidecar-less version: parsed in this run, or published earlier (then `published`)."""

    ref: str  # its source path
    doc_id: str
    version_id: str
    tenant_id: str
    facts: DocumentIdentity
    text: str | None  # body text; None when unknown (a published version not reloaded)
    file_hash: str = ""
    published: bool = False
    recorded: bool = False  # its doc id and version were decided by an earlier run: kept


@dataclass
class Decision:
    doc_id: str
    version_id: str
    identity: DocumentIdentity


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the bodies' character 3-grams (letters, digits and CJK only)."""
    grams_a, grams_b = _grams(a), _grams(b)
    if not grams_a or not grams_b:
        return 0.0
    return len(grams_a & grams_b) / len(grams_a | grams_b)


def _grams(text: str) -> set[str]:
    chars = _NOT_TITLE_CHARS.sub("", normalize(text))
    return {chars[i:i + 3] for i in range(len(chars) - 2)}


def links(candidates: list[Candidate]) -> list[tuple[int, int, VersionLink]]:
    """(older index, newer index, evidence) for every pair the rules link. Only files sharing a
    base title, or named by a repeal statement, are compared: no all-pairs scan."""
    by_base: dict[str, list[int]] = {}
    for i, c in enumerate(candidates):
        if c.facts.base_title:
            by_base.setdefault(c.facts.base_title, []).append(i)
    found: list[tuple[int, int, VersionLink]] = []
    for i, first in enumerate(candidates):
        named = {split_title(r.title)[0] for r in first.facts.repeals}
        own = by_base.get(first.facts.base_title, [])
        if is_generic(first.facts.base_title) and len(own) > MAX_GENERIC_SHARED:
            own = []  # many files called 通知 are many notices, not versions of one
        others = {j for base in named for j in by_base.get(base, [])} | set(own)
        for j in sorted(others - {i}):
            second = candidates[j]
            if first.tenant_id != second.tenant_id or not same_folder(first.ref, second.ref):
                continue
            older, newer = j, i  # a repeal: the one stating it is the newer
            link = _repeal_link(first, second)
            if link is None and j < i:  # each unordered pair once
                link = _same_title_link(first, second)
                if _order(second) > _order(first):
                    older, newer = i, j
            if link is None:
                continue
            if _generic(first, second):
                score = _similarity(first, second)
                if score < MIN_SIMILARITY:
                    continue
                link.similarity = round(score, 3)
            found.append((older, newer, link))
    return found


def same_folder(a: str, b: str) -> bool:
    """Versions of one document live in one folder: who may write a folder decides what its
    documents are, so a file elsewhere (another team's, another tenant's) that names a
    document's title never takes it over."""
    return Path(a).parent == Path(b).parent


def _repeal_link(newer: Candidate, older: Candidate) -> VersionLink | None:
    for statement in newer.facts.repeals:
        base, marker = split_title(statement.title)
        if base != older.facts.base_title:
            continue
        if marker and older.facts.marker and marker != older.facts.marker:
            continue  # names another version of the same title
        if marker and marker == newer.facts.marker and base == newer.facts.base_title:
            continue  # names the document's own version
        a, b = older.facts.effective_from, newer.facts.effective_from
        if a and b and a >= b:
            continue  # the repealed one would take effect later: contradictory
        if a and not b:
            continue  # undated, it would sort before the one it repeals and be closed by it
        return VersionLink(rule="repeal", other="", other_path=older.ref,
                           detail=statement.sentence)
    return None


def _same_title_link(newer: Candidate, older: Candidate) -> VersionLink | None:
    if newer.facts.base_title != older.facts.base_title:
        return None
    a, b = older.facts.effective_from, newer.facts.effective_from
    distinct = newer.facts.marker != older.facts.marker or (a and b and a != b)
    if not distinct:
        return None  # same title, nothing telling versions apart: two documents, not versions
    if a and b and a == b:
        return None  # both in force from one day: no order to close one by the other
    if bool(a) != bool(b):  # versions sort by date, undated first: the markers must agree
        undated, dated = (newer, older) if a else (older, newer)
        if not _marker_before(undated.facts.marker, dated.facts.marker):
            return None
    return VersionLink(rule="same_title", other="", other_path=older.ref,
                       detail=f"《{newer.facts.title}》 = 《{older.facts.title}》 without version "
                              f"markers ({newer.facts.base_title})")


def _marker_before(first: str | None, second: str | None) -> bool:
    """Whether marker `first` is an earlier year/date or a lower version number than `second`;
    False when they cannot be compared (修订版 against 2024)."""
    keys = []
    for marker in (first, second):
        if marker and re.fullmatch(r"\d{4}(?:-\d{2}){0,2}", marker):
            keys.append(("date", tuple(int(p) for p in marker.split("-"))))
        elif marker and re.fullmatch(r"v\d+(?:\.\d+)*", marker):
            keys.append(("version", tuple(int(p) for p in marker[1:].split("."))))
        else:
            return False
    return keys[0][0] == keys[1][0] and keys[0][1] < keys[1][1]


def _generic(a: Candidate, b: Candidate) -> bool:
    return is_generic(a.facts.base_title) or is_generic(b.facts.base_title)


def _similarity(a: Candidate, b: Candidate) -> float:
    if a.text is None or b.text is None:
        return 0.0
    return similarity(a.text, b.text)


def _order(c: Candidate) -> tuple[date, str]:
    return c.facts.effective_from or date.min, c.facts.marker or ""


def decide(candidates: list[Candidate], taken: Callable[[str, str, set[str]], bool]
           ) -> dict[str, Decision]:
    """A decision per unpublished candidate (by ref): its doc id, version id and evidence.

    Linked candidates share a doc id: the published one's when the group has one, else one an
    earlier run gave a member (`recorded`; ids in the stores are never rekeyed), else one derived
    from the newest version's base title.
    `taken(doc_id, version_id, refs)` says the key (the doc id when version_id is "") is used by
    a file outside `refs`, so a new doc id gets a hash suffix and a version id falls back from
    marker to date to file hash."""
    parent = list(range(len(candidates)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    found = links(candidates)
    for a, b, _ in found:
        parent[root(a)] = root(b)
    groups: dict[int, list[int]] = {}
    for i in range(len(candidates)):
        groups.setdefault(root(i), []).append(i)

    decisions: dict[str, Decision] = {}
    assigned: set[str] = set()
    for members in groups.values():
        members.sort(key=lambda i: _order(candidates[i]))
        linked = len(members) > 1
        refs = {candidates[i].ref for i in members}
        doc_id = None
        if linked:
            doc_id = _group_doc_id([candidates[i] for i in members], refs, assigned, taken)
            assigned.add(doc_id)
        fixed = {i for i in members if candidates[i].published
                 or (candidates[i].recorded and candidates[i].doc_id == doc_id)}
        used: set[str] = {candidates[i].version_id for i in fixed}
        keys: dict[int, tuple[str, str]] = {}
        for i in members:
            c = candidates[i]
            if i in fixed or doc_id is None:
                keys[i] = c.doc_id, c.version_id
                continue
            keys[i] = doc_id, _version_id(c, doc_id, used, taken)
            used.add(keys[i][1])
        for i in members:
            c = candidates[i]
            if c.published:
                continue
            evidence = [link.model_copy(update={"other": version_key(*keys[b if a == i else a]),
                                                "other_path": candidates[b if a == i else a].ref,
                                                "other_is": "newer" if a == i else "older"})
                        for a, b, link in found if i in (a, b)]
            identity = c.facts.model_copy(update={"inferred": linked, "links": evidence})
            decisions[c.ref] = Decision(doc_id=keys[i][0], version_id=keys[i][1],
                                        identity=identity)
    return decisions


def _group_doc_id(members: list[Candidate], refs: set[str], assigned: set[str],
                  taken: Callable[[str, str, set[str]], bool]) -> str:
    kept = [c for c in members if c.published] or [c for c in members if c.recorded]
    if kept:  # ids already in the stores stay: chunks are never rekeyed
        return kept[-1].doc_id
    base = members[-1].facts.base_title  # the newest version's name
    tenant, _, _ = members[-1].doc_id.rpartition(TENANT_SEPARATOR)  # scoped ids stay scoped
    doc_id = re.sub(r"[^\w]+", "-", base).strip("-").lower() or "document"
    doc_id = f"{tenant}{TENANT_SEPARATOR}{doc_id}" if tenant else doc_id
    if taken(doc_id, "", refs) or doc_id in assigned:  # it names another document already
        doc_id += "-" + xxhash.xxh64_hexdigest("\x1f".join(sorted(refs)).encode())[:6]
    return doc_id


def _version_id(c: Candidate, doc_id: str, used: set[str],
                taken: Callable[[str, str, set[str]], bool]) -> str:
    fallback = c.file_hash[:8] or xxhash.xxh64_hexdigest(c.ref.encode())[:8]
    options = [c.facts.marker,
               c.facts.effective_from.isoformat() if c.facts.effective_from else None, fallback]
    for option in options:
        if option and option not in used and not taken(doc_id, option, {c.ref}):
            return option
    return fallback


# ---- the flow's entry point ----------------------------------------------------------------------

def identify(docs: Iterable[ParsedDocument], manifest: ManifestStore) -> list[ParsedDocument]:
    """Rewrite the metas of sidecar-less documents that are versions of one another (or of a
    published version): doc id, version id, effective date from the text, evidence. Called after
    parsing and before chunking, since chunk ids derive from doc id and version."""
    docs = list(docs)
    parsed = {d.meta.source_path: d for d in docs if _inferable(d)}
    if not parsed:
        return docs
    candidates = [Candidate(ref=ref, doc_id=d.meta.doc_id, version_id=d.meta.version_id,
                            tenant_id=d.meta.tenant_id, text=body_text(d),
                            file_hash=d.meta.file_hash, recorded=d.meta.identity is not None,
                            facts=facts(d.meta.title, body_text(d), d.meta.effective_from))
                  for ref, d in parsed.items()]
    titles = {c.facts.base_title for c in candidates}
    titles |= {split_title(r.title)[0] for c in candidates for r in c.facts.repeals}
    for r in manifest.identified():
        if r.identity is None or r.source_path in parsed:
            continue
        named = {split_title(s.title)[0] for s in r.identity.repeals}
        if r.identity.base_title not in titles and not named & titles:
            continue  # cannot link to anything parsed in this run
        if is_generic(r.identity.base_title):
            continue  # its body is not at hand to compare: a generic title never links alone
        candidates.append(Candidate(ref=r.source_path, doc_id=r.doc_id, version_id=r.version_id,
                                    tenant_id=r.tenant_id or "", facts=r.identity, text=None,
                                    file_hash=r.file_hash or "", published=True))
    recorded: dict[str, dict[str, str]] = {}  # doc id → version → its file, read when asked

    def owners(doc_id: str) -> dict[str, str]:
        if doc_id not in recorded:
            recorded[doc_id] = {r.version_id: r.source_path
                                for r in manifest.documents(doc_ids=[doc_id])}
        return recorded[doc_id]

    def taken(doc_id: str, version_id: str, refs: set[str]) -> bool:
        if not version_id:
            files = {*owners(doc_id).values(),
                     *(d.meta.source_path for d in docs if d.meta.doc_id == doc_id)}
            return bool(files - refs)
        return owners(doc_id).get(version_id, next(iter(refs))) not in refs

    decisions = decide(candidates, taken)
    out = []
    for doc in docs:
        decision = decisions.get(doc.meta.source_path)
        if decision is not None:
            update = {"identity": decision.identity, "doc_id": decision.doc_id,
                      "version_id": decision.version_id,
                      "effective_from": decision.identity.effective_from}
            doc = doc.model_copy(update={"meta": doc.meta.model_copy(update=update)})
        out.append(doc)
    return out


def _inferable(doc: ParsedDocument) -> bool:
    """No sidecar names the doc id or version: inference may decide them. A sidecar that became
    unreadable since it was read keeps the document out of inference."""
    try:
        sidecar, _ = read_sidecar(Path(doc.meta.source_path))
    except (OSError, ValueError):
        return False
    return not (sidecar.doc_id or sidecar.version)
