"""Tables as retrievable text: each data row becomes "header: value; header: value"."""

from __future__ import annotations

from lxml import html

from ingest.text import normalize


def row_texts(rows: list[list[str]]) -> list[str]:
    """The first row is the header; every later non-empty row is rewritten against it."""
    if not rows:
        return []
    header = [cell or f"列{i + 1}" for i, cell in enumerate(rows[0])]
    out = []
    for row in rows[1:]:
        pairs = [f"{header[i] if i < len(header) else f'列{i + 1}'}: {cell}"
                 for i, cell in enumerate(row) if cell]
        if pairs:
            out.append("; ".join(pairs))
    return out


def html_table_rows(markup: str) -> list[list[str]]:
    """Cell texts of an HTML table, row by row."""
    tree = html.fromstring(markup)
    return [
        [normalize(cell.text_content()).replace("\n", " ") for cell in tr.xpath("./th|./td")]
        for tr in tree.iter("tr")
    ]
