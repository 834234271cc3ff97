"""The LangChain and LlamaIndex retrievers (kbflow_integrations) against a running
`kbflow serve`: their own Document / NodeWithScore types, with kbflow's citations."""

from __future__ import annotations

from datetime import date

import pytest
from integrations_support import AS_OF, KEY_GROUP, KEY_LOGISTICS, KEY_PRECISION, LODGING, Served
from llama_index.core.schema import MetadataMode

from kbflow_integrations.client import KbflowError
from kbflow_integrations.langchain import KbflowRetriever as LangChainRetriever
from kbflow_integrations.llamaindex import KbflowRetriever as LlamaIndexRetriever

DAY = date.fromisoformat(AS_OF)


def test_langchain_documents_carry_citations(evidence_served: Served) -> None:
    retriever = LangChainRetriever(base_url=evidence_served.url, api_key=KEY_PRECISION, k=10,
                                   as_of=DAY)
    docs = retriever.invoke(LODGING)
    assert docs and "450元" in docs[0].page_content
    meta = docs[0].metadata
    assert meta["tenant_id"] == "hc-precision" and meta["verdict"] == "conflict"
    assert meta["conflicts_with"] and meta["version_id"] and meta["source_uri"]
    assert docs[0].id == meta["chunk_id"] and 0 <= meta["score"] <= 1
    assert not any("520元" in d.page_content for d in docs)  # the sibling's
    assert KEY_PRECISION not in repr(retriever)


def test_llamaindex_nodes_carry_citations(evidence_served: Served) -> None:
    nodes = LlamaIndexRetriever(evidence_served.url, KEY_LOGISTICS, k=10,
                                as_of=DAY).retrieve(LODGING)
    assert nodes and all(0 <= n.score <= 1 for n in nodes)
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)
    assert {n.node.metadata["tenant_id"] for n in nodes} <= {"hc-logistics", "default"}
    assert not any("450元" in n.node.get_content() for n in nodes)  # precision's
    top = nodes[0].node
    assert top.node_id == top.metadata["chunk_id"]
    shown = top.get_content(metadata_mode=MetadataMode.LLM)
    assert top.metadata["version_id"] in shown and "conflicts_with" not in shown


def test_no_answer_bad_key_and_wider_groups_are_clear(evidence_served: Served) -> None:
    nothing = LangChainRetriever(base_url=evidence_served.url, api_key=KEY_GROUP)
    assert nothing.invoke("火星基地的氧气配额是多少") == []
    shown = LangChainRetriever(base_url=evidence_served.url, api_key=KEY_GROUP, abstain=False)
    assert {d.metadata["verdict"] for d in shown.invoke("火星基地的氧气配额是多少")} <= {
        "no_answer"}
    with pytest.raises(KbflowError, match="401"):
        LlamaIndexRetriever(evidence_served.url, "not-a-key-0123456789").retrieve(LODGING)
    with pytest.raises(KbflowError, match="403"):
        LangChainRetriever(base_url=evidence_served.url, api_key=KEY_GROUP,
                           groups=["board"]).invoke(LODGING)
    with pytest.raises(ValueError, match="k"):
        LlamaIndexRetriever(evidence_served.url, KEY_GROUP, k=1000)
