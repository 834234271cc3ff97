"""Document roots: the folders documents may be read from (KBFLOW_DOCUMENT_ROOTS).

A path from outside (a webhook event, a flow parameter, a symlink met in a folder walk) is
resolved first, symlinks and `..` included, and refused unless the real file lies under a root:
otherwise a signed event, or a link dropped into a shared folder, could publish any file the
worker can read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

NO_ROOTS = "no document root is configured (set KBFLOW_DOCUMENT_ROOTS): every path is refused"


class OutsideRoots(ValueError):
    """A path that does not resolve to a place under a document root."""


def has_control_chars(text: str) -> bool:
    """NUL, newlines, escape and the other C0/C1 controls: no path or identifier has them."""
    return any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text)


def real_roots(roots: Sequence[Path]) -> list[Path]:
    return [Path(os.path.abspath(r)).resolve() for r in roots]


def resolve_under(path: str | Path, roots: Sequence[Path]) -> Path:
    """The real path of `path` (a relative one is taken against each root in turn, preferring
    one where the file exists); OutsideRoots with the reason when it is under no root."""
    text = str(path)
    if not roots:
        raise OutsideRoots(NO_ROOTS)
    if not text or has_control_chars(text):
        raise OutsideRoots(f"path {text!r} is empty or contains control characters")
    bases = real_roots(roots)
    given = Path(text)
    candidates = [given] if given.is_absolute() else [base / given for base in bases]
    inside = []
    for candidate in candidates:
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long …
            raise OutsideRoots(f"path {text!r} cannot be resolved: {exc}") from exc
        if any(real.is_relative_to(base) for base in bases):
            inside.append(real)
    if not inside:
        shown = ", ".join(str(b) for b in bases)
        raise OutsideRoots(f"{text} resolves outside the document roots ({shown})")
    return next((p for p in inside if p.exists()), inside[0])


def root_of(path: Path, roots: Sequence[Path]) -> Path | None:
    """The (real) root a resolved path lies under, the deepest one if roots nest."""
    under = [base for base in real_roots(roots) if path.is_relative_to(base)]
    return max(under, key=lambda b: len(b.parts), default=None)
