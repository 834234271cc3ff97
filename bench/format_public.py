"""Phrase recall on real public test documents of every format kbflow reads (issue #40).

    .venv/bin/python -m bench.format_public [--collect] [--tika-jar JAR] [--collection NAME]

The corpus (`bench/format_corpus/<collection>/`, listed with repository, commit, path and
licence in its PROVENANCE.md) is test documents of other projects' test suites, none of them
used before by this project (none of Docling's). First round, the formats kbflow reads since
issue #40: Apache Tika's, ofdrw's (Chinese OFD), python-oxmsg's, xlrd's, pandoc's and
php-imap's (mail in several charsets). Second round, the formats it read before: kreuzberg's
(PDFs text, scanned and turned by 90/270°, pictures incl. Chinese, OOXML, CSV, Markdown, text),
Apache POI's (Word, slides and sheets incl. Chinese, headers, notes, charts), python-docx's and
python-pptx's, mozilla/readability's web pages (Chinese and Japanese among them), chardet's and
charset_normalizer's text in Big5, Shift-JIS, UTF-16 with a BOM, GB18030 …, pdfminer.six's
(Japanese) and PyMuPDF's (a Chinese table) PDFs. Third round, legacy and ODF files:
odftoolkit's and odfpy's (charts, embedded objects, a Chinese .ods), easyexcel's and hutool's
(Chinese .xls), and POI's Office files with EMF/WMF pictures (`metafiles`, with one Chinese
file made here). Fourth round, workbooks Kingsoft WPS Office saved as .et and .xlsx
(`kingsoft`, SheetJS's). Fifth round, played as held-out files a new user brings:
markitdown's, unstructured's and poi-tl's (Chinese Word templates); then PHPOffice's
(PHPWord, PhpSpreadsheet, PHPPresentation), mailparser's, msg-extractor's, epub.js's and
zc310/ofd's office, mail, EPUB and OFD files, and MimeKit's mails. Round 2 of the held-out play for
PDFs and pictures: pdfplumber's and camelot's PDFs (Chinese reports, a lab report, tables shown
sideways, scans) and TableStructureRec's pictures of tables; round 3: MinerU's, CnOCR's,
Pix2Text's, RapidOCRPDF's, the PDF Association's and tabula-java's PDFs (a scanned Chinese
book, a Chinese deck and handout, papers, PDF 2.0 UTF-8 strings, Arabic) and pictures (a
Chinese train ticket, a paragraph, a formula line). `--collect` copies them
(with `--collection`, only those) from the bare git directories the search tool's `fetch`
leaves under /work/.mirror (test documents only).

Reference: what a person sees, taken from an independent extraction: Apache Tika's plain text
(`tika-app -t`, from Maven Central: `mvn dependency:get -Dartifact=org.apache.tika:tika-app:
2.9.2`; it reads embedded attachments too), or for OFD, which Tika does not read, every
TextCode of the pages and their templates in file order. Tika OCRs pictures and scanned PDF
pages with Tesseract (English; Debian's tesseract-ocr), a different engine from kbflow's; a
picture of Chinese text, or a scanned Chinese PDF's pages rendered at 300 dpi, is read by
Tesseract with `chi_sim` (`tesseract-ocr-chi-sim`). A web
page's reference is Tika's text of readability's expected main content of it, not of the whole
page (menus and footers are not what a reader of the article sees); for newspaper's and Zyte's
pages (sixth round, held-out play for web pages), the main content their own test expects, as
text (bench/page_references.py; Zyte's gzipped pages are stored unpacked). chardet's files are
decoded with the encoding their test folder declares, not guessed by Tika, as are other
projects' text files whose test declares theirs (`DECLARED_FILES`). Up to 25 phrases per file
are sampled from its lines (8 characters of a CJK line, 5 words of another), seeded by the
file's name. A phrase is recalled when it occurs in the text of the file's chunks (chunk text,
prefix and title path), compared on letters and digits only (NFKC, lowercased): table pipes,
tabs and punctuation differ between extractors and are not what a reader searches for.

A file is READY with nothing when it parses and no chunk holds a letter or digit of it; a file
whose chunks hold its text but none of its phrases is a recall of 0, not that (pandoc's
footnote.odt: Tika's one line puts the footnote's text inside the sentence it annotates).

Next to Tika's figure, office files are also scored against a visible reference, the phrases
LibreOffice's rendering of the file shows, and pictures against a person's transcription of
them (bench/format_visible.py, which lists each exclusion in bench/format_visible_excluded.md).
A file that fails holding no letter or digit (in that rendering, or in the reference of other
formats), or only phrases a person found are not text (a fax picture's PDF whose one phrase is
its Title metadata), is counted as "no text", not as failed.

Every third file of each collection (sorted by name) is held out: nothing here was tuned on
it, and its recall is reported apart so later tuning on the rest can be checked against it.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import shutil
import subprocess
import tempfile
import unicodedata
import zipfile
from pathlib import Path

import lxml.html
import pymupdf
from lxml import etree

from bench import format_visible, page_references, write_section
from bench.format_report import SECTION, FileResult, report
from ingest.chunk import chunk_document
from ingest.parse import ParseError, parse_document, read_meta

CORPUS = Path(__file__).with_name("format_corpus")
RESULTS = Path(__file__).with_name("RESULTS.md")
MIRRORS = Path("/work/.mirror")
EXPECTED = CORPUS / "_expected"
DEFAULT_TIKA = Path.home() / ".m2/repository/org/apache/tika/tika-app/2.9.2/tika-app-2.9.2.jar"
PHRASES_PER_FILE = 25
# uchardet's test texts: the folder is the language, the name the encoding
_UCHARDET = (("ja", "euc-jp"), ("ja", "iso-2022-jp"), ("ja", "shift_jis"), ("ja", "utf-16be"),
             ("zh", "big5"), ("zh", "gb18030"), ("ko", "iso-2022-kr"), ("ru", "koi8-r"),
             ("el", "windows-1253"), ("he", "windows-1255"), ("pl", "iso-8859-2"),
             ("tr", "iso-8859-9"))
# TableStructureRec's pictures of Chinese tables (named "tsr_<folder>_<name>" in the corpus)
TSR_PICTURES = ("lineless_table_recognition.jpg", "test.jpg", "wired/table4.jpg")
# collection -> (repository, licence, paths)
SOURCES: dict[str, tuple[str, str, list[str | tuple[str, str]]]] = {
    "tika": ("apache/tika", "Apache-2.0", []),  # filled from the mirror by name (long paths)
    "ofdrw": ("ofdrw/ofdrw", "Apache-2.0", [
        "ofdrw-converter/src/test/resources/n.ofd", "ofdrw-converter/src/test/resources/999.ofd",
        "ofdrw-converter/src/test/resources/1.ofd", "ofdrw-converter/src/test/resources/z.ofd",
        "ofdrw-layout/src/test/resources/keyword.ofd", "ofdrw-layout/src/test/resources/fptpl.ofd",
        "ofdrw-reader/src/test/resources/helloworld.ofd",
        "ofdrw-converter/src/test/resources/V4RideRight.ofd",
        "ofdrw-layout/src/test/resources/SplitParagraph.ofd"]),
    "python-oxmsg": ("scanny/python-oxmsg", "MIT", [
        "tests/test_files/message.msg", "tests/test_files/no-attachments.msg"]),
    "xlrd": ("python-excel/xlrd", "BSD-3-Clause", [
        "tests/samples/profiles.xls", "tests/samples/namesdemo.xls", "tests/samples/Formate.xls",
        "tests/samples/ragged.xls", "tests/samples/sample.ods"]),
    "pandoc": ("jgm/pandoc", "GPL-2.0-or-later", [
        "test/epub/wasteland.epub", "test/epub/features.epub", "test/epub/formatting.epub",
        "test/odt/odt/table.odt", "test/odt/odt/footnote.odt", "test/odt/odt/unicode.odt"]),
    "php-imap": ("Webklex/php-imap", "MIT", [
        "tests/messages/gbk_charset.eml", "tests/messages/ks_c_5601-1987_headers.eml",
        "tests/messages/multiple_html_parts_and_attachments.eml",
        "tests/messages/embedded_email.eml", "tests/messages/html_only.eml",
        "tests/messages/plain_text_attachment.eml"]),
    # every format kbflow reads (2026-12-05): PDFs (text, scanned, sideways), pictures, Office
    # Open XML, delimited, Markdown, text in other encodings, web pages
    "kreuzberg": ("kreuzberg-dev/kreuzberg", "MIT", [f"test_documents/{p}" for p in (
        "pdfs/searchable.pdf", "pdfs/sample_contract.pdf", "pdfs/fake_memo.pdf",
        "pdfs/ocr_test.pdf", "pdfs/ocr_test_rotated_90.pdf", "pdfs/ocr_test_rotated_270.pdf",
        "pdfs/scanned.pdf", "pdfs/non_searchable.pdf", "images/chi_sim_image.jpeg",
        "images/ocr_image.jpg", "images/invoice_image.png", "images/test_hello_world.png",
        "images/layout_parser_ocr.jpg", "documents/lorem_ipsum.docx",
        "documents/word_tables.docx", "documents/textbox.docx", "documents/unit_test_lists.docx",
        "presentations/powerpoint_sample.pptx", "presentations/simple.pptx",
        "presentations/powerpoint_with_image.pptx", "spreadsheets/excel_multi_sheet.xlsx",
        "spreadsheets/stanley_cups.xlsx", "spreadsheets/test_01.xlsx",
        "spreadsheets/stanley_cups.csv", "pandoc/data_table.csv", "markdown/comprehensive.md",
        "text/readme.md", "text/simple_table.md", "extraction_test.md",
        "text/book_war_and_peace_1p.txt", "text/french_text.txt", "text/report.txt")]),
    "poi": ("apache/poi", "Apache-2.0", [f"test-data/{p}" for p in (
        "document/HeaderFooterUnicode.docx", "document/endnotes.docx", "document/footnotes.docx",
        "document/drawing.docx", "integration/stress019.docx", "integration/stress009.docx",
        "slideshow/bar-chart.pptx", "slideshow/copy-slide-demo.pptx",
        "slideshow/49386-null_dates.pptx", "slideshow/SmartArt.pptx",
        "slideshow/bug58144-headers-footers-2007.pptx", "integration/stress020.xlsx",
        "spreadsheet/51519.xlsx", "spreadsheet/50299.xlsx", "spreadsheet/45540_form_Header.xlsx",
        "spreadsheet/47089.xlsm")]),
    "python-docx": ("python-openxml/python-docx", "MIT", [
        f"features/steps/test_files/{p}" for p in (
        "par-known-paragraphs.docx", "tbl-having-tables.docx", "hdr-header-footer.docx",
        "sct-first-page-hdrftr.docx")]),
    "python-pptx": ("scanny/python-pptx", "MIT", [f"features/steps/test_files/{p}" for p in (
        "cht-charts.pptx", "sld-notes.pptx", "shp-groupshape.pptx", "tbl-cell.pptx")]),
    # a page's main content as the project's test expects it: test-pages/<name>/expected.html
    "readability": ("mozilla/readability", "Apache-2.0", [
        (f"test/test-pages/{name}/source.html", f"{name}.html") for name in (
            "qq", "gmw", "pixnet", "hukumusume", "bbc-1", "wikipedia", "lemonde-1", "medium-1",
            "nytimes-1")]),
    # the folder names the encoding; stored as <encoding>_<name>
    "chardet": ("chardet/chardet", "LGPL-2.1", [
        (f"tests/{enc}/{name}", f"{enc}_{stored}") for enc, name, stored in (
            ("Big5", "_ude_1.txt", "_ude_1.txt"),
            ("Big5", "_chromium_Big5_with_no_encoding_specified.html", "no_charset.html"),
            ("SHIFT_JIS", "_ude_1.txt", "_ude_1.txt"), ("SHIFT_JIS", "_ude_2.txt", "_ude_2.txt"),
            ("SHIFT_JIS", "_chromium_Shift-JIS_with_no_encoding_specified.html",
             "no_charset.html"),
            ("UTF-16", "bom-utf-16-le.srt", "bom-utf-16-le.txt"),
            ("UTF-16", "bom-utf-16-be.srt", "bom-utf-16-be.txt"),
            ("GB2312", "_mozilla_bug171813_text.html", "bug171813.html"))]),
    "charset_normalizer": ("jawah/charset_normalizer", "MIT", [f"data/sample-{p}.txt" for p in (
        "english.bom", "korean", "russian", "french")]),  # its sample-chinese.txt is chardet's
    "pdfminer": ("pdfminer/pdfminer.six", "MIT", [
        "samples/jo.pdf", "samples/contrib/issue-625-identity-cmap.pdf",
        "samples/font-size-test.pdf", "samples/simple5.pdf"]),
    "pymupdf": ("pymupdf/PyMuPDF", "AGPL-3.0", ["tests/resources/chinese-tables.pdf"]),
    # legacy and ODF files (2026-12-05): charts in .ods, decks with embedded objects, headers
    # and fields in .odt, a Chinese .ods; Chinese .xls of two Chinese projects
    "odftoolkit": ("tdf/odftoolkit", "Apache-2.0", [
        f"odfdom/src/test/resources/test-input/{p}" for p in (
            "chart_title_import_xml_MSO15.ods", "chart_charttype_bar_import_xml_MSO15.ods",
            "chart_series_import_xml_MSO15.ods", "chart_charttype_pie_import_xml_MSO15.ods",
            "HeaderFooter.odt", "presentationWithEmbedDoc.odp", "SlideTest1.odp",
            "SlideTest2.odp", "presentation.odp", "feature_fields.odt", "ST_Formulas.ods")]),
    "odfpy": ("eea/odfpy", "Apache-2.0 OR GPL-2.0-or-later", [
        *(f"tests/examples/{p}" for p in (
            "chinese_spreadsheet.ods", "emb_spreadsheet.odp", "cols.odp", "ol.odp",
            "headerfooter.odt", "images.odt", "serious_poem.odt", "userfields.odt",
            "pythagoras.ods")), "examples/countrystatistics.ods"]),
    "easyexcel": ("alibaba/easyexcel", "Apache-2.0", [
        f"easyexcel-test/src/test/resources/{p}" for p in (
            "compatibility/t01.xls", "converter/converter03.xls", "dataformat/dataformat.xls",
            "extra/extra.xls", "fill/annotation.xls", "fill/complex.xls", "fill/style.xls",
            "multiplesheets/multiplesheets.xls", "template/template03.xls")]),
    "hutool": ("dromara/hutool", "MulanPSL-2.0", [f"hutool-poi/src/test/resources/{p}" for p in (
        "aaa.xls", "data_for_sax_test.xls", "priceIndex.xls", "readBySax.xls", "test.xls")]),
    # Office files whose pictures are EMF/WMF with text (its one Chinese file is made here)
    "metafiles": ("apache/poi", "Apache-2.0", [f"test-data/{p}" for p in (
        "integration/stress010.docx", "integration/stress008.docx",
        "document/WordWithAttachments.docx", "document/tika-3388.docx",
        "document/EmbeddedDocument.docx", "slideshow/45541_Footer.pptx",
        "slideshow/bug62513.pptx", "slideshow/bug64693.pptx",
        "slideshow/aascu.org_workarea_downloadasset.aspx_id=5864.pptx",
        "slideshow/bug54570.pptx", "slideshow/PPTWithAttachments.pptm",
        "spreadsheet/ExcelWithAttachments.xlsm", "spreadsheet/WithEmbeded.xlsx",
        "slideshow/ae.ac.uaeu.faculty_nafaachbili_GeomLec1.pptx")]),
    # workbooks Kingsoft WPS Office saved as .et (SummaryInformation's application "WPS
    # Spreadsheets", its ETExtData stream), the only public ones found, and one it saved as
    # .xlsx: pictures in cells (its DISPIMG function) in either
    "kingsoft": ("SheetJS/test_files", "Apache-2.0", [
        "wps/fn.et", "wps/image.et", "wps/image.xlsx", "artifacts/wps/write.et"]),
    # held-out play (2026-12-05): three projects never used before, the files a new user's
    # folder holds: markitdown's (Office, EPUB, Outlook mail, a Shift-JIS CSV, PDFs, a photo),
    # unstructured's (legacy Office, ODT, RTF, EPUB, mail, UTF-16 texts and a UTF-16 Japanese
    # page, a text in every UDHR language) and poi-tl's (Chinese Word templates: charts, text
    # boxes, content controls, notes; a Chinese workbook)
    "markitdown": ("microsoft/markitdown", "MIT", [
        f"packages/markitdown/tests/test_files/{p}" for p in (
            "test.docx", "test.epub", "test.pptx", "test.xls", "test.xlsx", "test_mskanji.csv",
            "test_outlook_msg.msg", "test_with_comment.docx", "equations.docx", "test.pdf",
            "RECEIPT-2024-TXN-98765_retail_purchase.pdf", "movie-theater-booking-2024.pdf",
            "test.jpg")]),
    "unstructured": ("Unstructured-IO/unstructured", "Apache-2.0", [
        f"example-docs/{p}" for p in (
            "simple.doc", "fake-power-point.ppt", "tests-example.xls", "fake.odt",
            "language-docs/eng_spa_mult.rtf", "language-docs/eng_spa_mult.epub",
            "winter-sports.epub", "fake-email-attachment.msg", "eml/family-day.eml",
            "eml/fake-email-utf-16-le.eml", "eml/email-no-utf8-2008-07-16.062410.eml",
            "fake-text-utf-16-be.txt", "example-steelJIS-datasheet-utf-16.html",
            "language-docs/UDHR_first_article_all.txt", "stanley-cups-utf-16.csv",
            "sample-presentation.pptx", "vodafone.xlsx", "docx-shapes.docx")]),
    "poi-tl": ("Sayi/poi-tl", "Apache-2.0", [f"poi-tl/src/test/resources/{p}" for p in (
        "okr/OKR.docx", "payment/payment.docx", "resume/resume.docx", "source/chart.docx",
        "template/config_chinese.docx", "template/reference_chart.docx",
        "template/template_notes.docx", "template/template_textbox.docx", "template/sdt.docx",
        "template/attachment.xlsx", "story/story.docx", "template/render_comment.docx")]),
    # held-out play for scans and pictures (2026-12-05): OCRmyPDF's scanned pages (a page
    # turned four ways, skewed, a /Rotate'd skewed scan, a book page with a drawing, a
    # printer's scan, handwriting, a chart, a map; licences per file in its REUSE.toml),
    # RapidOCR's photos and pictures (Chinese posters, a form, a shop sign, vertical classical
    # Chinese, EXIF-turned and transparent pictures) and pdf.js's Chinese PDFs (GBK and
    # Unicode CMaps, a full-width Latin title, a watermark, a CAD title block, a Hong Kong form)
    "ocrmypdf": ("ocrmypdf/OCRmyPDF", "CC-BY-SA/GFDL/public domain (REUSE.toml)", [
        f"tests/resources/{p}" for p in (
            "c02-22.pdf", "cardinal.pdf", "skew.pdf", "rotated_skew.pdf", "epson.pdf",
            "francais.pdf", "kcs.pdf", "masks.pdf", "graph.pdf", "typewriter.png", "baiona.png",
            "crom.png")]),
    "rapidocr": ("RapidAI/RapidOCR", "Apache-2.0", [f"python/tests/test_files/{p}" for p in (
        "ch_en_num.jpg", "check_return_word_len.jpeg", "return_word_debug.jpg",
        "img_exif_orientation.jpg", "white_font_color_transparent.png",
        "black_font_color_transparent.png", "text_vertical_words.png", "test_letterbox_like.jpg",
        "test_without_det.jpg", "text_rec.jpg", "en.jpg", "issue_170.png")]),
    "pdfjs": ("mozilla/pdf.js", "Apache-2.0", [f"test/pdfs/{p}.pdf" for p in (
        "XiaoBiaoSong", "SimFang-variant", "issue2128r", "issue3521", "issue8372", "issue12823",
        "issue15340", "issue19360", "issue20489", "issue15690", "issue19182", "issue19971")]),
    # held-out play, second (2026-12-05): office, mail, EPUB and OFD files of seven projects
    # never used before: PHPOffice's three (Word incl. a Chinese .doc, RTF, ODT, HTML; Chinese
    # and Taiwanese .xlsx, BIFF5 .xls, charts, a chart sheet; .ppt, .odp, pptx notes and
    # charts), nodemailer's mailparser's and msg-extractor's mail, epub.js's books and zc310/ofd's
    # Chinese OFD
    "phpword": ("PHPOffice/PHPWord", "LGPL-3.0", [
        *(f"tests/PhpWordTests/_files/documents/{p}" for p in (
            "docChinese.doc", "docSlovak.doc", "reader.odt", "reader.rtf", "reader-2011.docx")),
        "tests/PhpWordTests/_files/templates/header-footer.docx",
        *(f"samples/resources/Sample_{p}" for p in (
            "11_ReadWord2007.docx", "24_ReadODText.odt", "30_ReadHTML.html",
            "41_TemplateSetChart.docx"))]),
    "phpspreadsheet": ("PHPOffice/PhpSpreadsheet", "MIT", [
        "tests/data/Reader/XLSX/issue.3613.xlsx", "tests/data/Reader/XLSX/issue.2316.xlsx",
        "tests/data/Reader/XLS/maccentraleurope.xls", "tests/data/Reader/XLS/chartsheet.xls",
        "samples/templates/OOCalcTest.ods", "samples/templates/32chartreadwrite.xlsx",
        "samples/templates/30templatebiff5.xls", "samples/Reader2/sampleData/formscomments.xlsx",
        "tests/data/Reader/Ods/data.ods"]),
    "phppresentation": ("PHPOffice/PHPPresentation", "LGPL-3.0", [
        f"tests/resources/files/{p}" for p in (
            "Sample_00_01.ppt", "Sample_12.odp", "PPTX_ChartBar.pptx",
            "PPTX_SlideNoteWithRichText.pptx", "Issue_00141.odp", "Sample_01_Simple.pptx")]),
    "mailparser": ("nodemailer/mailparser", "MIT", [f"test/fixtures/{p}.eml" for p in (
        "nodemailer", "mixed", "nested", "delivery-status", "spam")]),
    "msg-extractor": ("TeamMsgExtractor/msg-extractor", "GPL-3.0", [
        "example-msg-files/unicode.msg", "example-msg-files/strangeDate.msg"]),
    "epubjs": ("futurepress/epub.js", "BSD-2-Clause", [
        "test/fixtures/alice.epub", "test/fixtures/alice_without_cover.epub"]),
    "zc310-ofd": ("zc310/ofd", "Unlicense", [
        "test/testdata/ano.ofd", "test/testdata/helloworld.ofd"]),
    # MimeKit's test mails (its .txt messages stored as .eml, as a mail program saves them):
    # ISO-2022-JP, KOI8-R with an Outlook TNEF winmail.dat, bounces, a read receipt, an abuse
    # report, a part without its subtype, a saved web page (MHTML)
    "mimekit": ("jstedfast/MimeKit", "MIT", [
        (f"UnitTests/TestData/{path}", stored) for path, stored in (
            ("messages/japanese.txt", "japanese.eml"), ("tnef/ukr.eml", "ukr.eml"),
            ("messages/bounce.txt", "bounce.eml"),
            ("messages/feedback-report.txt", "feedback-report.eml"),
            ("messages/delivery-status2.txt", "delivery-status2.eml"),
            ("messages/disposition-notification.anonymized.eml",
             "disposition-notification.eml"),
            ("messages/missing-subtype.txt", "missing-subtype.eml"),
            ("messages/multipart-related-mhtml.txt", "multipart-related-mhtml.eml"))]),
    # held-out play, third (2026-12-05), mail, PDF, OFD, pictures, EPUB and text of six
    # projects never used before: the Ruby mail gem's mails (ISO-2022-JP, Shift-JIS, EUC-KR,
    # attached PDFs and mails, uuencode, broken headers), py-pdf's sample PDFs (Google Docs,
    # LibreOffice, LaTeX, a fax scan, an attachment), ofdbox's Chinese OFD and PDF (made by
    # Suwell and Foxit, a rotated page), EasyOCR's photos (Chinese, Japanese, signs), uchardet's
    # texts (the folder and name declare the encoding) and IDPF's EPUB 3 samples (a Japanese
    # novel; a folder is packed as its .epub, mimetype first, as the project's pack script does)
    "mail-gem": ("mikel/mail", "MIT", [f"spec/fixtures/emails/{p}.eml" for p in (
        "multi_charset/japanese", "multi_charset/japanese_iso_2022",
        "multi_charset/japanese_shift_jis", "multi_charset/japanese_attachment",
        "multi_charset/japanese_attachment_long_name", "multi_charset/ks_c_5601-1987",
        "attachment_emails/attachment_pdf", "attachment_emails/attachment_message_rfc822",
        "attachment_emails/attachment_with_encoded_name",
        "attachment_emails/attachment_nonascii_filename", "mime_emails/raw_email2",
        "mime_emails/raw_email_with_nested_attachment", "multipart_report_emails/report_422",
        "error_emails/content_transfer_encoding_x_uuencode", "error_emails/encoding_madness",
        "error_emails/content_transfer_encoding_with_8bits", "plain_emails/raw_email_reply")]),
    "pypdf-samples": ("py-pdf/sample-files", "CC-BY-SA-4.0", [
        "011-google-doc-document/google-doc-document.pdf",
        "012-libreoffice-form/libreoffice-form.pdf", "026-latex-multicolumn/multicolumn.pdf",
        "004-pdflatex-4-pages/pdflatex-4-pages.pdf",
        "014-outlines/mistitled_outlines_example.pdf",
        "007-imagemagick-images/imagemagick-CCITTFaxDecode.pdf",
        "025-attachment/with-attachment.pdf", "013-reportlab-overlay/reportlab-overlay.pdf",
        "021-pdfa/crazyones-pdfa.pdf", "022-pdfkit/pdfkit.pdf"]),
    "ofdbox": ("QAQtutu/ofdbox", "Apache-2.0", [f"converter/src/test/resources/{p}" for p in (
        "旋转测试.ofd", "font/字体测试-数科.ofd", "font/字体测试-福昕.ofd", "font/字体测试.pdf",
        "font/字体测试-数科.pdf")]),
    "easyocr": ("JaidedAI/EasyOCR", "Apache-2.0", [f"examples/{p}" for p in (
        "chinese.jpg", "japanese.jpg", "french.jpg", "english.png", "example.png",
        "example2.png", "example3.png", "width_ths.png")]),
    "uchardet": ("freedesktop/uchardet", "MPL-1.1", [
        (f"test/{lang}/{enc}.txt", f"{lang}_{enc}.txt") for lang, enc in _UCHARDET]),
    "epub3-samples": ("IDPF/epub3-samples", "CC-BY-SA-3.0", [
        (f"30/{name}/", f"{name}.epub") for name in (
            "kusamakura-preview", "childrens-literature", "trees", "sous-le-vent")]),
    # msgreader's Outlook items (a Japanese developer's: CJK, code page 932 without Unicode,
    # mails inside mails, a memo, an appointment, a contact, voting buttons, the new Outlook)
    # and SpamScope mail-parser's real mails (GB2312 Chinese, Italian with attachments, a
    # bounce, malformed ones; stored as .eml, its Outlook one as .msg)
    "msgreader": ("HiraokaHyperTools/msgreader", "Apache-2.0", [f"test/{p}.msg" for p in (
        "Hello +CJK", "nonUnicodeCP932", "nonUnicodeMail", "msgInMsg", "msgInMsgInMsg",
        "attachAndInline", "attachmentFiles", "A memo", "A schedule", "Friday Lunch", "sent2",
        "test2", "unicode1", "voteItems", "Outer mail", "newOutlook Microsoft Outlook test",
        "contactUnicode", "Subject")]),
    "spamscope": ("SpamScope/mail-parser", "Apache-2.0", [
        (f"tests/mails/{name}", f"{name}.{'msg' if 'outlook' in name else 'eml'}")
        for name in ("mail_test_12", "mail_test_9", "mail_test_10", "mail_test_7",
                     "mail_test_17", "mail_test_5", "mail_test_3", "mail_malformed_1",
                     "mail_malformed_2", "mail_outlook_1")]),
    # held-out play for web pages (2026-12-05): saved pages whose own project's test gives
    # their main content as text (bench/page_references): newspaper's (Chinese, Japanese,
    # Thai, Arabic, Spanish news, a research note, tutorials) and Zyte's benchmark's, a
    # person's annotation (company news and blogs, a Korean theatre page, a German agency's)
    "newspaper": ("codelucas/newspaper", "MIT", [f"tests/data/html/{p}.html" for p in (
        "chinese_article", "japanese_article", "japanese_article2", "thai_article",
        "spanish_article", "arabic_article", "pewresearch.org1", "sitepoint.com1",
        "technologyreview.com1", "parsely.com1", "wnet.org1", "usnews.com1")]),
    "article-extraction": ("scrapinghub/article-extraction-benchmark", "MIT", [
        (f"html/{digest}.html.gz", f"{site}-{digest[:8]}.html") for site, digest in (
            ("ascom.com", "c69e539d689a8335a69042727f1b58edab09d5d99fb607ec625a63151a537dc2"),
            ("comwrap.com", "ba07d1e64775f4090e39116c382111f5a2cfe9528dd179673f4e9bfcea370c15"),
            ("my6sense.com", "57e2e98887a1965689955921208e32f410b10e2b95c907e74e57982d3edf3cc6"),
            ("givewell.org", "ad9e9e596f21a6812fae27b5d9d622359826c368e471d7d5ff9ac4676eaac9cd"),
            ("expapp.com", "4648a420af9984d45b76a4afedf4f74965f8a2e0bf1c69bd3da2dc189020f3c9"),
            ("lhpat-tm.com", "85439e26c41c75901820d01a13e8cea7836abb58635ea3986f71a163ab0311d3"),
            ("entermedia.co.kr",
             "0ec95c7261d122f304728e90c983450ef1ce1e0b423546835c397d50aaf0d0f2"),
            ("bbc.com", "c7e39ac49fa1235f5d50f83bf2444248bd3aa4e6df044377916c812dd109ba23"),
            ("pv-magazine.com",
             "b0cf2bbf0192315eec95ede9c59bbf4ae58699275739d590edc24b012e3e8800"),
            ("healthline.com", "e593d7fe88f9f5cd6587ac172be2db6055d40b6f071023f97ab1ce373534261e"),
            ("spacenews.com", "d1c57d7821e5a5b27fb468c59489601bb2a042b1c05221166e3221d2b5dc217f"),
            ("bigbrandsystem.com",
             "c582d3b772578e8feaa3cfd8f5ae8100bb6f0bc66048204a9a398395841c1164"))]),
    # NetEase (163.com) finance news in GBK with the text cx-extractor-python's author kept
    "cx-extractor": ("chrislinan/cx-extractor-python", "MIT", [
        (f"RawHtml/{n}.html", f"163-{n}.html") for n in (1, 9, 17, 25, 33, 41, 49, 57, 65)]),
    # held-out play, third (2026-12-05): office files of five projects never used before:
    # JODConverter's (legacy Word and PowerPoint, ODF, RTF, .xls), easypoi's tests (Chinese
    # .xls/.xlsx/.docx forms and contracts), hogandiff's (Japanese .xls/.xlsm/.xlsx with a VBA
    # module), rtf.js's (Japanese RTF in single and double byte, a form with pictures) and
    # docx4j's (charts in Word and PowerPoint, headers, shapes, a pivot table)
    "jodconverter": ("jodconverter/jodconverter", "Apache-2.0", [
        *(f"jodconverter-local/src/integTest/resources/documents/{p}" for p in (
            "test.doc", "test_multi_page.doc", "test.ppt", "test_multi_page.ppt", "test.odp",
            "test_custom_formats.odp", "test.ods", "test_multi_page.xls", "test.rtf",
            "test_toc.odt")),
        "jodconverter-local/src/integTest/resources/performance/UCR.odt"]),
    "easypoi": ("jueyue/easypoi-test", "Apache-2.0", [f"src/test/resources/{p}" for p in (
        "doc/kyoffice_address_book.xls", "import/check.xls", "doc/exportTemp.xls",
        "word/contractDemo.docx", "word/loan.docx", "import/ExcelExportMsgClient.xlsx",
        "doc/merge_test.xls")]),
    "hogandiff": ("nmby/hogandiff4", "MIT", [
        f"xyz.hotchpotch.hogandiff/src/test/resources/xyz/hotchpotch/hogandiff/logic/poi/{p}"
        for p in ("Test1.xls", "Test1.xlsm", "Test3.xlsx", "Test4_containsVBModule.xls",
                  "Test5.xls")]),
    "rtfjs": ("tbluemel/rtf.js", "MIT", [
        *((f"test/rtf-test-files/{name}/source.rtf", f"{name}.rtf") for name in (
            "japanese-single-double-byte", "sample", "infer-double-width")),
        "samples/04_rtf_imports/data/HOMEAUDIOMETER.RTF"]),
    "docx4j": ("plutext/docx4j", "Apache-2.0", [
        *(f"docx4j-samples-docx4j/sample-docs/{p}" for p in (
            "chart.docx", "Headers.docx", "databinding/invoice2013.docx", "toc.docx")),
        *(f"docx4j-samples-pptx4j/sample-docs/{p}" for p in (
            "pptx-chart.pptx", "AutoShapes.pptx", "table.pptx")),
        "docx4j-samples-xlsx4j/sample-docs/pivot.xlsm",
        "docx4j-core-tests/src/test/resources/vml/textbox.docx"]),
    # held-out play, fourth (2026-12-05, after the third's fixes): mammoth.js's Word files (text
    # boxes, endnotes, Strict OOXML, a UTF-8 BOM part), ExcelJS's workbooks (a chart sheet, a
    # port's line-up, Google Sheets' and pictures), striprtf's RTF (Central European code page,
    # nested tables, a menu, Google Docs and Pages exports) and textract's one text in six formats
    "mammoth": ("mwilliamson/mammoth.js", "BSD-2-Clause", [f"test/test-data/{p}" for p in (
        "text-box.docx", "endnotes.docx", "footnote-hyperlink.docx", "tables.docx",
        "strict-format.docx", "utf8-bom.docx")]),
    "exceljs": ("exceljs/exceljs", "MIT", [f"spec/integration/data/{p}" for p in (
        "chart-sheet.xlsx", "1519293514-KRISHNAPATNAM_LINE_UP.xlsx", "images.xlsx",
        "hidden-test/google-sheets.xlsx", "test-pr-1220.xlsx", "test-issue-880.xlsx")]),
    "striprtf": ("joshy/striprtf", "BSD-3-Clause", [f"tests/rtf/{p}" for p in (
        "ansicpg1250.rtf", "french.rtf", "nested_table.rtf", "Speiseplan_KW_32-33_Eybl.rtf",
        "pages_table_sample.rtf", "test_line_breaks_google_docs.rtf", "calcium_score.rtf")]),
    "textract": ("deanmalmgren/textract", "MIT", [f"tests/{p}/raw_text.{p}" for p in (
        "doc", "xls", "ods", "odt", "pptx", "rtf")]),
    # held-out play, fifth (2026-12-05, round 2): calamine's workbooks of every generation (BIFF5
    # and BIFF8 .xls, .xlsb, Excel tables, phonetic readings, ODS notes), docx2python's Word files
    # (LibreOffice, Pages and Google Docs exports, equations, form controls) and NPOI's own files
    # (not Apache POI's: OnlyOffice fractions, a chart demo, shapes, a Chinese-property .doc)
    "calamine": ("tafia/calamine", "MIT", [f"tests/{p}" for p in (
        "any_sheets.xlsb", "biff5-rich-text-string.xls", "inventory-table.xlsx",
        "merged_range.xls", "readings.xlsx", "richtext_issue.ods", "special_cells.ods",
        "table-multiple.xlsx", "with-annotation.ods", "xls_cross_sheet_chart.xls")]),
    "docx2python": ("ShayHill/docx2python", "MIT", [f"tests/resources/{p}" for p in (
        "example.docx", "libreoffice_conversion.docx", "created-in-pages-bulleted-lists.docx",
        "test-docx2python-conversion-google_docs.docx", "merged_cells.docx", "equations.docx",
        "ControlTest.docx")]),
    "npoi": ("nissl-lab/npoi", "Apache-2.0", [f"testcases/test-data/{p}" for p in (
        "document/NPOI-bug-1481.docx", "document/issue1353from.docx",
        "document/smallFracOnlyOffice.docx", "spreadsheet/Forecast.xls",
        "spreadsheet/chartdemo.xls", "spreadsheet/TestShapeTextWrap.xlsx",
        "slideshow/PictureLengthZero.ppt", "hpsf/TestChineseProperties.doc")]),
    # held-out play, round 2 for PDFs and pictures (2026-12-05): pdfplumber's PDFs (Chinese
    # company reports, a land-use standard's table, a hospital lab report, a CV, a company
    # notice, an auditor's letter with a scan's text layer; US tables, one turned sideways, a
    # scan), camelot's (a Chinese-made audit table, a table turned anticlockwise, a scanned
    # table, an electoral roll) and TableStructureRec's pictures of tables (an account form, a
    # body-mass table without rules, a Chinese CV form)
    "pdfplumber": ("jsvine/pdfplumber", "MIT", [f"tests/pdfs/{p}.pdf" for p in (
        "issue-336-example", "issue-461-example", "issue-67-example",
        "issue-71-duplicate-chars", "issue-842-example", "pr-136-example",
        "issue-203-decimalize", "nics-background-checks-2015-11-rotated",
        "senate-expenditures")]),
    "camelot": ("camelot-dev/camelot", "MIT", [f"tests/files/{p}.pdf" for p in (
        "tabula/china", "anticlockwise_table_2", "image", "electoral_roll")]),
    "table-rec": ("RapidAI/TableStructureRec", "Apache-2.0", [
        (f"tests/test_files/{p}", "tsr_" + p.replace("/", "_")) for p in TSR_PICTURES]),
    # held-out play, session 10 (2026-12-06): office, RTF, EPUB, mail and OFD files of five
    # sources never used before: SheetJS's own workbooks (not its WPS ones, `kingsoft`: a
    # Hebrew form, BIFF5 phonetic text, .xlsb pivot tables, .ods), the Open Preservation
    # Foundation's format corpus (CC0: Word 6 and a WordPerfect file named .doc, Pages' .doc,
    # PowerPoint 2001 for Mac, Access-exported .xls, calibre's EPUB and RTF), Langchain-Chatchat's
    # Chinese knowledge-base samples, stalwart mail-parser's mails (RFC and Dovecot's) and
    # ofd.js's Chinese OFD
    "sheetjs": ("SheetJS/test_files", "Apache-2.0", [
        "Attendance.xlsx", "interview.xlsx", "\u05d7\u05d9\u05e9\u05d5\u05d1_\u05e0\u05e7\u05d5"
        "\u05d3\u05d5\u05ea_\u05d6\u05d9\u05db\u05d5\u05d9.xlsx", "pivot_table_named_range.xlsb",
        "sushi.ods", "biff5/phonetic_text.xls"]),
    "format-corpus": ("openpreserve/format-corpus", "CC0-1.0", [
        "office-examples/Old Word file/NEWSSLID.DOC",
        "office-examples/powerpoint4-mac/ecdl+paris2001.ppt",
        "office-examples/Old Access/Reviews.xls", "office/spreadsheet/xls/MonteCarlo.xls",
        "fully-featured-pdf/PDF-Sample-Document-Fully-Featured-Layout.docx",
        "ebooks/calibre 0.9.0/lorem-ipsum.epub", "ebooks/calibre 0.9.0/lorem-ipsum.rtf",
        "office/wordprocessing/odt/demoLibreOfficeImagePastedAsBitmap.odt",
        "variations/variations/application/msword/lorem-ipsum-pages-09-4.1-923.doc",
        "office/wordprocessing/WordPerfect51/testWordPerfect_51_52.doc"]),
    "chatchat": ("chatchat-space/Langchain-Chatchat", "Apache-2.0", [
        *(f"libs/chatchat-server/tests/samples/ocr_test.{s}" for s in ("docx", "pptx")),
        *(f"libs/chatchat-server/chatchat/data/knowledge_base/samples/content/test_files/"
          f"langchain-ChatGLM_{s}.xlsx" for s in ("closed", "open"))]),
    "stalwart-mail": ("stalwartlabs/mail-parser", "Apache-2.0 OR MIT (Dovecot's: MIT)", [
        (f"resources/eml/{p}.eml", f"{p.replace('/', '-')}.eml") for p in (
            "rfc/002", "thirdparty/014", "thirdparty/015", "legacy/035")]),
    "ofdjs": ("DLTech21/ofd.js", "Apache-2.0", ["public/h.ofd"]),
    # held-out play, round 3 for PDFs and pictures (2026-12-06): MinerU's demo PDFs (a scanned
    # Chinese book, a Chinese chemistry handout, papers with tables and formulas), CnOCR's and
    # Pix2Text's (a Chinese deck as PDF, a train ticket, a paragraph, a formula line in Chinese,
    # a page with no text layer), RapidOCRPDF's (text, text and pictures, a scanned page),
    # the PDF Association's PDF 2.0 examples (UTF-8 strings) and tabula-java's (a census table,
    # a procurement notice, Arabic)
    "mineru": ("opendatalab/MinerU", "MinerU Open Source License (Apache-2.0 and terms)", [
        "demo/pdfs/small_ocr.pdf", "demo/pdfs/demo1.pdf", "demo/pdfs/demo3.pdf",
        "docs/chemical_knowledge_introduction/introduction.pdf",
        ("tests/unittest/pdfs/test.pdf", "unittest_test.pdf")]),
    "cnocr": ("breezedeus/CnOCR", "Apache-2.0", [
        "docs/intro-cnstd-cnocr.pdf", "docs/examples/huochepiao.jpeg",
        "docs/examples/multi-line_cn2.png"]),
    "pix2text": ("breezedeus/Pix2Text", "MIT", [
        "docs/examples/test-doc.pdf", "docs/examples/zh1.jpg"]),
    "rapidocr-pdf": ("RapidAI/RapidOCRPDF", "Apache-2.0", [f"tests/test_files/{p}.pdf" for p in (
        "direct_and_image", "direct_extract", "image")]),
    "pdf20examples": ("pdf-association/pdf20examples", "CC-BY-SA-4.0", [
        "pdf20-utf8-test.pdf", "PDF 2.0 UTF-8 string and annotation.pdf"]),
    "tabula-java": ("tabulapdf/tabula-java", "MIT", [
        f"src/test/resources/technology/tabula/{p}.pdf" for p in (
            "12s0324", "Publication_of_award_of_Bids_for_Transport_Sector__August_2016",
            "arabic")]),
}
TIKA_FILES = [
    "testWORD.doc", "testWORD_various.doc", "testWORD_features.doc", "testWPSAttachment.doc",
    "testWPSAttachment.xls", "testWPSAttachment.ppt", "testEXCEL.xls",
    "testEXCEL_headers_footers.xls", "testEXCEL_textbox.xls", "testPPT.ppt", "testPPT_various.ppt",
    "testPPT_masterText.ppt", "testRTF.rtf", "testRTFJapanese.rtf", "testRTF-ms932.rtf",
    "testRTFVarious.rtf", "testOpenOffice2.odt", "testStyles.odt", "testFooter.ods",
    "test-columnar.ods", "testMasterFooter.odp", "LibreOfficeImpress_odp_1.3.odp",
    "LibreOfficeCalc_ods_1.3.ods", "LibreOfficeWriter_odt_1.3.odt", "testWORKS.wps",
    "testWORKS2000.wps", "testMSG.msg", "testMSG_chinese.msg", "testMSG_att_doc.msg",
    "test-outlook2003.msg", "testRFC822_multipart_attachments.eml", "testThunderbirdEml.eml",
    "testEmailWithPNGAtt.eml", "testEPUB.epub", "testEPUB_xml_ext.epub"]
# chardet's test folders -> Python codecs (Big5 with the Hong Kong supplement Big5 files carry)
_DECLARED = {"Big5": "big5hkscs", "SHIFT_JIS": "cp932", "UTF-16": "utf-16", "GB2312": "gb18030"}
# text files of other collections whose project declares their encoding, which Tika guesses
# wrong (markitdown's tests/_test_vectors.py: charset="cp932"; Tika reads it as Windows-1252)
DECLARED_FILES = {"test_mskanji.csv": "cp932", **{
    f"{lang}_{enc}.txt": enc.replace("windows-", "cp") for lang, enc in _UCHARDET}}
# pictures of text in a language Tika's Tesseract call does not load: Tesseract in that language
OCR_LANGUAGES = {"chi_sim_image.jpeg": "chi_sim", **dict.fromkeys((  # rapidocr's Chinese pictures
    "ch_en_num.jpg", "check_return_word_len.jpeg", "return_word_debug.jpg",
    "img_exif_orientation.jpg", "white_font_color_transparent.png",
    "black_font_color_transparent.png", "text_vertical_words.png", "test_letterbox_like.jpg",
    "test_without_det.jpg", "text_rec.jpg"), "chi_sim"),
    "chinese.jpg": "chi_sim", "japanese.jpg": "jpn",  # EasyOCR's
    **{"tsr_" + p.replace("/", "_"): "chi_sim" for p in TSR_PICTURES},
    # CnOCR's and Pix2Text's Chinese pictures; MinerU's scanned Chinese book (pages rendered)
    "huochepiao.jpeg": "chi_sim", "multi-line_cn2.png": "chi_sim", "zh1.jpg": "chi_sim",
    "small_ocr.pdf": "chi_sim"}
# Tika prints an Excel sheet's print header/footer as its raw codes ("&C&\"Times\"&12Page &P"):
# not text a person sees on a page
_PRINT_CODES = re.compile(r'&[LCRAPNDTFZGKBIUSEXY"\d]')
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def collect(only: list[str] | None = None, corpus: Path = CORPUS,
            mirrors: Path = MIRRORS) -> None:
    """Copy the test documents of the collections (`only` these, else all) from the fetched
    mirrors and rewrite their rows of PROVENANCE.md. The other collections' rows, the rows of
    files made here (not copied: "made here" in the repository column) and the notes after the
    table are kept as written."""
    provenance = corpus / "PROVENANCE.md"
    kept, notes = _provenance(provenance.read_text("utf-8") if provenance.exists() else "")
    rows = []
    for collection, (repo, licence, paths) in SOURCES.items():
        if only and collection not in only:
            rows += kept.pop(collection, [])
            continue
        git = mirrors / repo.replace("/", "+") / "repo"
        commit = _git(git, "rev-parse", "HEAD").strip()
        if collection == "tika":
            listing = _git(git, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
            paths = [next(p for p in listing if p.endswith("/" + name) and "test-documents"
                          in p) for name in TIKA_FILES]
        target = corpus / collection
        target.mkdir(parents=True, exist_ok=True)
        for entry in paths:
            path, name = entry if isinstance(entry, tuple) else (entry, Path(entry).name)
            (target / name).write_bytes(_git_epub(git, path) if path.endswith("/")
                                         else page_references.page_bytes(git, path))
            rows.append(f"| {collection}/{name} | {repo} @ {commit[:12]} | {path} | {licence} |")
            if collection in page_references.EXPECTED:  # the reference: its test's text
                expected = corpus / "_expected" / collection / f"{name}.txt"
                expected.parent.mkdir(parents=True, exist_ok=True)
                expected.write_text(page_references.EXPECTED[collection][1](git, path), "utf-8")
            if collection == "readability":  # the reference: the page's expected main content
                expected = corpus / "_expected" / collection / name
                expected.parent.mkdir(parents=True, exist_ok=True)
                expected.write_bytes(_git_bytes(git, path.replace("source.html",
                                                                  "expected.html")))
        rows += [row for row in kept.pop(collection, []) if " | made here | " in row]
    rows += [row for other in kept.values() for row in other]  # collections no longer declared
    provenance.write_text(
        "# Public test documents for bench/format_public.py (unchanged bytes)\n\n"
        "Held out: every third file of each collection, sorted by name (see the bench). "
        "`_expected/readability/` holds each page's expected.html (its reference), "
        "`_expected/newspaper/` and `_expected/article-extraction/` the text their project's "
        "test expects (bench/page_references.py).\n\n"
        "| file | repository @ commit | path | licence |\n|---|---|---|---|\n"
        + "\n".join(rows) + "\n" + notes, encoding="utf-8")


def _provenance(text: str) -> tuple[dict[str, list[str]], str]:
    """PROVENANCE.md's file rows by collection, and the notes written after its table."""
    rows: dict[str, list[str]] = {}
    lines = text.splitlines(keepends=True)
    table = [n for n, line in enumerate(lines) if line.startswith("| ") and "/" in line
             and not line.startswith("| file |")]
    for line in (lines[n] for n in table):
        rows.setdefault(line[2:].split("/", 1)[0], []).append(line.rstrip("\n"))
    return rows, "".join(lines[table[-1] + 1:]) if table else ""


def _git_bytes(git: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(git), "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def _git_epub(git: Path, folder: str) -> bytes:
    """An EPUB folder packed as its .epub: `mimetype` first and stored, the rest deflated;
    media the snapshot lacks (large audio, no text) are left out."""
    names = sorted(_git(git, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only",
                          "HEAD", folder).splitlines(),
                   key=lambda name: name != folder + "mimetype")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in names:
            try:
                data = _git_bytes(git, name)
            except subprocess.CalledProcessError:
                continue
            entry = zipfile.ZipInfo(name.removeprefix(folder))  # dated 1980: same bytes each time
            entry.compress_type = (zipfile.ZIP_STORED if name.endswith("/mimetype")
                                   else zipfile.ZIP_DEFLATED)
            archive.writestr(entry, data)
    return out.getvalue()


def _git(git: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(git), *args], check=True, capture_output=True,
                          text=True).stdout


def files() -> list[tuple[str, Path, bool]]:
    out = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "_expected"):
        for index, path in enumerate(sorted(folder.iterdir())):
            out.append((folder.name, path, index % 3 == 2))
    return out


def tika_texts(paths: list[Path], jar: Path) -> dict[Path, str]:
    """Tika's plain text of each file, in one JVM (batch mode)."""
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "in", Path(tmp) / "out"
        source.mkdir()
        for number, path in enumerate(paths):
            shutil.copy(path, source / f"{number:03d}{path.suffix}")
        subprocess.run(["java", "-jar", str(jar), "-t", "-i", str(source), "-o", str(out)],
                       capture_output=True, timeout=1800)
        texts = {}
        for number, path in enumerate(paths):
            result = out / f"{number:03d}{path.suffix}.txt"
            texts[path] = result.read_text("utf-8", "replace") if result.exists() else ""
        return texts


def ofd_text(path: Path) -> str:
    """Every TextCode of an OFD's pages and of the templates a page lays over, in file order,
    one per line (no layout, no reading order). A template no page uses is never shown."""
    def tree(data: bytes) -> etree._Element:
        return etree.parse(io.BytesIO(data), etree.XMLParser(
            resolve_entities=False, no_network=True)).getroot()

    def named(root: etree._Element, name: str) -> list[etree._Element]:
        return [e for e in root.iter() if isinstance(e.tag, str)
                and etree.QName(e).localname == name]

    with zipfile.ZipFile(path) as archive:
        parts = {name: tree(archive.read(name)) for name in sorted(archive.namelist())
                 if name.endswith(("Content.xml", "Document.xml"))}
    used = {t.get("TemplateID") for name, root in parts.items() if "/Pages/" in name
            for t in named(root, "Template")}
    shown = {name for name in parts if "/Pages/" in name and name.endswith("Content.xml")}
    for name, root in parts.items():
        if name.endswith("Document.xml"):
            folder = name.rsplit("/", 1)[0]
            shown |= {f"{folder}/{t.get('BaseLoc', '').lstrip('/')}"
                      for t in named(root, "TemplatePage") if t.get("ID") in used}
    return "\n".join(e.text or "" for name in sorted(shown) if name in parts
                     for e in named(parts[name], "TextCode"))


def reference(collection: str, path: Path, texts: dict[Path, str]) -> str:
    """What a person reading the file sees, from outside kbflow (see the module docstring)."""
    if path.suffix == ".ofd":
        return ofd_text(path)
    if collection == "chardet":
        return declared_text(path)
    if collection in page_references.EXPECTED:
        return (EXPECTED / collection / f"{path.name}.txt").read_text("utf-8")
    if path.name in DECLARED_FILES:
        return path.read_bytes().decode(DECLARED_FILES[path.name])
    if path.name in OCR_LANGUAGES:  # Tika calls Tesseract in English only
        return tesseract_text(path, OCR_LANGUAGES[path.name])
    tika = texts.get(_tika_input(collection, path) or path, "")
    return format_visible.without_cell_notes(path, tika)


def tesseract_text(path: Path, language: str) -> str:
    """Tesseract's text of a picture, or of a scanned PDF's pages rendered at 300 dpi (what
    Tika does, in `language` instead of English)."""
    if path.suffix != ".pdf":
        return subprocess.run(["tesseract", str(path), "-", "-l", language],
                              capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp, pymupdf.open(path) as pdf:
        pages = []
        for number, page in enumerate(pdf):
            picture = Path(tmp) / f"{number:04d}.png"
            page.get_pixmap(dpi=300).save(picture)
            pages.append(tesseract_text(picture, language))
        return "\n".join(pages)


def _tika_input(collection: str, path: Path) -> Path | None:
    """The file Tika reads for `path`'s reference: a page's expected main content for
    readability's pages; none where the reference is made otherwise."""
    if collection == "readability":
        return EXPECTED / collection / path.name
    if (path.suffix == ".ofd" or collection in {"chardet", *page_references.EXPECTED}
            or path.name in OCR_LANGUAGES
            or path.name in DECLARED_FILES):
        return None
    return path


def declared_text(path: Path) -> str:
    """chardet's test files decoded as the folder they come from says (the name's prefix);
    a page's text without its head (title, metadata), scripts and styles."""
    declared = next(name for name in _DECLARED if path.name.startswith(name + "_"))
    text = path.read_bytes().decode(_DECLARED[declared], "replace")
    if path.suffix != ".html":
        return text
    root = lxml.html.fromstring(text)
    for element in root.xpath("//head | //script | //style"):
        element.drop_tree()
    return str(root.text_content())


def squeeze(text: str) -> str:
    """Letters and digits only, NFKC, lowercased."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] in "LN")


def window(line: str, rng: random.Random) -> str:
    """A phrase of a line: 8 characters of a mostly Chinese line, else 5 words, from a random
    place."""
    if len(_CJK.findall(line)) * 2 >= len(squeeze(line)):
        start = rng.randrange(max(len(line) - 8, 0) + 1)
        return line[start:start + 8]
    words = line.split()
    start = rng.randrange(max(len(words) - 5, 0) + 1)
    return " ".join(words[start:start + 5])


def phrases(reference: str, seed: str) -> list[str]:
    rng = random.Random(seed)
    candidates = []
    for line in reference.splitlines():
        line = unicodedata.normalize("NFKC", line).strip()
        if len(squeeze(line)) < 6 or _PRINT_CODES.match(line):
            continue
        candidates.append(window(line, rng))
    candidates = [c for c in dict.fromkeys(candidates) if len(squeeze(c)) >= 4]
    text = "".join(line.strip() for line in reference.splitlines())
    if not candidates and len(_CJK.findall(text)) >= 6:
        # vertical CJK (pdfminer's jo.pdf): one character a line; read as lines of 40
        return phrases("\n".join(text[i:i + 40] for i in range(0, len(text), 40)), seed)
    return rng.sample(candidates, min(PHRASES_PER_FILE, len(candidates)))


def run(jar: Path, only: list[str] | None = None) -> list[FileResult]:
    import time

    entries = [e for e in files() if not only or e[0] in only]
    texts = tika_texts([t for c, p, _ in entries if (t := _tika_input(c, p))], jar)
    rendered = format_visible.rendered_texts(((c, p) for c, p, _ in entries), jar)
    results = []
    for collection, path, held_out in entries:
        source = reference(collection, path, texts)
        wanted = phrases(source, path.name)
        started = time.perf_counter()
        try:
            meta, data = read_meta(path, path.parent, "bench", ["all"])
            doc = parse_document(meta, data)
            chunks = chunk_document(doc)
            status = "ok"
        except (ParseError, ValueError) as exc:
            chunks, status = [], f"failed: {exc}"[:160]
        seconds = round(time.perf_counter() - started, 1)
        indexed = squeeze("\n".join(f"{' '.join(c.title_path)} {c.prefix} {c.text}"
                                    for c in chunks))
        recalled = sum(squeeze(p) in indexed for p in wanted)
        if status == "ok" and not indexed:  # READY, and no chunk holds a letter or digit
            status = "ready-with-nothing"
        shown = rendered.get(path)
        by_hand = format_visible.not_text(collection, path)
        kept, excluded = format_visible.split(  # not rendered: all but `not_text`
            wanted, source if shown is None else shown, squeeze, by_hand)
        if status.startswith("failed") and (not squeeze(source if shown is None else shown) or (
                wanted and all(p in by_hand for p in wanted))):  # all it holds is not text
            status = "no text: " + status.removeprefix("failed: ")
        results.append(FileResult(
            collection, path.name, held_out, len(wanted), recalled, status, seconds,
            len(kept), sum(squeeze(p) in indexed for p in kept),
            [(p, squeeze(p) in indexed, "") for p in excluded]))
        print(f"{collection}/{path.name}: {recalled}/{len(wanted)} visible "
              f"{results[-1].visible_recalled}/{len(kept)} {status} {seconds}s", flush=True)
    placed = format_visible.places([(path, [p for p, *_ in r.excluded]) for (_, path, _), r
                                    in zip(entries, results, strict=True)], jar, squeeze)
    for r, where in zip(results, placed, strict=True):
        r.excluded = [(p, ok, w) for (p, ok, _), w in zip(r.excluded, where, strict=True)]
    format_visible.write_excluded([(f"{r.collection}/{r.name}", *e) for r in results
                                   for e in r.excluded], only)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collect", action="store_true", help="copy the corpus from mirrors")
    parser.add_argument("--tika-jar", type=Path, default=DEFAULT_TIKA)
    parser.add_argument("--out", type=Path, help="per-file results as JSON")
    parser.add_argument("--collection", action="append", help="only these collections")
    parser.add_argument("--results", action="store_true", help="write bench/RESULTS.md")
    args = parser.parse_args()
    if args.collect:
        collect(args.collection)
    results = run(args.tika_jar, args.collection)
    if args.out:
        args.out.write_text(json.dumps([r.__dict__ for r in results], ensure_ascii=False,
                                       indent=1), encoding="utf-8")
    text = report(results)
    print(text)
    if args.results:
        write_section(RESULTS, SECTION, text)


if __name__ == "__main__":
    main()
