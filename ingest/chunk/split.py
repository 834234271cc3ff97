"""Cutting a unit that is over the token budget into pieces, in time near-linear in its length.

Every step takes the longest run (of lines, of sentences, of characters) that still fits. The run
is found by galloping from its start and then bisecting (`_longest`), so the text counted for a
piece is a small multiple of the piece itself and never the rest of the unit: when each step
re-counted everything after it, an 80,000-character run-on paragraph took 75–94 s (issue 28).
For a count that never falls as text grows (the model's wordpieces across a line or sentence
end, the heuristic everywhere) the pieces are the ones adding one item at a time made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ingest.models import embed_text
from ingest.text import SENTENCE_END

CountTokens = Callable[[str], int]  # a text's length in the embedding model's tokens
_LINE_END = tuple("。！？；;.!?:：")


@dataclass(frozen=True)
class Line:
    text: str
    page: int
    start: int  # character offset in the document's blocks joined by "\n"


@dataclass(frozen=True)
class Seg:
    """A character range of one line; a piece is a run of consecutive segments."""

    line: Line
    lo: int
    hi: int


def piece_text(piece: list[Seg]) -> str:
    """The source text of a piece: ranges on the same line are merged (overlaps included)."""
    parts: list[Seg] = []
    for seg in piece:
        if parts and parts[-1].line is seg.line:
            last = parts[-1]
            parts[-1] = Seg(seg.line, min(last.lo, seg.lo), max(last.hi, seg.hi))
        else:
            parts.append(seg)
    return "\n".join(s.line.text[s.lo : s.hi].strip() for s in parts)


def _longest(ok: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in [low, high] with ok(n), low taken without asking, for an `ok` that holds
    up to some n: doubling steps from low and then bisection ask O(log n) times, about n away
    from low, where a bisection of the whole range would first ask about its far end."""
    step = 1
    while low < high:
        probe = min(low + step, high)
        if not ok(probe):
            high = probe - 1
            break
        low, step = probe, step * 2
    while low < high:
        mid = (low + high + 1) // 2
        if ok(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _span(segs: list[Seg], start: int, end: int) -> Seg:
    """Consecutive segments of one line as one range (what `piece_text` would merge them into)."""
    return Seg(segs[start].line, segs[start].lo, segs[end - 1].hi)


class Splitter:
    """Cuts a unit that is over the budget; boundaries depend on nearby text only, so an edit
    moves the boundaries of the piece it is in, not of every piece after it."""

    def __init__(self, prefix: str, count: CountTokens, limit: int, min_tokens: int,
                 overlap: int) -> None:
        self.prefix, self.count, self.limit = prefix, count, limit
        self.min_tokens, self.overlap = min_tokens, overlap

    def fits(self, piece: list[Seg]) -> bool:
        return self.count(embed_text(self.prefix, piece_text(piece))) <= self.limit

    def small(self, piece: list[Seg]) -> bool:
        return self.count(piece_text(piece)) < self.min_tokens

    def split(self, lines: list[Line]) -> list[list[Seg]]:
        """Lines packed into pieces: a piece grows while it is small or the next line is small
        (and the budget allows); a line over the budget alone is cut by sentence."""
        atoms = self._atoms(lines)
        pieces: list[list[Seg]] = []
        start = 0
        while start < len(atoms):
            end = self._packed(atoms, start)
            pieces.append([seg for atom in atoms[start:end] for seg in atom])
            start = end
        return pieces

    def _packed(self, atoms: list[list[Seg]], start: int) -> int:
        """Where the piece opened by atoms[start] ends: atom j joins while the piece with it
        fits and either the piece before it (atoms[start:j]) or atom j itself is small."""
        def joined(end: int) -> list[Seg]:
            return [seg for atom in atoms[start:end] for seg in atom]

        fitting = _longest(lambda end: self.fits(joined(end)), start + 1, len(atoms))
        small = _longest(lambda end: self.small(joined(end)), start, fitting - 1)
        return next((j for j in range(small + 1, fitting) if not self.small(atoms[j])), fitting)

    def _atoms(self, lines: list[Line]) -> list[list[Seg]]:
        """One atom per line; a short label line without end punctuation ("SEC-1001 口令已过期")
        goes with the line after it."""
        atoms: list[list[Seg]] = []
        label: Seg | None = None
        for line in lines:
            seg = Seg(line, 0, len(line.text))
            if label is not None:
                if self.fits([label, seg]):
                    atoms.append([label, seg])
                    label = None
                    continue
                atoms.append([label])
                label = None
            if not line.text.endswith(_LINE_END) and self.small([seg]) and self.fits([seg]):
                label = seg
            elif self.fits([seg]):
                atoms.append([seg])
            else:
                atoms += self._sentence_pieces(seg)
        if label is not None:
            atoms.append([label])
        return atoms

    def _sentence_pieces(self, seg: Seg) -> list[list[Seg]]:
        """Sentences packed under the budget; each piece repeats the previous piece's last
        sentence(s) when that still fits."""
        sentences = self._sentences(seg)
        pieces: list[list[Seg]] = []
        start = first = 0  # the piece is sentences[start:], whole up to `first` at least
        while first < len(sentences):
            end = self._fitting(sentences, start, first + 1)
            pieces.append([_span(sentences, start, end)])
            keep = max(start, end - self.overlap) if self.overlap else end
            overlapped = keep < end < len(sentences) and self.fits(
                [_span(sentences, keep, end + 1)])
            start, first = (keep if overlapped else end), end
        return pieces

    def _fitting(self, sentences: list[Seg], start: int, low: int) -> int:
        """The end of the longest run of sentences from `start` that fits (`low` at least)."""
        return _longest(lambda end: self.fits([_span(sentences, start, end)]), low,
                        len(sentences))

    def _sentences(self, seg: Seg) -> list[Seg]:
        text, out, start = seg.line.text, [], seg.lo
        for match in SENTENCE_END.finditer(text, seg.lo, seg.hi):
            if match.start() > start:
                out += self._cut(Seg(seg.line, start, match.start()))
            start = match.end()
        if start < seg.hi:
            out += self._cut(Seg(seg.line, start, seg.hi))
        return [s for s in out if s.line.text[s.lo : s.hi].strip()]

    def _cut(self, seg: Seg) -> list[Seg]:
        """A run-on sentence cut by tokens: the longest head that fits (at least one character),
        repeatedly."""
        if self.fits([seg]):
            return [seg]
        out = []
        lo = seg.lo
        while lo < seg.hi:
            hi = self._head(seg.line, lo, seg.hi)
            out.append(Seg(seg.line, lo, hi))
            lo = hi
        return out

    def _head(self, line: Line, lo: int, hi: int) -> int:
        """Where the longest head of line.text[lo:hi] that fits ends: the bisection over the
        whole rest of the line that cut these pieces before, asking only about heads shorter
        than the first one doubling steps found too long and taking longer ones not to fit. The
        cuts stay where they were where a word's wordpieces are fewer as it grows ("af" fits,
        "aft" not, "after" again), which a search of its own would settle differently."""
        def fits(end: int) -> bool:
            return self.fits([Seg(line, lo, end)])

        step = 1
        while fits(too_long := min(lo + step, hi)):
            if too_long == hi:
                return hi
            step *= 2
        low, high = lo + 1, hi
        while low < high:
            mid = (low + high + 1) // 2
            if mid < too_long and fits(mid):
                low = mid
            else:
                high = mid - 1
        return low
