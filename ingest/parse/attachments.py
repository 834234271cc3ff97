"""A mail's header, body and attachments as one document's blocks (for .eml and .msg).

Attachments are read by the parser of their own format and appended to the mail as sections
headed "附件：<name>", with their pages after the mail's. They are not documents of their own:
the pipeline turns one file into one document version (one manifest row, one ACL, one doc id
from the path), and an attachment has no path of its own; as a section it is found with the
mail it came with and cited by its name. A mail holds at most MAX_ATTACHMENTS read ones, a
document at most MAX_READ over all its levels (the others are counted in `skipped`). Mails nest
to MAX_MAIL_DEPTH: a mail forwarded as an attachment and forwarded again is an ordinary thing
in a company's mailbox (msgreader's msgInMsgInMsg.msg lost its third mail); a deeper one is
counted. An attachment that cannot be read is counted, never the cause of the mail's failure.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from pathlib import PurePath

from ingest.models import Block, BlockKind
from ingest.parse.coverage import indexed_chars
from ingest.parse.html_text import html_blocks, read_html
from ingest.parse.markdown_text import parse_text
from ingest.parse.result import ParseLimits, ParseResult
from ingest.text import normalize

MAX_ATTACHMENTS = 20  # read ones per mail: a legacy one costs a LibreOffice start (3–8 s)
MAX_READ = 100  # read ones per document over all its levels (20 mails of 20 would be 400)
MAX_MAIL_DEPTH = 3  # a mail, the mail attached to it, and the one attached to that
_MAIL_SUFFIXES = (".eml", ".msg")
_depth = contextvars.ContextVar("attachment_depth", default=0)  # 1 inside an attachment, 2 …
_read: contextvars.ContextVar[list[int]] = contextvars.ContextVar("attachments_read")


def mail_result(subject: str, header: Iterable[tuple[str, str]], plain: str | None,
                markup: str | None) -> ParseResult:
    """The subject as heading, "From: …" lines, then the body: the plain text part, else the
    HTML part read as a page is."""
    blocks = [Block(kind=BlockKind.HEADING, text=normalize(subject), level=1)] if subject else []
    blocks += [Block(kind=BlockKind.PARAGRAPH, text=normalize(f"{name}: {value}"))
               for name, value in header if value and normalize(value)]
    if plain and plain.strip():
        blocks += body_blocks(plain, html=False)
    elif markup and markup.strip():
        blocks += body_blocks(markup, html=True)
    result = ParseResult(blocks, 1)
    result.title, result.title_source = normalize(subject), "mail subject" if subject else ""
    return result


def body_blocks(text: str, html: bool) -> list[Block]:
    """A body part's blocks: plain text as paragraphs, HTML read as a page is."""
    if not html:
        return [b for b in parse_text(text) if b.text]
    body = read_html(text).find("body")
    return html_blocks(body) if body is not None else []


def inside_attachment() -> bool:
    """Whether an attachment (or embedded file) is being read: its own are not."""
    return _depth.get() > 0


def add_attachments(result: ParseResult, files: Iterable[tuple[str, bytes]],
                    limits: ParseLimits, kind: str = "attachments") -> None:
    """Each readable attachment's blocks after a heading naming it, pages after the mail's;
    `kind` names the counts of those not read ("embedded" for ingest.parse.embedded)."""
    # the package's table of formats, and its checks (an attached .docx's zip-bomb check too)
    from ingest.parse import SUPPORTED_SUFFIXES, _parse

    depth = _depth.get()
    total = _read.get() if depth else [0]  # the document's running count, shared by its levels
    read = unindexed = 0
    for name, data in files:
        suffix = PurePath(name).suffix.lower()
        too_deep = suffix in _MAIL_SUFFIXES and depth + 1 >= MAX_MAIL_DEPTH
        if (suffix not in SUPPORTED_SUFFIXES or not data) and not too_deep:
            result.skipped[f"{kind}_not_documents"] += 1
            continue
        if read >= MAX_ATTACHMENTS or total[0] >= MAX_READ or too_deep:
            result.skipped[f"{kind}_over_limit"] += 1
            continue
        read += 1
        total[0] += 1
        tokens = _depth.set(depth + 1), _read.set(total)
        try:
            part = _parse(suffix, data, limits)
        except MemoryError:  # the worker reports it as such, as for the mail itself
            raise
        except Exception:  # noqa: BLE001 - any failure of one attachment is counted, not raised
            result.skipped[f"{kind}_unreadable"] += 1
            result.blocks.append(Block(kind=BlockKind.HEADING, level=2,  # the name a reader sees
                                       text=normalize(f"附件：{name}"), page=result.pages))
            continue
        finally:
            _depth.reset(tokens[0])
            _read.reset(tokens[1])
        offset = result.pages
        result.blocks.append(Block(kind=BlockKind.HEADING, text=normalize(f"附件：{name}"),
                                   level=2, page=offset + 1))
        result.blocks += [b.model_copy(update={
            "page": offset + b.page,
            "level": min(b.level + 2, 6) if b.level is not None else None}) for b in part.blocks]
        result.pages = offset + max(part.pages, 1)
        result.attachments += 1
        result.ocr_pages += part.ocr_pages
        result.ocr_confidences += part.ocr_confidences
        result.skipped.update(part.skipped)
        result.chars_skipped += part.chars_skipped
        unindexed += max((part.chars_seen or 0) - indexed_chars(part.blocks), 0)
    if unindexed:  # what the attachments held and left out (hidden sheets, comments …)
        result.chars_seen = indexed_chars(result.blocks) + unindexed

