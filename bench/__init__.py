"""kbflow benchmarks; each module writes its own section of bench/RESULTS.md."""

from __future__ import annotations

from pathlib import Path


def write_section(out: Path, section: str, text: str) -> None:
    """Replace the section headed `section` in `out` (up to the next `## `), or append it."""
    old = out.read_text(encoding="utf-8") if out.exists() else "# kbflow benchmarks\n"
    if section in old:
        head, _, rest = old.partition(section)
        tail = rest[rest.find("\n## "):] if "\n## " in rest else ""
        old = head.rstrip("\n") + "\n"
        text = text + tail.lstrip("\n")
    out.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")
