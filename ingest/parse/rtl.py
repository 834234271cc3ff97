"""Right-to-left scripts (Arabic, Hebrew) in a PDF are drawn glyph by glyph left to right as
shown, so text read in drawing order has each word's letters reversed and its words in the wrong
order: the index holds words nobody searches for. A line is put back in logical order here (a
simplified Unicode bidirectional algorithm: one level of embedding, numbers and Latin kept left
to right inside right-to-left text)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

_RTL = {"R", "AL"}
_LTR = {"L", "EN", "AN"}  # a number reads left to right inside right-to-left text


def has_rtl(text: str) -> bool:
    """Whether the text holds a right-to-left letter (the only text this module changes)."""
    return any(unicodedata.bidirectional(ch) in _RTL for ch in text)


def _strength(glyph: str) -> str | None:
    """'R' or 'L' by the glyph's first strong character; None for spaces and punctuation."""
    for ch in glyph:
        kind = unicodedata.bidirectional(ch)
        if kind in _RTL:
            return "R"
        if kind in _LTR:
            return "L"
    return None


def logical_line(glyphs: Sequence[str]) -> str:
    """One line's glyph texts in visual order (left to right) as logical text. A glyph is kept
    whole: a lam-alef ligature's text "لا" is already in logical order."""
    strengths = [_strength(glyph) for glyph in glyphs]
    strong = [s for s in strengths if s]
    if "R" not in strong:
        return "".join(glyphs)
    base = "R" if 2 * strong.count("R") >= len(strong) else "L"
    resolved: list[str] = []
    for i, strength in enumerate(strengths):
        if strength is None:  # a neutral between two runs of one direction takes it
            before = next((s for s in reversed(strengths[:i]) if s), base)
            after = next((s for s in strengths[i + 1:] if s), base)
            strength = before if before == after else base
        resolved.append(strength)
    runs: list[tuple[str, list[str]]] = []
    for glyph, strength in zip(glyphs, resolved, strict=True):
        if runs and runs[-1][0] == strength:
            runs[-1][1].append(glyph)
        else:
            runs.append((strength, [glyph]))
    texts = ["".join(reversed(run) if strength == "R" else run) for strength, run in runs]
    return "".join(reversed(texts) if base == "R" else texts)
