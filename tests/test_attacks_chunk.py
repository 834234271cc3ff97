"""Item 5 of issue 28, replayed: text shaped to make the chunker's work grow faster than its
input (a run-on paragraph took 75–94 s at 80,000 characters) or never end (a prefix longer than
the budget), chunked with the embedding model's own tokenizer.

The work is measured as the characters handed to the tokenizer, which does not depend on how
busy the machine is; a counter that has been handed far more than the input stops the run, so
the code from before the fix fails these tests in seconds instead of hanging.
"""

from __future__ import annotations

import time

import pytest

from ingest.chunk import ChunkParams, chunk_document, over_budget
from ingest.embed import DEFAULT_MODEL, TokenCounter
from ingest.models import Block, BlockKind, Chunk, ChunkKind, DocumentMeta, ParsedDocument

CLAUSE = "员工出差应当事先提出申请，经部门负责人批准后方可办理借款和预订交通工具，"
WORK_PER_CHARACTER = 40  # about 23 after the fix; before it, 500 at 80,000 characters


class TooMuchWork(Exception):
    pass


class Metered:
    """The model's token count, keeping a tally of the characters it was handed."""

    def __init__(self, tokens: TokenCounter, budget: int) -> None:
        self.tokens, self.budget, self.characters = tokens, budget, 0

    def __call__(self, text: str) -> int:
        self.characters += len(text)
        if self.characters > self.budget:
            raise TooMuchWork(f"{self.characters} characters counted")
        return self.tokens.count(text)


@pytest.fixture(scope="module")
def tokens() -> TokenCounter:
    return TokenCounter(DEFAULT_MODEL)


def _doc(*blocks: tuple[BlockKind, str]) -> ParsedDocument:
    meta = DocumentMeta(doc_id="t", version_id="1", title="测试办法", tenant_id="default",
                        acl=["all-staff"], source_uri="file:///t.md", source_path="t.md",
                        file_hash="0")
    return ParsedDocument(meta=meta, parser_version="test",
                          blocks=[Block(kind=k, text=t) for k, t in blocks])


def _run_on(size: int) -> str:
    return "第一条 " + (CLAUSE * (size // len(CLAUSE) + 1))[:size]


def _covers(children: list[Chunk], start: int, end: int) -> bool:
    """The children's character ranges cover [start, end) without a gap (overlaps allowed)."""
    reached = start
    for c in sorted(children, key=lambda c: c.char_start):
        if c.char_start > reached:
            return False
        reached = max(reached, c.char_end)
    return reached == end


def _chunk(doc: ParsedDocument, tokens: TokenCounter) -> tuple[list[Chunk], int, float]:
    """The children, the characters counted for them and the seconds it took."""
    size = sum(len(b.text) for b in doc.blocks)
    count = Metered(tokens, WORK_PER_CHARACTER * size)
    started = time.perf_counter()
    chunks = chunk_document(doc, ChunkParams(tokenizer=DEFAULT_MODEL), count, tokens.max_tokens)
    return [c for c in chunks if c.kind != ChunkKind.PARENT], count.characters, (
        time.perf_counter() - started)


def test_5_a_run_on_paragraph_is_cut_in_linear_time(tokens: TokenCounter) -> None:
    text = _run_on(80_000)
    children, work, seconds = _chunk(_doc((BlockKind.PARAGRAPH, text)), tokens)
    assert seconds < 20  # 2.5 s on an idle core; 75–94 s before the fix
    assert "".join(c.text for c in children) == text  # nothing lost, nothing repeated
    assert all(tokens.count(c.embed_text) <= 200 for c in children)
    _, quarter_work, quarter_seconds = _chunk(_doc((BlockKind.PARAGRAPH, _run_on(20_000))),
                                              tokens)
    assert work < 4.5 * quarter_work  # 4x the text, 4x the counting (about 12x before)
    assert seconds < 10 * max(quarter_seconds, 0.2)


SHAPES = {  # one line each, 10,000 characters (at 4x in the test); quadratic before unless noted
    "one repeated character": "-" * 10_000,
    "English without punctuation": ("travel expense claim " * 500)[:10_000],
    "CJK without spaces": ("报销审批流程" * 2_000)[:10_000],
    "tiny sentences (linear before)": "好。" * 5_000,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_5_no_shape_of_line_makes_cutting_superlinear(tokens: TokenCounter, shape: str) -> None:
    line = SHAPES[shape]
    small = _chunk(_doc((BlockKind.PARAGRAPH, "第一条 " + line)), tokens)
    large = _chunk(_doc((BlockKind.PARAGRAPH, "第一条 " + line * 4)), tokens)
    assert large[1] < 5 * small[1]
    assert all(tokens.count(c.embed_text) <= 200 for c in large[0])
    assert _covers(large[0], 0, len("第一条 " + line * 4))


def test_5_many_short_lines_and_a_huge_table_row_are_linear(tokens: TokenCounter) -> None:
    """Packing lines into pieces counts each character about 14 times (25 before), keeping a
    row whole twice."""
    lines = [(BlockKind.PARAGRAPH, f"第{i}项内容") for i in range(8_000)]
    doc = _doc((BlockKind.PARAGRAPH, "第一条 总则"), *lines)
    children, work, _ = _chunk(doc, tokens)
    assert work < 20 * sum(len(b.text) for b in doc.blocks)
    assert [line for c in children for line in c.text.split("\n")] == [
        "第一条 总则", *(text for _, text in lines)]
    assert all(tokens.count(c.embed_text) <= 200 for c in children)
    row = "事项: 合同; 金额: " + "一万元，" * 20_000
    rows, row_work, _ = _chunk(_doc((BlockKind.TABLE, "| 事项 | 金额 |"),
                                    (BlockKind.TABLE_ROW, row)), tokens)
    assert [c.text for c in rows] == [row] and row_work <= 3 * len(row)


def test_5_a_prefix_over_the_budget_still_ends(tokens: TokenCounter) -> None:
    """A heading that alone fills the budget left no room for text: the cutter never finished
    (and grew without bound). Now the text is cut as if there were no prefix, and each chunk is
    reported over the budget instead of being one character long."""
    heading = "关于" + "差旅" * 150 + "的规定"
    text = _run_on(20_000)
    doc = _doc((BlockKind.HEADING, heading), (BlockKind.PARAGRAPH, text))
    size = len(heading) + len(text)
    count = Metered(tokens, WORK_PER_CHARACTER * size)
    chunks = chunk_document(doc, ChunkParams(tokenizer=DEFAULT_MODEL), count, tokens.max_tokens)
    children = [c for c in chunks if c.kind != ChunkKind.PARENT]
    assert "".join(c.text for c in children) == text
    assert _covers(children, len(heading) + 1, size + 1)
    assert all(heading in c.prefix and tokens.count(c.text) <= 200 for c in children)
    assert len(children) <= 2 * tokens.count(text) // 200 + 1
    assert over_budget(chunks, tokens.count, 200) == len(children)
