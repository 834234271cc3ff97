"""Chart text of Office files (DrawingML charts in DOCX, PPTX and XLSX): the title, the axis
titles and each series' name with its categories and values, as a reader of the chart sees
them. A deck whose only text is a chart, or a report whose figures are only in a chart, is
otherwise indexed as nothing.

The chart part (`c:chartSpace`) stores what it draws in caches (`c:strCache`, `c:numCache`)
beside the cell references it was drawn from, so a chart reads without its workbook. Numbers
are written as the chart shows them, by the cache's or the point's number format (52%, not
0.523; 36 under "0", not 36.177087510410537).
"""

from __future__ import annotations

import math
import re

from lxml import etree

from ingest.parse.archive import office_part
from ingest.parse.number_format import shown_number
from ingest.parse.tables import cell_text

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
MAX_POINTS = 200  # points of one series written out; a chart of thousands is a plot, not text
_CJK = re.compile(r"[\u3400-\u9fff]")
_AXES = ("catAx", "valAx", "dateAx", "serAx")


def chart_lines(data: bytes) -> list[str]:
    """The chart's title, axis titles and series as lines of text ("图表: 2024年销售额",
    "坐标轴: 季度 / 万元", "华东: 一季度 120; 二季度 150"); none for a chart without text."""
    # recovered: LibreOffice 7.4 leaves the tail of a longer chart after the `</c:chartSpace>`
    # of some charts it converts from .xls, and one chart must not cost a workbook its sheets
    root = office_part(data, "a chart part", recover=True)
    chart = root.find(C + "chart")
    if chart is None:
        return []
    title = _title(chart.find(C + "title"))
    plot = chart.find(C + "plotArea")
    axes = [] if plot is None else [
        text for name in _AXES for axis in plot.iter(C + name)
        if (text := _title(axis.find(C + "title")))]
    series = [] if plot is None else [line for ser in plot.iter(C + "ser")
                                      if (line := _series(ser))]
    if not (title or axes or series):
        return []
    chinese = any(_CJK.search(text) for text in (title, *axes, *series))
    lines = [f"{'图表' if chinese else 'Chart'}: {title}"] if title else []
    if axes:
        lines.append(f"{'坐标轴' if chinese else 'Axes'}: {' / '.join(axes)}")
    return lines + series


def _title(title: etree._Element | None) -> str:
    """A title's rich text, or the cell text it shows (c:strRef's cache)."""
    if title is None:
        return ""
    tx = title.find(C + "tx")
    if tx is None:
        return ""
    rich = tx.find(C + "rich")
    if rich is not None:
        paragraphs = ("".join(t.text or "" for t in p.iter(A + "t")) for p in rich.iter(A + "p"))
        return cell_text("\n".join(paragraphs))
    return cell_text(" ".join(_cached(tx)))


def _series(ser: etree._Element) -> str:
    """"name: category value; …" (a pie's or a bar's figures), or what of it there is."""
    tx = ser.find(C + "tx")
    name = cell_text(" ".join(_cached(tx))) if tx is not None else ""
    cat = ser.find(C + "cat")
    if cat is None:
        cat = ser.find(C + "xVal")
    val = ser.find(C + "val")
    if val is None:
        val = ser.find(C + "yVal")
    categories = _points(cat)
    values = _points(val)
    if categories and values:
        pairs = [f"{categories.get(i, '')} {values[i]}".strip() for i in sorted(values)]
        body = "; ".join(pairs[:MAX_POINTS])
    else:
        body = "; ".join(list((categories or values).values())[:MAX_POINTS])
    return f"{name}: {body}" if name and body else name or body


def _points(element: etree._Element | None) -> dict[int, str]:
    """The cached points of a category or value reference by index (a multi-level category
    joins its levels, outer first)."""
    if element is None:
        return {}
    levels: list[dict[int, str]] = []
    for cache in element.iter(C + "strCache", C + "numCache", C + "lvl", C + "strLit",
                              C + "numLit"):
        if cache.tag == C + "lvl" or cache.find(C + "lvl") is None:
            points = {}
            code = cache.findtext(C + "formatCode") or ""
            for pt in cache.iterchildren(C + "pt"):
                index, value = pt.get("idx", ""), pt.findtext(C + "v")
                if index.isdigit() and value is not None:
                    points[int(index)] = _number(cell_text(value), pt.get("formatCode") or code)
            if points:
                levels.append(points)
    if not levels:
        return {}
    if len(levels) == 1:
        return levels[0]
    inner, *outer = levels  # c:multiLvlStrCache lists the innermost level first
    return {i: " ".join(lvl.get(i, "") for lvl in reversed(outer)).strip() + " " + text
            for i, text in inner.items()}


def _cached(tx: etree._Element) -> list[str]:
    """A series name or title given by a cell: its cached text, or a literal c:v."""
    return [v.text for v in tx.iter(C + "v") if v.text]


def _number(text: str, code: str) -> str:
    """A number under its format code (120 not 120.0 in General); text as it is."""
    try:
        value = float(text)
    except ValueError:
        return text
    return shown_number(value, code) if math.isfinite(value) else text
