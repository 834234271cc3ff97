"""Train kbflow's reader (issue #45): `python -m scripts.train_reader` (needs `pip install -e
'.[train]'`; the fp32 bge-small-zh-v1.5 comes from Maven Central, see ingest/embed/fetch.py).

    .venv/bin/python -m scripts.train_reader [--out DIR] [--seed 45] [--steps 900]
        [--minutes 45] [--stop-at N] [--limit N] [--statements 1500] [--max-len 128] [--export-only]

Deterministic with the seed (data, shuffles, initial head, dropout; torch on 2 CPU threads).
Writes to --out: groups.jsonl (the training pairs), heldout.json (the STARD ids never trained
on), train.log (one JSON line per logged step), checkpoint.pt (every --checkpoint steps and at
the end; a run finding them in --out resumes from them; training stops at --steps or after
--minutes), then the int8 model, its tokenizer and reader.json (ingest/rerank reads that folder).
Copy those three files to ingest/rerank/models/ to ship them.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from bench.realworld import SHARED
from ingest.embed.fetch import ONNX_MODELS, fetch
from ingest.rerank import encode_pairs, open_tokenizer
from ingest.rerank.window import reader_text
from scripts.train_reader.data import Group, Passage, build
from scripts.train_reader.export import export
from scripts.train_reader.model import PairModel, group_loss
from scripts.train_reader.weights import cls_cosine, load_bert

BASE = ONNX_MODELS["bge-small-zh-v1.5"]


def save_groups(groups: list[Group], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for g in groups:
            f.write(json.dumps(asdict(g), ensure_ascii=False) + "\n")


def load_groups(path: Path) -> list[Group]:
    groups = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        groups.append(Group(row["source"], row["query"],
                            tuple(Passage(**p) for p in row["passages"]), tuple(row["weights"])))
    return groups


def batch_inputs(tokenizer: object, groups: list[Group], budget: int
                 ) -> dict[str, torch.Tensor]:
    parts = [encode_pairs(tokenizer, g.query,
                          [reader_text(p.prefix, g.query, p.text, budget) for p in g.passages])
             for g in groups]
    width = max(p["input_ids"].shape[1] for p in parts)
    return {k: torch.from_numpy(np.concatenate(
        [np.pad(p[k], ((0, 0), (0, width - p[k].shape[1]))) for p in parts]))
        for k in parts[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/reader/run"))
    parser.add_argument("--laws", type=Path, default=SHARED / "laws")
    parser.add_argument("--stard", type=Path, default=SHARED / "stard_public.jsonl")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--steps", type=int, default=900)
    parser.add_argument("--stop-at", type=int, help="stop at this step, the schedule still "
                        "planned for --steps (how a run stopped by --minutes is reproduced)")
    parser.add_argument("--minutes", type=float, default=45.0)
    parser.add_argument("--limit", type=int, help="only the first N training questions (tests)")
    parser.add_argument("--statements", type=int, default=1500)
    parser.add_argument("--group", type=int, default=4, help="passages per query (1 positive)")
    parser.add_argument("--groups-per-step", type=int, default=4)
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--budget", type=int, default=110, help="characters of passage read")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--checkpoint", type=int, default=50)
    parser.add_argument("--export-only", action="store_true")
    args = parser.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    args.out.mkdir(parents=True, exist_ok=True)
    folder = fetch(BASE)
    onnx_path, tokenizer_path = folder / BASE.onnx_file, folder / BASE.tokenizer_file
    tokenizer = open_tokenizer(tokenizer_path, args.max_len)
    log_path, checkpoint = args.out / "train.log", args.out / "checkpoint.pt"

    groups_path = args.out / "groups.jsonl"
    if groups_path.exists():
        groups = load_groups(groups_path)
        heldout = json.loads((args.out / "heldout.json").read_text())["ids"]
    else:
        groups, heldout = build(args.laws, args.stard, args.seed, args.group, args.statements,
                                args.limit)
        save_groups(groups, groups_path)
        (args.out / "heldout.json").write_text(json.dumps({"seed": args.seed, "ids": heldout}))
    bert = load_bert(onnx_path)
    probe = encode_pairs(tokenizer, groups[0].query, [p.text for p in groups[0].passages])
    cosine = cls_cosine(bert.eval(), onnx_path, probe)
    if cosine < 0.999:
        raise SystemExit(f"weights mapped wrongly: CLS cosine vs onnxruntime {cosine:.4f}")
    model = PairModel(bert)
    step = 0
    if checkpoint.exists():
        saved = torch.load(checkpoint, weights_only=True)
        model.load_state_dict(saved["model"])
        step = saved["step"]
    if not args.export_only:
        step = train(model, groups, tokenizer, args, step, log_path, checkpoint)
    check = [(g.query, reader_text(p.prefix, g.query, p.text, args.budget))
             for g in groups[-8:] for p in g.passages]
    card = export(model, tokenizer_path, args.out, {
        "base": f"bge-small-zh-v1.5 fp32 ({BASE.coordinates})", "seed": args.seed,
        "steps": step, "schedule_steps": args.steps, "groups": len(groups), "group": args.group,
        "groups_per_step": args.groups_per_step, "max_len": args.max_len,
        "budget": args.budget, "lr": args.lr, "cls_cosine_vs_onnx": round(cosine, 6),
        "heldout_stard_ids": len(heldout)}, check)
    print(json.dumps(card, ensure_ascii=False, indent=1))


def train(model: PairModel, groups: list[Group], tokenizer: object,
          args: argparse.Namespace, step: int, log_path: Path, checkpoint: Path) -> int:
    """AdamW with linear warm-up and decay; word embeddings frozen (half the weights, and
    updating them costs more than it gains on a CPU budget)."""
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    warmup = max(1, args.steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: min(
        (s + 1) / warmup, max(0.05, (args.steps - s) / max(1, args.steps - warmup))))
    for _ in range(step):
        schedule.step()
    started, per = time.perf_counter(), args.groups_per_step
    losses: list[float] = []
    model.train()
    last = min(args.steps, args.stop_at or args.steps)
    while step < last and time.perf_counter() - started < args.minutes * 60:
        start = (step * per) % len(groups)
        chunk = (groups + groups)[start:start + per]
        inputs = batch_inputs(tokenizer, chunk, args.budget)
        logits = model(**inputs).view(per, args.group)
        weights = torch.tensor([g.weights for g in chunk], dtype=torch.float32)
        loss = group_loss(logits, weights)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimiser.step()
        schedule.step()
        step += 1
        losses.append(float(loss.detach()))
        if step % 10 == 0 or step == args.steps:
            with log_path.open("a") as f:
                f.write(json.dumps({"step": step, "loss": round(float(np.mean(losses)), 4),
                                    "seconds": round(time.perf_counter() - started, 1),
                                    "lr": schedule.get_last_lr()[0]}) + "\n")
            losses = []
        if step % args.checkpoint == 0:
            torch.save({"model": model.state_dict(), "step": step}, checkpoint)
    torch.save({"model": model.state_dict(), "step": step}, checkpoint)
    model.eval()
    return step


if __name__ == "__main__":
    main()
