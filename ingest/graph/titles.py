"""Which document a cited title names: one resolver for the graph's citations and for queries.

A citation is written many ways: 《中华人民共和国公司法》, 《公司法》, 《公司法（2023修订）》,
《XX集团采购管理办法》 for a document titled 采购管理办法, 〈〉 nested inside 《》, full- or
half-width brackets. Titles are compared through `identity_text.split_title` (the base title
identity links versions by: no version marker, no punctuation, NFKC) and, like identity, with or
without a leading organisation name; the country name 中华人民共和国 may drop even before a
two-character rest (《刑法》), since the corpus itself then says what the short name means.
A document may also name another by an abbreviation it defines (（以下简称《解释》）).

Never a guess between documents: a variant that names more than one document is `ambiguous`, a
generic title (《办法》, 《条例》) names only the citing document itself (its own kind: 《解释》
inside an interpretation) or nothing. Unresolved citations keep a reason (`DANGLING`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ingest.parse.identity_text import is_generic, organisation_variants, split_title

COUNTRY = "中华人民共和国"
# rule → how sure a resolution by it is (the edge's confidence factor)
RULES = {"exact": 1.0, "version": 1.0, "self": 1.0, "prefix": 0.95, "alias": 0.95,
         "unquoted": 0.9, "amended": 0.9}
DANGLING = ("ambiguous", "generic", "form", "not_in_corpus", "unknown_article")
DANGLING_CONFIDENCE = 1.0  # the text surely cites something; only the target is unknown
# What 《…》 also names that is no document: certificates, forms, lists, tables, letters.
_FORM = re.compile(r"(?:证|证书|执照|许可证|通行证|书|单|表|登记簿|簿|名录|清单|目录|证明|批件|"
                   r"公约|协定|协议|条约|规则|惯例|章程|方案|进行曲)$")
_PUNCT = re.compile(r"[\W_]+")
# （以下简称《解释》） / (以下简称"公司法") / （以下简称本法）: an abbreviation the document defines
_DEFINED = re.compile(r"《([^《》]{2,80})》\s*[(（]\s*以下(?:简称|称)\s*[《“\"]?"
                      r"([^()（）《》“”\"]{1,20})[》”\"]?\s*[)）]")


@dataclass(frozen=True)
class Resolution:
    """What a cited title resolved to: a document's title, or None with a dangling `kind`."""

    title: str | None
    rule: str  # a key of RULES, or "dangling:<kind>"
    confidence: float

    @property
    def kind(self) -> str | None:
        return self.rule.partition(":")[2] if self.title is None else None


def loose(title: str) -> str:
    """NFKC, no punctuation, brackets or spaces, lower case: 公司法（2023修订） → 公司法2023修订."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", title)).lower()


def base(title: str) -> str:
    """The base title identity compares: no version marker either (公司法2023修订 → 公司法)."""
    return split_title(loose_brackets(title))[0]


def loose_brackets(title: str) -> str:
    """〈〉 nested in a title and 《》 around it are the same title without them."""
    text = unicodedata.normalize("NFKC", title).strip().strip("《》")
    return re.sub(r"[〈〉《》]", "", text)


def shortened(key: str) -> dict[str, str]:
    """A base title without its leading organisation or country name → the rule that drops it.
    The country name drops before any rest of two characters or more (刑法, 公司法)."""
    found = {rest: "prefix" for rest in organisation_variants(key)}
    if key.startswith(COUNTRY) and len(key) - len(COUNTRY) >= 2:
        found[key[len(COUNTRY):]] = "prefix"
    return found


class TitleIndex:
    """The titles of a corpus, each found under its base title and its shortened variants."""

    def __init__(self, titles: Iterable[str]) -> None:
        self.titles = sorted({t.strip() for t in titles if t and t.strip()})
        self._exact: dict[str, set[str]] = {}
        self._base: dict[str, set[str]] = {}
        self._short: dict[str, set[str]] = {}
        for title in self.titles:
            self._exact.setdefault(loose(loose_brackets(title)), set()).add(title)
            key = base(title)
            self._base.setdefault(key, set()).add(title)
            for short in shortened(key):
                self._short.setdefault(short, set()).add(title)

    def resolve(self, cited: str, citing: str = "",
                aliases: Mapping[str, Resolution] | None = None) -> Resolution:
        """The document `cited` (a 《…》's inside) names, read from the document titled `citing`
        that defined `aliases` (abbreviation → what it stands for)."""
        cited = loose_brackets(cited)
        if aliases and cited in aliases:
            return aliases[cited]
        exact = self._exact.get(loose(cited), set())
        if len(exact) == 1:
            return _found(next(iter(exact)), "exact")
        key = base(cited)
        if citing and key and _is_self(key, citing):
            return _found(citing, "self")
        if is_generic(key) and not self._short.get(key) and not self._base.get(key):
            return _dangling("generic")
        found = self._versions(self._base.get(key, set()), cited)
        if found is not None:
            return found
        candidates: set[str] = set(self._short.get(key, set()))
        for short in shortened(key):  # 《XX集团采购管理办法》 names 采购管理办法
            candidates |= self._base.get(short, set())
        if len({base(t) for t in candidates}) == 1:
            return _found(_newest(candidates, cited), "prefix")
        if candidates:
            return _dangling("ambiguous")
        return _dangling("form" if _FORM.search(key) else "not_in_corpus")

    def _versions(self, titles: set[str], cited: str) -> Resolution | None:
        """Titles sharing the cited base title are versions of one document (identity's
        same_title rule): the one with the cited marker, else the newest marker."""
        if not titles:
            return None
        return _found(_newest(titles, cited), "version")

    def aliases(self, text: str, citing: str) -> dict[str, Resolution]:
        """The abbreviations a document's text defines: 《A》（以下简称《B》） → B stands for A."""
        found: dict[str, Resolution] = {}
        for match in _DEFINED.finditer(unicodedata.normalize("NFKC", text)):
            full, short = match.group(1), loose_brackets(match.group(2))
            resolution = self.resolve(full, citing)
            if resolution.title is not None:
                found[short] = Resolution(resolution.title, "alias",
                                          RULES["alias"] * resolution.confidence)
        return found


def _is_self(key: str, citing: str) -> bool:
    """A generic kind that the citing title ends with: 《解释》 inside 《…的解释》."""
    return is_generic(key) and base(citing).endswith(key)


def _newest(titles: set[str], cited: str) -> str:
    marker = split_title(loose_brackets(cited))[1]
    same = [t for t in titles if split_title(loose_brackets(t))[1] == marker]
    return max(same or titles, key=lambda t: (split_title(loose_brackets(t))[1] or "", t))


def _found(title: str, rule: str) -> Resolution:
    return Resolution(title, rule, RULES[rule])


def _dangling(kind: str) -> Resolution:
    return Resolution(None, f"dangling:{kind}", DANGLING_CONFIDENCE)
