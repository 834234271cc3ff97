"""PPTX: every text part of a deck (notes, groups, tables, alt text, chart titles) without the
text repeated on every slide; HTML: the main content of a page without its navigation,
sidebars, banners and footer, and a parser that resolves no entity and survives deep pages."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.util import Inches

from ingest.chunk import chunk_document
from ingest.models import BlockKind, ChunkKind, ParsedDocument
from ingest.parse import ParseError, parse_document, read_meta
from ingest.parse.boilerplate import repeated_shapes
from ingest.parse.coverage import visible_chars

FOOTER = "XX公司内部培训资料　请勿外传"
TOPICS = ["口令管理", "邮件安全", "移动介质", "终端与数据安全", "终端与数据安全", "终端与数据安全"]
POINTS = ["口令至少12位", "不点陌生链接", "介质须加密", "离开即锁屏", "数据分四级", "事件须上报"]


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def texts(doc: ParsedDocument) -> list[str]:
    return [b.text for b in doc.blocks]


# ---- PPTX ----------------------------------------------------------------------------------


def build_deck(path: Path) -> None:
    """A title slide and six slides, each with the same footer text box and its number; the
    last three repeat one section title."""
    deck = Presentation()
    cover = deck.slides.add_slide(deck.slide_layouts[0])
    cover.shapes.title.text = "信息安全意识培训"
    cover.placeholders[1].text = "信息技术部　2026年3月"
    for number, (topic, point) in enumerate(zip(TOPICS, POINTS, strict=True), start=2):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = topic
        body = slide.shapes.add_textbox(Inches(1), Inches(1.6), Inches(8), Inches(0.8))
        body.text_frame.text = f"要点:{point}。"
        footer = slide.shapes.add_textbox(Inches(1), Inches(6.8), Inches(6), Inches(0.4))
        footer.text_frame.text = FOOTER
        page = slide.shapes.add_textbox(Inches(9), Inches(6.8), Inches(0.5), Inches(0.4))
        page.text_frame.text = str(number)
    slides = deck.slides
    slides[1].notes_slide.notes_text_frame.text = "讲解时强调:口令至少12位。\n不得写在便签上。"
    slides[2].notes_slide.notes_text_frame.text = "3"  # a slide number, not notes
    slides[6].notes_slide.notes_text_frame.text = "Report incidents within 24 hours."
    outer = slides[2].shapes.add_group_shape()
    outer.shapes.add_textbox(Inches(1), Inches(2.6), Inches(4), Inches(0.5)).text_frame.text = (
        "外层组合:识别钓鱼邮件")
    inner = outer.shapes.add_group_shape()
    inner.shapes.add_textbox(Inches(1), Inches(3.4), Inches(4), Inches(0.5)).text_frame.text = (
        "内层组合:可疑邮件转发至安全邮箱")
    table = slides[3].shapes.add_table(3, 2, Inches(1), Inches(3), Inches(6), Inches(1)).table
    rows = [("介质", "要求"), ("U盘", "加密存储"), ("移动硬盘", "登记备案")]
    for r, (medium, rule) in enumerate(rows):
        table.cell(r, 0).text, table.cell(r, 1).text = medium, rule
    png = io.BytesIO()
    Image.new("RGB", (16, 16), "navy").save(png, "PNG")
    picture = slides[4].shapes.add_picture(io.BytesIO(png.getvalue()), Inches(6), Inches(3))
    picture._element.nvPicPr.cNvPr.set("descr", "办公终端离开时锁屏示意图")
    slides[4].shapes.add_picture(io.BytesIO(png.getvalue()), Inches(6), Inches(5))  # "image.png"
    layout_footer = next(p for p in slides[5].slide_layout.placeholders
                         if p.placeholder_format.type == PP_PLACEHOLDER.FOOTER)
    slides[5].shapes.clone_placeholder(layout_footer)
    next(p for p in slides[5].placeholders
         if p.placeholder_format.type == PP_PLACEHOLDER.FOOTER).text = "仅限内部"
    data = CategoryChartData()
    data.categories = ["一季度", "二季度"]
    data.add_series("事件", (3, 1))
    chart = slides[6].shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(3),
                                       Inches(5), Inches(3), data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "2025年安全事件数量"
    deck.save(path)


def test_pptx_reads_every_text_part_and_what_repeats_on_most_slides_once(
        tmp_path: Path) -> None:
    build_deck(tmp_path / "training.pptx")
    doc = parse(tmp_path / "training.pptx")
    assert (doc.meta.title, doc.report.title_source) == ("信息安全意识培训", "title slide")
    assert [(b.page, b.level, b.text) for b in doc.blocks if b.kind == BlockKind.HEADING] == [
        (1, 1, "信息安全意识培训"), *((n, 2, t) for n, t in enumerate(TOPICS, start=2)),
        (7, 1, "页眉页脚")]
    # the footer box of every slide and slide 6's footer placeholder, once, at the deck's end
    assert texts(doc)[-1] == "XX公司内部培训资料 请勿外传 | 仅限内部"
    assert not [t for t in texts(doc)[:-1] if "请勿外传" in t or "仅限内部" in t or t.isdigit()]
    # the footer box's other 5 copies, number boxes, and slide 3's notes ("3")
    assert doc.report.headers_footers_removed == 5 + 6 + 1
    assert doc.report.skipped == {"boilerplate": 12, "generated_alt_text": 1}
    removed = 5 * visible_chars(FOOTER) + len("234567" + "3" + "image.png")
    assert doc.report.chars_skipped == removed
    assert doc.report.chars_seen == doc.report.chars_indexed + doc.report.chars_skipped
    on_page = {n: [b.text for b in doc.blocks if b.page == n] for n in range(1, 8)}
    assert on_page[2] == ["口令管理", "要点:口令至少12位。",
                          "演讲者备注: 讲解时强调:口令至少12位。", "演讲者备注: 不得写在便签上。"]
    assert on_page[3] == ["邮件安全", "要点:不点陌生链接。", "外层组合:识别钓鱼邮件",
                          "内层组合:可疑邮件转发至安全邮箱"]
    assert on_page[4][-2:] == ["介质: U盘; 要求: 加密存储", "介质: 移动硬盘; 要求: 登记备案"]
    assert on_page[5][-1] == "图片说明: 办公终端离开时锁屏示意图"
    assert on_page[7][-5:-2] == ["图表: 2025年安全事件数量", "事件: 一季度 3; 二季度 1",
                                 "Speaker notes: Report incidents within 24 hours."]


def test_pptx_chunks_keep_notes_with_their_slide_and_the_footer_once(tmp_path: Path) -> None:
    build_deck(tmp_path / "training.pptx")
    chunks = chunk_document(parse(tmp_path / "training.pptx"))
    assert [c.title_path for c in chunks
            if "请勿外传" in c.text and c.kind != ChunkKind.PARENT] == [["页眉页脚"]]
    by_id = {c.chunk_id: c for c in chunks}
    (notes,) = [c for c in chunks if "便签" in c.text and c.kind != ChunkKind.PARENT]
    assert (notes.page_start, notes.page_end, notes.title_path) == (2, 2, ["口令管理"])
    assert notes.text.startswith("要点:口令至少12位。\n演讲者备注: ")  # with the slide's text
    assert notes.parent_chunk_id is not None
    assert by_id[notes.parent_chunk_id].text.startswith("口令管理\n要点:口令至少12位。")


def test_pptx_title_from_properties_when_no_title_slide(tmp_path: Path) -> None:
    deck = Presentation()
    for name in ("差旅费标准", "报销流程"):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        for top, text in ((1, name), (6, "内部资料")):
            box = slide.shapes.add_textbox(Inches(1), Inches(top), Inches(6), Inches(1))
            box.text_frame.text = text
    deck.core_properties.title = "差旅费管理培训"
    deck.save(tmp_path / "a.pptx")
    doc = parse(tmp_path / "a.pptx")
    assert (doc.meta.title, doc.report.title_source) == ("差旅费管理培训", "metadata")
    # on both slides, but a two-slide deck is too short to tell a footer from content
    assert texts(doc) == ["差旅费标准", "内部资料", "报销流程", "内部资料"]
    deck.core_properties.title = "PowerPoint Presentation"
    deck.save(tmp_path / "b.pptx")
    assert parse(tmp_path / "b.pptx").report.title_source == "first line"


def test_repeated_shapes_need_half_the_pages() -> None:
    pages = [["第1页 机密"], ["第2页 机密", "正文"], ["正文"], [], [], []]
    assert repeated_shapes(pages) == set()  # 2 of 6 pages is not half
    assert repeated_shapes([*pages, ["第7页 机密"]]) == {"第#页机密"}
    assert repeated_shapes([["页脚"], ["页脚"]], min_pages=3) == set()


# ---- HTML ----------------------------------------------------------------------------------

PORTAL = """<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">
<title>关于2026年春节放假安排的通知 - XX集团门户</title>
<script>var note = "脚本里的字";</script><style>.nav{color:red}</style></head>
<body class="has-sidebar">
<header><div class="logo"><h1>XX集团门户</h1></div></header>
<nav><ul><li><a href="/">首页</a></li><li><a href="/news">新闻中心</a></li></ul></nav>
<div class="breadcrumb"><a href="/">首页</a> &gt; <a href="/notice">通知公告</a> &gt; 正文</div>
<div class="layout">
<aside class="sidebar"><h2>热门服务</h2><ul><li><a href="/a">差旅报销系统入口</a></li></ul>
<p>服务热线:400-800-1234,工作日9:00-18:00为您服务。</p></aside>
<article><header><h1>关于2026年春节放假安排的通知</h1>
<p>发布时间:2026-01-10 来源:行政部</p></header>
<p>根据国务院办公厅通知精神,结合公司实际,现将2026年春节放假安排通知如下。</p>
<p>2月15日至2月23日放假调休,共9天。2月28日(星期六)上班。</p>
<ol><li>各部门应于放假前做好安全检查,关闭电源门窗。</li></ol></article></div>
<div id="cookie-consent"><p>本网站使用Cookie以改善您的浏览体验,继续浏览即表示同意。</p></div>
<form class="search"><input name="q"><button>搜索全站</button></form>
<div hidden><p>隐藏的旧版通知内容不应被索引。</p></div>
<footer><p>版权所有 © 2026 XX集团 京ICP备12345678号</p></footer>
</body></html>"""


def write(tmp_path: Path, name: str, page: str) -> Path:
    (tmp_path / name).write_bytes(page.encode("utf-8"))
    return tmp_path / name


def test_html_portal_page_keeps_only_its_article(tmp_path: Path) -> None:
    doc = parse(write(tmp_path, "notice.html", PORTAL))
    assert texts(doc) == [
        "关于2026年春节放假安排的通知",  # the article's own <header> stays
        "发布时间:2026-01-10 来源:行政部",
        "根据国务院办公厅通知精神,结合公司实际,现将2026年春节放假安排通知如下。",
        "2月15日至2月23日放假调休,共9天。2月28日(星期六)上班。",
        "各部门应于放假前做好安全检查,关闭电源门窗。",
    ]
    assert (doc.meta.title, doc.report.title_source) == ("关于2026年春节放假安排的通知", "h1")
    assert doc.report.skipped == {"navigation": 2, "sidebar": 1, "boilerplate": 3, "form": 1,
                                  "hidden": 1}
    left_out = ("XX集团门户" "首页新闻中心" "首页>通知公告>正文"
                "热门服务差旅报销系统入口服务热线:400-800-1234,工作日9:00-18:00为您服务。"
                "本网站使用Cookie以改善您的浏览体验,继续浏览即表示同意。" "搜索全站"
                "隐藏的旧版通知内容不应被索引。" "版权所有©2026XX集团京ICP备12345678号")
    assert doc.report.chars_skipped == len(left_out)
    assert doc.report.chars_seen == doc.report.chars_indexed + doc.report.chars_skipped


DENSE = """<html><head><meta charset="utf-8"><title>员工手册 | Portal</title></head><body>
<div id="top"><a href="/">首页</a> <a href="/x">制度</a></div>
<div class="menu"><ul><li><a href="/1">人事制度汇编第一册(2025年修订版)全文</a></li>
<li><a href="/2">财务制度汇编第二册(2025年修订版)全文</a></li></ul></div>
<div class="related"><p><a href="/r1">相关阅读:关于调整员工福利标准的补充通知全文</a></p>
<p><a href="/r2">相关阅读:年度考核办法(2025年修订版)全文链接</a></p></div>
<div class="wrap with-sidebar"><div class="content"><h2>第一章 总则</h2>
<p>第一条 为规范员工行为,维护公司正常经营秩序,根据国家有关法律法规,制定本手册。</p>
<p>第二条 本手册适用于公司全体员工,包括试用期员工和劳务派遣人员。</p>
<p>第三条 员工应当遵守公司各项规章制度,服从工作安排,<a href="/x">详见附件</a>。</p>
</div><div class="share"><a href="#">分享到微信</a> <a href="#">分享到微博</a></div></div>
</body></html>"""


def test_html_without_main_takes_the_densest_block(tmp_path: Path) -> None:
    doc = parse(write(tmp_path, "handbook.html", DENSE))
    assert texts(doc) == [
        "第一章 总则",
        "第一条 为规范员工行为,维护公司正常经营秩序,根据国家有关法律法规,制定本手册。",
        "第二条 本手册适用于公司全体员工,包括试用期员工和劳务派遣人员。",
        "第三条 员工应当遵守公司各项规章制度,服从工作安排,详见附件。",
    ]
    assert (doc.meta.title, doc.report.title_source) == ("员工手册", "html title")
    # top links, menu, related, share; "with-sidebar" holds the text: a layout, not a sidebar
    assert doc.report.skipped == {"outside_main": 4}
    assert doc.report.chars_seen == doc.report.chars_indexed + doc.report.chars_skipped


def test_html_page_of_paragraphs_keeps_them_but_not_its_footer_line() -> None:
    doc = parse(Path(__file__).resolve().parents[1] / "sample_docs" / "approval_authority.html")
    assert (doc.blocks[0].text, doc.report.title_source) == ("审批权限表", "h1")
    assert doc.report.table_rows == 14
    # <p class="footer">本页面内容为…内部资料,未经许可不得对外提供。</p>
    assert doc.report.skipped == {"boilerplate": 1}
    assert doc.blocks[-1].text.startswith("本表由财务部负责解释")


@pytest.mark.parametrize("site", [" - XX集团门户", "_XX集团门户", " | Portal", ""])
def test_html_title_without_the_site_name_never_from_a_sidebar(tmp_path: Path,
                                                              site: str) -> None:
    page = (f"<html><head><title>关于印发差旅费管理办法的通知{site}</title></head><body>"
            "<aside><h1>热门服务</h1><p>差旅报销系统入口与会议室预订等常用服务一览。</p></aside>"
            "<main><h2>附件下载</h2><p>第一条 差旅费按本办法报销,各部门遵照执行。</p></main>"
            "</body></html>")
    doc = parse(write(tmp_path, "notice.html", page))
    assert (doc.meta.title, doc.report.title_source) == ("关于印发差旅费管理办法的通知",
                                                         "html title")
    assert texts(doc) == ["附件下载", "第一条 差旅费按本办法报销,各部门遵照执行。"]


def test_html_entities_and_dtds_are_never_loaded(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOPSECRET-FILE", encoding="utf-8")
    (tmp_path / "x.dtd").write_text('<!ENTITY dtdsecret "TOPSECRET-DTD">', encoding="utf-8")
    page = (f'<!DOCTYPE html SYSTEM "{(tmp_path / "x.dtd").as_uri()}" ['
            f'<!ENTITY xxe SYSTEM "{(tmp_path / "secret.txt").as_uri()}">]>'
            "<html><body><h1>外部实体测试</h1><p>文件内容:&xxe; 定义:&dtdsecret; 版权&copy;</p>"
            "</body></html>")
    doc = parse(write(tmp_path, "entities.html", page))
    assert not [t for t in texts(doc) if "TOPSECRET" in t]
    assert texts(doc)[-1] == "文件内容:&xxe; 定义:&dtdsecret; 版权©"


def test_html_too_deep_page_fails_alone(tmp_path: Path) -> None:
    deep = "<html><body>" + "<div><span>层</span>" * 100_000 + "</body></html>"
    assert len(deep.encode()) > 2_000_000
    with pytest.raises(ParseError, match=r"beyond the parser's limits.*Excessive depth"):
        parse(write(tmp_path, "deep.html", deep))
    assert texts(parse(write(tmp_path, "ok.html", PORTAL)))[0] == "关于2026年春节放假安排的通知"


def test_pptx_notes_page_header_and_footer_read_once_not_as_notes() -> None:
    """poi's bug58144-headers-footers-2007.pptx (bench/format_corpus, PROVENANCE.md): the notes
    page's header and footer are text a printed notes page shows, read once per deck beside
    the master's footer, not as speaker notes and not dropped."""
    path = Path(__file__).parents[1] / "bench/format_corpus/poi/bug58144-headers-footers-2007.pptx"
    doc = parse(path)
    margins = [b for b in doc.blocks if b.text == "Header and footer"]
    assert [b.kind for b in margins] == [BlockKind.HEADING]
    assert doc.blocks[-1].text.split(" | ") == ["Slide footer", "Notes footer", "Notes header"]
    assert not [b for b in doc.blocks if b.text.startswith("Speaker notes:")]
    chunked = "\n".join(c.text for c in chunk_document(doc))
    assert "Notes header" in chunked and "Notes footer" in chunked


def test_a_macro_enabled_deck_is_read_as_a_deck_its_macros_never_run() -> None:
    """poi's PPTWithAttachments.pptm (bench/format_corpus/metafiles, PROVENANCE.md): a .pptm is
    a .pptx package with a VBA part; its slides, notes and embedded documents are read, the VBA
    part is not (nothing of it is text a reader sees)."""
    path = Path(__file__).parents[1] / "bench/format_corpus/metafiles/PPTWithAttachments.pptm"
    doc = parse(path)
    found = texts(doc)
    assert "Here we test embeddings" in found
    assert "Speaker notes: кўрмоқ, три, ahorseback" in found
    assert "This is an embedded word doc" in found
    assert not [t for t in found if "vbaProject" in t or "Attribute VB_" in t]


def test_pptx_slide_and_notes_footers_and_dates_read_once_slide_numbers_not() -> None:
    """PPTWithAttachments.pptm (bench/format_corpus/metafiles): slide 1's date and footer
    placeholders and its notes page's date are text the slide and the printed notes page show
    (Tika reads them); they were dropped as boilerplate. Now in the deck's margins section, each
    once (the notes page repeats its master's header, date and footer); the number is not."""
    path = Path(__file__).parents[1] / "bench/format_corpus/metafiles/PPTWithAttachments.pptm"
    doc = parse(path)
    margin = texts(doc)[texts(doc).index("Header and footer") + 1].split(" | ")
    assert margin == ["Иқтисодиёт, четырнадцать, zoic", "Ҳаётимизга, тринадцать, zodiacal",
                      "Ўзгаришлар, пятнадцать, zombi", "Рўй, шестнадцать, zombie",
                      "Ҳужжат, семнадцать, zonal"]
    assert doc.report.skipped["boilerplate"] == 2  # slide 1's and its notes page's number "1"
    chunked = "\n".join(c.text for c in chunk_document(doc))
    assert "zoic" in chunked and "zombie" in chunked
