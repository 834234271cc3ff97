"""The format bench's corpus: which public test documents it takes, from which repository,
under which licence (bench/format_public.py collects and reads them), and the files whose
reference needs a declared encoding or an OCR language other than Tika's."""

# uchardet's test texts: the folder is the language, the name the encoding
_UCHARDET = (("ja", "euc-jp"), ("ja", "iso-2022-jp"), ("ja", "shift_jis"), ("ja", "utf-16be"),
             ("zh", "big5"), ("zh", "gb18030"), ("ko", "iso-2022-kr"), ("ru", "koi8-r"),
             ("el", "windows-1253"), ("he", "windows-1255"), ("pl", "iso-8859-2"),
             ("tr", "iso-8859-9"))
# TableStructureRec's pictures of Chinese tables (named "tsr_<folder>_<name>" in the corpus)
TSR_PICTURES = ("lineless_table_recognition.jpg", "test.jpg", "wired/table4.jpg")
# PDF-Extract-Kit's demo pages and chineseocr_lite's photos (Chinese but for fuzzy_scan, table_001)
PEK_PICTURES = ("layout_detection/financial_report", "layout_detection/watermark",
                "layout_detection/exam_paper", "layout_detection/fuzzy_scan", "ocr/ocr_001",
                "table_parsing/table_001")
COL_PICTURES = ("6", "7", "8", "mostAngle")
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
    # session 11 (fresh-d): Word 97-2003 files and their .docx saves (node-word-extractor;
    # Asian text, forms, notes), Microsoft Office's own test files (the Open XML SDK's: a real
    # deck, a chart, endnotes, headers, an ISO Strict workbook), Chinese Excel templates
    # (autopoi), ONLYOFFICE's sample documents, and Hunnysoft's mails from four mail programs
    "word-extractor": ("morungos/node-word-extractor", "MIT", [
        f"__tests__/data/{p}" for p in (
            "bigfile-01.doc", "test04.doc", "test06.doc", "test07.doc", "test11.doc",
            "test11.docx", "test13.doc", "test17.doc")]),
    "open-xml-sdk": ("dotnet/Open-XML-SDK", "MIT", [
        f"test/DocumentFormat.OpenXml.Tests.Assets/assets/TestDataStorage/{p}" for p in (
            "v2FxTestFiles/ForTestCase/Bug571679_Brownbag.pptx",
            "v2FxTestFiles/ForTestCase/typical.pptx", "v2FxTestFiles/ForTestCase/worksheets.xlsx",
            "v2FxTestFiles/ForTestCase/chart.docx", "v2FxTestFiles/ForTestCase/endnote.docx",
            "v2FxTestFiles/ForTestCase/header.docx", "O14ISOStrict/Excel/xl8galry.xlsx")]),
    "autopoi": ("jeecgboot/autopoi", "Apache-2.0", [
        f"autopoi/src/test/resources/templates/{p}.xlsx" for p in (
            "test", "testNextMarge", "ExcelImportDateTest")]),
    "onlyoffice": ("ONLYOFFICE/document-templates", "Apache-2.0", [
        f"sample/sample.{p}" for p in ("docx", "pptx", "xlsx")]),
    # hunnysoft.com's sample mails (Outlook 2000, Netscape 4.7, Eudora 4.2, PINE), stored .eml
    "hunnysoft-mime": ("zbateson/mail-mime-parser", "BSD-3-Clause", [
        (f"tests/_data/emails/{p}.txt", f"{p}.eml") for p in (
            "m0017", "m0024", "m1005", "m2007", "m3004")]),
    # held-out play, session 11 (2026-12-06): PDFs and pictures of documents of four sources
    # never used before: PDF-Extract-Kit's demo pages (a Chinese research report, a watermarked
    # annual report, an exam paper, a book scan), chineseocr_lite's Chinese photos of documents,
    # Tesseract's own test pictures (sideways and upside-down) and pdf2htmlEX's test PDFs
    "pdf-extract-kit": ("opendatalab/PDF-Extract-Kit", "AGPL-3.0", [
        f"assets/demo/{p}.png" for p in PEK_PICTURES]),
    "chineseocr-lite": ("DayBreak-u/chineseocr_lite", "GPL-2.0", [
        (f"cpp_projects/images/{p}.jpg", f"chineseocr_lite_{p}.jpg") for p in COL_PICTURES]),
    "tesseract-test": ("tesseract-ocr/test", "Apache-2.0", [f"testing/{p}" for p in (
        "phototest.tif", "phototest-rotated-R.png", "phototest-rotated-180.png", "eurotext.tif",
        "8071_093.3B.tif")]),
    # session 12 (2026-12-06): pdf.js test PDFs whose text layer is not what the page shows
    # (fonts without a usable ToUnicode map: control codes for letters), a collection of its own
    # so that pdfjs's held-out third stays as it was
    "pdfjs-fonts": ("mozilla/pdf.js", "Apache-2.0", [
        f"test/pdfs/{p}.pdf" for p in ("TAMReview", "font_ascent_descent")]),
    "pdf2htmlex": ("pdf2htmlEX/pdf2htmlEX", "GPL-3.0-or-later", [
        f"pdf2htmlEX/test/browser_tests/{p}.pdf" for p in (
            "basic_text", "fontfile3_opentype", "geneve_1564", "invalid_unicode_issue477",
            "svg_background_with_page_rotation_issue402", "with_form")]),
    # held-out play, session 12 (fresh-e, 2026-12-06): saved web pages of trafilatura's
    # evaluation (Japanese and Chinese news, an encyclopedia entry, English news, a wiki and a
    # German magazine) scored on the phrases a person picked from their main content; pypdf's
    # real PDFs (a Canadian government data model, a US federal form, a scanned book's OCR
    # layer, a LibreOffice form, an AutoCAD drawing, a LaTeX paper, greetings in six scripts, a
    # file attachment); magic-doc's Word and PowerPoint files (Chinese but for a Word 2002 quiz);
    # then olmOCR's PDFs
    "trafilatura": ("adbar/trafilatura", "Apache-2.0", [f"tests/{p}.html" for p in (
        "eval/nhk.or.jp.k100", "eval/archive.org.he.xinhuanet.com.25340717",
        "eval/baike.baidu.com.tanya", "eval/blog.gaijinpot.com.chikan",
        "eval/tofugu.com.dezuka-suisan", "cache/scmp.com.playbook", "cache/reuters.com.parasite",
        "cache/nature.com.telescope", "eval/bbc.com.52241221", "eval/nytimes.com.blackouts",
        "cache/en.wikipedia.org.tsne", "cache/spiegel.de.albtraum")]),
    "pypdf": ("py-pdf/pypdf", "BSD-3-Clause", [f"resources/{p}.pdf" for p in (
        "AutoCad_Diagram", "FormTestFromOo", "GeoBase_NHNC1_Data_Model_UML_EN", "SF424_page2",
        "Seige_of_Vicksburg_Sample_OCR", "attachment", "multilang", "side-by-side-subfig")]),
    # olmOCR's test PDFs (a company's annual report page, a Wikipedia article printed by
    # Chrome, a 10-page aviation application form, a PowerPoint deck of pictures, a textbook
    # page, a two-column medical paper)
    "olmocr": ("allenai/olmocr", "Apache-2.0", [
        *(f"olmocr/bench/sample_data/pdfs/{p}.pdf" for p in (
            "earnings", "openstax_caculus_pg_273")),
        *(f"tests/gnarly_pdfs/{p}.pdf" for p in (
            "edgar", "form_on_later_pages", "most_content_in_image_form",
            "pdftotext_two_column_issue"))]),
    "magic-doc": ("opendatalab/magic-doc", "Apache-2.0", [
        ("magic_doc/contrib/test_data/doc/test.doc", "contrib_test.doc"),
        *(f"test/test_cli/datas/{p}" for p in (
            "test01.doc", "test02.docx", "test05.ppt", "test06.pptx"))]),
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
DECLARED_ENCODINGS = {"Big5": "big5hkscs", "SHIFT_JIS": "cp932", "UTF-16": "utf-16",
                      "GB2312": "gb18030"}
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
    "small_ocr.pdf": "chi_sim",
    # PDF-Extract-Kit's Chinese pages carry English words too; chineseocr_lite's photos
    **dict.fromkeys(("financial_report.png", "watermark.png", "exam_paper.png", "ocr_001.png"),
                    "chi_sim+eng"),
    **{f"chineseocr_lite_{p}.jpg": "chi_sim" for p in COL_PICTURES}}
