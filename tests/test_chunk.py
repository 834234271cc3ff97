"""Chunking: structure-first boundaries, the model's token budget, stable ids and hashes under
edits, parents and links, the parameter-hashed chunker version and `kbflow chunks`."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

import pytest
from tests_support import SAMPLE_DOCS

from ingest.chunk import ChunkParams, chunk_document, chunk_params, over_budget
from ingest.chunk.describe import describe
from ingest.config import Settings
from ingest.diff import diff_chunks, published
from ingest.embed import DEFAULT_MODEL, TokenCounter
from ingest.models import Block, BlockKind, Chunk, ChunkKind, DocumentMeta, ParsedDocument
from ingest.parse import ParseError, discover, parse_document, read_meta
from ingest.text import estimate_tokens

MODEL = DEFAULT_MODEL
# Oracle for "a clause starts here", independent of the chunker: a body line (not a short
# heading) opening with 第X条 or a decimal number such as 4.2 / 4.2.1.
CLAUSE_LINE = re.compile(r"^(第[一二三四五六七八九十百零\d]+条|\d{1,2}(?:\.\d{1,3})+)(?=\s|[^\d.])")
LINKS_AND_PLACE = {"prev_chunk_id", "next_chunk_id", "char_start", "char_end", "page_start",
                   "page_end"}


@pytest.fixture(scope="module")
def docs() -> dict[str, ParsedDocument]:
    """Every sample the parser reads (a document it rejects is the parser tests' concern)."""
    parsed = {}
    for path in discover(SAMPLE_DOCS):
        meta, data = read_meta(path, SAMPLE_DOCS, "default", ["all-staff"])
        try:
            parsed[path.name] = parse_document(meta, data)
        except ParseError:
            continue
    assert len(parsed) >= 7
    return parsed


@pytest.fixture(scope="module")
def tokens() -> TokenCounter:
    return TokenCounter(MODEL)


@pytest.fixture(scope="module")
def params() -> ChunkParams:
    return ChunkParams(tokenizer=MODEL)


def _chunks(doc: ParsedDocument, params: ChunkParams, tokens: TokenCounter) -> list[Chunk]:
    return chunk_document(doc, params, tokens.count, tokens.max_tokens)


def _children(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.kind != ChunkKind.PARENT]


def _doc(blocks: list[tuple[BlockKind, str]], title: str = "测试办法") -> ParsedDocument:
    meta = DocumentMeta(doc_id="t", version_id="1", title=title, tenant_id="default",
                        acl=["all-staff"], source_uri="file:///t.md", source_path="t.md",
                        file_hash="0")
    return ParsedDocument(meta=meta, parser_version="test",
                          blocks=[Block(kind=k, text=t) for k, t in blocks])


# ---- the token budget -------------------------------------------------------------------------

def test_no_sample_chunk_exceeds_the_model_limit(docs, tokens, params) -> None:
    assert tokens.max_tokens == 512
    total = 0
    for name, doc in docs.items():
        chunks = _chunks(doc, params, tokens)
        total += len(_children(chunks))
        assert over_budget(chunks, tokens.count, tokens.max_tokens) == 0, name
        # over the budget only a whole numbered clause (within the model's limit, above)
        assert all(tokens.count(c.embed_text) <= params.token_cap
                   or (c.kind == ChunkKind.CLAUSE and c.clause_no) for c in _children(chunks))
    assert total > 150


def test_token_counter_matches_the_loaded_model(embedder, docs, tokens, params) -> None:
    """The chunker's counts are the model's own: same wordpieces, same [CLS]/[SEP], no cap."""
    from transformers import BertTokenizerFast

    from ingest.embed.fetch import ONNX_MODELS, installed_files

    oracle = BertTokenizerFast(tokenizer_file=str(installed_files(ONNX_MODELS[MODEL])[1]))
    assert embedder.encoder.max_tokens == tokens.max_tokens
    texts = [c.embed_text for doc in docs.values() for c in _chunks(doc, params, tokens)]
    for text in [*texts[::5], "报销" * 400]:
        assert tokens.count(text) == len(oracle(text)["input_ids"]) == embedder.count_tokens(text)
    assert tokens.count("报销" * 400) > tokens.max_tokens  # counted, not truncated


def test_a_tight_budget_splits_clauses_but_never_a_table_row(docs, tokens) -> None:
    tight = ChunkParams(token_cap=64, tokenizer=MODEL)
    doc = docs["approval_authority.html"]
    chunks = _chunks(doc, tight, tokens)
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    row_chunks = [c for c in chunks if c.kind == ChunkKind.TABLE_ROW]
    assert [c.text for c in row_chunks] == rows  # each row whole, once, in order
    too_long = [c for c in row_chunks if tokens.count(c.embed_text) > 64]
    assert too_long  # the budget really is below some rows...
    assert over_budget(chunks, tokens.count, 64) == len(too_long)  # ...and they are reported
    others = [c for c in _children(chunks) if c.kind != ChunkKind.TABLE_ROW]
    assert any("#" in c.structural_path for c in others)
    assert all(tokens.count(c.embed_text) <= 64 for c in others)


# ---- structure --------------------------------------------------------------------------------

def test_every_sample_clause_starts_a_chunk(docs, tokens, params) -> None:
    found = 0
    for name, doc in docs.items():
        starts = {c.text.split("\n")[0] for c in _children(_chunks(doc, params, tokens))}
        for block in doc.blocks:
            match = CLAUSE_LINE.match(block.text)
            is_heading = len(block.text) <= 40 and "。" not in block.text
            if block.kind == BlockKind.PARAGRAPH and match and not is_heading:
                found += 1
                assert block.text in starts, f"{name}: {block.text[:30]} does not start a chunk"
    assert found >= 100  # 18 + 18 + 18 + 20 articles, 40+ decimal clauses


def test_clause_numbers_and_paths(docs, tokens, params) -> None:
    chunks = _chunks(docs["travel_expense_2026.docx"], params, tokens)
    by_path = {c.structural_path: c for c in chunks}
    tenth = by_path["第十条"]
    assert tenth.kind == ChunkKind.CLAUSE and tenth.clause_no == "第十条"
    assert "150元" in tenth.text
    assert tenth.prefix == "《差旅费管理办法》v2026 / 第三章 差旅费开支标准 / 第十条"
    assert tenth.parent_chunk_id == by_path["第三章/§"].chunk_id
    security = {c.structural_path: c for c in
                _chunks(docs["information_security.pdf"], params, tokens)}
    assert security["4.2.2"].title_path == ["4 终端与网络安全", "4.2 外部存储设备与远程访问"]
    assert security["4.2.2"].parent_chunk_id == security["4/4.2/§"].chunk_id


def test_list_items_stay_in_their_clause() -> None:
    doc = _doc([
        (BlockKind.HEADING, "第一章 总则"),
        (BlockKind.PARAGRAPH, "第三条 公司假期包括:"),
        (BlockKind.PARAGRAPH, "1. 年休假;"),
        (BlockKind.PARAGRAPH, "2. 病假;"),
        (BlockKind.PARAGRAPH, "(1)短期病假;"),
        (BlockKind.PARAGRAPH, "法定节假日按国家规定执行。"),
        (BlockKind.PARAGRAPH, "第四条 员工应提前请假。"),
    ])
    children = _children(chunk_document(doc))
    assert [c.structural_path for c in children] == ["第三条", "第四条"]
    assert children[0].text.split("\n") == ["第三条 公司假期包括:", "1. 年休假;", "2. 病假;",
                                            "(1)短期病假;", "法定节假日按国家规定执行。"]
    assert all(c.title_path == ["第一章 总则"] for c in children)


def test_a_bare_number_after_a_decimal_clause_is_the_next_chapter() -> None:
    doc = _doc([
        (BlockKind.PARAGRAPH, "1 总则"),
        (BlockKind.PARAGRAPH, "1.1 本规范适用于全体员工和外包人员,以及接入公司网络的第三方人员。"),
        (BlockKind.PARAGRAPH, "2 账号管理"),
        (BlockKind.PARAGRAPH, "2.1 公司信息系统实行一人一号,统一通过统一身份平台认证。"),
    ])
    children = _children(chunk_document(doc))
    assert [(c.structural_path, c.title_path) for c in children] == [
        ("1.1", ["1 总则"]), ("2.1", ["2 账号管理"])]


def test_a_long_clause_splits_at_list_items_first() -> None:
    items = [f"({n})第{n}类事项的审批人为部门负责人,金额在{n}万元以下的由部门负责人审批。"
             for n in "一二三四五六七八"]
    doc = _doc([(BlockKind.PARAGRAPH, "第五条 审批权限如下:"),
                *[(BlockKind.PARAGRAPH, item) for item in items]])
    params = ChunkParams(token_cap=120, min_tokens=20)
    chunks = chunk_document(doc, params)
    pieces = _children(chunks)
    assert len(pieces) > 2 and all("#" in c.structural_path for c in pieces)
    lines = [line for c in pieces for line in c.text.split("\n")]
    assert lines == ["第五条 审批权限如下:", *items]  # whole items, none cut, none repeated
    whole = next(c for c in chunks if c.structural_path == "第五条")
    assert whole.kind == ChunkKind.PARENT and all(c.parent_chunk_id == whole.chunk_id
                                                  for c in pieces)
    assert all(estimate_tokens(c.embed_text) <= 120 for c in pieces)


def test_a_long_paragraph_splits_at_sentences_with_overlap() -> None:
    sentences = [f"第{n}句规定了差旅费报销的一项具体要求和办理时限。" for n in range(1, 16)]
    doc = _doc([(BlockKind.PARAGRAPH, "第九条 " + "".join(sentences))])
    pieces = _children(chunk_document(doc, ChunkParams(token_cap=100)))
    assert len(pieces) >= 3
    for before, after in pairwise(pieces):
        assert before.text.endswith("。")
        last = re.findall(r"[^。]+。", before.text)[-1]
        assert after.text.startswith(last)  # one sentence of overlap
    joined = "".join(pieces[0].text.removeprefix("第九条 "))
    assert joined.startswith(sentences[0])
    assert all(s in "".join(c.text for c in pieces) for s in sentences)
    assert all(estimate_tokens(c.embed_text) <= 100 for c in pieces)


def test_a_run_on_sentence_is_cut_by_tokens() -> None:
    doc = _doc([(BlockKind.PARAGRAPH, "第一条 " + "出差" * 200)])
    pieces = _children(chunk_document(doc, ChunkParams(token_cap=80)))
    assert len(pieces) >= 5
    assert "".join(c.text for c in pieces) == "第一条 " + "出差" * 200
    assert all(estimate_tokens(c.embed_text) <= 80 for c in pieces)


# ---- parents, links, prefixes, version ----------------------------------------------------------

def test_parents_and_prev_next_links(docs, tokens, params) -> None:
    for doc in docs.values():
        chunks = _chunks(doc, params, tokens)
        by_id = {c.chunk_id: c for c in chunks}
        children = _children(chunks)
        assert len(by_id) == len(chunks)  # ids unique
        assert children[0].prev_chunk_id is None and children[-1].next_chunk_id is None
        for before, after in pairwise(children):
            assert before.next_chunk_id == after.chunk_id and after.prev_chunk_id == before.chunk_id
        for child in children:
            if child.parent_chunk_id is not None:
                parent = by_id[child.parent_chunk_id]
                assert parent.kind == ChunkKind.PARENT
                if child.kind == ChunkKind.TABLE_ROW:  # the parent is the table, in Markdown
                    cells = [pair.split(": ", 1)[-1] for pair in child.text.split(" | ")[-1]
                             .split("; ")]
                    assert all(cell in parent.text for cell in cells)
                else:
                    assert all(line in parent.text for line in child.text.split("\n"))


def test_prefixes_can_be_turned_off(docs, tokens) -> None:
    off = ChunkParams(tokenizer=MODEL, prefixes=False)
    chunks = _chunks(docs["leave_policy.md"], off, tokens)
    assert all(c.prefix == "" and c.embed_text == c.text for c in chunks)
    assert off.version != ChunkParams(tokenizer=MODEL).version


def test_chunker_version_hashes_every_parameter(docs) -> None:
    base = ChunkParams(tokenizer=MODEL)
    variants = [base.model_copy(update={field: value}) for field, value in (
        ("token_cap", 128), ("min_tokens", 10), ("overlap_sentences", 0),
        ("tokenizer", "bge-small-zh"), ("context_model", "qwen"))]
    versions = {base.version, *(v.version for v in variants)}
    assert len(versions) == 6 and ChunkParams(tokenizer=MODEL).version == base.version
    settings = Settings(data_dir=Path("unused"), llm_base_url="http://x/v1", llm_model="qwen")
    assert chunk_params(settings).context_model == "qwen"
    chunks = chunk_document(docs["leave_policy.md"], chunk_params(settings))
    assert {c.chunker_version for c in chunks} == {chunk_params(settings).version}


# ---- stability under edits --------------------------------------------------------------------

def _edited(doc: ParsedDocument, index: int, text: str | None = None,
            insert: str | None = None) -> ParsedDocument:
    blocks = list(doc.blocks)
    if insert is not None:
        blocks.insert(index, Block(kind=BlockKind.PARAGRAPH, text=insert, page=1))
    else:
        blocks[index] = blocks[index].model_copy(update={"text": text})
    return doc.model_copy(update={"blocks": blocks})


def _reembedded(old: list[Chunk], new: list[Chunk]) -> list[Chunk]:
    """Chunks the diff rewrites whose content hash is new (those get embedded)."""
    diff = diff_chunks(new, published(old))
    before = {c.content_hash for c in old}
    fresh = [c for c in _children(diff.writes) if c.content_hash not in before]
    old_by_id = {c.chunk_id: c for c in old}
    for chunk in _children(diff.changed + diff.updated):  # the rest: links and offsets only
        if chunk.content_hash in before:
            was = old_by_id[chunk.chunk_id].model_dump(exclude={"created_at"})
            now = chunk.model_dump(exclude={"created_at"})
            assert {k for k in now if now[k] != was[k]} <= LINKS_AND_PLACE
    return fresh


def _body_start(doc: ParsedDocument) -> int:
    """Index of the first block after the title line."""
    return next(i for i, b in enumerate(doc.blocks) if b.text.strip("《》 ") == doc.meta.title) + 1


def test_inserting_at_the_top_reembeds_at_most_two_chunks(docs, tokens, params) -> None:
    for name, doc in docs.items():
        old = _chunks(doc, params, tokens)
        top = _body_start(doc)
        for edited in (_edited(doc, top, insert="本文件为公司内部资料,请勿外传。"),
                       _edited(doc, top, text="本文件为公司内部资料。" + doc.blocks[top].text)):
            new = _chunks(edited, params, tokens)
            fresh = _reembedded(old, new)
            assert 1 <= len(fresh) <= 2, (name, [c.structural_path for c in fresh])
            assert {c.structural_path for c in _children(old)} - {
                c.structural_path for c in _children(new)} <= {
                c.structural_path for c in _children(old) if c.char_start <= 1000
                and c.kind == ChunkKind.PARAGRAPH}, name  # only preamble paths may go


@pytest.mark.parametrize(("name", "clause", "old_text", "new_text"), [
    ("travel_expense_2026.docx", "第十条", "150元", "180元"),
    ("leave_policy.md", "第十一条", "158天", "168天"),
    ("information_security.pdf", "4.2.2", "有效期为1年", "有效期为2年"),
    ("remote_work_policy.md", "8.1", "200 CNY", "300 CNY"),
    ("procurement_policy.docx", "第九条", "5万元以下的,由部门", "3万元以下的,由部门"),
    ("information_security.pdf", "6.1", "超过7天未更新病毒库", "超过3天未更新病毒库"),  # in pieces
])
def test_editing_one_clause_reembeds_only_that_clause(docs, tokens, params, name, clause,
                                                      old_text, new_text) -> None:
    doc = docs[name]
    index = next(i for i, b in enumerate(doc.blocks) if old_text in b.text)
    old = _chunks(doc, params, tokens)
    edited = _edited(doc, index, text=doc.blocks[index].text.replace(old_text, new_text))
    fresh = _reembedded(old, _chunks(edited, params, tokens))
    assert 1 <= len(fresh) <= 2
    assert {c.clause_no for c in fresh} == {clause}
    assert any(new_text in c.text for c in fresh)


def test_a_new_paragraph_after_a_table_renames_nothing(docs, tokens, params) -> None:
    doc = docs["approval_authority.html"]
    last_row = max(i for i, b in enumerate(doc.blocks) if b.kind == BlockKind.TABLE_ROW)
    old = _chunks(doc, params, tokens)
    new = _chunks(_edited(doc, last_row + 1, insert="注:金额以合同总价计。"), params, tokens)
    assert {c.chunk_id for c in old} < {c.chunk_id for c in new}
    assert len(_reembedded(old, new)) == 1


def _deck(path: Path, slides: list[tuple[str, str]]) -> ParsedDocument:
    """A real .pptx (python-pptx writes what PowerPoint reads): a title slide, then one slide
    per (title, body)."""
    from pptx import Presentation

    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[0]).shapes.title.text = "2024年度经营回顾"
    for title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(path)
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


SLIDES = [("销售情况", "第一季度销售额增长百分之十二,华东区贡献最大。"),
          ("销售情况", "第二季度销售额下降百分之三,主要因为华南区库存积压。"),
          ("下一步计划", "清理华南区库存,第三季度恢复增长。")]


def test_two_slides_with_one_title_get_ids_of_their_own(tmp_path, tokens, params) -> None:
    """Sections sharing a path (slides with one title) take an ordinal: unique ids, each
    section parent holding its own slide; an edit to one slide re-embeds only its chunk."""
    chunks = _chunks(_deck(tmp_path / "deck.pptx", SLIDES), params, tokens)
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    by_id = {c.chunk_id: c for c in chunks}
    for _, body in SLIDES:
        child = next(c for c in _children(chunks) if c.text == body)
        assert child.parent_chunk_id is not None
        section = by_id[child.parent_chunk_id]
        assert body in section.text and sum(b in section.text for _, b in SLIDES) == 1
    assert {c.structural_path for c in chunks if c.kind == ChunkKind.PARENT} == {
        "销售情况/§", "销售情况~2/§", "下一步计划/§"}
    edited = [SLIDES[0], (SLIDES[1][0], SLIDES[1][1].replace("百分之三", "百分之五")), SLIDES[2]]
    fresh = _reembedded(chunks, _chunks(_deck(tmp_path / "deck.pptx", edited), params, tokens))
    assert [c.text for c in fresh] == [edited[1][1]]


def test_a_second_table_in_a_section_is_its_rows_parent() -> None:
    doc = _doc([(BlockKind.HEADING, "附件"), (BlockKind.TABLE, "| 项目 | 金额 |"),
                (BlockKind.TABLE_ROW, "项目: 打车; 金额: 100"),
                (BlockKind.TABLE, "| 岗位 | 人数 |"),
                (BlockKind.TABLE_ROW, "岗位: 出纳; 人数: 2")])
    chunks = chunk_document(doc)
    tables = {c.chunk_id: c.text for c in chunks if c.structural_path.endswith(("table", "~2"))}
    rows = [c for c in chunks if c.kind == ChunkKind.TABLE_ROW]
    assert [tables[r.parent_chunk_id or ""] for r in rows] == ["| 项目 | 金额 |", "| 岗位 | 人数 |"]


@pytest.mark.parametrize("blocks", [
    [(BlockKind.PARAGRAPH, "测试办法")],  # a one-paragraph file whose paragraph became its title
    [(BlockKind.HEADING, "测试办法"), (BlockKind.HEADING, "第一章 总则")],  # bare headings
])
def test_a_document_of_only_its_title_and_headings_is_still_chunked(blocks) -> None:
    chunks = chunk_document(_doc(blocks))
    assert [c.text for c in _children(chunks)] == ["\n".join(t for _, t in blocks)]


def _corpus_chunks(name: str) -> list[Chunk]:
    path = Path(__file__).parents[1] / "bench/format_corpus" / name
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return chunk_document(parse_document(meta, data))


def test_a_heading_that_heads_nothing_is_text_of_the_section_above() -> None:
    """Public files (bench/format_corpus, PROVENANCE.md) whose headings were in no chunk:
    kreuzberg's unit_test_lists.docx, whose "1. List item a", "2. List item b" read as numbered
    headings, each closed by the next; Tika's testEPUB.epub, whose "Subchapter 2.1" is followed
    by "Subchapter 2.2". Their text joins the paragraph before them, in the section above."""
    lists = _children(_corpus_chunks("kreuzberg/unit_test_lists.docx"))
    (joined,) = [c for c in lists if "List item a" in c.text]
    assert (joined.text, joined.title_path) == ("Test 2:\n1. List item a\n2. List item b", [])
    epub = _children(_corpus_chunks("tika/testEPUB.epub"))
    (chapter,) = [c for c in epub if "Subchapter 2.1" in c.text]
    assert chapter.text == "This is the text for chapter Two\nSubchapter 2.1"
    assert chapter.title_path == ["Chapter 2"]


def test_headings_that_head_nothing_keep_the_other_chunks_ids() -> None:
    """Two headings in a row, and one closing the document: their text is chunked, and the
    chunks of the sections that have text keep their ids."""
    body = [(BlockKind.HEADING, "第一章 总则"),
            (BlockKind.PARAGRAPH, "第一条 为规范管理,制定本办法。"),
            (BlockKind.HEADING, "第二章 职责")]
    rest = [(BlockKind.HEADING, "第三章 附则"),
            (BlockKind.PARAGRAPH, "第二条 本办法自发布之日起施行。")]
    before = {c.chunk_id: c.text for c in chunk_document(_doc(body[:2] + rest))}
    after = _children(chunk_document(_doc([*body, *rest, (BlockKind.HEADING, "附件")])))
    assert [c.text for c in after if c.chunk_id not in before] == ["第二章 职责", "附件"]
    assert {c.chunk_id: c.text for c in after if c.chunk_id in before} == {
        i: t for i, t in before.items() if i in {c.chunk_id for c in after}}


# ---- kbflow chunks ----------------------------------------------------------------------------

def test_describe_explains_each_boundary(docs, tokens, params) -> None:
    chunks = _chunks(docs["information_security.pdf"], params, tokens)
    rows = describe(chunks, tokens.count, tokens.max_tokens)
    assert len(rows) == len(chunks) and not any(r.over_limit for r in rows)
    paths = [r.path for r in rows]
    assert paths.index("6.1") < paths.index("6.1#1") < paths.index("6.1#2")  # reading order
    piece = rows[paths.index("6.1#2")]
    assert piece.parent == "6.1" and piece.why.startswith("piece 2")
    assert piece.text.startswith("SEC-1001")  # the code label stays with its explanation
    assert rows[paths.index("6.1")].kind == "parent"


def test_cli_chunks_shows_the_published_version(tmp_path, docs, tokens, params, capsys) -> None:
    from flows.cli import main
    from ingest.manifest import ManifestStore
    from ingest.models import State

    data = tmp_path / "data"
    manifest = ManifestStore(data / "manifest.db")
    manifest.generation = manifest.create_generation(MODEL, 512, params.version,
                                                     serving=True).generation
    for name in ("travel_expense_2025.pdf", "travel_expense_2026.docx"):
        doc = docs[name]
        key = (doc.meta.doc_id, doc.meta.version_id)
        manifest.begin(doc.meta, "run", params.version, MODEL)
        for state in (State.MILVUS_READY, State.ES_READY, State.NEO4J_READY):
            manifest.advance(*key, state, "run")
        manifest.publish(*key, _chunks(doc, params, tokens), "run")
    manifest.close()

    assert main(["--data-dir", str(data), "chunks", "travel-expense", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["version_id"] == "2026" and shown["chunker_version"] == params.version
    rows = {r["path"]: r for r in shown["chunks"]}
    assert "150元" in rows["第十条"]["text"] and rows["第十条"]["parent"] == "第三章/§"
    assert all(r["tokens"] <= shown["token_limit"] for r in rows.values() if r["kind"] != "parent")

    assert main(["--data-dir", str(data), "chunks", "travel-expense", "--version", "2025",
                 "--json"]) == 0
    rows = {r["path"]: r for r in json.loads(capsys.readouterr().out)["chunks"]}
    assert "100元" in rows["第十条"]["text"]
    assert main(["--data-dir", str(data), "chunks", "travel-expense", "--version", "2025"]) == 0
    assert "第十条" in capsys.readouterr().out
    assert main(["--data-dir", str(data), "chunks", "no-such-doc"]) == 1


def test_a_chinese_clause_the_model_reads_whole_stays_one_chunk(tokens) -> None:
    """Over the budget but within the model's 512 tokens: one chunk (whole_clauses); over the
    model's limit, or with the option off, it is cut into pieces under a parent."""
    items = [f"({n})第{n}类事项的审批人为部门负责人,金额在{n}万元以下的由部门负责人审批。"
             for n in "一二三四五六七八"]
    doc = _doc([(BlockKind.PARAGRAPH, "第五条 审批权限如下:"),
                *[(BlockKind.PARAGRAPH, item) for item in items]])
    budget = ChunkParams(token_cap=120, min_tokens=20, tokenizer=MODEL)
    whole = _children(_chunks(doc, budget, tokens))
    assert [(c.structural_path, c.kind) for c in whole] == [("第五条", ChunkKind.CLAUSE)]
    assert 120 < tokens.count(whole[0].embed_text) <= 512
    cut = _chunks(doc, budget.model_copy(update={"whole_clauses": False}), tokens)
    assert len(_children(cut)) > 2 and any(c.kind == ChunkKind.PARENT for c in cut)
    longer = _doc([(BlockKind.PARAGRAPH, "第六条 审批权限如下:"),
                   *[(BlockKind.PARAGRAPH, item) for item in items * 5]])
    pieces = _children(_chunks(longer, budget, tokens))
    assert len(pieces) > 2 and all(tokens.count(c.embed_text) <= 120 for c in pieces)
