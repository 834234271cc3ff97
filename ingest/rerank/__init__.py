"""The reader: a cross-encoder reading the question and a passage together (issue #45).

`Reader.score(question, passages)` gives each passage's probability of answering the question,
from an int8 ONNX model run with onnxruntime (no torch at search time). The model folder holds
`reader.json` (file names, their sha256, the input length and window budget it was trained
with), the ONNX file and its tokenizer. Every file is an outside input: its hash, the ONNX
inputs and output shape are checked when it is opened, and anything wrong raises
`ReaderUnavailable` with the reason, for the caller to fall back to the fused order. The
training recipe is `python -m scripts.train_reader` (extra `.[train]`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ingest.rerank.window import reader_text

MODEL_DIR = Path(__file__).resolve().parent / "models"
CARD = "reader.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class ReaderUnavailable(RuntimeError):
    """The reader's files are missing or damaged: search keeps the fused order."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def open_tokenizer(path: Path, max_len: int) -> Any:
    """The pair tokenizer: [CLS] question [SEP] passage [SEP], cut to `max_len`, padded."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_len, strategy="longest_first")
    tokenizer.enable_padding()
    return tokenizer


def encode_pairs(tokenizer: Any, question: str, passages: Sequence[str]
                 ) -> dict[str, np.ndarray]:
    encoded = tokenizer.encode_batch([(question, p) for p in passages])
    return {"input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64)}


def _card(folder: Path) -> dict[str, Any]:
    try:
        card = json.loads((folder / CARD).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ReaderUnavailable(f"reader card {folder / CARD} unreadable: {error}") from error
    wanted = {"model": str, "model_sha256": str, "tokenizer": str, "tokenizer_sha256": str,
              "max_len": int, "budget": int}
    if not isinstance(card, dict) or any(not isinstance(card.get(k), t)
                                         for k, t in wanted.items()):
        raise ReaderUnavailable(f"reader card {folder / CARD} lacks {sorted(wanted)}")
    if not 16 <= card["max_len"] <= 512 or card["budget"] < 16:
        raise ReaderUnavailable(f"reader card {folder / CARD}: max_len or budget out of range")
    for key in ("model", "tokenizer"):
        if Path(card[key]).name != card[key]:
            raise ReaderUnavailable(f"reader card names a file outside its folder: {card[key]}")
    return card


class Reader:
    """One onnxruntime session over the checked model; score() is safe to call concurrently."""

    def __init__(self, folder: Path = MODEL_DIR, threads: int = 2) -> None:
        import onnxruntime

        card = _card(folder)
        for key in ("model", "tokenizer"):
            path = folder / card[key]
            if not path.is_file():
                raise ReaderUnavailable(f"reader file missing: {path}")
            if sha256_of(path) != card[f"{key}_sha256"]:
                raise ReaderUnavailable(f"reader file {path} does not match its sha256 in {CARD}"
                                        " (damaged or replaced)")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self._session = onnxruntime.InferenceSession(
                str(folder / card["model"]), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise ReaderUnavailable(f"reader model will not load: {error}") from error
        names = tuple(i.name for i in self._session.get_inputs())
        outputs = self._session.get_outputs()
        if sorted(names) != sorted(INPUTS) or len(outputs) != 1 or len(outputs[0].shape) != 1:
            raise ReaderUnavailable(f"reader model has inputs {names} and outputs "
                                    f"{[o.shape for o in outputs]}: want {INPUTS} → [batch]")
        self.card = card
        self.budget: int = card["budget"]
        self._tokenizer = open_tokenizer(folder / card["tokenizer"], card["max_len"])

    def logits(self, question: str, passages: Sequence[str], batch: int = 16) -> np.ndarray:
        """Raw scores of passages already cut to their windows (see `texts`)."""
        out = []
        for start in range(0, len(passages), batch):
            inputs = encode_pairs(self._tokenizer, question, passages[start:start + batch])
            out.append(np.asarray(self._session.run(None, inputs)[0], dtype=np.float32))
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

    def texts(self, question: str, passages: Sequence[tuple[str, str]]) -> list[str]:
        """(prefix, text) passages as the reader reads them: prefix and best window."""
        return [reader_text(prefix, question, text, self.budget) for prefix, text in passages]

    def score(self, question: str, passages: Sequence[tuple[str, str]], batch: int = 16
              ) -> np.ndarray:
        """Each (prefix, text) passage's probability of answering the question."""
        logits = self.logits(question, self.texts(question, passages), batch)
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), dtype=np.float32)
