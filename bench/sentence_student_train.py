"""The students of bench.sentence_student and their distillation (issue #43): built from the
int8/fp32 bge-small-zh-v1.5 teacher's own weights, trained towards its passage vectors of
single sentences (cosine loss), exported to ONNX int8 as the reader is."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ingest.config import Settings
from ingest.embed.encoders import OnnxEncoder, open_encoder
from ingest.embed.fetch import ONNX_MODELS, installed_files

if TYPE_CHECKING:
    import torch
    from tokenizers import Encoding, Tokenizer

LAYERS = {"layer1": [0], "layer2": [0, 3]}  # teacher layers each transformer student keeps
KINDS = [*LAYERS, "static"]


def teacher() -> OnnxEncoder:
    encoder = open_encoder(Settings().embedding_model)
    assert isinstance(encoder, OnnxEncoder)
    return encoder


def build(directory: Path) -> None:
    """The three students from the teacher's weights (see the module docstring)."""
    import torch

    from scripts.train_reader.weights import load_bert

    torch.set_num_threads(2)
    directory.mkdir(parents=True, exist_ok=True)
    fp32, _ = installed_files(ONNX_MODELS["bge-small-zh-v1.5"])
    for kind in LAYERS:
        export(shrink(load_bert(fp32), LAYERS[kind]), directory / kind)
    encoder = teacher()
    vocab = encoder._tokenizer.get_vocab_size()
    cls, sep = (encoder._tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]"))
    rows = []
    for start in range(0, vocab, 512):
        ids = np.array([[cls, i, sep] for i in range(start, min(vocab, start + 512))], np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                 "token_type_ids": np.zeros_like(ids)}
        rows.append(encoder._session.run(None, feeds)[0][:, 0])
    table = np.concatenate(rows)
    np.save(directory / "static.npy",
            (table / np.linalg.norm(table, axis=1, keepdims=True)).astype(np.float32))
    print(f"built {KINDS} in {directory}")


def shrink(model: object, keep: list[int]) -> object:
    """The BERT with only the encoder layers `keep` (in order)."""
    import torch

    layers = model.encoder.layer  # type: ignore[attr-defined]
    model.encoder.layer = torch.nn.ModuleList(layers[i] for i in keep)  # type: ignore[attr-defined]
    model.config.num_hidden_layers = len(keep)  # type: ignore[attr-defined]
    return model


def export(model: object, stem: Path) -> None:
    """ONNX with the teacher's inputs and output 0 (last hidden state), then int8 (dynamic)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class Hidden(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                          token_type_ids=token_type_ids).last_hidden_state
            return out

    inputs = ["input_ids", "attention_mask", "token_type_ids"]
    wrapped = Hidden(model).eval()  # type: ignore[arg-type]
    example = tuple(torch.ones(2, 16, dtype=torch.long) for _ in inputs)
    axes = {n: {0: "batch", 1: "tokens"} for n in inputs} | {"hidden": {0: "batch", 1: "tokens"}}
    fp32 = stem.with_name(stem.name + "-fp32.onnx")
    torch.onnx.export(wrapped, example, str(fp32), input_names=inputs, output_names=["hidden"],
                      dynamic_axes=axes, opset_version=17, dynamo=False)
    quantize_dynamic(str(fp32), str(stem.with_name(stem.name + "-int8.onnx")),
                     weight_type=QuantType.QInt8)


def train(directory: Path, kind: str, minutes: float, seed: int = 0) -> None:
    """Distil one student towards the teacher's vectors of the training sentences (cosine loss),
    checkpointing and logging the held-out cosine every few minutes; then `<kind>d` is saved
    beside the start (`<kind>d-int8.onnx`, or `staticd.npy`)."""
    import torch

    torch.set_num_threads(1)  # two threads on cores other work holds wait on each other
    torch.manual_seed(seed)
    bge = teacher()
    tokenizer = bge._tokenizer
    tokenizer.enable_truncation(max_length=256)
    data = {name: pieces(directory, name, tokenizer) for name in ("train", "held")}
    model = start_model(directory, kind)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                  lr=1e-3 if kind == "static" else 2e-4, weight_decay=0.0)
    batch = 256 if kind == "static" else 64
    rng = random.Random(seed)
    started, last, step = time.perf_counter(), time.perf_counter(), 0
    print(f"{kind}: held-out cosine {held_cosine(model, *data['held']):.4f} at start", flush=True)
    while time.perf_counter() - started < minutes * 60:
        data["train"] = pieces(directory, "train", tokenizer)  # and those encoded meanwhile
        print(f"{kind}: epoch over {len(data['train'][0])} sentences", flush=True)
        for rows in batches(data["train"][0], batch, rng):
            model.train()
            cos = model_cosine(model, [data["train"][0][i] for i in rows], data["train"][1][rows])
            loss = (1 - cos).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            if time.perf_counter() - last > 180 or time.perf_counter() - started > minutes * 60:
                last = time.perf_counter()
                torch.save(model.state_dict(), directory / f"{kind}d.pt")
                print(f"{kind}: step {step}, {(last - started) / 60:.1f} min, train loss "
                      f"{loss.item():.4f}, held-out cosine {held_cosine(model, *data['held']):.4f},"
                      f" load {load()}", flush=True)
                if last - started > minutes * 60:
                    break
    save_student(model, directory, kind)


def pieces(directory: Path, name: str, tokenizer: Tokenizer
           ) -> tuple[list[Encoding], torch.Tensor]:
    """The tokenised sentences and teacher vectors of `--texts`' pieces `name-*`."""
    import torch

    files = sorted(directory.glob(f"{name}-*.npy"))
    said = [s for f in files for s in json.loads(f.with_suffix(".json").read_text())]
    return (tokenizer.encode_batch(said),
            torch.from_numpy(np.concatenate([np.load(f) for f in files])))


def start_model(directory: Path, kind: str) -> torch.nn.Module:
    import torch

    if kind == "static":
        table = torch.from_numpy(np.load(directory / "static.npy"))
        return torch.nn.EmbeddingBag.from_pretrained(table, freeze=False, mode="sum")
    from scripts.train_reader.weights import load_bert

    fp32, _ = installed_files(ONNX_MODELS["bge-small-zh-v1.5"])
    model: torch.nn.Module = shrink(load_bert(fp32), LAYERS[kind])  # type: ignore[assignment]
    # the word table stays the teacher's: its AdamW update was most of a step's time
    model.embeddings.word_embeddings.weight.requires_grad_(False)  # type: ignore[union-attr]
    return model


def batches(encodings: Sequence[Encoding], size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of rows of similar length (little padding)."""
    order = list(range(len(encodings)))
    rng.shuffle(order)
    out = []
    for start in range(0, len(order), size * 50):
        pool = sorted(order[start:start + size * 50], key=lambda i: len(encodings[i].ids))
        out += [pool[i:i + size] for i in range(0, len(pool), size)]
    rng.shuffle(out)
    return out


def model_cosine(model: torch.nn.Module, encodings: Sequence[Encoding],
                 targets: torch.Tensor) -> torch.Tensor:
    import torch

    if isinstance(model, torch.nn.EmbeddingBag):
        ids = torch.tensor([t for e in encodings for t in e.ids])
        offsets = torch.tensor(np.r_[0, np.cumsum([len(e.ids) for e in encodings])[:-1]])
        vectors = model(ids, offsets)
    else:
        width = max(len(e.ids) for e in encodings)
        ids = torch.zeros((len(encodings), width), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for r, e in enumerate(encodings):
            ids[r, : len(e.ids)] = torch.tensor(e.ids)
            mask[r, : len(e.ids)] = 1
        vectors = model(input_ids=ids, attention_mask=mask,
                        token_type_ids=torch.zeros_like(ids)).last_hidden_state[:, 0]
    cos: torch.Tensor = torch.nn.functional.cosine_similarity(vectors, targets, dim=1)
    return cos


def held_cosine(model: torch.nn.Module, encodings: Sequence[Encoding],
                targets: torch.Tensor) -> float:
    import torch

    model.eval()
    with torch.no_grad():
        cos = [model_cosine(model, [encodings[i] for i in rows], targets[rows])
               for rows in batches(encodings, 64, random.Random(0))]
    return float(torch.cat(cos).mean())


def save_student(model: torch.nn.Module, directory: Path, kind: str) -> None:
    import torch

    if isinstance(model, torch.nn.EmbeddingBag):
        np.save(directory / f"{kind}d.npy", model.weight.detach().numpy().astype(np.float32))
    else:
        export(model, directory / f"{kind}d")
    print(f"saved {kind}d", flush=True)


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]
