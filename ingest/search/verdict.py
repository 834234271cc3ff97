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

Two results state the same thing for the question when a clause of each (comma-delimited,
read with the clause before it: 住宿费实行限额报销：一线城市每晚不超过600元)
- holds one of the question's words of two or more characters (it is about what was asked,
  not another clause of the same chunk),
- shares a content word with the other's (住宿费; not a measure word like 以内 or 每人每天: so
  请假3天以内…审批 and 境内出差5天以内…审批 are different topics),
- reads alike (at least SAME_TOPIC of the shorter one's character pairs, digits aside),
- and states a value of one kind (money, days, hours, percent, distance, count) counted per the
  same period when both name one (300元 a month is not 80元 a day), the two values differing.
Dates (3月1日) are not values. Versions of one document never conflict (only the version in
force on the business date is searched).
Tuned on eval/evidence_cases.jsonl (planted conflicts) against eval/sample_cases.jsonl and
eval/format_cases.jsonl (none planted): see README, "The search verdict".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from ingest.search.fusion import chinese_number
from ingest.stores.tokens import STOPWORDS, cached_tokens
from ingest.text import sentences

Verdict = Literal["sufficient", "conflict", "no_answer"]
ConflictKind = Literal["hierarchy", "definition", "reissue"]
# Share of the shorter value clause's character pairs the other has too: they say the same
# thing (an FAQ's short answer paraphrases a long clause, so not Jaccard).
SAME_TOPIC = 0.4
_UNITS = {  # unit → (kind, factor to the kind's base unit)
    "万元": ("money", 10000.0), "千元": ("money", 1000.0), "元": ("money", 1.0),
    "个工作日": ("workdays", 1.0), "工作日": ("workdays", 1.0), "天": ("days", 1.0),
    "日": ("days", 1.0), "个月": ("months", 1.0), "小时": ("hours", 1.0),
    "%": ("percent", 1.0), "公里": ("km", 1.0), "人": ("people", 1.0), "次": ("times", 1.0),
}
_VALUE = re.compile(r"(\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百]+)\s*("
                    + "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True)) + ")")
_CLAUSE_END = re.compile(r"[,，;；:：]")
_NOT_LETTER = re.compile(r"[\d\s.,，、。;；:：()（）]")
_DATE_BEFORE = re.compile(r"[年月]$")
# Words of measure, not of topic: 5天以内 and 5天以上 may be one topic, 每人每天 is none.
_MEASURES = frozenset({"以内", "以上", "以下", "不超过", "超过", "最多", "最高", "标准", "金额"})
_PERIOD = re.compile(r"每(?:人|人次)?每?([天日晚月年次周])")
_SAME_PERIOD = {"日": "天", "晚": "天"}
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

    rank: int
    chunk_id: str
    doc_id: str
    document_key: str
    tenant_id: str
    scope_depth: int  # 0: the reader's own tenant, 1: its parent, …
    authority: str | None
    text: str
    title_path: list[str]


@dataclass(frozen=True)
class Precedence:
    """Who goes first in a conflict: declared rules, never the model."""

    scope: Literal["narrower", "broader"] = "narrower"  # KBFLOW_SCOPE_PRECEDENCE
    authority_levels: tuple[str, ...] = ("policy", "notice", "faq", "chat")  # highest first

    def first(self, x: Evidence, y: Evidence, kind: ConflictKind) -> tuple[bool, str]:
        """Whether x goes before y, and the rule that said so."""
        if kind == "hierarchy":
            narrower = x.scope_depth < y.scope_depth
            return (narrower if self.scope == "narrower" else not narrower,
                    f"the {self.scope} scope wins (KBFLOW_SCOPE_PRECEDENCE={self.scope})")
        if kind == "reissue":
            return (bool(_REISSUE.search(_title(x))) or not _REISSUE.search(_title(y)),
                    "the corrected or revised re-issue first")
        rx, ry = self.level(x.authority), self.level(y.authority)
        if rx != ry:
            return rx < ry, (f"higher authority first ({x.authority if rx < ry else y.authority}"
                             f" over {y.authority if rx < ry else x.authority})")
        return x.rank < y.rank, "equal authority: the better-ranked first"

    def level(self, authority: str | None) -> int:
        """0 for the highest level; undeclared ranks below every declared one."""
        levels = self.authority_levels
        return levels.index(authority) if authority in levels else len(levels)


R = TypeVar("R", bound=Evidence)


@dataclass(frozen=True)
class _Value:
    kind: str
    amount: float
    written: str
    sentence: str
    per: str  # the period it is counted in (每月 → 月, 每人每天 → 天; "" when none)
    words: frozenset[str]  # content words of the clause stating it (and the clause before)
    pairs: frozenset[str]  # that text's character pairs, digits aside


def values(text: str, asked: Collection[str]) -> list[_Value]:
    """The values a text states in clauses (comma-delimited, read with the clause before:
    住宿费实行限额报销：一线城市…600元) that hold one of the question's words."""
    found = []
    asked = [word for word in asked if len(word) > 1]  # 人 or 钱 would anchor any clause
    for sentence in sentences(unicodedata.normalize("NFKC", text)):
        clauses = _CLAUSE_END.split(sentence)
        for before, clause in zip(["", *clauses], clauses, strict=False):
            here = f"{before},{clause}"
            if any(word in here for word in asked):
                found += _stated(clause, here, sentence)
    return found


def _stated(clause: str, here: str, sentence: str) -> list[_Value]:
    letters = _NOT_LETTER.sub("", here)
    pairs = frozenset(letters[i:i + 2] for i in range(len(letters) - 1))
    words = frozenset(w for w in cached_tokens(here) if len(w) > 1 and not w[0].isdigit()
                      and w not in STOPWORDS and w not in _MEASURES and not w.startswith("每"))
    found = []
    for match in _VALUE.finditer(clause):
        number, unit = match.group(1), match.group(2)
        if _DATE_BEFORE.search(clause[:match.start()]) or (unit in "天日" and number in "一两"):
            continue  # 3月1日 is a date; 一天 in 一天能报多少 asks, it states nothing
        amount = float(number) if number[0].isdigit() else chinese_number(number)
        if amount is not None:
            kind, factor = _UNITS[unit]
            periods = _PERIOD.findall(clause[:match.start()])
            per = _SAME_PERIOD.get(periods[-1], periods[-1]) if periods else ""
            found.append(_Value(kind, amount * factor, match.group(0), sentence, per, words,
                                pairs))
    return found


def conflicts(asked: Collection[str], results: Sequence[R],
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
                topic=" ".join(sorted(vx.words & vy.words)), kind=kind, rule=rule,
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
            if (vx.kind != vy.kind or not vx.words & vy.words
                    or (vx.per and vy.per and vx.per != vy.per)):
                continue  # another measure, topic or period (300元 a month is not 80元 a day)
            overlap = len(vx.pairs & vy.pairs) / max(min(len(vx.pairs), len(vy.pairs)), 1)
            if overlap >= SAME_TOPIC and (best is None or overlap > best[0]):
                best = (overlap, vx, vy)
    if best is None or abs(best[1].amount - best[2].amount) < 1e-9:
        return None
    return best[1], best[2]


def _kind(x: Evidence, y: Evidence) -> ConflictKind:
    if x.tenant_id != y.tenant_id:
        return "hierarchy"
    tx, ty = _title(x), _title(y)
    if (_REISSUE.search(tx) or _REISSUE.search(ty)) and _base(tx) == _base(ty):
        return "reissue"
    return "definition"


def _title(result: Evidence) -> str:
    return result.title_path[0] if result.title_path else ""


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
