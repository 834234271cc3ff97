"""Outlook .msg files (python-oxmsg over olefile): the subject, sender, recipients and date,
the plain-text body (else the HTML one), and each attachment as a section of its own
(ingest.parse.attachments). python-oxmsg decodes the bodies with the message's own code page
(PR_INTERNET_CPID / PR_MESSAGE_CODEPAGE), so a GBK or Big5 message reads as its sender wrote it.
It names Windows code pages "windows-950", "windows-936" …, which Python knows only as cp950,
cp936 …: those names are registered as aliases here (Apache Tika's testMSG_chinese.msg, Big5,
failed with "unknown encoding: windows-950" without them).
The sender python-oxmsg takes from the transport headers keeps their RFC 2047 encoded words
("=?UTF-8?B?TS4gQy4gS3VydHVsdcWf?= <…>" for "M. C. Kurtuluş", markitdown's
test_outlook_msg.msg): they are decoded as a mail program shows them.
"""

from __future__ import annotations

import codecs
import re
from email.errors import HeaderParseError
from email.header import decode_header, make_header

from oxmsg import Message

from ingest.parse.attachments import add_attachments, mail_result
from ingest.parse.errors import ParseError
from ingest.parse.result import ParseLimits, ParseResult

_MESSAGE_CODEPAGE, _INTERNET_CODEPAGE = 0x3FFD, 0x3FDE  # PidTagMessageCodepage, …InternetCpid


def _windows_code_page(name: str) -> codecs.CodecInfo | None:
    match = re.fullmatch(r"windows[-_](\d{3,4})", name)
    if match is None:
        return None
    try:
        return codecs.lookup(f"cp{match[1]}")
    except LookupError:
        return None


codecs.register(_windows_code_page)


def _address(name: str, address: str) -> str:
    """"Name <address>", as a mail client shows a recipient (people search by either)."""
    if name and address and name != address:
        return f"{name} <{address}>"
    return name or address


def _decoded_words(text: str) -> str:
    """A header with its RFC 2047 encoded words decoded; as it is when they do not decode."""
    if "=?" not in text:
        return text
    try:
        return str(make_header(decode_header(text)))
    except (HeaderParseError, LookupError, UnicodeDecodeError):
        return text


def _recoded(message: Message, text: str) -> str:
    """An 8-bit string property in the body's code page when the message states none for its
    string properties: python-oxmsg then reads them as Latin-9, which turns a Big5 or GBK
    subject into mojibake ("MSG ®æŠ¡" for "MSG 格式")."""
    properties = message.properties
    if text.isascii() or properties.int_prop_value(_MESSAGE_CODEPAGE) is not None:
        return text
    internet = properties.int_prop_value(_INTERNET_CODEPAGE)
    if internet is None:
        return text
    try:
        return text.encode("iso-8859-15").decode(f"cp{internet}")
    except (UnicodeError, LookupError):
        return text


def parse_msg(data: bytes, limits: ParseLimits) -> ParseResult:
    try:
        message = Message.load(data)
    except ValueError as exc:
        raise ParseError(f"not an Outlook message: {exc}") from None
    recipients = ", ".join(_address(r.name, r.email_address) for r in message.recipients
                           if r.email_address or r.name)
    sent = message.sent_date
    if sent and sent.year <= 1601:  # FILETIME 0: no date was set (Outlook shows "None")
        sent = None
    header = [("发件人", _decoded_words(_recoded(message, message.sender or ""))),
              ("收件人", recipients),
              ("日期", sent.isoformat(sep=" ") if sent else "")]
    result = mail_result(_recoded(message, message.subject), header, message.body,
                         message.html_body)
    files = [(a.file_name or "attachment", a.file_bytes or b"") for a in message.attachments]
    add_attachments(result, files, limits)
    return result
