"""Entity linking: which graph entities a query names, deterministically and offline.

The vocabulary is the graph's own entity names (a store's `entities(tenant)`), read through the
same canonical spelling the extractors write (normalize.py), so 部门主管 in a query finds the
部门负责人 node. Recognised: document titles with or without 《》 (a quoted title also through its
variants: 《公司法》 → 中华人民共和国公司法, graph/titles.py), clause numbers in either form
(第十二条, 第12条, 12条, 4.2; tied to a title when the query names one), roles (with their
aliases) and any other entity name the query contains. A name inside a longer linked name
(差旅费 inside 差旅费管理办法) is dropped: the longer one is what the reader meant; a title inside
an unknown 《…》 is another document's title and links nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from ingest.graph.normalize import ALIASES, canonical
from ingest.graph.titles import TitleIndex
from ingest.models import GraphNode

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CLAUSE_NAME = re.compile(r"^《(.+)》(.+)$")
_QUOTED = re.compile(r"《([^《》]{1,60})》")
_ARTICLE = re.compile(r"第\s*([一二三四五六七八九十百千零〇两\d]+)\s*条|(?<![\d.])(\d{1,3})\s*条")
_DECIMAL = re.compile(r"(?<![\d.])(\d{1,2}(?:\.\d{1,3})+)(?![\d.])")
_AFTER_TITLE = re.compile(r"》\s*(\d{1,3})(?![\d.条])")
MIN_NAME = 2  # shorter names (single characters) match too much text to mean anything


@dataclass(frozen=True)
class Link:
    """A graph entity the query names: `surface` is the query text that named it."""

    name: str
    type: str
    surface: str
    score: float  # 1.0 exact title or clause, less for looser evidence


def clause_key(text: str) -> str | None:
    """One spelling per clause number: 第十二条, 第12条 and 12条 → "art:12"; 4.2 → "dec:4.2"."""
    text = unicodedata.normalize("NFKC", text).strip()
    match = _ARTICLE.fullmatch(text) or re.fullmatch(r"(\d{1,3})", text)
    if match:
        number = chinese_number(next(g for g in match.groups() if g))
        return f"art:{number}" if number else None
    if _DECIMAL.fullmatch(text):
        return f"dec:{text}"
    return None


def article_spellings(clause_no: str) -> set[str]:
    """A 第N条 clause number as either numbering writes it (第12条 ↔ 第十二条): a citation may
    spell it otherwise than the cited text's own heading."""
    match = _ARTICLE.fullmatch(unicodedata.normalize("NFKC", clause_no).strip())
    number = chinese_number(match.group(1)) if match and match.group(1) else None
    if number is None:
        return {clause_no}
    return {clause_no, f"第{number}条", f"第{chinese_numeral(number)}条"}


def chinese_numeral(number: int) -> str:
    """12 → 十二, 105 → 一百零五, 1260 → 一千二百六十 (as laws number their articles)."""
    digits = "零一二三四五六七八九"
    parts: list[str] = []
    zero = False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = number // unit % 10
        if digit:
            if zero and parts:
                parts.append("零")
            parts.append(("" if unit == 10 and number < 20 else digits[digit]) + name)
            zero = False
        elif parts:
            zero = True
    return "".join(parts) or "零"


def chinese_number(text: str) -> int | None:
    """十二 → 12, 一百零五 → 105, 12 → 12; None for anything else."""
    if text.isdigit():
        return int(text)
    total, digit = 0, None
    for char in text:
        if char in _CN_DIGITS:
            digit = _CN_DIGITS[char]
        elif char in _CN_UNITS:
            total += (1 if digit is None else digit) * _CN_UNITS[char]
            digit = None
        else:
            return None
    return total + (digit or 0) or None


class EntityIndex:
    """The entity names of one tenant's graph, ready to match query text against."""

    def __init__(self, entities: Iterable[GraphNode]) -> None:
        self.by_name: dict[str, list[GraphNode]] = {}
        self.clauses: dict[str, list[tuple[str, GraphNode]]] = {}  # clause key → (title, node)
        for node in entities:
            self.by_name.setdefault(node.name, []).append(node)
            parsed = _CLAUSE_NAME.match(node.name)
            key = clause_key(parsed.group(2)) if parsed else None
            if parsed and key:
                self.clauses.setdefault(key, []).append((parsed.group(1), node))
        self.titles = {n.name for nodes in self.by_name.values() for n in nodes
                       if n.type == "Document"}
        # Longest first, so the scan below prefers 差旅费管理办法 to 差旅费.
        self._names = sorted((n for n in self.by_name if len(n) >= MIN_NAME),
                             key=lambda n: (-len(n), n))
        self._aliases = {variant: name for variant, name in ALIASES.items()
                         if name in self.by_name}
        self._titles: TitleIndex | None = None  # built when a quoted title needs resolving

    def link(self, query: str) -> list[Link]:
        """Entities the query names, best evidence first (each entity once)."""
        text = unicodedata.normalize("NFKC", query)
        found: list[tuple[int, int, Link]] = []  # (start, end, link)
        quoted = list(_QUOTED.finditer(text))
        for match in quoted:
            name = canonical(match.group(1))
            for node in self.by_name.get(name, []):
                found.append((match.start(), match.end(), Link(node.name, node.type,
                                                               match.group(0), 1.0)))
            if name not in self.by_name:  # 《公司法》 for 中华人民共和国公司法 (graph/titles.py)
                resolved = self._title_index().resolve(name)
                if resolved.title is not None:
                    found.append((match.start(), match.end(), Link(
                        resolved.title, "Document", match.group(0), resolved.confidence)))
        for name in self._names:
            for start in _occurrences(text, name):
                for node in self.by_name[name]:
                    if node.type == "Document" and any(
                            q.start() < start and start + len(name) < q.end() for q in quoted):
                        continue  # 《差旅费管理办法实施细则》 is another document
                    score = 0.9 if node.type in ("Document", "Role") else 0.8
                    found.append((start, start + len(name), Link(node.name, node.type, name,
                                                                 score)))
        for variant, name in self._aliases.items():
            for start in _occurrences(text, variant):
                for node in self.by_name[name]:
                    found.append((start, start + len(variant), Link(name, node.type, variant,
                                                                    0.9)))
        found = _outermost(found)
        titles = {link.name for _, _, link in found if link.type == "Document"}
        found += self._clauses(text, titles)
        best: dict[tuple[str, str], Link] = {}
        for _, _, link in found:
            key = (link.name, link.type)
            if key not in best or link.score > best[key].score:
                best[key] = link
        return sorted(best.values(), key=lambda link: (-link.score, link.name, link.type))

    def _title_index(self) -> TitleIndex:
        if self._titles is None:
            self._titles = TitleIndex(self.titles)
        return self._titles

    def _clauses(self, text: str, titles: set[str]) -> list[tuple[int, int, Link]]:
        """Clause entities by number; within the titles the query names when it names any."""
        spans = [(m.start(), m.end(), m.group(0)) for m in _ARTICLE.finditer(text)]
        spans += [(m.start(), m.end(), m.group(1)) for m in _DECIMAL.finditer(text)]
        spans += [(m.start(1), m.end(1), m.group(1)) for m in _AFTER_TITLE.finditer(text)]
        found = []
        for start, end, surface in spans:
            key = clause_key(surface)
            for title, node in self.clauses.get(key or "", []):
                if titles and title not in titles:
                    continue
                found.append((start, end, Link(node.name, node.type, surface,
                                               1.0 if titles else 0.6)))
        return found


def _occurrences(text: str, name: str) -> list[int]:
    starts, at = [], text.find(name)
    while at >= 0:
        starts.append(at)
        at = text.find(name, at + 1)
    return starts


def _outermost(found: list[tuple[int, int, Link]]) -> list[tuple[int, int, Link]]:
    """Drop a match lying strictly inside a longer one (差旅费 inside 《差旅费管理办法》)."""
    return [(s, e, link) for s, e, link in found
            if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _ in found)]
