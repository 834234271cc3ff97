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

A message whose internet code page is a 7-bit or EUC form (ISO-2022-JP, EUC-KR …) stores its
8-bit strings in that language's Windows code page (932, 949 …): python-oxmsg decoded them with
the internet one and failed the whole file (msgreader's nonUnicodeCP932.msg). A message attached
to a message (forwarded as an item, not a file) is a storage inside the attachment, which
python-oxmsg does not return: it is read as the mail it is, with its own attachments.
"""

from __future__ import annotations

import codecs
import re
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import EmailMessage

from olefile import OleFileIO, isOleFile
from oxmsg import Message
from oxmsg.attachment import Attachment
from oxmsg.properties import Properties
from oxmsg.storage import Storage
from oxmsg.util import lazyproperty

from ingest.parse.attachments import MAX_MAIL_DEPTH, add_attachments, mail_result
from ingest.parse.errors import ParseError
from ingest.parse.result import ParseLimits, ParseResult

_MESSAGE_CODEPAGE, _INTERNET_CODEPAGE = 0x3FFD, 0x3FDE  # PidTagMessageCodepage, …InternetCpid
_BODY, _DISPLAY_NAME = 0x1000, 0x3001  # PidTagBody, PidTagDisplayName
_STRING8 = 0x001E
_ATTACHED_MESSAGE = "__substg1.0_3701000D"  # PidTagAttachDataObject holding a message
_EMBEDDED_HEADER = 24  # an attached message's properties header ([MS-OXMSG] 2.4.1.2), not 32
# the Windows code page of the 8-bit strings of a message whose internet code page is not one
_WINDOWS_CODEPAGE = {50220: 932, 50221: 932, 50222: 932, 51932: 932, 20932: 932,
                     50225: 949, 51949: 949, 50227: 936, 51936: 936, 52936: 936,
                     50229: 950, 51950: 950}


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


def _windows_codepage(message: Message) -> int | None:
    internet = message.properties.int_prop_value(_INTERNET_CODEPAGE)
    return _WINDOWS_CODEPAGE.get(internet, internet) if internet is not None else None


def _recoded(message: Message, text: str) -> str:
    """An 8-bit string property in the body's code page when the message states none for its
    string properties: python-oxmsg then reads them as Latin-9, which turns a Big5 or GBK
    subject into mojibake ("MSG ®æŠ¡" for "MSG 格式")."""
    if text.isascii() or message.properties.int_prop_value(_MESSAGE_CODEPAGE) is not None:
        return text
    codepage = _windows_codepage(message)
    if codepage is None:
        return text
    try:
        return text.encode("iso-8859-15").decode(f"cp{codepage}")
    except (UnicodeError, LookupError):
        return text


def _body(message: Message, storage: Storage) -> str | None:
    """The plain-text body; an 8-bit one the internet code page does not decode is read in its
    Windows code page, with replacement characters rather than a failure."""
    try:
        return message.body
    except UnicodeDecodeError:
        raw = storage.property_stream_bytes(_BODY, _STRING8)
        return raw.decode(f"cp{_windows_codepage(message) or 1252}", errors="replace")


class _AttachedMessage(Message):
    """A message stored inside an attachment: its properties stream has a shorter header."""

    @lazyproperty
    def _properties(self) -> Properties:
        return Properties(self._storage, properties_header_offset=_EMBEDDED_HEADER)


def _as_mail(message: Message, storage: Storage, depth: int) -> bytes:
    """An attached message as the RFC 5322 mail it is, with its attachments (its own attached
    messages too, to `MAX_MAIL_DEPTH`), to be read as an attached .eml is."""
    mail = EmailMessage()
    for name, value in (("Subject", _recoded(message, message.subject)),
                        ("From", _decoded_words(_recoded(message, message.sender or ""))),
                        ("To", _recipients(message))):
        if value := " ".join(value.split()):
            mail[name] = value
    body, html = _body(message, storage), message.html_body
    if body and body.strip():
        mail.set_content(body)
    elif html and html.strip():
        mail.set_content(html, subtype="html")
    for name, data in _files(storage, depth):
        mail.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return mail.as_bytes()


def _files(storage: Storage, depth: int) -> list[tuple[str, bytes]]:
    """(name, bytes) of each attachment in order, an attached message as a mail (.eml); past
    `MAX_MAIL_DEPTH` one with no bytes, counted as not read."""
    files = []
    for part in storage.iter_attachment_storages():
        inner = next((s for s in part.storages if s.name == _ATTACHED_MESSAGE), None)
        if inner is None:
            attachment = Attachment(part)
            files.append((attachment.file_name or "attachment", attachment.file_bytes or b""))
            continue
        message = _AttachedMessage(inner)
        name = message.properties.str_prop_value(_DISPLAY_NAME) or message.subject or "message"
        files.append((f"{name}.eml",
                      _as_mail(message, inner, depth + 1) if depth < MAX_MAIL_DEPTH else b""))
    return files


def _recipients(message: Message) -> str:
    return ", ".join(_address(r.name, r.email_address) for r in message.recipients
                     if r.email_address or r.name)


def parse_msg(data: bytes, limits: ParseLimits) -> ParseResult:
    if not isOleFile(data=data):
        raise ParseError("not an Outlook message: not an OLE compound file")
    with OleFileIO(data) as ole:
        storage = Storage.from_ole(ole)
    message = Message(storage)
    sent = message.sent_date
    if sent and sent.year <= 1601:  # FILETIME 0: no date was set (Outlook shows "None")
        sent = None
    header = [("发件人", _decoded_words(_recoded(message, message.sender or ""))),
              ("收件人", _recipients(message)),
              ("日期", sent.isoformat(sep=" ") if sent else "")]
    result = mail_result(_recoded(message, message.subject), header, _body(message, storage),
                         message.html_body)
    add_attachments(result, _files(storage, 1), limits)
    return result
