"""Filled-in PDF form fields (AcroForm widgets) as text where the reader sees them.

A viewer draws a field's value in its box; MuPDF's text of that drawing is placed by the box's
font metrics, a little above the printed label beside it, so read in position order the value
came before its label ("Alice First Name"), and a ticked box came out as its ZapfDingbats
glyph ("3"). Each field with something to show is read once from its value instead: a text
field's text, a choice's shown option, a check box as ☑ or ☐ and a radio button as ◉ or ○ (the
mark a reader sees, not the PDF's state name "Off"/"Yes", which no reader sees), on the row of the
printed line beside it. The field's internal name is never printed: the reader sees the label
the page prints. An empty text or choice field keeps whatever its box shows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pymupdf

from ingest.parse.layout import Line
from ingest.parse.pdf_tables import PdfTable
from ingest.text import normalize

CHECKED, UNCHECKED = "\u2611", "\u2610"  # ☑ ☐
CHOSEN, NOT_CHOSEN = "\u25c9", "\u25cb"  # ◉ ○: a radio button is drawn round
_MARKS = (CHECKED, UNCHECKED, CHOSEN, NOT_CHOSEN)
_OFF = (None, "", "Off", False)
_PASSWORD = 1 << 13  # a text field's Password flag
_NOT_SHOWN = (1, 3)  # PyMuPDF's field_display: hidden, not viewed (2: shown but not printed)
log = logging.getLogger(__name__)


@dataclass
class Field:
    """A widget's box (unrotated page coordinates) and the text it shows."""

    bbox: tuple[float, float, float, float]
    text: str


def page_fields(page: pymupdf.Page) -> list[Field]:
    """The page's widgets that show a value. A form PyMuPDF cannot read is left to the page's
    drawing (its values then come as MuPDF draws them)."""
    try:
        return [Field(tuple(widget.rect), text) for widget in page.widgets()
                if (text := _shown(widget))]
    except Exception as exc:  # noqa: BLE001 - a broken form dictionary is not a broken page
        log.warning("page %d: form fields not read: %s", page.number + 1, exc)
        return []


def _shown(widget: Any) -> str:
    kind, value = widget.field_type_string, widget.field_value
    if widget.field_display in _NOT_SHOWN:
        return ""
    if kind in ("CheckBox", "RadioButton"):
        # a check box's value is its "on" name when ticked; a radio group's value is the
        # "on" name of the button that is chosen
        on = value not in _OFF and (kind == "CheckBox"
                                    or value is True or value == widget.on_state())
        if kind == "RadioButton":
            return CHOSEN if on else NOT_CHOSEN
        return CHECKED if on else UNCHECKED
    if kind == "Text":
        if widget.field_flags & _PASSWORD:
            return ""  # a viewer shows it masked
        return normalize(" ".join(str(value or "").split()))
    if kind in ("ComboBox", "ListBox"):
        chosen = value if isinstance(value, list) else [value]
        labels = _option_labels(widget.choice_values or [])
        return normalize(", ".join(labels.get(str(v), str(v)) for v in chosen if v not in _OFF))
    return ""  # push buttons and signatures: their caption is page text already


def _option_labels(options: list[Any]) -> dict[str, str]:
    """A choice's export value -> the label the list shows ([export, label] pairs)."""
    return {str(o[0]): str(o[1]) for o in options
            if isinstance(o, (list, tuple)) and len(o) == 2}


def inside(line_box: tuple[float, float, float, float], fields: list[Field]) -> bool:
    """Whether a text line is MuPDF's drawing of a field's value: centred across the field's
    box and mostly within its height (a value's line box, from the font's ascent and descent,
    sticks out of a tight box above and below)."""
    x = (line_box[0] + line_box[2]) / 2
    return any(f.bbox[0] <= x <= f.bbox[2]
               and _overlap(line_box[1], line_box[3], f.bbox[1], f.bbox[3])
               > 0.5 * min(line_box[3] - line_box[1], f.bbox[3] - f.bbox[1])
               for f in fields)


def place(fields: list[tuple[str, tuple[float, float, float, float]]], lines: list[Line],
          page: int) -> list[Line]:
    """Each field's text read beside its label: a tick box's mark before the printed line that
    starts just right of it on the same row ("☑ Agree"), a value after the line that ends just
    left of its box ("First Name Alice"); a field with no line beside it becomes a line of its
    own (returned)."""
    alone = []
    for text, (x0, y0, x1, y1) in fields:
        row = [line for line in lines
               if _overlap(line.y0, line.y1, y0, y1) > 0.5 * min(line.height, y1 - y0)]
        gap = 2 * (y1 - y0) + 12  # a label sits within a couple of letters of its box
        left = [line for line in row if x0 - gap <= line.x1 <= x0 + 2]
        right = [line for line in row if x1 - 2 <= line.x0 <= x1 + gap]
        mark = text in _MARKS
        if right and mark:
            label = min(right, key=lambda line: line.x0)
            label.text, label.x0 = f"{text} {label.text}", x0
        elif left:
            label = max(left, key=lambda line: line.x1)
            label.text = f"{label.text} {text}"
        else:
            alone.append(Line(text, page, x0, y0, x1, y1, size=max(1.0, 0.7 * (y1 - y0))))
    return alone


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return min(a1, b1) - max(a0, b0)


def fill_cells(tables: list[PdfTable], fields: list[Field], frame: pymupdf.Matrix) -> None:
    """Each field's text into the table cell its box centres in. pdfplumber reads a cell's text
    from the page's content, which holds a form's printed labels but not its fields' values
    (those are drawn by the fields themselves), and the lines inside a table are left out, so a
    form laid out as a ruled table (most applications and claims) lost every value. `frame`
    turns unrotated page points into pdfplumber's page, where the tables' column edges are."""
    for field in fields:
        x0, y0, x1, y1 = field.bbox
        centre = pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)
        turned = centre * frame
        for table in tables:
            row = next((r for r, box in enumerate(table.row_boxes)
                        if pymupdf.Rect(box).contains(centre)), None)
            column = next((c for c, (left, right) in enumerate(
                zip(table.edges, table.edges[1:], strict=False)) if left <= turned.x < right),
                None)
            if row is not None and column is not None and column < len(table.grid[row]):
                cell = table.grid[row][column]
                table.grid[row][column] = (field.text if not cell else f"{field.text} {cell}"
                                           if field.text in _MARKS else f"{cell} {field.text}")
                break
