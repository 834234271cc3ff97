"""torch → ONNX fp32 → int8 (onnxruntime's dynamic quantisation), and the check that the int8
model scores like the fp32 one (Pearson correlation of logits on held-back pairs)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

from ingest.rerank import CARD, INPUTS, encode_pairs, open_tokenizer, sha256_of
from scripts.train_reader.model import PairModel

MODEL_FILE, TOKENIZER_FILE = "reader-int8.onnx", "tokenizer.json"


def to_onnx(model: PairModel, path: Path, max_len: int) -> None:
    model.eval()
    example = tuple(torch.ones(2, max_len, dtype=torch.long) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"logits": {0: "batch"}}
    torch.onnx.export(model, example, str(path), input_names=list(INPUTS),
                      output_names=["logits"], dynamic_axes=axes, opset_version=17,
                      dynamo=False)


def logits(path: Path, tokenizer_path: Path, max_len: int,
           pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    tokenizer = open_tokenizer(tokenizer_path, max_len)
    return np.concatenate([session.run(None, encode_pairs(tokenizer, q, [p]))[0]
                           for q, p in pairs])


def export(model: PairModel, tokenizer: Path, target: Path, card: dict[str, object],
           check_pairs: Sequence[tuple[str, str]]) -> dict[str, object]:
    """Writes target/reader-int8.onnx, tokenizer.json and reader.json; returns the card."""
    target.mkdir(parents=True, exist_ok=True)
    max_len = int(str(card["max_len"]))
    fp32 = target / "reader-fp32.onnx"
    to_onnx(model, fp32, max_len)
    int8 = target / MODEL_FILE
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    shutil.copyfile(tokenizer, target / TOKENIZER_FILE)
    a = logits(fp32, tokenizer, max_len, check_pairs)
    b = logits(int8, tokenizer, max_len, check_pairs)
    fp32.unlink()
    card = card | {
        "model": MODEL_FILE, "model_sha256": sha256_of(int8),
        "tokenizer": TOKENIZER_FILE, "tokenizer_sha256": sha256_of(target / TOKENIZER_FILE),
        "model_bytes": int8.stat().st_size,
        "int8_vs_fp32_logit_correlation": round(float(np.corrcoef(a, b)[0, 1]), 4),
        "int8_vs_fp32_max_abs_diff": round(float(np.abs(a - b).max()), 4),
    }
    (target / CARD).write_text(json.dumps(card, ensure_ascii=False, indent=1) + "\n")
    return card
