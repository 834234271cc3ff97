"""A LlamaIndex retriever over kbflow's search API (`pip install 'kbflow[llamaindex]'`).

    from kbflow_integrations.llamaindex import KbflowRetriever
    retriever = KbflowRetriever(base_url="http://127.0.0.1:8787", api_key="…", k=5)
    nodes = retriever.retrieve("出差住宿标准是多少？")

Each NodeWithScore holds a TextNode (id = the chunk id, text = the chunk's text, metadata = the
citation and the verdict) and the score in 0..1 (kbflow_integrations.evidence.scored). The key
decides tenant and groups; `groups` may only narrow them. A no_answer verdict returns no nodes
unless abstain=False.
"""

from __future__ import annotations

from datetime import date

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from kbflow_integrations.client import passages, search

# What an LLM reads of a node's metadata beside its text: the citation, not the internals.
CITED = ("title", "doc_id", "version_id", "clause_no", "page_start", "page_end", "verdict")


class KbflowRetriever(BaseRetriever):
    def __init__(self, base_url: str, api_key: str, *, k: int = 5, as_of: date | None = None,
                 groups: list[str] | None = None, abstain: bool = True,
                 timeout: float = 60.0) -> None:
        if not 1 <= k <= 100:
            raise ValueError("k must be 1 to 100")
        super().__init__()
        self._base_url, self._api_key, self._k = base_url, api_key, k
        self._as_of, self._groups, self._abstain, self._timeout = as_of, groups, abstain, timeout

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        response = search(self._base_url, self._api_key, query_bundle.query_str, k=self._k,
                          as_of=self._as_of, groups=self._groups, timeout=self._timeout)
        return [NodeWithScore(node=TextNode(
                    id_=str(meta["chunk_id"]), text=text, metadata=meta,
                    excluded_llm_metadata_keys=[key for key in meta if key not in CITED],
                    excluded_embed_metadata_keys=list(meta)), score=score)
                for text, score, meta in passages(response, self._abstain)]
