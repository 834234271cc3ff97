"""E-mail (.eml by Python's email package, .msg written by Outlook), EPUB (written by LibreOffice)
and OFD (written by Chinese OFD producers, from ofdrw's test files): every phrase a reader sees
arrives, attachments as sections of the mail, and hostile files (1,000 attachments, an OFD zip
bomb or entity bomb) fail or stay bounded with a reason."""

from __future__ import annotations

import io
import shutil
import subprocess
import time
import zipfile
from email.message import EmailMessage
from pathlib import Path

import docx
import pytest

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseError, parse_document, read_meta
from ingest.parse.attachments import MAX_ATTACHMENTS, MAX_READ

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def text_of(doc: ParsedDocument) -> str:
    return "\n".join(block.text for block in doc.blocks)


def docx_bytes(*paragraphs: str) -> bytes:
    document = docx.Document()
    for line in paragraphs:
        document.add_paragraph(line)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def mail(subject: str = "关于2026年差旅标准调整的通知") -> EmailMessage:
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = "财务部 王敏 <wangmin@example.cn>"
    message["To"] = "全体员工 <all@example.cn>"
    message["Date"] = "Mon, 05 Jan 2026 09:00:00 +0800"
    return message


def test_eml_body_in_its_charset_and_attachments_as_sections(tmp_path: Path) -> None:
    message = mail()
    body = "各位同事：\n自2月1日起，一线城市住宿标准调整为每晚650元。\n"
    message.set_content(body, charset="gb2312")
    assert b'charset="gb2312"' in bytes(message)
    message.add_alternative("<p>自2月1日起，一线城市住宿标准调整为每晚650元。</p>", subtype="html")
    message.add_attachment(docx_bytes("附件所列城市包括北京、上海、广州、深圳。"),
                           maintype="application", subtype="octet-stream",
                           filename="城市名单.docx")
    message.add_attachment("城市,标准\n杭州,500\n".encode("gb18030"), maintype="text",
                           subtype="csv", filename="二线城市.csv")
    (tmp_path / "notice.eml").write_bytes(bytes(message))
    doc = parse(tmp_path / "notice.eml")
    text = text_of(doc)
    assert doc.meta.title == "关于2026年差旅标准调整的通知"
    assert "发件人: 财务部 王敏 <wangmin@example.cn>" in text
    assert text.count("住宿标准调整为每晚650元") == 1  # the plain part, not both alternatives
    headings = [b for b in doc.blocks if b.kind == BlockKind.HEADING and b.text.startswith("附件")]
    assert [h.text for h in headings] == ["附件:城市名单.docx", "附件:二线城市.csv"]
    after = doc.blocks[doc.blocks.index(headings[0]) + 1]
    assert "北京、上海、广州、深圳" in after.text and after.page == 2
    assert any("城市: 杭州" in b.text for b in doc.blocks if b.page == 3)


def test_html_only_mail_is_read_as_a_page(tmp_path: Path) -> None:
    message = mail("Quarterly review")
    message.set_content("<html><body><h2>Agenda</h2><p>Budget variance by region.</p>"
                        "</body></html>", subtype="html")
    (tmp_path / "review.eml").write_bytes(bytes(message))
    text = text_of(parse(tmp_path / "review.eml"))
    assert "Agenda" in text and "Budget variance by region." in text


def test_a_mail_with_1000_attachments_reads_a_bounded_number(tmp_path: Path) -> None:
    message = mail("批量附件")
    message.set_content("见附件。")
    for number in range(1000):
        message.add_attachment(f"第{number}号说明".encode(), maintype="text", subtype="plain",
                               filename=f"说明{number}.txt")
    (tmp_path / "many.eml").write_bytes(bytes(message))
    started = time.perf_counter()
    doc = parse(tmp_path / "many.eml")
    assert time.perf_counter() - started < 60
    assert sum(b.text.startswith("附件") for b in doc.blocks) == MAX_ATTACHMENTS
    assert doc.report.skipped["attachments_over_limit"] == 1000 - MAX_ATTACHMENTS


def test_mails_of_mails_read_a_bounded_number_over_all_levels(tmp_path: Path) -> None:
    """20 attached mails of 20 attachments each would be 420 parses: the document reads
    MAX_READ in order (1 + 20 for each of the first four mails, 1 + 15 of the fifth) and
    counts what it leaves at the level it leaves it (5 attachments, 15 mails)."""
    message = mail("转发汇总")
    message.set_content("见附件。")
    for number in range(MAX_ATTACHMENTS):
        inner = mail(f"第{number}封")
        inner.set_content(f"第{number}封正文")
        for part in range(MAX_ATTACHMENTS):
            inner.add_attachment(f"说明{number}-{part}".encode(), maintype="text",
                                 subtype="plain", filename=f"说明{number}-{part}.txt")
        message.add_attachment(inner)
    (tmp_path / "nested.eml").write_bytes(bytes(message))
    doc = parse(tmp_path / "nested.eml")
    assert sum(b.text.startswith("附件") for b in doc.blocks) == MAX_READ
    assert doc.report.skipped["attachments_over_limit"] == 5 + 15
    text = text_of(doc)
    assert "说明4-14" in text and "说明4-15" not in text and "第5封正文" not in text


def test_a_broken_attachment_or_nested_mail_never_fails_the_mail(tmp_path: Path) -> None:
    inner = mail("内层邮件")
    inner.set_content("内层正文可以检索。")
    innermost = mail("第三层邮件")
    innermost.set_content("第三层正文也可以检索。")
    fourth = mail("第四层邮件")
    fourth.set_content("第四层正文")
    innermost.add_attachment(fourth)
    inner.add_attachment(innermost)
    message = mail("外层邮件")
    message.set_content("外层正文")
    message.add_attachment(b"PK\x03\x04 not really a document", maintype="application",
                           subtype="octet-stream", filename="损坏.docx")
    message.add_attachment(inner)
    (tmp_path / "outer.eml").write_bytes(bytes(message))
    doc = parse(tmp_path / "outer.eml")
    text = text_of(doc)
    assert "外层正文" in text and "内层正文可以检索。" in text
    assert "第三层正文也可以检索。" in text and "第四层正文" not in text  # MAX_MAIL_DEPTH
    assert doc.report.skipped["attachments_unreadable"] == 1
    assert doc.report.skipped["attachments_over_limit"] == 1  # the fourth mail, counted


def test_outlook_msg_with_its_attachment(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "message.msg", tmp_path)
    doc = parse(tmp_path / "message.msg")
    text = text_of(doc)
    assert doc.meta.title == "Re: test internal"
    assert "bedfortest@tutanota.de" in text and "asdfasdf" in text
    assert "收件人: Arne Möhle <arne.moehle@tutao.onmicrosoft.com>" in text
    assert "附件:serveimage.jpg" in text  # its picture follows, read by OCR
    shutil.copy(FIXTURES / "no-attachments.msg", tmp_path)
    bare = text_of(parse(tmp_path / "no-attachments.msg"))
    assert "This is a message" in bare
    assert "1601" not in bare  # its sent date is unset (FILETIME 0), not 1 Jan 1601


def test_a_file_that_is_not_an_outlook_message_fails_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "fake.msg").write_text("From: someone\n\nplain text saved as .msg")
    with pytest.raises(ParseError, match="not an Outlook message"):
        parse(tmp_path / "fake.msg")


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice writes the EPUB")
def test_epub_chapters_in_spine_order(tmp_path: Path) -> None:
    document = docx.Document()
    document.core_properties.title = "员工手册"
    for number, (heading, body) in enumerate([("总则", "本手册适用于全体正式员工。"),
                                              ("考勤", "迟到三次以上按旷工半天处理。")], 1):
        if number > 1:
            document.add_page_break()
        document.add_heading(f"第{number}章 {heading}", 1)
        document.add_paragraph(body)
    document.save(tmp_path / "handbook.docx")
    subprocess.run(["soffice", f"-env:UserInstallation={(tmp_path / 'p').as_uri()}",
                    "--headless", "--convert-to", "epub", "--outdir", str(tmp_path / "out"),
                    str(tmp_path / "handbook.docx")], check=True, capture_output=True, timeout=300)
    doc = parse(tmp_path / "out" / "handbook.epub")
    text = text_of(doc)
    assert doc.meta.title == "员工手册"
    assert text.index("第1章 总则") < text.index("本手册适用于全体正式员工。") < text.index(
        "第2章 考勤") < text.index("迟到三次以上按旷工半天处理。")


def test_ofd_official_notice_in_reading_order(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "notice.ofd", tmp_path)
    doc = parse(tmp_path / "notice.ofd")
    text = text_of(doc)
    assert doc.pages == 2
    order = ["路卫发〔2011〕76号", "关于同意张阿三同志辞职的批复", "区中医院"]
    assert [text.index(phrase) for phrase in order] == sorted(text.index(p) for p in order)
    assert "本科学历" in text


def test_ofd_invoice_reads_template_labels_beside_page_values(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "invoice.ofd", tmp_path)
    doc = parse(tmp_path / "invoice.ofd")
    text = text_of(doc)
    assert doc.pages == 5
    assert "销售方名称:财天下科技有限公司" in text  # label on the template, value on the page
    assert "价税合计(大写) 壹万零陆佰圆整" in text
    assert {b.page for b in doc.blocks} == {1, 2, 3, 4, 5}


def ofd_with(content: bytes, compress: int = zipfile.ZIP_DEFLATED) -> bytes:
    ns = 'xmlns:ofd="http://www.ofdspec.org/2016"'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compress) as archive:
        archive.writestr("OFD.xml", f"<ofd:OFD {ns}><ofd:DocBody><ofd:DocRoot>Doc_0/Document.xml"
                         "</ofd:DocRoot></ofd:DocBody></ofd:OFD>")
        archive.writestr("Doc_0/Document.xml", f'<ofd:Document {ns}><ofd:Pages><ofd:Page ID="1" '
                         'BaseLoc="Pages/Page_0/Content.xml"/></ofd:Pages></ofd:Document>')
        archive.writestr("Doc_0/Pages/Page_0/Content.xml", content)
    return out.getvalue()


def test_ofd_zip_bomb_and_entity_bomb_fail_before_unpacking(tmp_path: Path) -> None:
    page = b'<ofd:Page xmlns:ofd="http://www.ofdspec.org/2016"><ofd:Content/></ofd:Page>'
    (tmp_path / "bomb.ofd").write_bytes(ofd_with(page + b" " * (60 << 20)))
    assert (tmp_path / "bomb.ofd").stat().st_size < 1 << 20
    with pytest.raises(ParseError, match="zip bomb"):
        parse(tmp_path / "bomb.ofd")
    laughs = (b'<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "haha"><!ENTITY b "&a;&a;&a;&a;">]>'
              + page.replace(b"<ofd:Content/>", b"<ofd:Content>&b;</ofd:Content>"))
    (tmp_path / "laughs.ofd").write_bytes(ofd_with(laughs))
    with pytest.raises(ParseError, match="declares a DTD"):
        parse(tmp_path / "laughs.ofd")
    (tmp_path / "ok.ofd").write_bytes(ofd_with(page.replace(
        b"<ofd:Content/>", b'<ofd:Content><ofd:Layer><ofd:TextObject Boundary="10 10 50 5" '
        b'Size="3"><ofd:TextCode X="0" Y="3">\xe6\xad\xa3\xe6\x96\x87</ofd:TextCode>'
        b"</ofd:TextObject></ofd:Layer></ofd:Content>")))
    assert text_of(parse(tmp_path / "ok.ofd")) == "正文"  # the same package, not a bomb: read


def epub_with(chapter: bytes, opf_title: str = "手册", files: dict[str, bytes] | None = None
              ) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("META-INF/container.xml", (
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">'
            '<rootfiles><rootfile full-path="OPS/book.opf" media-type="application/oebps-'
            'package+xml"/></rootfiles></container>'))
        archive.writestr("OPS/book.opf", (
            '<?xml version="1.0"?><!DOCTYPE package [<!ENTITY t "' + "标题" * 10 + '">]>'
            '<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata xmlns:dc='
            f'"http://purl.org/dc/elements/1.1/"><dc:title>{opf_title}</dc:title></metadata>'
            '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
            '</manifest><spine><itemref idref="c1"/></spine></package>'))
        archive.writestr("OPS/c1.xhtml", chapter)
        for name, data in (files or {}).items():
            archive.writestr(name, data)
    return out.getvalue()


def test_an_epub_entity_bomb_is_never_expanded(tmp_path: Path) -> None:
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10 if i else "哈" * 10}">'
                     for i in range(9))
    chapter = (f'<?xml version="1.0"?><!DOCTYPE html [{laughs}]><html xmlns="http://www.w3.org/'
               '1999/xhtml"><body><p>正文第一段</p><p>&l8;</p></body></html>').encode()
    (tmp_path / "bomb.epub").write_bytes(epub_with(chapter, "&t;"))
    started = time.perf_counter()
    doc = parse(tmp_path / "bomb.epub")
    assert time.perf_counter() - started < 10
    assert "正文第一段" in text_of(doc) and "哈哈" not in text_of(doc)
    assert "标题" not in doc.meta.title  # the package's own entity is not expanded either


def test_an_epub_cover_picture_is_read_by_ocr() -> None:
    """Tika's testEPUB.epub (bench/format_corpus/tika, PROVENANCE.md): its cover page is a
    picture with the title, the author and the publisher drawn on it, text in no chapter."""
    doc = parse(Path(__file__).parents[1] / "bench/format_corpus/tika/testEPUB.epub")
    (cover,) = [b for b in doc.blocks if b.text.startswith("图片文字:")]
    assert cover.page == 1 and cover.ocr
    assert "by Bart Hanssens" in cover.text and "Apache" in cover.text


def test_an_epub_picture_shown_10000_times_is_read_once(tmp_path: Path) -> None:
    """A chapter showing one picture 10,000 times, one by an escaped name, and addresses that
    are outside the book, missing or climbing out of it: each picture file is read once, the
    others are left alone, the chapter's text read all the same (as UTF-8, XHTML's default,
    though the chapter names no encoding)."""
    book = Path(__file__).parents[1] / "bench/format_corpus/tika/testEPUB.epub"
    with zipfile.ZipFile(book) as archive:
        cover = archive.read("OPS/CoverDesign.jpg")
    from PIL import Image
    publisher = io.BytesIO()
    Image.open(io.BytesIO(cover)).crop((150, 640, 450, 720)).save(publisher, "PNG")
    images = ('<img src="cover.jpg"/>' * 10_000 + '<img src="pub%20name.png"/>'
              '<img src="http://example.com/a.png"/><img src="missing.png"/>'
              '<img src="../../../etc/passwd"/><img src="data:image/png;base64,AAAA"/>')
    chapter = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><p>正文第一段</p>'
               f'{images}</body></html>').encode()
    files = {"OPS/cover.jpg": cover, "OPS/pub name.png": publisher.getvalue()}
    (tmp_path / "pictures.epub").write_bytes(epub_with(chapter, files=files))
    started = time.perf_counter()
    doc = parse(tmp_path / "pictures.epub")
    assert time.perf_counter() - started < 60
    read = [b.text for b in doc.blocks if b.text.startswith("图片文字:")]
    assert len(read) == 2 and "Bart Hanssens" in read[0] and "Apache" in read[1]
    assert doc.blocks[0].text == "正文第一段"


def test_a_big5_outlook_message_reads_in_its_code_page(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "testMSG_chinese.msg", tmp_path)
    doc = parse(tmp_path / "testMSG_chinese.msg")
    assert doc.meta.title == "Alfresco MSG format testing ( MSG 格式測試 )"
    assert "張毓倫" in text_of(doc) and "高票當選雲林縣總工會" in text_of(doc)


def test_text_that_is_not_a_mail_fails_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "notes.eml").write_text("just some notes, no header lines at all\n")
    with pytest.raises(ParseError, match="not an e-mail message"):
        parse(tmp_path / "notes.eml")


CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"  # public, PROVENANCE.md


def test_the_version_of_a_multipart_alternative_a_mail_program_shows_is_read() -> None:
    """Tika's testRFC822_multipart_attachments.eml: its plain and HTML versions say different
    things; a mail program shows the HTML one (the last), so that is the body. php-imap's Apple
    Mail message: the HTML version is three HTML parts between two PDFs, all of it read."""
    tika = text_of(parse(CORPUS / "tika" / "testRFC822_multipart_attachments.eml"))
    assert "This is the html body of the main msg." in tika
    assert "This is test email for EML1" not in tika
    assert "This is Test TXTA File for parser" in tika  # the attachments stay
    apple = parse(CORPUS / "php-imap" / "multiple_html_parts_and_attachments.eml")
    body = [b.text for b in apple.blocks]
    parts = ["This is the first html part", "This is the second html part",
             "This is the last html part"]
    assert [next(i for i, t in enumerate(body) if p in t) for p in parts] == sorted(
        next(i for i, t in enumerate(body) if p in t) for p in parts)
    assert apple.report.attachments == 2 and "\ufffc" not in text_of(apple)


def test_a_mail_nesting_hundreds_of_alternatives_is_read_in_linear_time(tmp_path: Path) -> None:
    """Each multipart/alternative holds a plain version and, as its last, the next one: what a
    mail program shows is the innermost HTML; choosing it must not cost the square of the parts
    (a quadratic walk took 80 s at this depth)."""
    depth = 400
    levels = b"".join(b'Content-Type: multipart/alternative; boundary="b%d"\r\n\r\n--b%d\r\n'
                      b"Content-Type: text/plain\r\n\r\nplain %d\r\n--b%d\r\n" % (i, i, i, i)
                      for i in range(depth))
    closing = b"".join(b"--b%d--\r\n" % i for i in reversed(range(depth)))
    (tmp_path / "nested.eml").write_bytes(
        b"From: a@example.cn\r\nSubject: nested\r\nMIME-Version: 1.0\r\n" + levels
        + b"Content-Type: text/html\r\n\r\n<p>innermost html</p>\r\n" + closing)
    started = time.perf_counter()
    text = text_of(parse(tmp_path / "nested.eml"))
    assert time.perf_counter() - started < 20
    assert "innermost html" in text and "plain 0" not in text


def test_an_html_mail_footer_after_its_end_tag_is_read() -> None:
    """unstructured's email-no-utf8-2008-07-16.062410.eml (Hebrew, windows-1255): the last
    antivirus footer of its HTML version comes after `</html>`, where a mail program still
    shows it; libxml2 alone dropped it."""
    text = text_of(parse(CORPUS / "unstructured" / "email-no-utf8-2008-07-16.062410.eml"))
    assert "Virus Database: 270.4.11/1554" in text
    assert "האם קיימת איזו שהיא אפשרות" in text  # the body before it, still read once
    assert text.count("270.4.10/1552") == 1


def test_an_outlook_sender_in_encoded_words_is_decoded() -> None:
    """markitdown's test_outlook_msg.msg: the sender's name is UTF-8 in an RFC 2047 encoded
    word in the message's transport headers."""
    text = text_of(parse(CORPUS / "markitdown" / "test_outlook_msg.msg"))
    assert "发件人: M. C. Kurtuluş <muratcan.kurtulus@gmail.com>" in text
    assert "=?UTF-8?" not in text


def test_a_mail_saved_as_utf16_is_read_whole(tmp_path: Path) -> None:
    """unstructured's fake-email-utf-16-le.eml: a whole mail in UTF-16 without a byte-order
    mark (as Windows tools save text); the same mail with a mark, big-endian."""
    real = CORPUS / "unstructured" / "fake-email-utf-16-le.eml"
    text = text_of(parse(real))
    assert "Test Email" in text and "mrobinson@unstructured.io" in text
    assert "\x00" not in text
    marked = tmp_path / "marked.eml"
    marked.write_bytes(real.read_bytes().decode("utf-16-le").encode("utf-16"))
    assert text_of(parse(marked)) == text
    big = tmp_path / "big.eml"
    big.write_bytes(real.read_bytes().decode("utf-16-le").encode("utf-16-be"))
    assert text_of(parse(big)) == text
    nuls = tmp_path / "nuls.eml"  # NULs everywhere look like UTF-16 and are still no mail
    nuls.write_bytes(b"\x00" * 4096)
    with pytest.raises(ParseError, match="not an e-mail message"):
        parse(nuls)
