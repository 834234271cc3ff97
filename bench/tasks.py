"""One measured step per process: `python -m bench.tasks TASK ARGS…` prints one JSON line.

A fresh process per step keeps the steps from warming each other up (imports, model weights,
page cache of the stores) and gives each step its own peak-RSS figure.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from flows.quiet import quiet


def _ingest(source: Path, data: Path) -> tuple[float, Any]:
    from flows.ingest import ingest_flow

    started = time.perf_counter()
    summary = ingest_flow(str(source), str(data))
    return time.perf_counter() - started, summary


def ingest(corpus: str, data: str) -> dict:
    """A cold full ingest into an empty data directory."""
    seconds, summary = _ingest(Path(corpus), Path(data))
    return {"seconds": seconds, "embedded": summary.embedded, "written": summary.written,
            "failures": len(summary.failures), "chunks_added": summary.chunks.added,
            "stages": summary.seconds}


class RawOnnx:
    """The yardstick: the same ONNX model and tokenizer driven directly, with none of kbflow's
    code: encode_batch, length-sorted batches padded to their longest text, session.run, CLS,
    L2 norm."""

    def __init__(self, model_name: str, batch_size: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from ingest.embed.fetch import ONNX_MODELS, installed_files

        model = ONNX_MODELS[model_name]
        onnx_path, tokenizer_path = installed_files(model)
        self.dimension, self.instruction = model.dimension, model.query_instruction
        self.batch_size = batch_size
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=model.max_tokens)
        self.session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                ids[r, : len(encodings[i].ids)] = encodings[i].ids
                mask[r, : len(encodings[i].ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            cls = self.session.run(None, feeds)[0][:, 0]
            out[rows] = cls / np.linalg.norm(cls, axis=1, keepdims=True)
        return out


def encode(data: str) -> dict:
    """Embed throughput over the chunks kbflow embedded in the cold ingest, in one process: raw
    onnxruntime (load + encode) against `Embedder.embed_chunks` with an empty cache (its encoder
    loads on first use). Run raw, kbflow, kbflow, raw, so a drifting machine load falls evenly
    on both; each side's figure is the sum of its two runs."""
    from ingest.config import Settings
    from ingest.embed import Embedder
    from ingest.manifest import ManifestStore

    settings = Settings(data_dir=Path(data))
    manifest = ManifestStore(settings.manifest)
    chunks = {}
    for record in manifest.documents():
        for chunk in manifest.version_chunks(record.doc_id, record.version_id):
            if chunk.kind != "parent":
                chunks.setdefault(chunk.content_hash, chunk)
    manifest.close()
    texts = [c.embed_text for c in chunks.values()]
    times: dict[str, list[float]] = {"raw": [0.0, 0.0], "kbflow": [0.0, 0.0]}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run, side in enumerate(("raw", "kbflow", "kbflow", "raw")):
            started = time.perf_counter()
            if side == "raw":
                raw = RawOnnx(settings.embedding_model, settings.embedding_batch_size)
                loaded = time.perf_counter()
                vectors[side] = raw.encode(texts)
            else:
                embedder = Embedder(settings.embedding_model, Path(tmp) / f"cache{run}.db",
                                    settings.embedding_batch_size)
                loaded = time.perf_counter()
                out, computed = embedder.embed_chunks(list(chunks.values()))
                embedder.close()
                assert computed == len(texts), "the vector cache was not empty"
                vectors[side] = np.array([out[c.chunk_id].values for c in chunks.values()])
            times[side][0] += loaded - started
            times[side][1] += time.perf_counter() - loaded
    cosine = (vectors["raw"] * vectors["kbflow"]).sum(axis=1)
    return {"texts": len(texts), "model": settings.embedding_model,
            "batch_size": settings.embedding_batch_size,
            "raw": {"load_seconds": times["raw"][0] / 2, "seconds": sum(times["raw"]) / 2},
            "kbflow": {"seconds": sum(times["kbflow"]) / 2},
            "min_cosine": float(cosine.min())}


def incremental(corpus: str, data: str, document: str) -> dict:
    """On an ingested corpus: a no-op re-run, one edited clause re-ingested through the folder,
    another through incremental_flow (the webhook path), then a rebuild with the same model."""
    from bench.corpus import edit_clause
    from flows.ingest import incremental_flow
    from flows.lifecycle import rebuild_flow

    out: dict[str, Any] = {}
    seconds, summary = _ingest(Path(corpus), Path(data))
    out["noop"] = {"seconds": seconds, "embedded": summary.embedded}
    edit_clause(Path(document), clause=5)
    seconds, summary = _ingest(Path(corpus), Path(data))
    out["folder"] = {"seconds": seconds, "embedded": summary.embedded,
                     "changed": summary.chunks.changed, "written": summary.written}
    edit_clause(Path(document), clause=6)
    os.environ["KBFLOW_DOCUMENT_ROOTS"] = json.dumps([corpus])  # incremental runs need a root
    started = time.perf_counter()
    summary = incremental_flow([document], [], data)
    out["webhook_path"] = {"seconds": time.perf_counter() - started,
                           "embedded": summary.embedded, "changed": summary.chunks.changed}
    started = time.perf_counter()
    report = rebuild_flow(data_dir=data)
    out["rebuild"] = {"seconds": time.perf_counter() - started,
                      "embedded": report.summary.embedded, "written": report.summary.written,
                      "activated": report.activated, "reasons": report.reasons}
    return out


def llama(corpus: str, work: str, document: str) -> dict:
    """LlamaIndex's IngestionPipeline on the same files and the same ONNX model (through RawOnnx,
    not kbflow's code): a cold run into Milvus Lite, then one edited clause re-run through the
    same pipeline (docstore de-duplication)."""
    from llama_index.core import Document
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.storage.docstore import SimpleDocumentStore
    from llama_index.vector_stores.milvus import MilvusVectorStore
    from pydantic import PrivateAttr

    from bench.corpus import edit_clause
    from ingest.config import Settings

    settings = Settings()
    folder, target = Path(work), Path(document)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)

    def documents() -> list[Document]:
        return [Document(text=p.read_text(encoding="utf-8"), id_=p.name)
                for p in sorted(Path(corpus).glob("*.md"))]

    class OnnxEmbedding(BaseEmbedding):
        """kbflow's model as a LlamaIndex embedding; counts the texts actually sent to it."""

        texts: int = 0
        _model: RawOnnx = PrivateAttr()

        def __init__(self, model: RawOnnx, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._model = model

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            self.texts += len(texts)
            return self._model.encode(texts).tolist()

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._model.encode([self._model.instruction + query])[0].tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    started = time.perf_counter()
    model = RawOnnx(settings.embedding_model, settings.embedding_batch_size)
    embedding = OnnxEmbedding(model, model_name=settings.embedding_model,
                              embed_batch_size=settings.embedding_batch_size)
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(chunk_size=settings.chunk_token_cap, chunk_overlap=20),
                         embedding],
        docstore=SimpleDocumentStore(), docstore_strategy=DocstoreStrategy.UPSERTS,
        vector_store=MilvusVectorStore(uri=str(folder / "milvus.db"), dim=model.dimension,
                                       overwrite=True))
    nodes = pipeline.run(documents=documents())
    cold = time.perf_counter() - started
    cold_texts = embedding.texts
    edit_clause(target, clause=5)
    started = time.perf_counter()
    again = pipeline.run(documents=documents())
    return {"cold_seconds": cold, "cold_nodes": len(nodes), "cold_embedded": cold_texts,
            "edit_seconds": time.perf_counter() - started, "edit_nodes": len(again),
            "edit_embedded": embedding.texts - cold_texts}


TASKS = {"ingest": ingest, "encode": encode, "incremental": incremental, "llama": llama}

if __name__ == "__main__":
    quiet()
    result = TASKS[sys.argv[1]](*sys.argv[2:])
    print(json.dumps(result, ensure_ascii=False))
