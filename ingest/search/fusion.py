"""Fusion rules, kept pure: weighted reciprocal-rank fusion and exact identifiers first.

A query that names an identifier (an error code such as SEC-3001, a clause number in either
第十二条 or 4.2 form, a quoted title 《…》) wants the chunk that carries it, which the dense path
cannot tell from its neighbours; so chunks that contain an identifier exactly rank above all
others, in fused order. An amount with its unit (5天, 30万元) is different: a question usually
states it as a value to look up ("请假5天需要谁审批"), and the clause answering it states a range
("3天以上"), so an amount is matched (for the confidence signal) but never reorders results.
Weights depend on the query's language because the default dense model (bge-small-zh) reads
Chinese well and English poorly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}
_CODE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]+[-_]?\d{2,}(?:[-_]\d+)*(?![A-Za-z0-9])")
_CLAUSE_CN = re.compile(r"第([零〇一二两三四五六七八九十百\d]+)条")
_DECIMAL = re.compile(r"(?<![\d.])\d{1,2}(?:\.\d{1,3}){1,3}(?![\d.])")
_TITLE = re.compile(r"《([^《》]{2,40})》")
_AMOUNT = re.compile(r"\d+(?:\.\d+)?\s*(?:元|万元|千元|公里|天|日|小时|个工作日|%|％)")


class Identifiers(BaseModel):
    """What in a query must be matched exactly; each a normalised string."""

    clauses: list[str] = []  # "12" for 第十二条 / 第12条; "4.2.2" for 4.2.2
    strings: list[str] = []  # codes and titles: matched inside the chunk text
    amounts: list[str] = []  # numbers with units: matched inside the chunk text, not as 15天

    def __bool__(self) -> bool:
        return bool(self.clauses or self.strings or self.amounts)

    def without_titles(self) -> Identifiers:
        """Codes and clause numbers only: a title names a document, not the answer in it."""
        return Identifiers(clauses=self.clauses,
                           strings=[s for s in self.strings if not s.startswith("《")])


def normalise(text: str) -> str:
    """NFKC, no whitespace, lower case: full-width digits and "第 10 条" match the parser's."""
    return "".join(unicodedata.normalize("NFKC", text).split()).lower()


def chinese_number(numeral: str) -> int | None:
    """十二 → 12, 一百零五 → 105, 12 → 12; None when it is not a number."""
    if numeral.isdigit():
        return int(numeral)
    total, current = 0, 0
    for ch in numeral:
        if ch in _DIGITS:
            current = _DIGITS[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


def clause_key(clause_no: str | None) -> str | None:
    """A clause number in the one form queries and chunks are compared in."""
    if not clause_no:
        return None
    text = normalise(clause_no)
    match = _CLAUSE_CN.fullmatch(text)
    if match:
        number = chinese_number(match.group(1))
        return str(number) if number is not None else None
    return text if _DECIMAL.fullmatch(text) or text.isdigit() else None


def identifiers(query: str) -> Identifiers:
    text = unicodedata.normalize("NFKC", query)
    clauses = [clause_key(m.group(0)) for m in _CLAUSE_CN.finditer(text)]
    clauses += [m.group(0) for m in _DECIMAL.finditer(text)]
    strings = [m.group(0) for m in _CODE.finditer(text)]
    strings += [f"《{m.group(1)}》" for m in _TITLE.finditer(text)]
    amounts = [m.group(0) for m in _AMOUNT.finditer(text)]
    return Identifiers(clauses=sorted({c for c in clauses if c}),
                       strings=sorted({normalise(s) for s in strings}),
                       amounts=sorted({normalise(a) for a in amounts}))


def exact_matches(ids: Identifiers, clause_no: str | None, text: str) -> int:
    """How many of the query's identifiers (clause numbers, codes, titles) the chunk carries:
    what ranks a chunk first."""
    if not (ids.clauses or ids.strings):
        return 0
    body = _bare(normalise(text))
    own = clause_key(clause_no)
    return sum(own == c for c in ids.clauses) + sum(_bare(s) in body for s in ids.strings)


def _bare(text: str) -> str:
    """Without hyphens and underscores: SEC3001 is written SEC-3001 in the policy."""
    return re.sub(r"[-_]", "", text)


def missing_codes(ids: Identifiers, texts: Iterable[str]) -> list[str]:
    """The query's codes (E208, SEC-3001; not titles or clause numbers) when none of `texts`
    carries any of them, hyphens aside: a question about a code the index never states has no
    answer here, however close the neighbouring codes' rows read."""
    codes = [s for s in ids.strings if not s.startswith("《")]
    if not codes:
        return []
    bare = [_bare(code) for code in codes]
    for text in texts:
        body = _bare(normalise(text))
        if any(code in body for code in bare):
            return []
    return codes


def amount_matches(ids: Identifiers, text: str) -> int:
    """How many of the query's amounts the chunk states, whole: 5天 is not in 15天 or 2.5天."""
    body = normalise(text)
    return sum(re.search(r"(?<![\d.])" + re.escape(a), body) is not None for a in ids.amounts)


def is_english(query: str) -> bool:
    """Latin words and (almost) no Chinese: the Chinese model's dense ranking is weaker there.
    A Chinese question naming a code (VPN 报 SEC-3001 怎么办) stays Chinese."""
    cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in query)
    return cjk <= 2 and any(ch.isascii() and ch.isalpha() for ch in query)


def rrf(ranked: Mapping[str, Sequence[str]], weights: Mapping[str, float],
        k: int = 60) -> dict[str, float]:
    """Weighted reciprocal-rank fusion of ranked id lists: id → score."""
    scores: dict[str, float] = {}
    for path, ids in ranked.items():
        for rank, chunk_id in enumerate(ids, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weights.get(path, 1.0) / (k + rank)
    return scores


def order(scores: Mapping[str, float], exact: Mapping[str, int]) -> list[str]:
    """Chunks carrying more of the query's identifiers first, then by fused score."""
    return sorted(scores, key=lambda c: (-exact.get(c, 0), -scores[c], c))
