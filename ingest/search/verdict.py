"""The verdict of a search: does the knowledge base answer, and does it contradict itself?

Downstream readers (an assistant, an agent, a help desk) need more than five chunks: whether
the index answers (`sufficient`), says nothing that answers (`no_answer`, from the abstention
model in confidence.py), or answers twice with different values (`conflict`). A conflict is
never settled silently: both chunks are returned, flagged, each with its source, and the kind
says who should win:
- `hierarchy`: the chunks come from different tenants of one scope chain (group and subsidiary);
  the declared precedence decides (default: the narrower scope, the reader's own tenant, first);
- `reissue`: one document is a corrected or revised re-issue of the other (更正, 修订) that was
  not linked as its newer version: the newer one first;
- `definition`: anything else (tax-inclusive vs exclusive, an FAQ paraphrasing a policy): the
  higher authority first.

Two chunks state the same thing for the question when a sentence of each, read with the sentence
before it (an FAQ's question, a clause's lead-in),
- holds the question's rarest word the corpus knows (what the question is about: 住宿 in
  出差住宿标准是多少, not 标准 or 出差; so 请假3天以内由部门负责人审批 and
  出差5天以内由部门负责人审批 do not both answer 请假5天谁审批),
- otherwise says nearly the same (character pairs, digits aside, overlap: segmentation-free),
- and states a value of one kind (money, days, hours, percent, distance, count), the two values
differing. Versions of one document never conflict (only the version in force on the business
date is searched).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from ingest.search.confidence import sentences
from ingest.search.fusion import chinese_number

Verdict = Literal["sufficient", "conflict", "no_answer"]
ConflictKind = Literal["hierarchy", "definition", "reissue"]
SAME_TOPIC = 0.35  # character-pair Jaccard of two value sentences that say the same thing
_UNITS = {  # unit → (kind, factor to the kind's base unit)
    "万元": ("money", 10000.0), "千元": ("money", 1000.0), "元": ("money", 1.0),
    "个工作日": ("workdays", 1.0), "工作日": ("workdays", 1.0), "天": ("days", 1.0),
    "日": ("days", 1.0), "个月": ("months", 1.0), "小时": ("hours", 1.0),
    "%": ("percent", 1.0), "公里": ("km", 1.0), "人": ("people", 1.0), "次": ("times", 1.0),
}
_VALUE = re.compile(r"(\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百]+)\s*("
                    + "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True)) + ")")
_REISSUE = re.compile(r"更正|修订|修正|重新(?:印发|发布)|勘误")
_BRACKETED = re.compile(r"[（(][^（）()]*[）)]")


class Side(BaseModel):
    chunk_id: str
    doc_id: str
    value: str = Field(description="the value as written (500元)")
    sentence: str = Field(description="the sentence stating it")


class Conflict(BaseModel):
    topic: str = Field(description="the content words both sentences share")
    kind: ConflictKind
    rule: str = Field(description="what put side `a` first")
    a: Side
    b: Side


class Evidence(Protocol):
    """What the verdict reads of a result (ingest.search.SearchResult)."""

    chunk_id: str
    doc_id: str
    document_key: str
    text: str
    title_path: list[str]


R = TypeVar("R", bound=Evidence)


@dataclass(frozen=True)
class _Value:
    kind: str
    amount: float
    written: str
    sentence: str
    asked: frozenset[str]  # the question's words the sentence holds
    pairs: frozenset[str]  # its character pairs, digits aside


def values(text: str, asked: Mapping[str, float]) -> list[_Value]:
    """The values a text states in sentences holding the question's rarest known word
    (`asked`: the question's words the corpus knows, with their rarity)."""
    if not asked:
        return []
    key = max(asked, key=lambda word: asked[word])
    found = []
    parts = sentences(unicodedata.normalize("NFKC", text))
    for i, sentence in enumerate(parts):
        # The sentence before belongs to it: an FAQ's question, a clause's lead-in (住宿标准如下).
        context = (parts[i - 1] if i else "") + sentence
        if key not in context:
            continue
        letters = re.sub(r"[\d\s.,，、。;；:：()（）]", "", sentence)
        pairs = frozenset(letters[i:i + 2] for i in range(len(letters) - 1))
        held = frozenset(word for word in asked if word in context)
        for match in _VALUE.finditer(sentence):
            number = match.group(1)
            amount = float(number) if number[0].isdigit() else chinese_number(number)
            if amount is None:
                continue
            kind, factor = _UNITS[match.group(2)]
            found.append(_Value(kind, amount * factor, match.group(0), sentence, held, pairs))
    return found


def conflicts(asked: Mapping[str, float], results: Sequence[R],
              order: Callable[[R, R, ConflictKind], tuple[bool, str]]) -> list[Conflict]:
    """Pairs of results from different documents stating different values of one kind for
    the same thing; `order(x, y, kind)` says whether x goes first, and by which rule."""
    stated = [(r, values(r.text, asked)) for r in results]
    found: list[Conflict] = []
    for i, (x, xs) in enumerate(stated):
        for y, ys in stated[i + 1:]:
            if x.document_key == y.document_key:
                continue
            pair = _differing(xs, ys)
            if pair is None:
                continue
            vx, vy = pair
            kind = _kind(x, y)
            x_first, rule = order(x, y, kind)
            (a, va), (b, vb) = ((x, vx), (y, vy)) if x_first else ((y, vy), (x, vx))
            found.append(Conflict(
                topic=" ".join(sorted(vx.asked & vy.asked)), kind=kind, rule=rule,
                a=Side(chunk_id=a.chunk_id, doc_id=a.doc_id, value=va.written,
                       sentence=va.sentence[:200]),
                b=Side(chunk_id=b.chunk_id, doc_id=b.doc_id, value=vb.written,
                       sentence=vb.sentence[:200])))
    return found


def _differing(xs: Sequence[_Value], ys: Sequence[_Value]) -> tuple[_Value, _Value] | None:
    """The closest pair of same-kind values on one topic that differ (None: they agree, or
    say different things)."""
    best: tuple[float, _Value, _Value] | None = None
    for vx in xs:
        for vy in ys:
            if vx.kind != vy.kind:
                continue
            overlap = len(vx.pairs & vy.pairs) / max(len(vx.pairs | vy.pairs), 1)
            if overlap >= SAME_TOPIC and (best is None or overlap > best[0]):
                best = (overlap, vx, vy)
    if best is None or abs(best[1].amount - best[2].amount) < 1e-9:
        return None
    return best[1], best[2]


def _kind(x: Evidence, y: Evidence) -> ConflictKind:
    if _tenant(x.document_key) != _tenant(y.document_key):
        return "hierarchy"
    tx, ty = (r.title_path[0] if r.title_path else "" for r in (x, y))
    if (_REISSUE.search(tx) or _REISSUE.search(ty)) and _base(tx) == _base(ty):
        return "reissue"
    return "definition"


def _tenant(document_key: str) -> str:
    return document_key.split(":", 1)[0] if ":" in document_key else ""


def _base(title: str) -> str:
    """A title without bracketed parts and re-issue words (…的通知（更正） → …的通知)."""
    text = _BRACKETED.sub("", unicodedata.normalize("NFKC", title))
    return _REISSUE.sub("", re.sub(r"[\s《》\"“”]", "", text))


def decide(no_answer: bool, found: Sequence[Conflict], reason: str) -> tuple[Verdict, str]:
    if no_answer:
        return "no_answer", reason
    if found:
        first = found[0]
        return "conflict", (f"{len(found)} conflict(s): {first.a.doc_id} states {first.a.value}, "
                            f"{first.b.doc_id} states {first.b.value} ({first.kind}, "
                            f"{first.rule})")
    return "sufficient", reason
