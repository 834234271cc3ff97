"""Structure: a parsed document's blocks as units (a clause, a table row, a paragraph run) under
the headings that open its sections, each with a structural path unique in its document."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ingest.chunk.items import item_clauses
from ingest.chunk.split import Line
from ingest.models import Block, BlockKind, ChunkKind, ParsedDocument
from ingest.text import ARTICLE, CHAPTER, DECIMAL, PART, SECTION, TOP_NUMBER

_SHORT_HEADING = 40  # a numbered line this short without a full stop is a heading, not a clause


@dataclass(frozen=True)
class Heading:
    level: int
    label: str  # the number ("第二章", "4.2") or, without one, the heading text
    line: Line
    path: str  # the labels from the top down, "~n" added where an earlier section had them

    @property
    def text(self) -> str:
        return self.line.text


@dataclass
class Unit:
    """Consecutive lines that belong together (one clause, a paragraph run, a table row)."""

    kind: ChunkKind
    headings: tuple[Heading, ...]
    clause_no: str | None
    path: str
    lines: list[Line] = field(default_factory=list)
    table: Unit | None = None  # a row's table: the table's parent unit

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def _heading_level(block: Block, title: str) -> int | None:
    text = block.text
    if ARTICLE.match(text):
        return None
    short = len(text) <= _SHORT_HEADING and "。" not in text and text[-1] not in ":：;；,，"
    for level, pattern in ((1, PART), (2, CHAPTER), (3, SECTION)):
        if pattern.match(text) and short:
            return level
    number = DECIMAL.match(text) or TOP_NUMBER.match(text)
    if number and short:
        return number.group(1).count(".") + 1
    if block.kind == BlockKind.HEADING and text.strip("《》 ") != title:
        return block.level or 1
    return None


def _label(text: str) -> str:
    for pattern in (PART, CHAPTER, SECTION, ARTICLE, DECIMAL, TOP_NUMBER):
        match = pattern.match(text)
        if match:
            return match.group(1) if pattern.groups else match.group(0)
    return text


def _clause_no(text: str) -> str | None:
    match = ARTICLE.match(text) or DECIMAL.match(text) or TOP_NUMBER.match(text)
    return match.group(1) if match else None


def _is_list_item(block: Block, current: Unit | None) -> bool:
    """"1. …" inside a clause is one of its list items, not a clause or a heading: always inside
    第X条; inside "4.2" when it is item 1 or follows item n-1 (else it is the next chapter)."""
    match = TOP_NUMBER.match(block.text)
    if (match is None or current is None or current.kind != ChunkKind.CLAUSE
            or block.kind != BlockKind.PARAGRAPH):
        return False
    number = int(match.group(1))
    if ARTICLE.match(current.clause_no or ""):
        return True
    previous = TOP_NUMBER.match(current.lines[-1].text) if len(current.lines) > 1 else None
    return "." in (current.clause_no or "") and (
        number == 1 or (previous is not None and int(previous.group(1)) == number - 1)
    )


def _base(section: tuple[Heading, ...]) -> str:
    return section[-1].path if section else ""


def document_units(doc: ParsedDocument) -> list[Unit]:
    title = doc.meta.title
    headings: list[Heading] = []
    sections: dict[str, int] = {}  # section path → how many sections had it
    units: list[Unit] = []
    current: Unit | None = None
    table: Unit | None = None
    items = item_clauses(doc.blocks, title)  # an amendment's 一、二、…: its clauses (items.py)
    for i, (block, start) in enumerate(_starts(doc.blocks)):
        line = Line(block.text, block.page, start)
        item = items.get(i)
        if block.text.strip("《》 ") == title:
            continue  # the title is in every prefix already
        if block.kind == BlockKind.TABLE:
            # The whole table (Markdown) is a parent for reading; its rows follow as TABLE_ROW
            # blocks and point at it.
            section = tuple(headings)
            base = _base(section)
            table = Unit(ChunkKind.PARENT, section, None, f"{base}/table", [line])
            units.append(table)
            current = None
            continue
        list_item = item is None and _is_list_item(block, current)
        is_row = block.kind == BlockKind.TABLE_ROW
        level = None if is_row or list_item or item else _heading_level(block, title)
        if level is not None:
            units += _headed_nothing(headings, level, units)
            headings = [h for h in headings if h.level < level]
            label = _label(block.text)
            path = f"{headings[-1].path}/{label}" if headings else label
            n = sections[path] = sections.get(path, 0) + 1
            headings.append(Heading(level, label, line, path if n == 1 else f"{path}~{n}"))
            current = None
            continue
        clause_no = item or (None if is_row or list_item else _clause_no(block.text))
        if (current is not None and clause_no is None and not is_row
                and current.kind != ChunkKind.TABLE_ROW):
            current.lines.append(line)  # a list item or paragraph (款) of the unit before
            continue
        section = tuple(headings)
        base = _base(section)
        if not is_row:
            table = None
        if is_row:
            key = "; ".join(block.text.split("; ")[:2])
            kind, path = ChunkKind.TABLE_ROW, f"{base}/row:{key}"
        elif clause_no and (item or ARTICLE.match(block.text)):
            kind, path = ChunkKind.CLAUSE, clause_no  # 第X条 numbers are unique in a document
        elif clause_no:
            # "4.2"-style numbers are unique in a document; a bare "3" is unique within its section
            path = clause_no if "." in clause_no else f"{base}/{clause_no}"
            kind = ChunkKind.CLAUSE
        else:
            # Anchored on the unit before it in the section, not numbered: a paragraph inserted
            # elsewhere renames nothing.
            before = units[-1] if units and units[-1].headings == section else None
            kind, path = ChunkKind.PARAGRAPH, f"{before.path if before else base}/¶"
        inherited = next((h.label for h in reversed(section) if _clause_no(h.text)), None)
        current = Unit(kind, section, clause_no or inherited, path, [line],
                        table=table if is_row else None)
        units.append(current)
    units += _headed_nothing(headings, 0, units) if units else []
    if not units and doc.blocks:
        # Only a title and headings (a one-line note whose line became its title, a deck of
        # bare titles): they are the text, not labels of text elsewhere.
        lines = [Line(b.text, b.page, start) for b, start in _starts(doc.blocks)]
        units.append(Unit(ChunkKind.PARAGRAPH, (), None, "/¶", lines))
    return _unique_paths(units)


def _headed_nothing(headings: list[Heading], level: int, units: list[Unit]) -> list[Unit]:
    """The headings that a heading of `level` closes (0: the document's end) under which no
    unit was made: two headings in a row ("Subchapter 2.1", then "Subchapter 2.2"), list items
    read as numbered headings ("1. List item a", "2. List item b"). Their text would be in no
    chunk: it becomes a paragraph of the section above them, joined to the unit right before
    it in that section."""
    used = {h.path for unit in units for h in unit.headings}
    made: list[Unit] = []
    for heading in headings:
        if heading.level < level or heading.path in used:
            continue
        section = tuple(h for h in headings if h.level < heading.level)
        last = made[-1] if made else (units[-1] if units else None)
        if (last is not None and last.kind == ChunkKind.PARAGRAPH and last.headings == section
                and last.lines[-1].start + len(last.lines[-1].text) + 1 == heading.line.start):
            last.lines.append(heading.line)
        else:
            made.append(Unit(ChunkKind.PARAGRAPH, section, None, f"{heading.path}/¶",
                              [heading.line]))
    return made


def _starts(blocks: list[Block]) -> Iterable[tuple[Block, int]]:
    offset = 0
    for block in blocks:
        yield block, offset
        offset += len(block.text) + 1


def _unique_paths(units: list[Unit]) -> list[Unit]:
    seen: dict[str, int] = {}
    for unit in units:
        n = seen[unit.path] = seen.get(unit.path, 0) + 1
        if n > 1:
            unit.path = f"{unit.path}~{n}"
    return units


