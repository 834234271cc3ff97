"""A LangChain retriever over kbflow's search API (`pip install 'kbflow[langchain]'`).

    from kbflow_integrations.langchain import KbflowRetriever
    retriever = KbflowRetriever(base_url="http://127.0.0.1:8787", api_key="…", k=5)
    docs = retriever.invoke("出差住宿标准是多少？")

Each Document's page_content is the chunk's text and its metadata the citation (doc id,
version, clause, pages, source, effective dates), the score and the search's verdict. The key
decides tenant and groups; `groups` may only narrow them. A no_answer verdict returns no
documents unless abstain=False.
"""

from __future__ import annotations

from datetime import date

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from kbflow_integrations.client import passages, search


class KbflowRetriever(BaseRetriever):
    base_url: str
    api_key: str = Field(repr=False)
    k: int = Field(5, ge=1, le=100)
    as_of: date | None = None
    groups: list[str] | None = None
    abstain: bool = True
    timeout: float = 60.0

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        response = search(self.base_url, self.api_key, query, k=self.k, as_of=self.as_of,
                          groups=self.groups, timeout=self.timeout)
        return [Document(page_content=text, metadata={**meta, "score": score},
                         id=str(meta["chunk_id"]))
                for text, score, meta in passages(response, self.abstain)]
