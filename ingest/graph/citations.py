"""Citations in a clause's text: which document, which articles, and how sure.

Three ways a text cites: a 《title》 (perhaps followed by 第十条第二款、第十二条), a self-reference
(本法第五条, 本办法第三条) and a bare article number (第五条: the citing document's own), or a
law's short name written without 《》 right before an article (依照刑法第二百六十六条), which
counts only when the corpus resolves the name. Each citation is resolved through the corpus's
titles (titles.py); a number inside a cited title (《关于〈刑法〉第三十条的解释》) is not a
reference of the citing text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ingest.graph.titles import RULES, Resolution, TitleIndex
from ingest.text import CN_NUM

_CITED = re.compile(r"《([^《》\n]{1,120})》")
_ARTICLE = rf"第{CN_NUM}条(?:之{CN_NUM})?(?:第{CN_NUM}款)?(?:第{CN_NUM}项)?"
_JOIN = r"\s*(?:、|,|和|及|以及|或者|或|至|到)\s*"
_CHAIN = re.compile(rf"\s*({_ARTICLE}(?:{_JOIN}{_ARTICLE})*)")
_ONE = re.compile(rf"(第{CN_NUM}条(?:之{CN_NUM})?)(?:第{CN_NUM}款)?(?:第{CN_NUM}项)?")
_SELF = re.compile(r"本(?:法|法典|办法|条例|规定|细则|规则|解释|决定|制度|规范|章程|准则|通知|意见|"
                   r"措施|标准|守则)")
_DECIMAL_SELF = re.compile(r"(?<=本规范)\d+(?:\.\d+)+")
# a short name without 《》 right before an article: the longest run of CJK characters before it
_UNQUOTED = re.compile(r"([\u4e00-\u9fff]{2,20})$")
_LAW_NAME = re.compile(r"(?:法|法典|条例)$")
_MAX_UNQUOTED = 12


@dataclass(frozen=True)
class Citation:
    """One cited document (and article when `article` is set), as the text wrote it."""

    surface: str  # 《公司法》第十条第二款, 本法第五条, 第五条
    resolution: Resolution
    article: str | None  # 第十条 (the clause number chunks carry), None: the whole document


def citations(text: str, citing: str, index: TitleIndex,
              aliases: Mapping[str, Resolution] | None = None) -> Iterator[Citation]:
    """Every citation in `text`, written in the document titled `citing`."""
    text = unicodedata.normalize("NFKC", text)
    taken: list[tuple[int, int]] = []
    own = Resolution(citing, "self", RULES["self"])
    for match in _CITED.finditer(text):
        resolution = index.resolve(match.group(1), citing, aliases)
        chain = _CHAIN.match(text, match.end())
        taken.append((match.start(), chain.end() if chain else match.end()))
        yield Citation(match.group(0), resolution, None)
        if chain:
            for one in _ONE.finditer(chain.group(1)):
                yield Citation(match.group(0) + one.group(0), resolution, one.group(1))
    for match in _SELF.finditer(text):
        chain = _CHAIN.match(text, match.end())
        if chain and not _inside(match.start(), taken):
            taken.append((match.start(), chain.end()))
            for one in _ONE.finditer(chain.group(1)):
                yield Citation(match.group(0) + one.group(0), own, one.group(1))
    for match in _CHAIN.finditer(text):
        start = match.start(1)
        if _inside(start, taken):
            continue
        named = _unquoted(text[:start], citing, index)
        for one in _ONE.finditer(match.group(1)):
            if named is None:
                yield Citation(one.group(0), own, one.group(1))
            else:
                yield Citation(named[0] + one.group(0), named[1], one.group(1))
    for match in _DECIMAL_SELF.finditer(text):
        yield Citation("本规范" + match.group(0), own, match.group(0))


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= at < end for start, end in spans)


def _unquoted(before: str, citing: str, index: TitleIndex) -> tuple[str, Resolution] | None:
    """(name, resolution) of a law named without 《》 right before an article number: the
    longest tail of the CJK run that resolves to another document by its title or short name."""
    run = _UNQUOTED.search(before)
    if run is None:
        return None
    name = run.group(1)[-_MAX_UNQUOTED:]
    if not _LAW_NAME.search(name):
        return None
    for start in range(len(name) - 1):
        tail = name[start:]
        found = index.resolve(tail, citing)
        if found.title is not None and found.rule != "self":
            return tail, Resolution(found.title, "unquoted", RULES["unquoted"] * found.confidence)
    return None
