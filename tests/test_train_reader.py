"""The reader's training recipe end to end on a tiny subset: real laws, real STARD questions,
the real fp32 bge weights, a few steps, then the int8 export loaded and checked by the runtime
reader. A few minutes on a loaded 2-core machine."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ingest.rerank import Reader

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "realworld"

pytest.importorskip("onnx")
pytestmark = pytest.mark.skipif(not (SHARED / "laws").is_dir(), reason="no realworld data")


def test_recipe_end_to_end_gives_a_loadable_int8_reader(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in
            (SHARED / "stard_public.jsonl").read_text(encoding="utf-8").splitlines()[:40]]
    laws = tmp_path / "laws"
    # the gold files of a few questions, and two laws on other topics to mine negatives from
    files = {g["file"] for r in rows[:6] for g in r["gold"]}
    files |= {"刑法/刑法.md", "社会法/劳动法(2018-12-29).md"}
    for name in files:
        if (SHARED / "laws" / name).is_file():
            (laws / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(SHARED / "laws" / name, laws / name)
    stard = tmp_path / "stard.jsonl"
    stard.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "scripts.train_reader", "--out", str(out), "--laws", str(laws),
         "--stard", str(stard), "--limit", "6", "--statements", "4", "--steps", "2",
         "--groups-per-step", "2", "--max-len", "40", "--budget", "32"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    log = [json.loads(line) for line in (out / "train.log").read_text().splitlines()]
    assert log[-1]["step"] == 2 and log[-1]["loss"] > 0
    heldout = set(json.loads((out / "heldout.json").read_text())["ids"])
    trained = {json.loads(line)["query"] for line in (out / "groups.jsonl").read_text()
               .splitlines()}
    assert not {r["question"] for r in rows if r["id"] in heldout} & trained
    card = json.loads((out / "reader.json").read_text())
    assert card["cls_cosine_vs_onnx"] > 0.999 and card["int8_vs_fp32_logit_correlation"] > 0.9
    assert card["model_bytes"] < 30_000_000
    reader = Reader(out)
    probs = reader.score(rows[0]["question"], [("民法典", "第五十六条 个体工商户的债务……"),
                                               ("", "无关的文字")])
    assert probs.shape == (2,) and ((probs > 0) & (probs < 1)).all()
