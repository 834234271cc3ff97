"""DOCX automatic numbering: the label Word draws before a numbered paragraph ("第一条", "1.2",
"（一）", "A)"), which python-docx does not render and a clause-aware chunker needs — Chinese
policies very often let Word number their 第X章/第X条, and without the label the article number
is gone from the text.

A paragraph is numbered by its w:numPr (numId, ilvl), or by one inherited from its paragraph
style (w:basedOn chain). numbering.xml maps w:num to a w:abstractNum (through w:numStyleLink to
the definition whose w:styleLink names the same numbering style), with per-num w:lvlOverride
(w:startOverride, or a whole w:lvl). Counters are kept per abstract definition, as Word does (a
list "continues" across nums sharing one, even one that only overrides a level's format), except
that a num with a w:startOverride counts on its own (how Word and LibreOffice write "restart
numbering"). A deeper level restarts when a shallower one advances, unless its w:lvlRestart
says otherwise; a level skipped on the way down counts as started at its start value.

Bullets get no label: their glyph is usually a private-use character of the Symbol/Wingdings
fonts (U+F0B7), noise in a search index, and the chunker keeps list items in their clause
without it. A missing or broken numbering part, an unknown number format, an out-of-range level
give no label, never an error; hostile values are bounded (start values, 9 levels, the length
of a level's text, one numStyleLink hop, a bounded style chain).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.part import Part
from lxml import etree

from ingest.parse.errors import ParseError
from ingest.parse.word_notes import W, part_root

_LEVELS = 9  # Word's levels are 0..8
_MAX_START = 32767  # Word's own limit for a start value
_MAX_LEVEL_TEXT = 64  # a level's text ("第%1条", "%1.%2.%3") is short; a longer one is hostile
_MAX_STYLE_CHAIN = 16
_PLACEHOLDER = re.compile(r"%([1-9])")
_SUFFIXES = {"tab": " ", "space": " ", "nothing": ""}
_CN_DIGITS = "〇一二三四五六七八九"


@dataclass
class _Level:
    start: int = 0  # ECMA-376 17.9.25: no w:start counts from zero
    fmt: str = "decimal"
    text: str | None = None
    restart: int | None = None  # lvlRestart: restart after a level < this one advances
    legal: bool = False  # isLgl: every number of the label in decimal ("1.1", not "I.A")
    style: str | None = None  # the paragraph style this level is linked to (w:pStyle)
    suffix: str = " "


@dataclass
class _Num:
    abstract: str
    starts: dict[int, int] = field(default_factory=dict)  # w:startOverride per level
    levels: dict[int, _Level] = field(default_factory=dict)  # whole w:lvl overrides


class Numbering:
    """The numbering definitions of one document and the counters of its lists."""

    def __init__(self, abstracts: dict[str, dict[int, _Level]], nums: dict[str, _Num],
                 styles: dict[str, tuple[str | None, int | None, str | None]],
                 default_style: str | None) -> None:
        self.abstracts = abstracts
        self.nums = nums
        self.styles = styles  # style id -> (numId, ilvl, basedOn)
        self.default_style = default_style
        self._counters: dict[str, dict[int, int]] = {}

    @classmethod
    def of(cls, document_part: Part) -> Numbering:
        """Read numbering.xml and the paragraph styles; without either, nothing is numbered."""
        roots = {}
        for rel in document_part.rels.values():
            if rel.reltype in (RT.NUMBERING, RT.STYLES) and not rel.is_external:
                try:
                    roots[rel.reltype] = part_root(rel.target_part)
                except ParseError:  # not well-formed: it only costs the labels
                    continue
        numbering, styles = roots.get(RT.NUMBERING), roots.get(RT.STYLES)
        abstracts, nums = _definitions(numbering) if numbering is not None else ({}, {})
        style_map, default = _styles(styles) if styles is not None else ({}, None)
        return cls(abstracts, nums, style_map, default)

    def label(self, p: etree._Element) -> str:
        """The paragraph's label with the separator Word puts after it ("第一条 "), "" when it
        is not numbered; counts the paragraph in its list either way."""
        num_id, ilvl, style = self._num_pr(p)
        num = self.nums.get(num_id) if num_id not in (None, "0") else None  # 0: numbering off
        levels = self.abstracts.get(num.abstract) if num is not None else None
        if num is None or levels is None:
            return ""
        levels = {**levels, **num.levels}
        if ilvl is None:
            ilvl = next((i for i, lvl in levels.items() if style and lvl.style == style), 0)
        level = levels.get(ilvl)
        if level is None:  # also a level out of 0..8
            return ""
        key = f"num:{num_id}" if num.starts else f"abstract:{num.abstract}"
        counters = self._counters.setdefault(key, {})
        for shallower in range(ilvl):  # a skipped level counts as started ("2.a.I", then "2.b")
            counters.setdefault(shallower, self._start(num, levels, shallower))
        start = self._start(num, levels, ilvl)
        counters[ilvl] = min(counters[ilvl] + 1, 10 * _MAX_START) if ilvl in counters else start
        for deeper in [d for d in counters if d > ilvl]:
            restart = levels[deeper].restart if deeper in levels else None
            if restart is None or ilvl < restart:
                del counters[deeper]
        if level.fmt == "bullet" or not level.text:
            return ""

        def number(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1
            ref = levels.get(index, _Level())
            if ref.fmt == "bullet":  # a bullet level inside a composite label shows nothing
                return ""
            value = counters.get(index, self._start(num, levels, index))
            shown = _format(value, "decimal" if level.legal and ref.fmt != "none" else ref.fmt)
            if shown is None:
                raise LookupError(ref.fmt)
            return shown

        try:
            text = _PLACEHOLDER.sub(number, level.text)
        except LookupError:  # a format this reader does not know: no label rather than a wrong one
            return ""
        return text + level.suffix if text.strip() else ""

    @staticmethod
    def _start(num: _Num, levels: dict[int, _Level], ilvl: int) -> int:
        return num.starts.get(ilvl, levels[ilvl].start if ilvl in levels else 0)

    def _num_pr(self, p: etree._Element) -> tuple[str | None, int | None, str | None]:
        """numId and ilvl of the paragraph, completed from its style chain; and its style id."""
        style_el = p.find(f"{W}pPr/{W}pStyle")
        style = style_el.get(W + "val") if style_el is not None else self.default_style
        num_pr = p.find(f"{W}pPr/{W}numPr")
        num_id = _val(num_pr.find(W + "numId")) if num_pr is not None else None
        ilvl = _int(num_pr.find(W + "ilvl")) if num_pr is not None else None
        current, seen = style, set[str]()
        while (num_id is None or ilvl is None) and current and current not in seen \
                and len(seen) < _MAX_STYLE_CHAIN:
            seen.add(current)
            style_num, style_ilvl, current = self.styles.get(current, (None, None, None))
            if num_id is None:
                num_id = style_num
            if ilvl is None and num_id == style_num:
                ilvl = style_ilvl
        return num_id, ilvl, style


def _definitions(root: etree._Element) -> tuple[dict[str, dict[int, _Level]], dict[str, _Num]]:
    """Abstract definitions, and nums pointing at theirs (through a numStyleLink once, to the
    definition whose styleLink names that style: no chain, so no cycle)."""
    own: dict[str, dict[int, _Level]] = {}
    linked_to: dict[str, str] = {}
    by_style: dict[str, str] = {}
    for abstract in root.iterchildren(W + "abstractNum"):
        key = abstract.get(W + "abstractNumId", "")
        own[key] = _levels(abstract.iterchildren(W + "lvl"))
        if (link := _val(abstract.find(W + "numStyleLink"))) is not None:
            linked_to[key] = link
        if (name := _val(abstract.find(W + "styleLink"))) is not None:
            by_style.setdefault(name, key)
    nums = {}
    for num in root.iterchildren(W + "num"):
        abstract_id = _val(num.find(W + "abstractNumId"))
        if abstract_id is None:
            continue
        entry = _Num(by_style.get(linked_to.get(abstract_id, ""), abstract_id))
        for override in num.iterchildren(W + "lvlOverride"):
            ilvl = _int(override, "ilvl")
            if ilvl is None or not 0 <= ilvl < _LEVELS:
                continue
            if (start := _int(override.find(W + "startOverride"))) is not None:
                entry.starts[ilvl] = _bounded(start)
            entry.levels.update(_levels(override.iterchildren(W + "lvl")))
        nums[num.get(W + "numId", "")] = entry
    return own, nums


def _levels(lvls: Iterable[etree._Element]) -> dict[int, _Level]:
    """Levels 0..8, the first definition of each (thousands of w:lvl cost one pass)."""
    levels: dict[int, _Level] = {}
    for lvl in lvls:
        ilvl = _int(lvl, "ilvl")
        if ilvl is None or not 0 <= ilvl < _LEVELS or ilvl in levels:
            continue
        text = lvl.find(W + "lvlText")
        legal = lvl.find(W + "isLgl")
        start = _int(lvl.find(W + "start"))
        levels[ilvl] = _Level(
            start=_bounded(start) if start is not None else 0,
            fmt=_val(lvl.find(W + "numFmt")) or "decimal",
            text=(text.get(W + "val", "")[:_MAX_LEVEL_TEXT] if text is not None else None),
            restart=_int(lvl.find(W + "lvlRestart")),
            legal=legal is not None and legal.get(W + "val", "1") not in ("0", "false", "off"),
            style=_val(lvl.find(W + "pStyle")),
            suffix=_SUFFIXES.get(_val(lvl.find(W + "suff")) or "tab", " "))
    return levels


def _styles(root: etree._Element
            ) -> tuple[dict[str, tuple[str | None, int | None, str | None]], str | None]:
    """Paragraph styles' own numPr and the style each is based on; the default style's id."""
    styles, default = {}, None
    for style in root.iterchildren(W + "style"):
        if style.get(W + "type") != "paragraph":
            continue
        style_id = style.get(W + "styleId", "")
        num_pr = style.find(f"{W}pPr/{W}numPr")
        styles[style_id] = (_val(num_pr.find(W + "numId")) if num_pr is not None else None,
                            _int(num_pr.find(W + "ilvl")) if num_pr is not None else None,
                            _val(style.find(W + "basedOn")))
        if default is None and style.get(W + "default") in ("1", "true", "on"):
            default = style_id
    return styles, default


def _val(element: etree._Element | None) -> str | None:
    return element.get(W + "val") if element is not None else None


def _int(element: etree._Element | None, name: str = "val") -> int | None:
    value = element.get(W + name, "") if element is not None else ""
    return int(value) if re.fullmatch(r"-?\d{1,9}", value.strip()) else None


def _bounded(value: int) -> int:
    return max(0, min(value, _MAX_START))


def _format(n: int, fmt: str) -> str | None:
    """One number in a ST_NumberFormat; None for a format not known here."""
    if fmt in ("decimal", "decimalHalfWidth"):
        return str(n)
    if fmt == "none":
        return ""
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt in ("decimalFullWidth", "decimalFullWidth2"):
        return str(n).translate({ord(d): 0xFF10 + int(d) for d in "0123456789"})
    if fmt in ("upperLetter", "lowerLetter"):
        if not 0 < n <= 26 * 8:  # Word repeats the letter ("AA", "AAA"); past that, digits
            return str(n)
        letter = chr(ord("A") + (n - 1) % 26) * ((n - 1) // 26 + 1)
        return letter if fmt == "upperLetter" else letter.lower()
    if fmt in ("upperRoman", "lowerRoman"):
        roman = _roman(n) if 0 < n < 4000 else str(n)
        return roman if fmt == "upperRoman" else roman.lower()
    if fmt in ("chineseCounting", "chineseCountingThousand", "taiwaneseCounting",
               "taiwaneseCountingThousand"):
        return _counting(n, _CN_DIGITS, "十百千")
    if fmt == "japaneseCounting":
        return _counting(n, _CN_DIGITS, "十百千", "十百千", head_only=False, zero="")
    if fmt == "chineseLegalSimplified":
        return _counting(n, "零壹贰叁肆伍陆柒捌玖", "拾佰仟", omit_one="")
    if fmt == "ideographLegalTraditional":
        return _counting(n, "零壹貳參肆伍陸柒捌玖", "拾佰仟", omit_one="")
    if fmt in ("ideographDigital", "taiwaneseDigital", "japaneseDigitalTenThousand"):
        return "".join(_CN_DIGITS[int(d)] for d in str(n))
    if fmt in ("decimalEnclosedCircle", "decimalEnclosedCircleChinese"):
        return (chr(0x2460 + n - 1) if 1 <= n <= 20 else chr(0x3251 + n - 21) if 21 <= n <= 35
                else chr(0x32B1 + n - 36) if 36 <= n <= 50 else str(n))
    if fmt in ("decimalEnclosedParen", "decimalEnclosedFullstop"):
        base = 0x2474 if fmt == "decimalEnclosedParen" else 0x2488
        return chr(base + n - 1) if 1 <= n <= 20 else str(n)
    if fmt == "ideographTraditional":
        return "甲乙丙丁戊己庚辛壬癸"[n - 1] if 1 <= n <= 10 else str(n)
    if fmt == "ideographZodiac":
        return "子丑寅卯辰巳午未申酉戌亥"[n - 1] if 1 <= n <= 12 else str(n)
    if fmt == "ordinal":
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return f"{n}{suffix}"
    return None


def _roman(n: int) -> str:
    out = []
    for value, numeral in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),
                           (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
                           (4, "IV"), (1, "I")):
        count, n = divmod(n, value)
        out.append(numeral * count)
    return "".join(out)


def _counting(n: int, digits: str, units: str, omit_one: str = "十", head_only: bool = True,
              zero: str = "零") -> str:
    """A CJK counting number under 10,000: "十一", "一百零一" (the "one" of 十 left out at the
    head only); Japanese "百十一" (every such "one" left out, no zero). Others in digits."""
    if not 0 < n < 10000:
        return str(n)
    out, gap = "", False
    for place in (3, 2, 1, 0):
        digit = n // 10 ** place % 10
        if digit == 0:
            gap = bool(out)
            continue
        unit = units[place - 1] if place else ""
        out += zero if gap else ""
        gap = False
        silent = digit == 1 and unit != "" and unit in omit_one and (not out or not head_only)
        out += ("" if silent else digits[digit]) + unit
    return out
