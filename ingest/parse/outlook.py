"""Outlook .msg files (python-oxmsg over olefile): the subject, sender, recipients and date,
the plain-text body (else the HTML one), and each attachment as a section of its own
(ingest.parse.attachments). python-oxmsg decodes the bodies with the message's own code page
(PR_INTERNET_CPID / PR_MESSAGE_CODEPAGE), so a GBK or Big5 message reads as its sender wrote it.
"""

from __future__ import annotations

from oxmsg import Message

from ingest.parse.attachments import add_attachments, mail_result
from ingest.parse.errors import ParseError
from ingest.parse.result import ParseLimits, ParseResult


def parse_msg(data: bytes, limits: ParseLimits) -> ParseResult:
    try:
        message = Message.load(data)
    except ValueError as exc:
        raise ParseError(f"not an Outlook message: {exc}") from None
    recipients = ", ".join(r.email_address or r.name for r in message.recipients
                           if r.email_address or r.name)
    sent = message.sent_date
    header = [("发件人", message.sender or ""), ("收件人", recipients),
              ("日期", sent.isoformat(sep=" ") if sent else "")]
    result = mail_result(message.subject, header, message.body, message.html_body)
    files = [(a.file_name or "attachment", a.file_bytes or b"") for a in message.attachments]
    add_attachments(result, files, limits)
    return result
