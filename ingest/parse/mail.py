"""E-mail saved as .eml (RFC 5322, Python's `email` package with its modern policy): the
subject, sender, recipients and date, the body a mail program shows, then each attachment as a
section of its own (ingest.parse.attachments).

The body is every inline text part (plain, or HTML read as a page) in order, except that of a
multipart/alternative only the last version holding text is shown, as mail programs do (RFC
2046: the alternatives are in increasing order of preference): usually the HTML one. The
versions need not agree (Tika's testRFC822_multipart_attachments.eml: the plain one is another
text), and Apple Mail's HTML version is itself several HTML parts between attachments. A
bounce's delivery report, a read receipt and an abuse report are body text too, their fields
one a line; one sent as a named attachment ("DSN57BAC498.txt") is that attachment, all its
field groups in it (Python holds each group as a message: only the first was read).

Each part is decoded with the charset it declares (GB2312 and Big5 mails declare theirs); a part
that declares none or a wrong one is read as UTF-8, else GB18030, with replacement characters
rather than a failure. A whole mail saved as UTF-16 text (Windows tools write files so, with or
without a byte-order mark) is read as the same mail in UTF-8. Inline images (logos, signatures)
are pictures of the layout, not attachments a sender chose: counted, not read.
"""

from __future__ import annotations

import codecs
import email
import email.policy
from email.message import EmailMessage, Message

from ingest.models import Block
from ingest.parse.attachments import add_attachments, body_blocks, mail_result
from ingest.parse.errors import ParseError
from ingest.parse.result import ParseLimits, ParseResult

MAX_PARTS = 5_000  # MIME parts walked per mail; the attachment limit applies after
_HEADER = (("From", "发件人"), ("To", "收件人"), ("Cc", "抄送"), ("Date", "日期"))
# a bounce's delivery report (RFC 3464), a read receipt (RFC 8098), an abuse report (RFC 5965):
# fields a mail program shows as text in the body (the recipient, the action, the reason)
_REPORTS = ("message/delivery-status", "message/disposition-notification",
            "message/feedback-report")


def parse_eml(data: bytes, limits: ParseLimits) -> ParseResult:
    message = email.message_from_bytes(_as_utf8(data), policy=email.policy.default)
    if not isinstance(message, EmailMessage) or not any(message.keys()):
        raise ParseError("not an e-mail message: no header lines")
    hidden = _other_alternatives(message)
    body: list[Block] = []
    files: list[tuple[str, bytes]] = []
    inline = 0
    for part in _parts(message):
        if part.get_content_type() in _REPORTS and not part.get_filename():
            body += body_blocks(_report_text(part), html=False)
        elif _attached(part):
            files.append((part.get_filename() or "attachment.eml", _payload(part)))
        elif part.get_content_maintype() == "image":
            inline += 1
        elif _text_part(part) and id(part) not in hidden:
            body += body_blocks(_text(part), html=part.get_content_subtype() == "html")
    header = [(label, str(message.get(name, ""))) for name, label in _HEADER]
    result = mail_result(str(message.get("Subject", "")), header, None, None)
    result.blocks += body
    if inline:
        result.skipped["inline_images"] = inline
    add_attachments(result, files, limits)
    return result


def _as_utf8(data: bytes) -> bytes:
    """A mail is ASCII in its header lines, so UTF-16 shows as a NUL beside every header byte:
    a byte-order mark, or NULs at every odd (little-endian) or even (big-endian) place of its
    first 200 bytes. A UTF-8 byte-order mark is dropped: the parser would take it for the
    start of a body with no header lines."""
    head = data[:200]
    if head.startswith(codecs.BOM_UTF8):  # Notepad and .NET write one before the first header
        return data[len(codecs.BOM_UTF8):]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace").encode("utf-8")
    for order, nuls in (("utf-16-le", head[1::2]), ("utf-16-be", head[0::2])):
        if len(nuls) >= 16 and not nuls.strip(b"\x00"):
            return data.decode(order, errors="replace").encode("utf-8")
    return data


def _parts(message: Message, leaves_only: bool = True) -> list[Message]:
    """The leaf parts in order (with the multiparts too unless `leaves_only`), an attached mail
    (message/rfc822) as one leaf: its own parts are its business (read when it is read as an
    attachment), not this mail's body."""
    found: list[Message] = []
    stack = [message]
    while stack:
        part = stack.pop()
        if len(found) + len(stack) > MAX_PARTS:
            raise ParseError(f"e-mail has over {MAX_PARTS:,} MIME parts: not read")
        inner = part.get_payload()
        if part.get_content_maintype() == "multipart" and isinstance(inner, list):
            stack += reversed([p for p in inner if isinstance(p, Message)])
            if not leaves_only:
                found.append(part)
        else:
            found.append(part)
    return found


def _attached(part: Message) -> bool:
    return bool(part.get_filename() or part.get_content_disposition() == "attachment"
                or part.get_content_maintype() == "message")


def _text_part(part: Message) -> bool:
    return part.get_content_type() in ("text/plain", "text/html") and not _attached(part)


def _other_alternatives(message: Message) -> set[int]:
    """The ids of the parts a mail program does not show: in each multipart/alternative, every
    version but the last one holding a text part, and all below them. Linear in the parts (a
    mail nesting hundreds of alternatives costs no more than as many flat parts)."""
    nodes = _parts(message, leaves_only=False)  # parents before their children
    children: dict[int, list[Message]] = {}
    for node in nodes:
        inner = node.get_payload()
        if node.get_content_maintype() == "multipart" and isinstance(inner, list):
            children[id(node)] = [p for p in inner if isinstance(p, Message)]
    has_text: dict[int, bool] = {}
    for node in reversed(nodes):
        below = children.get(id(node))
        has_text[id(node)] = (any(has_text[id(c)] for c in below) if below is not None
                              else _text_part(node))
    hidden: set[int] = set()
    for node in nodes:
        below = children.get(id(node), [])
        if id(node) in hidden:
            hidden.update(id(c) for c in below)
        elif node.get_content_type() == "multipart/alternative":
            shown = next((c for c in reversed(below) if has_text[id(c)]), None)
            hidden.update(id(c) for c in below if c is not shown)
    return hidden


def _report_text(part: Message) -> str:
    """A report's fields as "Name: value" lines, a blank line between its field groups (one
    for the message, one for each recipient); Python's parser holds each group as headers."""
    inner = part.get_payload()
    if not isinstance(inner, list):
        return _text(part)
    groups = ("\n".join(f"{name}: {value}" for name, value in block.items())
              for block in inner if isinstance(block, Message))
    return "\n\n".join(group for group in groups if group)


def _payload(part: Message) -> bytes:
    if part.get_content_type() in _REPORTS:
        return _report_text(part).encode("utf-8")
    payload = part.get_payload(decode=True)
    if isinstance(payload, bytes):
        return payload
    inner = part.get_payload()  # message/rfc822: the attached mail as a message object
    if isinstance(inner, list) and inner and isinstance(inner[0], Message):
        return inner[0].as_bytes()
    return b""


def _text(part: Message) -> str:
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return ""
    charset = part.get_content_charset()
    for encoding in (charset, "utf-8", "gb18030"):
        if not encoding:
            continue
        try:
            return raw.decode(_alias(encoding))
        except (LookupError, UnicodeDecodeError):
            continue
    return raw.decode("utf-8", "replace")


def _alias(charset: str) -> str:
    """GB2312 and GBK mails often hold characters only GB18030 has (a superset of both)."""
    return "gb18030" if charset.lower() in ("gb2312", "gbk", "x-gbk", "cp936") else charset
