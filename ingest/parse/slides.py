"""PPTX (python-pptx): every text part of a deck, slide by slide; the page is the slide number.

Read: titles (headings), text boxes and placeholders of every kind, grouped shapes at any depth,
tables, charts (title, axis titles, series with their categories and values: ingest.parse.charts),
SmartArt diagrams' boxes (ingest.parse.diagrams), pictures' alt text and the text OCR reads in them
(ingest.parse.pictures), and the speaker notes. Footer and date placeholders (the slides', the
masters', the notes pages' headers too) and text repeated on most slides (ingest.parse.boilerplate)
are read once per deck, at its end, not on every slide. Left out on purpose: slide numbers and
hidden slides (not shown in the slide show; read with the include_hidden setting). The masters and
layouts the slides show (their text and what OCR reads in their pictures: a logo with the company's
name, a "机密" stamp) are read once per deck.
"""

from __future__ import annotations

import functools
import io
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pptx
import pptx.presentation
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.exc import InvalidXmlError
from pptx.oxml.xmlchemy import BaseOxmlElement
from pptx.shapes.autoshape import Shape
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape
from pptx.shapes.picture import Picture
from pptx.slide import Slide, SlideLayout, SlideMaster
from pptx.table import Table as PptxTable
from pptx.text.text import TextFrame

from ingest.models import Block, BlockKind
from ingest.parse.archive import open_recovering
from ingest.parse.boilerplate import is_page_number, line_shape, margin_blocks, repeated_shapes
from ingest.parse.charts import chart_lines
from ingest.parse.comments import comment_blocks, comment_texts
from ingest.parse.coverage import indexed_chars, visible_chars
from ingest.parse.diagrams import data_rel_id, diagram_lines
from ingest.parse.pictures import Pictures
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.tables import caption_before, cell_text, grid_blocks
from ingest.text import join_lines, normalize

_TITLES = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE}
_MARGINS = {PP_PLACEHOLDER.HEADER, PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE}
log = logging.getLogger(__name__)
MIN_SLIDES_FOR_REPEATS = 3  # a line on both slides of a two-slide deck may well be content
# Core-properties titles that name the template, not the deck.
_TEMPLATE_TITLE = re.compile(r"(?:powerpoint\s*)?(?:presentation|演示文稿|簡報|简报)\s*\d*", re.I)
# Alt text nobody wrote: PowerPoint's generated captions and the image's file name.
_GENERATED_ALT = re.compile(
    r".*(?:description automatically generated|自动生成的说明|自動產生的描述)\s*"
    r"|[\w\- ]+\.(?:png|jpe?g|gif|bmp|tiff?|emf|wmf|svg)", re.I)
_CJK = re.compile(r"[\u3400-\u9fff]")
# Prompts of a template's placeholders, in PowerPoint's and WPS's words
# (LibreOffice's footer placeholders say "<footer>" or "Footer"), and the stand-ins of the
# fields a master shows on each slide as that slide's value: LibreOffice's "<number>",
# "<date/time>", "<#>", PowerPoint's "‹#›" (a decoded .odp master keeps them as plain text boxes)
_PROMPT = re.compile(r"click to (?:edit|add)|单击此处|点击此处|单击以|编辑母版"
                     r"|母版(?:标题|文本)样式|按一下以編輯|編輯母片"
                     r"|^<?(?:footer|页脚)(?: text)?>?$"
                     r"|^[<‹](?:header|number|#|date/time|页眉)[>›]$", re.I)


@dataclass
class _Piece:
    block: Block
    repeatable: bool  # body text: boilerplate when it is on most slides
    margin: bool = False  # a footer or a date: read once per deck, with the margins


@dataclass
class _Skipped:
    """What was left out on purpose: counted by kind, and its characters."""

    result: ParseResult

    def add(self, kind: str, text: str) -> None:
        self.result.skipped[kind] += 1
        self.result.chars_skipped += visible_chars(text)

    def boilerplate(self, text: str) -> None:
        self.result.headers_footers_removed += 1
        self.add("boilerplate", text)


def parse_pptx(data: bytes, limits: ParseLimits) -> ParseResult:
    """Slides in order, shapes top to bottom, each slide's speaker notes right after it. Slide
    titles are headings; the title slide's title is the deck's title (else the file's title
    property). The page number is the slide number."""
    presentation, repaired = open_recovering(data, _open, "PPTX")
    result = ParseResult([], len(presentation.slides))
    if repaired:
        result.skipped["parts_repaired"] = len(repaired)
    skipped = _Skipped(result)
    numbered = []  # the slides read, with their numbers in the deck
    margins: list[str] = []  # footers, dates, headers and repeated lines of slides and notes
    for number, slide in enumerate(presentation.slides, 1):
        if limits.include_hidden or slide.element.get("show") not in ("0", "false"):
            numbered.append((number, slide))
        else:
            skipped.add("hidden_slides", _all_text(slide))
    pictures = Pictures(limits)
    pieces = [_slide_pieces(slide, number, skipped, pictures) for number, slide in numbered]
    repeated = repeated_shapes([[p.block.text for p in on_slide if p.repeatable]
                                for on_slide in pieces], MIN_SLIDES_FOR_REPEATS)
    for (number, slide), on_slide in zip(numbered, pieces, strict=True):
        start = len(result.blocks)
        for piece in on_slide:
            if piece.margin or (piece.repeatable and line_shape(piece.block.text) in repeated):
                margins.append(piece.block.text)
            else:
                result.blocks.append(piece.block)
        result.blocks += _notes(slide, number, skipped, margins)
        result.blocks += _title_only(result.blocks[start:], len(numbered))
        comments = [text for rel in slide.part.rels.values()
                    if rel.reltype.endswith("/comments") and not rel.is_external
                    for text in comment_texts(rel.target_part.blob)]
        if limits.include_comments:
            result.blocks += comment_blocks(comments, number)
        else:
            for text in comments:
                skipped.add("comments", text)
    last = numbered[-1][0] if numbered else 1
    templates = _templates([slide for _, slide in numbered])
    kept = _template_texts(templates) + _template_pictures(templates, last, pictures)
    shapes = {line_shape(text) for text in kept}
    for text in margins:  # each once; its repeats (and page numbers) are boilerplate
        if is_page_number(text) or line_shape(text) in shapes:
            skipped.boilerplate(text)
        else:
            kept.append(text)
            shapes.add(line_shape(text))
    result.blocks += margin_blocks(kept, last)
    first_titles = [p.block.text for p in (pieces[0] if pieces else [])
                    if p.block.kind == BlockKind.HEADING]
    stated = normalize(presentation.core_properties.title or "").replace("\n", " ")
    if first_titles:
        result.title, result.title_source = first_titles[0], "title slide"
    elif stated and not _TEMPLATE_TITLE.fullmatch(stated):
        result.title, result.title_source = stated, "metadata"
    result.skipped += pictures.skipped
    result.ocr_confidences = pictures.confidences
    result.chars_seen = indexed_chars(result.blocks) + result.chars_skipped
    return result


def _open(data: bytes) -> pptx.presentation.Presentation:
    return pptx.Presentation(io.BytesIO(data))


def _title_only(blocks: list[Block], slides: int) -> list[Block]:
    """A slide that is only its title (a section divider; the one slide of a deck embedded in a
    document, Tika's testWPSAttachment.ppt) is that text, not a label over text after it: the
    title again as the slide's paragraph, so that a chunk holds it. Not the title slide's title
    of a longer deck, which heads every slide after it."""
    if (not blocks or any(b.kind != BlockKind.HEADING for b in blocks)
            or (blocks[-1].level == 1 and slides > 1)):
        return []
    return [_paragraph(blocks[-1].text, blocks[-1].page or 1)]


def _templates(slides: list[Slide]) -> list[SlideMaster | SlideLayout]:
    """The masters, then the layouts, of the slides read, each once in the order the slides
    use them, where a slide shows their shapes: "Hide background graphics" (showMasterSp="0")
    on a slide hides its layout's and its master's shapes, on a layout its master's."""
    masters: dict[object, SlideMaster] = {}
    layouts: dict[object, SlideLayout] = {}
    for slide in slides:
        if _hides_master(slide.element):
            continue
        layout = slide.slide_layout
        layouts.setdefault(layout.element, layout)
        if not _hides_master(layout.element):
            masters.setdefault(layout.slide_master.element, layout.slide_master)
    return [*masters.values(), *layouts.values()]


def _hides_master(element: BaseOxmlElement) -> bool:
    return element.get("showMasterSp") in ("0", "false")


def _template_texts(templates: list[SlideMaster | SlideLayout]) -> list[str]:
    """The text masters and layouts draw on every slide built on them: a company name or a
    confidentiality line in a text box, a footer typed into the master's footer placeholder.
    Not their other placeholders, whose text is the prompt a new slide shows
    ("单击此处编辑母版标题样式", "Click to edit Master text styles") and never the slide's."""
    texts = []
    for template in templates:
        try:
            shapes = _shapes(template.shapes)
        except InvalidXmlError as exc:  # a recovered part (open_recovering) lost a shape's part
            log.warning("slide master/layout %s not read: %s", template.part.partname, exc)
            continue
        for shape in shapes:
            kind = shape.placeholder_format.type if shape.is_placeholder else None
            if isinstance(shape, Shape) and kind in (None, PP_PLACEHOLDER.FOOTER):
                texts += [text for text in _paragraphs(shape.text_frame)
                          if not _PROMPT.search(text)]
    return texts


def _template_pictures(templates: list[SlideMaster | SlideLayout], page: int,
                       pictures: Pictures) -> list[str]:
    """What OCR reads in the pictures of masters and layouts (placed pictures, pictures in
    groups or filling shapes, backgrounds), after the slides' own pictures and within the same
    limits; a picture a slide also shows is read once. A reference to a part the file does not
    hold is counted and logged, and the deck read all the same."""
    texts = []
    for template in templates:
        for rel_id in template.element.xpath(".//a:blip/@r:embed"):
            try:
                blob = template.part.related_part(rel_id).blob
            except (KeyError, ValueError):  # a dangling or an external relationship
                pictures.skipped["pictures_missing"] += 1
                log.warning("a picture of slide master/layout %s is missing: %s",
                            template.part.partname, rel_id)
                continue
            texts += [block.text for block in pictures.blocks(blob, page)
                      if block.kind != BlockKind.TABLE]
    return texts


def _all_text(slide: Slide) -> str:
    """Every text run of a slide and its notes page."""
    parts = [slide.element, *([slide.notes_slide.element] if slide.has_notes_slide else [])]
    return " ".join(str(text) for part in parts for text in part.xpath(".//a:t/text()"))


def _slide_pieces(slide: Slide, number: int, skipped: _Skipped, pictures: Pictures
                  ) -> list[_Piece]:
    """The slide's blocks in reading order, with which of them may be repeated boilerplate."""
    pieces: list[_Piece] = []
    for shape in _shapes(slide.shapes):
        if isinstance(shape, GraphicFrame) and shape.has_table:
            caption = caption_before([p.block for p in pieces])
            pieces += [_Piece(b, False) for b in grid_blocks(_grid(shape.table), number, caption)]
        elif isinstance(shape, GraphicFrame) and shape.has_chart:
            pieces += [_Piece(_paragraph(text, number), False)
                       for text in chart_lines(shape.chart_part.blob)]
        elif isinstance(shape, Picture):
            alt = normalize(" ".join(shape.element.xpath("./*[1]/p:cNvPr/@descr")))
            if _GENERATED_ALT.fullmatch(alt):
                skipped.add("generated_alt_text", alt)
            elif alt:
                label = _label([alt], "图片说明", "Image")
                pieces.append(_Piece(_paragraph(label + alt, number), True))
            pieces += [_Piece(read, False) for read in _picture_text(shape, number, pictures)]
        elif isinstance(shape, GraphicFrame) and (rel_id := data_rel_id(shape.element)):
            pieces += [_Piece(_paragraph(text, number), True)
                       for text in _diagram_text(shape, rel_id)]
        elif isinstance(shape, GraphicFrame):  # an OLE object: the picture it shows
            pieces += [_Piece(read, False) for read in _preview_text(shape, number, pictures)]
        elif isinstance(shape, Shape):  # text boxes, autoshapes and placeholders
            pieces += _text_pieces(shape, number, skipped)
    return pieces


def _diagram_text(frame: GraphicFrame, rel_id: str) -> list[str]:
    """A SmartArt diagram's text (ingest.parse.diagrams); a missing data part is logged."""
    try:
        return diagram_lines(frame.part.related_part(rel_id).blob)
    except KeyError:  # a dangling relationship
        log.warning("the SmartArt data of %s is missing: %s", frame.part.partname, rel_id)
        return []


def _preview_text(frame: GraphicFrame, number: int, pictures: Pictures) -> list[Block]:
    """The text of the picture an embedded object shows (a Visio drawing's or a workbook's
    EMF preview; an icon's caption): often all that is readable of a Visio diagram."""
    for rel_id in frame.element.xpath(".//a:blip/@r:embed")[:1]:
        try:
            return pictures.blocks(frame.part.related_part(rel_id).blob, number)
        except KeyError:  # a dangling relationship
            return []
    return []


def _picture_text(shape: Picture, number: int, pictures: Pictures) -> list[Block]:
    """What OCR reads in the picture (a linked picture, whose image is elsewhere, is not read)."""
    try:
        blob = shape.image.blob
    except (KeyError, ValueError):  # linked, not embedded
        return []
    return pictures.blocks(blob, number)


def _text_pieces(shape: Shape, number: int, skipped: _Skipped) -> list[_Piece]:
    """A text shape's paragraphs. A slide-number placeholder is boilerplate; footer and date
    placeholders are margins (read once per deck: a document number or a date printed only
    there is what a reader may ask for); a title is one heading and never boilerplate (a deck
    may repeat a section's title on each of its slides)."""
    texts = _paragraphs(shape.text_frame)
    kind = shape.placeholder_format.type if shape.is_placeholder else None
    if kind == PP_PLACEHOLDER.SLIDE_NUMBER:
        for text in texts:
            skipped.boilerplate(text)
        return []
    if kind in _MARGINS:
        return [_Piece(_paragraph(text, number), False, margin=True) for text in texts]
    if kind in _TITLES:
        title = functools.reduce(join_lines, texts, "")
        heading = Block(kind=BlockKind.HEADING, text=title, page=number,
                        level=1 if number == 1 else 2)
        return [_Piece(heading, False)] if title else []
    return [_Piece(_paragraph(text, number), True) for text in texts]


def _notes(slide: Slide, number: int, skipped: _Skipped, margins: list[str]) -> list[Block]:
    """The speaker notes, one block per paragraph, each marked "演讲者备注:" (or "Speaker
    notes:" for notes without Chinese): they are what the presenter says, not what the slide
    shows, and a reader of any chunk cut from them should see that. The notes page's header and
    footer and date are not notes: their texts go to `margins` (read once per deck, as a
    printed notes page shows them); its slide-number placeholder and a paragraph that is only
    a page number are boilerplate."""
    if not slide.has_notes_slide:
        return []
    page = slide.notes_slide
    for shape in page.shapes:
        kind = shape.placeholder_format.type if shape.is_placeholder else None
        if isinstance(shape, Shape) and kind in _MARGINS:
            margins += _paragraphs(shape.text_frame)
        elif isinstance(shape, Shape) and kind == PP_PLACEHOLDER.SLIDE_NUMBER:
            for text in _paragraphs(shape.text_frame):
                skipped.boilerplate(text)
    texts = _paragraphs(page.notes_text_frame) if page.notes_text_frame else []
    for text in filter(is_page_number, texts):
        skipped.boilerplate(text)
    texts = [text for text in texts if not is_page_number(text)]
    label = _label(texts, "演讲者备注", "Speaker notes")
    return [_paragraph(label + text, number) for text in texts]


def _label(texts: Iterable[str], chinese: str, english: str) -> str:
    """The name of the part a paragraph comes from, in the script of its text."""
    return f"{chinese}: " if any(_CJK.search(text) for text in texts) else f"{english}: "


def _paragraph(text: str, page: int) -> Block:
    return Block(kind=BlockKind.PARAGRAPH, text=text, page=page)


def _paragraphs(frame: TextFrame) -> list[str]:
    """Non-empty paragraphs, normalized; a line break inside one joins as wrapped text."""
    lines = (normalize(paragraph.text).split("\n") for paragraph in frame.paragraphs)
    return [text for text in (functools.reduce(join_lines, parts) for parts in lines) if text]


def _shapes(shapes: Iterable[BaseShape]) -> list[BaseShape]:
    """Shapes in reading order (top to bottom, then left to right), groups opened at any depth
    (a group's members are ordered within it, in its own coordinates)."""
    out: list[BaseShape] = []
    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        out += _shapes(shape.shapes) if isinstance(shape, GroupShape) else [shape]
    return out


def _grid(table: PptxTable) -> list[list[str | None]]:
    """A merged cell's text copied into every position it spans."""
    grid: list[list[str | None]] = [[None] * len(table.columns) for _ in table.rows]
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            if cell.is_spanned:
                continue
            text = cell_text(cell.text)
            for dr in range(cell.span_height if cell.is_merge_origin else 1):
                for dc in range(cell.span_width if cell.is_merge_origin else 1):
                    if r + dr < len(grid) and c + dc < len(grid[0]):
                        grid[r + dr][c + dc] = text
    return grid
