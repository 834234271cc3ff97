"""What a model's reply may add to the graph: read tolerantly, kept strictly.

Real models wrap JSON in prose or ``` fences, stop mid-array when they run out of tokens, write
full-width quotes and colons around keys, spell keys `Subject` or `object type`, invent
predicates, turn a relation around, or state things the chunk never says (a reply may also be
steered by text inside the chunk). So a reply is read as leniently as can be done safely:
the first JSON object in it, full-width punctuation outside strings made ASCII, every complete
triple of a truncated array; and every triple is then kept only when
- its predicate is one of RELATIONS (after PREDICATE_ALIASES), with its subject and object of
  the types the relation takes (a relation written backwards is turned round), an Amount
  holding a number, a cited Clause holding a clause number;
- its subject and its object are grounded: each occurs in the chunk text, or is the document's
  title, the chunk's section or clause (so a reply cannot bring in names the chunk lacks);
- it is no self-reference: a citation is made by this chunk or its document, of something else
  (a cited Chinese document is written in 《》 there), and the document is not its own "matter".
Every triple dropped is counted by reason, and logged.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ingest.graph.normalize import canonical_predicate
from ingest.models import Chunk

log = logging.getLogger(__name__)

# predicate → (subject types, preferred first; object type): the relation set the prompt names.
RELATIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "审批": (("Role",), "Matter"),
    "负责": (("Role",), "Matter"),
    "引用": (("Document", "Clause"), "Document"),
    "引用条款": (("Clause", "Document"), "Clause"),
    "标准": (("Matter",), "Amount"),
}
# A name typed Role or Amount is never re-typed; Matter, Clause and Document are what models
# confuse (a clause about a matter), so those take the type the relation gives them.
_FIXED_TYPES = ("Role", "Amount")
# What models write for the relations above, beside the canonical spellings.
PREDICATE_ALIASES: dict[str, str] = {
    "审核": "审批", "审议": "审批", "审批人": "审批", "approves": "审批", "approve": "审批",
    "approved by": "审批", "主管": "负责", "管理": "负责", "负责人": "负责",
    "responsible for": "负责", "is responsible for": "负责", "参照": "引用", "依据": "引用",
    "参见": "引用", "cites": "引用", "refers to": "引用", "引用条款": "引用条款",
    "限额": "标准", "上限": "标准", "额度": "标准", "不超过": "标准", "limit": "标准",
    "has limit": "标准", "standard": "标准",
}
_KEYS = {"subject": "subject", "subjecttype": "subject_type", "predicate": "predicate",
         "relation": "predicate", "object": "object", "objecttype": "object_type",
         "confidence": "confidence"}
_FULL_WIDTH = str.maketrans({"“": '"', "”": '"', "＂": '"', "：": ":", "，": ",", "｛": "{",
                             "｝": "}", "［": "[", "］": "]"})
_FENCE = re.compile(r"```(?:json)?\s*(.*?)(?:```|$)", re.S)
# A clause number ends a cited clause's name: 《办法》第七条, 第七条第二款, 本规范3.2.
CLAUSE_REFERENCE = re.compile(
    r"(?:第[0-9〇零一二三四五六七八九十百千]+[条款项章节])+$|^\D{0,20}\d+(?:\.\d+)+$")
_NUMBER = re.compile(r"[0-9０-９一二三四五六七八九十百千万两半]")
_SQUEEZE = re.compile(r"[\s\"'“”‘’《》「」『』【】()（）]+")
MAX_REPLY_CHARS = 200_000  # a reply for one chunk is a few kB; more is a model running away


def payload_of(reply: str) -> Any:
    """The JSON value a reply carries, read leniently; None when there is none."""
    reply = reply[:MAX_REPLY_CHARS]
    fenced = _FENCE.search(reply)
    text = fenced.group(1) if fenced else reply
    start = text.find("{")
    if start < 0:
        return None
    text = text[start:]
    for candidate in (text, _ascii_outside_strings(text)):
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate)
            return value
        except (ValueError, RecursionError):
            continue
    return _salvaged(_ascii_outside_strings(text))


def _ascii_outside_strings(text: str) -> str:
    """Full-width “”：，{}[] made ASCII, except inside ASCII-quoted strings (a value may hold a
    Chinese colon)."""
    out, inside, escaped = [], False, False
    for ch in text:
        if inside:
            out.append(ch)
            escaped = ch == "\\" and not escaped
            if ch == '"' and not escaped:
                inside = False
            continue
        mapped = ch.translate(_FULL_WIDTH)
        inside = mapped == '"' and ch == '"'
        out.append(mapped)
    return "".join(out)


def _salvaged(text: str) -> Any:
    """{"triples": [every complete item]} of a reply cut off inside its triples array."""
    match = re.search(r'"triples"\s*:\s*\[', text)
    if not match:
        return None
    decoder, items, at = json.JSONDecoder(), [], match.end()
    while True:
        at = _skip(text, at, " \t\r\n,")
        try:
            item, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            break
        items.append(item)
    return {"triples": items, "truncated": True} if items else None


def _skip(text: str, at: int, chars: str) -> int:
    while at < len(text) and text[at] in chars:
        at += 1
    return at


def normalized_item(item: Any) -> Any:
    """Keys in their schema spelling (`Subject`, `subject type`, `subjectType` …); keys the
    schema does not know are left out (provenance never comes from a reply)."""
    if not isinstance(item, dict):
        return item
    out: dict[str, Any] = {}
    for key, value in item.items():
        name = _KEYS.get(re.sub(r"[^a-z]", "", str(key).lower()))
        if name is not None:
            out.setdefault(name, value)
    return out


def fitted(item: dict[str, Any], drops: Counter[str]) -> dict[str, Any] | None:
    """The item with its predicate in RELATIONS and its direction and types fitted to it; None
    (counted) when it cannot be."""
    predicate = canonical_predicate(str(item.get("predicate", "")))
    predicate = PREDICATE_ALIASES.get(predicate.lower(), predicate)
    if predicate not in RELATIONS:
        drops["predicate outside the relation set"] += 1
        return None
    subjects, object_type = RELATIONS[predicate]
    s_type, o_type = item.get("subject_type"), item.get("object_type")
    backwards = (s_type not in subjects and o_type in subjects) or (
        o_type != object_type and s_type == object_type)
    if backwards:  # "部门负责人" 审批 written as matter → role
        item = {**item, "subject": item.get("object"), "object": item.get("subject")}
        s_type, o_type = o_type, s_type
    if s_type not in subjects:
        if s_type in _FIXED_TYPES or subjects[0] in _FIXED_TYPES:
            drops["types do not fit the predicate"] += 1
            return None
        s_type = subjects[0]
    if o_type != object_type:
        if o_type in _FIXED_TYPES or (object_type in _FIXED_TYPES and o_type != "Matter"):
            drops["types do not fit the predicate"] += 1
            return None
        o_type = object_type
    amounts = [item.get(k) for k, t in (("subject", s_type), ("object", o_type)) if t == "Amount"]
    if any(not _NUMBER.search(str(name)) for name in amounts):
        drops["an Amount without a number"] += 1
        return None
    if predicate == "引用条款" and not CLAUSE_REFERENCE.search(str(item.get("object")).strip()):
        drops["a cited Clause that is no clause number"] += 1
        return None
    return {**item, "predicate": predicate, "subject_type": s_type, "object_type": o_type}


def grounded(name: Any, chunk_text: str, known: set[str], title: str = "") -> bool:
    """The name occurs in the chunk text (spacing, quotes and width aside), is a known name, or
    is the document's title followed by what the text says (《title》第七条 for 本办法第七条)."""
    key, text = squeezed(str(name)), squeezed(chunk_text)
    rest = key.removeprefix(squeezed(title)) if title else key
    return bool(key) and (key in text or key in known or (bool(rest) and rest in text))


def squeezed(text: str) -> str:
    return _SQUEEZE.sub("", unicodedata.normalize("NFKC", text)).lower()


_CJK = re.compile(r"[\u4e00-\u9fff]")
_TITLE = re.compile(r"《([^《》]{1,60})》")


@dataclass(frozen=True)
class Own:
    """The chunk's own document title, clause number and headings (squeezed): what a reply may
    name, but not cite, and not take for a matter."""

    title: str
    clause: str
    headings: frozenset[str]

    def cited(self, name: str, predicate: str) -> bool:
        """Citing the document itself (or a name holding its title: 表1费用报销标准表), a
        heading of the chunk, its own clause, or a section above it (2.2 from 2.2.4)."""
        key = squeezed(name)
        if key in self.headings:
            return True
        if predicate == "引用":
            return bool(self.title) and self.title in key
        key = key.removeprefix(self.title)
        return not key or key == self.clause or (bool(self.clause) and
                                                 self.clause.startswith(key + "."))

    def cites(self, triple: dict[str, Any], text: str) -> bool:
        """The citing side is this document or clause, and a document cited from Chinese text
        is written as a title there (《…》), as Chinese policies always write them."""
        subject = squeezed(triple["subject"]).removeprefix(self.title)
        if subject not in ("", self.clause):
            return False
        if triple["predicate"] == "引用" and _CJK.search(text):
            return squeezed(triple["object"]) in {squeezed(t) for t in _TITLE.findall(text)}
        return True

    def is_document(self, name: str) -> bool:
        key = squeezed(name)
        return bool(key and self.title) and self.title in key


def known_names(chunk: Chunk, title: str) -> set[str]:
    """Names a triple may use beyond the chunk text: the document, its sections, the clause."""
    clause = chunk.clause_no or ""
    names = {title, f"{title}{clause}", clause, *chunk.title_path}
    return {squeezed(n) for n in names if n}


CITING = ("引用", "引用条款")


def rejection(kept: dict[str, Any], chunk: Chunk, title: str) -> str:
    """Why a fitted triple may not be kept ("" when it may): every name grounded in the chunk,
    no self-reference, a citation this chunk makes, the document not taken for a matter."""
    subject, obj, predicate = kept["subject"], kept["object"], kept["predicate"]
    known = known_names(chunk, title)
    own = Own(squeezed(title), squeezed(chunk.clause_no or ""),
              frozenset(squeezed(h) for h in chunk.title_path))
    if not (grounded(subject, chunk.text, known, title)
            and grounded(obj, chunk.text, known, title)):
        return "names something the chunk does not state"
    if squeezed(subject) == squeezed(obj):
        return "subject is the object"
    if predicate in CITING and own.cited(obj, predicate):
        return "cites its own document, section or clause"
    if predicate in CITING and not own.cites(kept, chunk.text):
        return "a citation this chunk does not make"
    matter = (subject if kept["subject_type"] == "Matter"
              else obj if kept["object_type"] == "Matter" else "")
    if own.is_document(matter):
        return "the document itself as a matter"
    return ""
