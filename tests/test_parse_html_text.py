"""HTML text as a reader sees it, in web pages and in Markdown's raw HTML: loose text in divs,
links and sections, <br> lines, nested lists, table cells' lines, text after a table, figure
captions and alt text; each text once, in reading order, no entity resolved."""

from __future__ import annotations

import time
from pathlib import Path

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta


def parse(tmp_path: Path, name: str, content: str) -> ParsedDocument:
    (tmp_path / name).write_bytes(content.encode("utf-8"))
    meta, data = read_meta(tmp_path / name, tmp_path, "default", ["all-staff"])
    return parse_document(meta, data)


def texts(doc: ParsedDocument) -> list[str]:
    return [b.text for b in doc.blocks if b.kind != BlockKind.TABLE_ROW]


def page(body: str) -> str:
    return f'<html><head><meta charset="utf-8"></head><body>{body}</body></html>'


def test_loose_text_in_divs_links_and_sections_becomes_paragraphs_once(tmp_path: Path) -> None:
    doc = parse(tmp_path, "loose.html", page(
        '<a href="/start.html"><div>\n  链接包着的说明文字\n</div></a>'
        "<div>第一行<br>第二行<br/>Third <b>line</b> here</div>"
        "<section>节里的文字<p>段落<span>里的字</span></p>节后的文字</section>"
        "<div><div><p>嵌套的段落只读一次</p></div></div>"
        "<span>Span text</span> and a <a href='#'>link</a>"))
    assert texts(doc) == ["链接包着的说明文字", "第一行", "第二行", "Third line here", "节里的文字",
                          "段落里的字", "节后的文字", "嵌套的段落只读一次", "Span text and a link"]
    assert doc.report.chars_indexed == doc.report.chars_seen  # nothing read twice, or lost


def test_source_line_wraps_join_as_a_browser_shows_them(tmp_path: Path) -> None:
    doc = parse(tmp_path, "wrap.html", page(
        "<h2>Heading on<br>two lines</h2><p>Hello\n      world</p><p>中文的\n   段落续行</p>"
        "<pre>第一条 代码块逐行\n\n第二条 另起一行</pre>"))
    assert [(b.kind, b.text) for b in doc.blocks] == [
        (BlockKind.HEADING, "Heading on two lines"), (BlockKind.PARAGRAPH, "Hello world"),
        (BlockKind.PARAGRAPH, "中文的段落续行"), (BlockKind.PARAGRAPH, "第一条 代码块逐行"),
        (BlockKind.PARAGRAPH, "第二条 另起一行")]


NESTED = """<ul>
  <li>Asia
    <ul><li>China</li><li>Japan</li></ul>
  </li>
  <li>Europe
    <ul><li>Switzerland
      <ul><li style="list-style-type: none;"><ul><li>Bern</li><li>Aargau</li></ul></li></ul>
    </li></ul>
  </li>
  <li>亚洲<ol><li>中国</li></ol>之后的字</li>
  <li><span>Alpha</span><div>Beta</div></li>
</ul>"""


def test_nested_list_items_are_blocks_of_their_own_text(tmp_path: Path) -> None:
    doc = parse(tmp_path, "nested.html", page(NESTED))
    assert texts(doc) == ["Asia", "China", "Japan", "Europe", "Switzerland", "Bern", "Aargau",
                          "亚洲", "中国", "之后的字", "Alpha", "Beta"]


TABLE = """<h1>Header</h1><p>表1 联系方式</p>
<table>
  <tr><td>A</td><td>B</td></tr>
  <tr><td>First Line<br>Second Line</td><td>第一行<br>第二行</td></tr>
  <tr><td><p>one</p><p>two</p></td><td><img src="x.png" alt="签章示例">图</td></tr>
</table>
After table<br>and its second line"""


def test_table_cells_keep_line_breaks_and_text_after_the_table_stays(tmp_path: Path) -> None:
    doc = parse(tmp_path, "table.html", page(TABLE))
    assert texts(doc) == [
        "Header", "表1 联系方式",
        "表1 联系方式\n| A | B |\n| --- | --- |\n| First Line Second Line | 第一行第二行 |\n"
        "| one two | 签章示例 图 |",
        "After table", "and its second line"]
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows[0] == "表1 联系方式 | A: First Line Second Line; B: 第一行第二行"


LAYOUT = """<table><tr><td colspan="2">单位门户 首页</td></tr>
<tr><td rowspan="2">通知公告<br>政策法规</td><td><p>表1 差旅标准</p>
<table><tr><th>城市</th><th>标准</th></tr><tr><td>一线城市</td><td>600元</td></tr></table>
</td></tr><tr><td>版权所有</td></tr></table>"""


def test_a_layout_table_reads_its_cells_once_and_a_nested_table_as_its_own(
        tmp_path: Path) -> None:
    doc = parse(tmp_path, "layout.html", page(LAYOUT))
    assert texts(doc) == ["单位门户 首页", "通知公告", "政策法规", "表1 差旅标准",
                          "表1 差旅标准\n| 城市 | 标准 |\n| --- | --- |\n| 一线城市 | 600元 |",
                          "版权所有"]
    assert [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW] == [
        "表1 差旅标准 | 城市: 一线城市; 标准: 600元"]
    assert doc.report.chars_indexed == doc.report.chars_seen


def hostile(depth: int) -> str:
    """Layout tables nested `depth` deep, every cell spanning 50 or 100 columns and rows, around
    a flat table of 30 rows whose cells each span 100 × 100 positions."""
    if depth == 0:
        return "<table>" + "".join(f"<tr><td colspan=100 rowspan=100>最里层第{r}行</td>"
                                   f"<td>值{r}</td></tr>" for r in range(30)) + "</table>"
    return (f"<table><tr><td colspan=50 rowspan=50>第{depth}层标题</td>"
            f"<td colspan=50>第{depth}层说明</td></tr><tr><td colspan=50 rowspan=50>"
            f"{hostile(depth - 1)}</td><td rowspan=99>第{depth}层旁注</td></tr></table>")


def test_nested_spanning_tables_stay_as_long_as_their_text(tmp_path: Path) -> None:
    """Read as grids, each outer cell's text (the inner tables' included) was copied into
    every position it spanned: 18.9 million characters out of 3 KB."""
    start = time.perf_counter()
    doc = parse(tmp_path, "hostile.html", page(hostile(10)))
    assert time.perf_counter() - start < 10
    text = "\n".join(b.text for b in doc.blocks)
    assert len(text) <= 3 * doc.report.chars_seen
    for level in range(1, 11):
        assert text.count(f"第{level}层说明") == 1
    assert text.count("最里层第29行") == 1


def test_a_header_repeated_on_many_rows_is_bounded(tmp_path: Path) -> None:
    """`header: value` rows repeat the header on purpose; under a 10 KB header row, 300 rows
    of one-character cells made 3 million characters of 16 thousand. Such a table is read
    cell by cell."""
    header = "".join(f"<th>{'长表头说明文字' * 70}{c}</th>" for c in range(20))
    rows = "".join("<tr>" + "<td>是</td>" * 20 + "</tr>" for _ in range(300))
    doc = parse(tmp_path, "header.html", page(f"<table><tr>{header}</tr>{rows}</table>"))
    assert sum(len(b.text) for b in doc.blocks) <= 3 * doc.report.chars_seen
    assert doc.report.chars_indexed == doc.report.chars_seen


def test_figure_captions_and_meaningful_alt_text_are_paragraphs(tmp_path: Path) -> None:
    doc = parse(tmp_path, "figures.html", page(
        '<a href="https://example.com"><img src="a.png" alt="Clickable Example"></a>'
        '<figure><img src="duck.jpg" alt="湖里游泳的小鸭">'
        "<figcaption>图1 <a href='#c'>小鸭</a>在湖里</figcaption></figure>"
        '<p>图标<img src="i.png" alt="IMG_2031.JPG"><img src="j.png" alt="">'
        '<img src="k.png" alt=" image "><img src="l.png">之后</p>'))
    assert texts(doc) == ["Clickable Example", "湖里游泳的小鸭", "图1 小鸭在湖里", "图标之后"]
    assert doc.report.chars_indexed == doc.report.chars_seen  # alt text counted as seen


def test_div_text_page_is_found_as_the_main_content(tmp_path: Path) -> None:
    body = "<br>".join(f"第{n}条 员工出差须事先提交出差申请并经部门负责人审批后方可出行。"
                       for n in "一二三")
    doc = parse(tmp_path, "notice.html", page(
        f'<div class="main"><div class="text">{body}</div></div>'
        '<div class="related"><p>相关阅读:关于调整员工福利标准的补充通知</p>'
        "<p>相关阅读:年度考核办法的修订说明与解读材料</p></div>"))
    assert [t[:3] for t in texts(doc)] == ["第一条", "第二条", "第三条"]
    assert doc.report.skipped == {"outside_main": 1}


MARKDOWN = """# 表格与列表

Here is a table:

<table>
  <tr><th>Character</th><th>Name in German</th></tr>
  <tr><td>Scrooge<br>McDuck</td><td>Dagobert Duck</td></tr>
</table>

A nested HTML list:

<ul>
  <li>Second item with subitems:
    <ul><li>Subitem 1</li><li>Subitem 2</li></ul>
  </li>
</ul>

<!--
<p>commented out, never shown</p>
-->

<signature>
My Signature
</signature>

```python
print("Hello world!")

x = 1
```

The end!
"""


def test_markdown_raw_html_blocks_are_read_as_html(tmp_path: Path) -> None:
    doc = parse(tmp_path, "mixed.md", MARKDOWN)
    assert texts(doc) == [
        "表格与列表", "Here is a table:",
        "| Character | Name in German |\n| --- | --- |\n| Scrooge McDuck | Dagobert Duck |",
        "A nested HTML list:", "Second item with subitems:", "Subitem 1", "Subitem 2",
        "My Signature", 'print("Hello world!")', "x = 1", "The end!"]
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows == ["Character: Scrooge McDuck; Name in German: Dagobert Duck"]


def test_markdown_raw_html_table_takes_its_caption_and_breaks_lines(tmp_path: Path) -> None:
    doc = parse(tmp_path, "caption.md",
                "表2 审批权限\n\n<table><tr><th>事项</th><th>审批人</th></tr>"
                "<tr><td>采购</td><td>部门负责人<br>总经理</td></tr></table>\n\n"
                "第一行<br>第二行\n")
    assert [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW] == [
        "表2 审批权限 | 事项: 采购; 审批人: 部门负责人总经理"]
    assert texts(doc)[-1] == "第一行第二行"


def test_markdown_raw_html_resolves_no_entity(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOPSECRET-FILE", encoding="utf-8")
    doc = parse(tmp_path, "entities.md",
                f'<!DOCTYPE html [<!ENTITY xxe SYSTEM "{(tmp_path / "secret.txt").as_uri()}">]>\n\n'
                "<div>文件内容:&xxe; 版权&copy;</div>\n")
    assert not [t for t in texts(doc) if "TOPSECRET" in t]
    assert texts(doc)[-1] == "文件内容:&xxe; 版权©"
