"""What every command prints with: one console, text from documents shown literally."""

from __future__ import annotations

import json
import re

from rich.console import Console
from rich.markup import escape

console = Console()
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 (not tab, newline), ESC, DEL, C1


def shown(value: object) -> str:
    """Text from documents, files or requests as rich should print it: literally (markup such
    as `[/]` escaped, which crashed the table) and without control characters (ESC sequences
    would reach the terminal)."""
    return escape(CONTROL.sub("", str(value)))


def print_json(model: object) -> None:
    dump = model.model_dump(mode="json") if hasattr(model, "model_dump") else model
    print(json.dumps(dump, ensure_ascii=False, indent=2, default=str))


def print_low_coverage(low: dict[str, float], minimum: float) -> None:
    for key, coverage in low.items():
        console.print(f"[yellow]PARTLY READ[/] {shown(key)}: {coverage:.0%} of its text indexed "
                      f"(below min_coverage {minimum:.0%}): a part of the file was not read")


def print_warnings(warnings: dict[str, list[str]]) -> None:
    for key, messages in warnings.items():
        for message in messages:
            console.print(f"[yellow]WARNING[/] {shown(key)}: {shown(message)}")
