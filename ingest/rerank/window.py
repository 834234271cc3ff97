"""What the reader reads of a passage: its prefix and the window of its best sentences.

A pair costs the reader in proportion to its tokens, so a passage is cut to the run of sentences
around the one sharing most character bigrams with the question, up to a character budget, with
the passage's contextual prefix (document title, clause) kept in front. Training and search cut
passages the same way.
"""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"[^。；;！？!?\n]+[。；;！？!?\n]*")


def bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1) if not text[i:i + 2].isspace()}


def pieces(text: str) -> list[str]:
    """The text's sentences, each with its closing mark (joined back, they give the text)."""
    return _SENTENCE.findall(text) or [text]


def best_window(question: str, passage: str, budget: int) -> str:
    """The passage itself when it fits the budget; else its best sentence widened by its
    neighbours (the following first, as a clause's conditions precede its consequence)."""
    if len(passage) <= budget:
        return passage
    parts = pieces(passage)
    asked = bigrams(question)
    best = max(range(len(parts)), key=lambda i: (len(asked & bigrams(parts[i])), -i))
    start = end = best
    size = len(parts[best])
    while True:
        grown = False
        for candidate in (end + 1, start - 1):
            if 0 <= candidate < len(parts) and size + len(parts[candidate]) <= budget:
                size += len(parts[candidate])
                start, end = min(start, candidate), max(end, candidate)
                grown = True
        if not grown:
            break
    return "".join(parts[start:end + 1])[:budget]


def reader_text(prefix: str, question: str, passage: str, budget: int) -> str:
    """The passage side of a pair: `prefix` (may be empty) then the best window."""
    window = best_window(question, passage, max(budget - len(prefix) - 1, 16))
    return f"{prefix}\n{window}" if prefix else window
