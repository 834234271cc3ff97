"""Tables as retrievable text: each data row becomes "header: value; header: value".

A row on its own says nothing ("800元/天"); paired with its headers it answers a question
("城市等级: 一线城市; 职级: 部门负责人; 标准金额: 600元/天"). The whole table is kept as well,
as one Markdown block, for reading it in context.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from lxml import html

from ingest.models import Block, BlockKind
from ingest.text import ARTICLE, join_lines, normalize

_NUMBER = re.compile(r"[-+]?[\d,.]+%?")
_CAPTION = re.compile(r"^(?:(?:续)?表\s*[\d一二三四五六七八九十]+(?:[.\-]\d+)*|Table\s+\d+)", re.I)


def cell_text(text: str | None) -> str:
    """A cell's lines joined the way wrapped text is joined (no space between CJK)."""
    lines = normalize(text or "").split("\n")
    return functools.reduce(join_lines, lines) if lines else ""


def is_caption(text: str) -> bool:
    """"表1 费用报销标准表", "Table 2 …", or a short line naming a 表 (not a clause)."""
    text = text.strip()
    if not text or len(text) > 40 or ARTICLE.match(text) or "。" in text:
        return False
    return bool(_CAPTION.match(text)) or text.strip("《》 ").endswith("表")


def fill_merged(rows: Sequence[Sequence[str | None]]) -> list[list[str]]:
    """A merged cell covers its neighbours: None takes the value above, else the one on its left.

    Formats that know the span (PDF cell boxes, DOCX vMerge, HTML rowspan) fill it exactly
    before this; what remains here is a best guess.
    """
    width = max((len(row) for row in rows), default=0)
    out: list[list[str]] = []
    for r, row in enumerate(rows):
        filled: list[str] = []
        for c in range(width):
            cell = row[c] if c < len(row) else None
            if cell is None:
                above = out[r - 1][c] if r > 0 else None
                cell = above if above is not None else (filled[c - 1] if c > 0 else "")
            filled.append(cell)
        out.append(filled)
    return out


def row_texts(rows: list[list[str]], header: list[str] | None = None, caption: str = ""
              ) -> list[str]:
    """Every non-empty data row rewritten against the header (by default the first row)."""
    if header is None:
        if not rows:
            return []
        header, rows = rows[0], rows[1:]
    names = [cell or f"列{i + 1}" for i, cell in enumerate(header)]
    out = []
    for row in rows:
        pairs = [f"{names[i] if i < len(names) else f'列{i + 1}'}: {cell}"
                 for i, cell in enumerate(row) if cell]
        if pairs:
            out.append((f"{caption} | " if caption else "") + "; ".join(pairs))
    return out


def markdown_table(header: list[str], rows: list[list[str]], caption: str = "") -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    parts = [caption] if caption else []
    parts += [line(header), line(["---"] * len(header)), *(line(row) for row in rows)]
    return "\n".join(parts)


def table_blocks(header: list[str], rows: list[list[str]], row_pages: list[int],
                 caption: str = "") -> list[Block]:
    """One TABLE block (Markdown, on the table's first page), then one TABLE_ROW per data row."""
    if not header and not rows:
        return []
    blocks = [Block(kind=BlockKind.TABLE, text=markdown_table(header, rows, caption),
                    page=row_pages[0] if row_pages else 1)]
    for row, page in zip(rows, row_pages, strict=True):
        blocks += [Block(kind=BlockKind.TABLE_ROW, text=text, page=page)
                   for text in row_texts([row], header, caption)]
    return blocks


def grid_blocks(grid: Sequence[Sequence[str | None]], page: int = 1, caption: str = "",
                labelled: bool = False) -> list[Block]:
    """Blocks of a table given as a grid whose first row is the header. A first row of one cell
    across the whole table ("2024年度差旅费用统计表" merged over every column) is its title, so
    the caption, and the row under it the header: as the header, the title was every row's
    name for every value. A `labelled` table (each row a label and its values: an infobox) has
    no header row; its rows read "label: value"."""
    filled = [row for row in fill_merged(grid) if any(row)]
    while len(filled) > 1 and _title_row(filled[0]) and (labelled or _header_like(filled[1])):
        title = filled.pop(0)[0]
        caption = f"{caption} {title}" if caption and title not in caption else caption or title
    if not filled:
        return []
    if labelled:
        return _labelled_blocks(filled, page, caption)
    return table_blocks(filled[0], filled[1:], [page] * (len(filled) - 1), caption)


def _title_row(row: list[str]) -> bool:
    """One text across every column (a one-column table's first row is its header)."""
    return len(row) > 1 and len(set(row)) == 1


def _header_like(row: list[str]) -> bool:
    """Names for every column: each cell filled, none a number, no two the same."""
    return all(row) and len(set(row)) == len(row) and not any(_NUMBER.fullmatch(c) for c in row)


def labelled(table: html.HtmlElement) -> bool:
    """An HTML table whose rows are each a label cell (<th>) and its values (<td>), none a row
    of column names (all <th>): an infobox, a fact sheet."""
    rows = [tr.xpath("./th|./td") for tr in table.iter("tr")]
    rows = [[cell.tag for cell in row] for row in rows if len(row) > 1]
    return (sum(row[0] == "th" and "td" in row[1:] for row in rows) >= 2
            and not any(set(row) == {"th"} for row in rows))


def _labelled_blocks(rows: list[list[str]], page: int, caption: str) -> list[Block]:
    """A table of labels and values: Markdown without a header, and a row per label."""
    prefix = f"{caption} | " if caption else ""
    texts = [prefix + (f"{row[0]}: " if row[0] else "") + "; ".join(
        dict.fromkeys(cell for cell in row[1:] if cell and cell != row[0])) for row in rows]
    table = Block(kind=BlockKind.TABLE, page=page,
                  text=markdown_table([""] * len(rows[0]), rows, caption))
    return [table, *(Block(kind=BlockKind.TABLE_ROW, text=text.removesuffix(": "), page=page)
                     for text in texts)]


def html_table_rows(markup: str) -> list[list[str | None]] | None:
    """Cell texts of an HTML table (one holding no other table) on a grid: colspan and rowspan
    copy the cell's text into every position it covers. None when the grid would be much larger
    than the table's cells read once (a layout table, a hostile one): html_text then reads its
    cells once, in order."""
    trs = list(html.fromstring(markup).iter("tr"))
    grid: list[list[str | None]] = []
    pending: dict[tuple[int, int], str] = {}  # positions covered by a rowspan from above
    cells: list[str] = []
    covered = 0
    for r, tr in enumerate(trs):
        row: list[str | None] = []
        for cell in tr.xpath("./th|./td"):
            while (r, len(row)) in pending:
                row.append(pending.pop((r, len(row))))
            text = cell_text(cell.text_content())
            cells.append(text)
            colspan, rowspan = _span(cell, "colspan"), min(_span(cell, "rowspan"), len(trs) - r)
            covered += colspan * rowspan
            if covered > _max_positions(cells):
                return None
            for _ in range(colspan):
                for below in range(1, rowspan):
                    pending[(r + below, len(row))] = text
                row.append(text)
        while (r, len(row)) in pending:
            row.append(pending.pop((r, len(row))))
        grid.append(row)
    width = max(map(len, grid), default=0)
    if (len(grid) * width > _max_positions(cells)
            or _read_chars(grid) > 8 * sum(len(cell) + 3 for cell in cells) + 2000):
        return None
    return grid


def _max_positions(cells: list[str]) -> int:
    """How many grid positions a table of these cells may fill: spans and short rows padded to
    the table's width may cover four times as many (a title row across the table, a category
    down its rows), not a hundred times."""
    return 4 * len(cells) + 100


def _read_chars(grid: list[list[str | None]]) -> int:
    """The characters grid_blocks would make of the grid, counted rather than built: its
    Markdown block (a cell and its " | "), and its `header: value` rows, which repeat the
    header on purpose; a few times the cells' own text for a real table, short values under
    longer headers included."""
    filled = [row for row in fill_merged(grid) if any(row)]
    names = [len(cell) or 3 for cell in filled[0]] if filled else []
    return (sum(len(cell) + 3 for row in filled for cell in row)
            + sum(names[i] + len(cell) + 2
                  for row in filled[1:] for i, cell in enumerate(row) if cell))


def _span(cell: html.HtmlElement, name: str) -> int:
    value = cell.get(name, "1").strip()
    return min(int(value), 100) if value.isdigit() and int(value) > 0 else 1


def caption_before(blocks: list[Block]) -> str:
    """The paragraph right before a table when it names the table ("表1 费用报销标准表")."""
    last = blocks[-1] if blocks else None
    return last.text if last and last.kind == BlockKind.PARAGRAPH and is_caption(last.text) else ""
