"""One measured step per process: `python -m bench.tasks TASK ARGS…` prints one JSON line.

A fresh process per step keeps the steps from warming each other up (imports, model weights,
page cache of the stores) and gives each step its own peak-RSS figure.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

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


def encode(data: str) -> dict:
    """The yardstick: load the model and encode the texts kbflow embedded, nothing else."""
    from ingest.config import Settings
    from ingest.embed import resolve_model
    from ingest.manifest import ManifestStore

    settings = Settings(data_dir=Path(data))
    manifest = ManifestStore(settings.manifest)
    texts: dict[str, str] = {}
    for record in manifest.documents():
        for chunk in manifest.version_chunks(record.doc_id, record.version_id):
            if chunk.kind != "parent":
                texts.setdefault(chunk.content_hash, chunk.embed_text)
    manifest.close()
    started = time.perf_counter()
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model(settings.embedding_model), device="cpu")
    loaded = time.perf_counter()
    model.encode(list(texts.values()), batch_size=settings.embedding_batch_size,
                 normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    done = time.perf_counter()
    return {"texts": len(texts), "load_seconds": loaded - started, "encode_seconds": done - loaded}


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
    """LlamaIndex's IngestionPipeline on the same files and model: a cold run into Milvus Lite,
    then one edited clause re-run through the same pipeline (docstore de-duplication)."""
    from llama_index.core import Document
    from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.storage.docstore import SimpleDocumentStore
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.vector_stores.milvus import MilvusVectorStore

    from bench.corpus import edit_clause
    from ingest.config import Settings
    from ingest.embed import resolve_model

    settings = Settings()
    folder, target = Path(work), Path(document)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)

    def documents() -> list[Document]:
        return [Document(text=p.read_text(encoding="utf-8"), id_=p.name)
                for p in sorted(Path(corpus).glob("*.md"))]

    class Counting(HuggingFaceEmbedding):
        """Counts the texts actually sent to the model."""

        texts: int = 0

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            self.texts += len(texts)
            return super()._get_text_embeddings(texts)

    started = time.perf_counter()
    embedding = Counting(model_name=resolve_model(settings.embedding_model), device="cpu",
                         embed_batch_size=settings.embedding_batch_size)
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(chunk_size=settings.chunk_token_cap, chunk_overlap=20),
                         embedding],
        docstore=SimpleDocumentStore(), docstore_strategy=DocstoreStrategy.UPSERTS,
        vector_store=MilvusVectorStore(uri=str(folder / "milvus.db"), dim=384, overwrite=True))
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
