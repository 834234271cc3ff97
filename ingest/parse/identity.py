"""Which sidecar-less files are versions of one document, decided from their own text.

Two files are linked as versions of one document when
- `repeal`: one names the other by its 《title》 as repealed or replaced (…同时废止, 代替《…》,
  不再执行, or 原通知/原办法…同时作废 up to three sentences after the 《title》), the named title
  matching the other's title with or without its version marker; or
- `reissue`: one is the other's title re-issued, marked （更正）, （修订）, 第二版 where the other
  has no marker: the marked one is newer, even from the same day; or
- `same_title`: their titles are equal once version markers are stripped ((2024版), 2025年修订,
  修订版, v2, V2.0, dates, 试行) and something tells the versions apart (marker or effective date;
  a law's adoption and amendment lines: parts of one law in several files share them).
Titles match with or without a leading organisation name (宏远集团…, 中华人民共和国…; see
`identity_text.title_match`), which the link's evidence records. Laws are dated by the latest
adoption or amendment line of their opening (`identity_text.effective_date`).

Conservative on purpose: a generic title (通知, 办法, README, very short titles) links only when
the bodies are also alike; a document never links to itself (a repeal of its own earlier
version names its own title); files of different tenants never link; versions must be in the
order their effective dates give (that order closes the older one): the repealed one takes
effect before the one repealing it, and an undated version never links where it would sort
before a newer one; versions of one document lie in one folder (who may write the folder
decides: see `same_folder`). Linked files share one doc id and get version ids from their markers or
effective dates; a sidecar that sets doc_id or version is never overridden.

The rules (`identity_text.facts`, `links`, `decide`) are pure; `identify` applies them to a run's
parsed documents and the versions its manifest already published. A new version that links to a
published one takes that one's doc id (published chunks are never rekeyed); published versions
with a generic title are not compared (their bodies are not at hand), and versions published
before identities were recorded (manifest migration 002) are not either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import xxhash

from ingest.models import BlockKind, DocumentIdentity, ParsedDocument, VersionLink, version_key
from ingest.parse.identity_text import (
    facts,
    is_generic,
    organisation_variants,
    reissues,
    similarity,
    split_title,
    title_match,
)
from ingest.parse.metadata import read_sidecar
from ingest.parse.names import TENANT_SEPARATOR

if TYPE_CHECKING:  # the manifest imports the parsers' models; only its type is needed here
    from ingest.manifest import ManifestStore

MIN_SIMILARITY = 0.4  # body 3-gram Jaccard a generic title needs to link
MAX_GENERIC_SHARED = 20  # more files than this sharing a generic title are never compared
_FINISHED = ("。", "；", ";", "！", "!", "？", "?", "：", ":")


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


def links(candidates: list[Candidate]) -> list[tuple[int, int, VersionLink]]:
    """(older index, newer index, evidence) for every pair the rules link. Only files sharing a
    base title (with or without a leading organisation name), or named by a repeal statement,
    are compared: no all-pairs scan."""
    by_key: dict[str, set[int]] = {}
    for i, c in enumerate(candidates):
        for key in _keys(c.facts.base_title):
            by_key.setdefault(key, set()).add(i)

    def sharing(base: str) -> set[int]:
        return {j for key in _keys(base) for j in by_key.get(key, ())}

    found: list[tuple[int, int, VersionLink]] = []
    for i, first in enumerate(candidates):
        named = {split_title(r.title)[0] for r in first.facts.repeals}
        own = sharing(first.facts.base_title)
        if is_generic(first.facts.base_title) and len(own) > MAX_GENERIC_SHARED:
            own = set()  # many files called 通知 are many notices, not versions of one
        others = {j for base in named for j in sharing(base)} | own
        for j in sorted(others - {i}):
            second = candidates[j]
            if first.tenant_id != second.tenant_id or not same_folder(first.ref, second.ref):
                continue
            older, newer = j, i  # a repeal: the one stating it is the newer
            link = _repeal_link(first, second)
            if link is None and j < i:  # each unordered pair once
                titled = _reissue_link(first, second) or _same_title_link(first, second)
                link, first_is_newer = titled or (None, True)
                if not first_is_newer:
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


def _keys(base_title: str) -> set[str]:
    """What a base title is found under: itself and itself without a leading organisation name."""
    return {base_title, *organisation_variants(base_title)} - {""}


def _repeal_link(newer: Candidate, older: Candidate) -> VersionLink | None:
    for statement in newer.facts.repeals:
        base, marker = split_title(statement.title)
        org = title_match(base, older.facts.base_title)
        if org is None:
            continue
        if marker and older.facts.marker and marker != older.facts.marker:
            continue  # names another version of the same title
        if (marker and marker == newer.facts.marker
                and title_match(base, newer.facts.base_title) is not None):
            continue  # names the document's own version
        a, b = older.facts.effective_from, newer.facts.effective_from
        if a and b and a >= b:
            continue  # the repealed one would take effect later: contradictory
        if a and not b:
            continue  # undated, it would sort before the one it repeals and be closed by it
        return VersionLink(rule="repeal", other="", other_path=older.ref,
                           detail=statement.sentence, org_prefix=org or None)
    return None


def _reissue_link(first: Candidate, second: Candidate) -> tuple[VersionLink, bool] | None:
    """(evidence, whether `first` is the newer) when one is the other's title re-issued: marked
    （更正）, （修订）, 第二版 where the other has no marker (or the same year: 2026更正 of 2026).
    The marked one is the newer even from the same day (a correction keeps the date it corrects)
    or undated, never when dated earlier or undated next to a dated original (undated sorts
    first)."""
    if reissues(first.facts.marker, second.facts.marker):
        newer, older = first, second
    elif reissues(second.facts.marker, first.facts.marker):
        newer, older = second, first
    else:
        return None
    org = title_match(newer.facts.base_title, older.facts.base_title)
    if org is None:
        return None
    a, b = older.facts.effective_from, newer.facts.effective_from
    if (a and b and a > b) or (a and not b):
        return None
    link = VersionLink(rule="reissue", other="", other_path=older.ref, org_prefix=org or None,
                       detail=f"《{newer.facts.title}》 re-issues 《{older.facts.title}》 "
                              f"({newer.facts.marker})")
    return link, newer is first


def _same_title_link(first: Candidate, second: Candidate) -> tuple[VersionLink, bool] | None:
    """(evidence, whether `first` is the newer) when the titles are equal without version
    markers (and perhaps an organisation name) and marker or date tells the two apart."""
    first_is_newer = _order(first) >= _order(second)
    newer, older = (first, second) if first_is_newer else (second, first)
    org = title_match(newer.facts.base_title, older.facts.base_title)
    if org is None:
        return None
    a, b = older.facts.effective_from, newer.facts.effective_from
    distinct = newer.facts.marker != older.facts.marker or (a and b and a != b)
    if not distinct:
        return None  # same title, nothing telling versions apart: two documents, not versions
    if older.facts.amended and older.facts.amended == newer.facts.amended:
        return None  # one law's parts in two files (one without its 施行 line), or copies
    if a and b and a == b:
        return None  # both in force from one day: no order to close one by the other
    if bool(a) != bool(b):  # versions sort by date, undated first: the markers must agree
        undated, dated = (newer, older) if a else (older, newer)
        if not _marker_before(undated.facts.marker, dated.facts.marker):
            return None
    without = f"version markers and {org}" if org else "version markers"
    link = VersionLink(rule="same_title", other="", other_path=older.ref, org_prefix=org or None,
                       detail=f"《{newer.facts.title}》 = 《{older.facts.title}》 without "
                              f"{without} ({newer.facts.base_title})")
    return link, first_is_newer


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
        sidecar, _, _ = read_sidecar(Path(doc.meta.source_path))
    except (OSError, ValueError):
        return False
    return not (sidecar.doc_id or sidecar.version)
