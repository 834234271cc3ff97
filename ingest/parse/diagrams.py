"""SmartArt text of Office files (DrawingML diagrams): the words in a diagram's boxes, which a
reader of the slide sees like any text box. The frame on the slide holds no text, only a
relationship (`dgm:relIds/@r:dm`) to the diagram's data model, so a reader of shapes alone
indexes a process chart or a list of boxes as nothing.

The data model (`dgm:dataModel`) keeps each box as a point (`dgm:pt`) and the outline as
connections (`dgm:cxn`, parent to child in `srcOrd` order): read in that order, the text comes
out as the diagram's outline (a step, then its sub-points), not in the order the points were
added. Points of other types (transitions, presentation points) hold no text a reader sees.
"""

from __future__ import annotations

import functools

from lxml import etree

from ingest.parse.archive import office_part
from ingest.text import join_lines, normalize

DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_TEXT_POINTS = {"node", "asst"}  # the boxes; "doc" is the diagram itself


def data_rel_id(frame: etree._Element) -> str | None:
    """The relationship id of a graphic frame's diagram data, or None when it is no diagram."""
    for ids in frame.iter(DGM + "relIds"):
        return ids.get(_R + "dm")
    return None


def diagram_lines(data: bytes) -> list[str]:
    """The diagram's paragraphs in outline order, each box's paragraphs in turn; a box no
    connection reaches (an edited model) comes after, in the order the part lists it."""
    root = office_part(data, "a diagram data part", recover=True)
    points = {pt.get("modelId"): pt for pt in root.iter(DGM + "pt")}
    children: dict[str | None, list[tuple[int, str | None]]] = {}
    for cxn in root.iter(DGM + "cxn"):
        if cxn.get("type", "parOf") == "parOf":
            order = int(cxn.get("srcOrd", "0")) if cxn.get("srcOrd", "").isdigit() else 0
            children.setdefault(cxn.get("srcId"), []).append((order, cxn.get("destId")))
    ordered: list[str | None] = []
    seen: set[str | None] = set()
    stack = [i for i, pt in points.items() if pt.get("type") == "doc"][::-1]
    while stack:  # depth first, children in their order; a cycle is read once
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        ordered.append(current)
        stack += [child for _, child in sorted(children.get(current, []), reverse=True)]
    ordered += [i for i in points if i not in seen]
    return [line for i in ordered if i in points
            and points[i].get("type", "node") in _TEXT_POINTS
            for line in _paragraphs(points[i])]


def _paragraphs(point: etree._Element) -> list[str]:
    text = point.find(DGM + "t")
    if text is None:
        return []
    lines = []
    for paragraph in text.iter(A + "p"):
        parts = normalize("".join(
            "\n" if node.tag == A + "br" else (node.text or "")
            for node in paragraph.iter(A + "t", A + "br"))).split("\n")
        if line := functools.reduce(join_lines, parts):
            lines.append(line)
    return lines
