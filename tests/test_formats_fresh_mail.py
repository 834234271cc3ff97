"""Mail as a new user's folder holds it (bench/format_corpus, PROVENANCE.md): an Outlook
message with no Unicode strings whose internet code page is ISO-2022-JP, Outlook items attached
to Outlook items (two and three deep), and a bounce whose delivery report is a named
attachment."""

from __future__ import annotations

from pathlib import Path

from ingest.models import ParsedDocument
from ingest.parse import parse_document, read_meta

CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def text_of(doc: ParsedDocument) -> str:
    return "\n".join(block.text for block in doc.blocks)


def test_an_outlook_message_in_code_page_932_under_iso_2022_jp_is_read() -> None:
    """msgreader's nonUnicodeCP932.msg: 8-bit strings in Shift-JIS (cp932), the internet code
    page 50220; decoding the body as ISO-2022-JP failed the whole file."""
    doc = parse(CORPUS / "msgreader" / "nonUnicodeCP932.msg")
    assert doc.meta.title == "日本語 Non Unicode タイトル"
    assert "日本語 Non Unicode 本文" in text_of(doc)


def test_an_outlook_item_attached_to_an_outlook_item_is_read() -> None:
    """msgreader's msgInMsg.msg: Outlook's test message attached as an item, with its own
    picture; it was left out without a count."""
    text = text_of(parse(CORPUS / "msgreader" / "msgInMsg.msg"))
    assert "附件:Microsoft Outlook テスト メッセージ.eml" in text
    assert "この電子メール メッセージは、アカウントの設定のテスト中に" in text
    assert "发件人: Microsoft Outlook <xmailuser@xmailserver.test>" in text
    assert text.index("テスト メッセージ.eml") < text.index("附件:green.png")
    outer = text_of(parse(CORPUS / "msgreader" / "Outer mail.msg"))
    for part in ("附件:OUTER 2.pdf", "附件:Inner mail.eml", "附件:INNER 1.pdf", "INNER 2"):
        assert part in outer


def test_an_outlook_item_forwarded_twice_as_an_item_is_read() -> None:
    """msgreader's msgInMsgInMsg.msg: Outlook's test message inside an item inside an item (a
    mail forwarded as an attachment, then again); the third level was counted, not read."""
    doc = parse(CORPUS / "msgreader" / "msgInMsgInMsg.msg")
    text = text_of(doc)
    assert text.index("附件:I have attachments!.eml") < text.index(
        "附件:Microsoft Outlook テスト メッセージ.eml") < text.index("附件:blue.png")
    assert "发件人: Microsoft Outlook <xmailuser@xmailserver.test>" in text
    assert "この電子メール メッセージは、アカウントの設定のテスト中に" in text
    assert doc.report.skipped == {}


def test_a_delivery_report_sent_as_a_named_attachment_is_read_whole() -> None:
    """SpamScope's mail_malformed_2.eml: the report's recipient group was lost (only the
    first of its field groups was read)."""
    text = text_of(parse(CORPUS / "spamscope" / "mail_malformed_2.eml"))
    assert "附件:DSN57BAC498.txt" in text
    assert "Final-Recipient: rfc822; abh@netpar.com.br" in text and "Action: failed" in text
    assert "Status: 4.2.2 (Persistent transient failure - mailbox: mailbox full)" in text
