"""The shipped reader (ingest/rerank/models): it loads, scores real pairs, and every damaged or
wrong file is refused with a reason instead of being run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest.embed.fetch import ONNX_MODELS, installed_files
from ingest.rerank import CARD, MODEL_DIR, Reader, ReaderUnavailable, sha256_of

QUESTION = "夫妻一方经营个体工商户所欠债务，谁偿还？"
ANSWER = ("中华人民共和国民法典", "第五十六条 个体工商户的债务，个人经营的，以个人财产承担；"
          "家庭经营的，以家庭财产承担；无法区分的，以家庭财产承担。")
ELSEWHERE = ("中华人民共和国道路交通安全法", "第十九条 驾驶机动车，应当依法取得机动车驾驶证。")


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    folder = tmp_path / "reader"
    shutil.copytree(MODEL_DIR, folder, ignore=shutil.ignore_patterns("*.md"))
    return folder


def test_shipped_reader_prefers_the_answering_article() -> None:
    reader = Reader()
    probs = reader.score(QUESTION, [ELSEWHERE, ANSWER])
    assert probs.shape == (2,) and ((probs >= 0) & (probs <= 1)).all()
    assert probs[1] > probs[0]


def test_truncated_model_is_refused(copy: Path) -> None:
    card = json.loads((copy / CARD).read_text())
    model = copy / card["model"]
    model.write_bytes(model.read_bytes()[: model.stat().st_size // 2])
    with pytest.raises(ReaderUnavailable, match="sha256"):
        Reader(copy)


def test_missing_model_is_refused(copy: Path) -> None:
    (copy / json.loads((copy / CARD).read_text())["model"]).unlink()
    with pytest.raises(ReaderUnavailable, match="missing"):
        Reader(copy)


def test_a_model_of_the_wrong_shape_is_refused(copy: Path) -> None:
    """The bi-encoder's ONNX has the reader's inputs but a [batch, tokens, 512] output."""
    embedder, _ = installed_files(ONNX_MODELS["bge-small-zh-v1.5-q"])
    card = json.loads((copy / CARD).read_text())
    shutil.copyfile(embedder, copy / card["model"])
    card["model_sha256"] = sha256_of(copy / card["model"])
    (copy / CARD).write_text(json.dumps(card))
    with pytest.raises(ReaderUnavailable, match="outputs"):
        Reader(copy)


@pytest.mark.parametrize("change", [{"model": "../reader-int8.onnx"}, {"max_len": 100000},
                                    {"budget": "many"}])
def test_a_hostile_card_is_refused(copy: Path, change: dict[str, object]) -> None:
    card = json.loads((copy / CARD).read_text()) | change
    (copy / CARD).write_text(json.dumps(card))
    with pytest.raises(ReaderUnavailable):
        Reader(copy)


def test_an_unreadable_card_is_refused(copy: Path) -> None:
    (copy / CARD).write_bytes(b"\xff\xfe{")
    with pytest.raises(ReaderUnavailable, match="unreadable"):
        Reader(copy)
