"""Scopes, authority and folder metadata through real ingests (issue 25), on the embedded
profile and on the servers profile (Milvus, Elasticsearch, Neo4j, manifest in PostgreSQL).

A group (the default tenant) with two subsidiaries, hc-precision and hc-logistics: each folder's
`_meta.yaml` gives its files their tenant and authority; a reader of a subsidiary sees the
group's documents and its own, never its sibling's, and never a document its groups do not
name. Bad input is refused with its reason before anything of it is published."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from tests_support import ingest, profile_settings, tree

from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.models import State
from ingest.scopes import TenantTreeError
from ingest.search import Searcher, SearchResponse

PARENTS = "hc-precision: default\nhc-logistics: default\n"
AS_OF = date(2026, 1, 1)


def policy(title: str, amount: int) -> str:
    return (f"# {title}\n\n生效日期：2025年1月1日\n\n## 第一章 住宿\n\n"
            f"第一条 员工出差住宿费标准为每晚{amount}元，超出部分自理。\n")


GROUP = {
    "group/_meta.yaml": "authority: policy\n",
    "group/travel.md": policy("集团差旅管理办法", 500),
    "group/board.md": policy("董事会差旅规定", 900),
    "group/board.md.meta.yaml": "acl: [board]\n",  # restricted: board members only
    "hc-precision/_meta.yaml": "tenant_id: hc-precision\nauthority: notice\n",
    "hc-precision/travel.md": policy("精密公司差旅通知", 400),
    "hc-logistics/_meta.yaml": "tenant_id: hc-logistics\nacl: [all-staff]\n",
    "hc-logistics/travel.md": policy("物流公司差旅细则", 300),
}


def search(settings: Settings, tenant: str, groups: tuple[str, ...] = ("all-staff",),
           query: str = "出差住宿费标准每晚多少元") -> SearchResponse:
    with Searcher(settings) as searcher:
        return searcher.search(query, tenant_id=tenant, groups=list(groups), as_of=AS_OF, k=10)


def seen(response: SearchResponse) -> dict[str, tuple[str, int, str | None]]:
    """Each document found: its tenant, its distance from the reader, its authority."""
    return {r.doc_id: (r.tenant_id, r.scope_depth, r.authority) for r in response.results}


@pytest.fixture(params=["embedded", "servers"])
def scoped(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Settings of the parametrized profile, with the group's tenant parents file."""
    parents = tmp_path / "parents.yaml"
    parents.write_text(PARENTS, encoding="utf-8")
    yield from profile_settings(request, tmp_path, tenant_parents=parents)


def test_a_subsidiary_reader_sees_the_group_and_its_own_never_a_sibling(
        scoped: Settings, tmp_path: Path) -> None:
    summary = ingest(scoped, tree(tmp_path / "docs", GROUP))
    assert summary.failures == [] and summary.written == 4
    assert seen(search(scoped, "hc-precision")) == {
        "hc-precision-travel": ("hc-precision", 0, "notice"),
        "group-travel": ("default", 1, "policy")}
    assert seen(search(scoped, "hc-logistics")) == {
        "hc-logistics-travel": ("hc-logistics", 0, None),
        "group-travel": ("default", 1, "policy")}
    # the group's restricted document: only for its group, whoever's reader holds it
    assert set(seen(search(scoped, "hc-precision", ("all-staff", "board")))) == {
        "hc-precision-travel", "group-travel", "group-board"}
    # a parent never sees its children's documents
    assert set(seen(search(scoped, "default"))) == {"group-travel"}
    # a tenant outside the tree sees its own documents only (none here)
    assert seen(search(scoped, "hc-unknown")) == {}


def test_folder_metadata_is_a_default_a_sidecar_wins_and_edits_rewrite(
        tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    root = tree(tmp_path / "docs", {
        "_meta.yaml": "acl: [finance]\nauthority: faq\n",
        "finance/_meta.yaml": "authority: notice\neffective_from: 2025-03-01\n",
        "finance/claims.md": policy("报销通知", 200),
        "finance/rules.md": policy("报销制度", 250),
        "finance/rules.md.meta.yaml": "authority: policy\nacl: [finance, audit]\n",
    })
    first = ingest(settings, root)
    assert first.failures == [] and first.written == 2  # no _meta.yaml is a document
    with ManifestStore(settings.manifest) as manifest:
        claims, rules = manifest.get("finance-claims", "1"), manifest.get("finance-rules", "1")
        assert claims is not None and rules is not None
        assert (claims.acl, claims.authority, claims.effective_from) == (
            ["finance"], "notice", date(2025, 3, 1))  # nearest folder, declared date wins
        assert (rules.acl, rules.authority) == (["finance", "audit"], "policy")
        assert {c.authority for c in manifest.version_chunks("finance-rules", "1")} == {"policy"}
    assert ingest(settings, root, "r2").skipped_unchanged == 2

    edited = "authority: chat  # was notice\neffective_from: 2025-03-01\n"
    (root / "finance/_meta.yaml").write_text(edited, encoding="utf-8")
    third = ingest(settings, root, "r3")
    assert third.failures == [] and third.written == 1  # rules.md's sidecar decides for it
    with ManifestStore(settings.manifest) as manifest:
        record = manifest.get("finance-claims", "1")
        assert record is not None and record.authority == "chat"
    (root / "finance/_meta.yaml").write_text("authority: chat\n", encoding="utf-8")
    assert ingest(settings, root, "r4").written == 2  # both took the folder's date
    with ManifestStore(settings.manifest) as manifest:
        record = manifest.get("finance-rules", "1")
        assert record is not None and record.effective_from == date(2025, 1, 1)  # its text


def test_folder_metadata_applies_from_the_document_root(tmp_path: Path) -> None:
    """A run given a subfolder (a webhook's changed file) still applies the folders above it
    up to the document root: where a file lies decides its tenant, not how it was sent."""
    docs = tree(tmp_path / "docs", {"hc-precision/_meta.yaml": "tenant_id: hc-precision\n",
                                    "hc-precision/plans/travel.md": policy("精密出差计划", 100)})
    settings = Settings(data_dir=tmp_path / "data", document_roots=[docs])
    plans = docs / "hc-precision/plans"
    assert ingest(settings, plans).failures == []
    with ManifestStore(settings.manifest) as manifest:
        assert [(r.doc_id, r.tenant_id) for r in manifest.documents()] == [
            ("hc-precision:travel", "hc-precision")]


FOLDER = "hc-precision/_meta.yaml"
BAD_FILES = {
    "a sidecar claiming the parent's tenant": (
        {FOLDER: "tenant_id: hc-precision\n",
         "hc-precision/x.md.meta.yaml": "tenant_id: default\n"},
        "tenant_id 'default' is not .*'s tenant 'hc-precision' nor a child of it"),
    "a sidecar claiming a sibling's tenant": (
        {FOLDER: "tenant_id: hc-precision\n",
         "hc-precision/x.md.meta.yaml": "tenant_id: hc-logistics\n"},
        "never move to its parent or a sibling"),
    "a sidecar naming a parent's doc id": (
        {FOLDER: "tenant_id: hc-precision\n",
         "hc-precision/x.md.meta.yaml": "doc_id: 'default:travel'\n"},
        "doc_id: must not contain ':'"),
    "a subfolder moving to the parent": (
        {FOLDER: "tenant_id: hc-precision\n",
         "hc-precision/sub/_meta.yaml": "tenant_id: default\n"},
        "a folder may narrow its parent folder's tenant"),
    "an authority not in the list": (
        {FOLDER: "authority: memo\n"}, "authority 'memo' is not one of the configured levels"),
    "a folder ACL that is empty": ({FOLDER: "acl: []\n"}, "acl: is empty"),
    "a folder key that is not metadata": (
        {FOLDER: "doc_id: travel\n"}, "doc_id: Extra inputs are not permitted"),
    "an empty folder file": ({FOLDER: "# nothing\n"}, "is empty: declare at least one"),
    "a folder file that is not YAML": ({FOLDER: "acl: [x\n"}, "is not valid YAML"),
    "a folder file with a YAML object": (
        {FOLDER: "acl: !!python/object:os.system [x]\n"}, "is not valid YAML"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_metadata_is_refused_before_anything_is_published(
        case: str, tmp_path: Path) -> None:
    files, reason = BAD_FILES[case]
    parents = tree(tmp_path, {"parents.yaml": PARENTS}) / "parents.yaml"
    settings = Settings(data_dir=tmp_path / "data", tenant_parents=parents)
    place = "hc-precision/sub/x.md" if "subfolder" in case else "hc-precision/x.md"
    root = tree(tmp_path / "docs", files | {place: policy("精密差旅通知", 400)})
    summary = ingest(settings, root)
    assert [f.path for f in summary.failures] == [str(root / place)], case
    assert summary.failures[0].message and summary.documents == {"FAILED": 1}
    assert re.search(reason, summary.failures[0].reason), summary.failures[0].reason
    with ManifestStore(settings.manifest) as manifest:
        assert manifest.published_keys() == []
        (record,) = manifest.documents()
        assert record.state == State.FAILED and record.reason == summary.failures[0].reason


def test_a_sidecar_may_narrow_its_folder_to_a_child_tenant(tmp_path: Path) -> None:
    parents = tree(tmp_path, {"parents.yaml": PARENTS + "hc-precision-east: hc-precision\n"})
    settings = Settings(data_dir=tmp_path / "data", tenant_parents=parents / "parents.yaml")
    root = tree(tmp_path / "docs", {
        FOLDER: "tenant_id: hc-precision\n", "hc-precision/x.md": policy("华东差旅", 350),
        "hc-precision/x.md.meta.yaml": "tenant_id: hc-precision-east\n"})
    assert ingest(settings, root).failures == []
    east = seen(search(settings, "hc-precision-east"))
    assert east == {"hc-precision-x": ("hc-precision-east", 0, None)}
    assert seen(search(settings, "hc-precision")) == {}


@pytest.mark.parametrize(("parents", "reason"), [
    ("a: b\nb: a\n", "cycle: a → b → a"),
    ("hc-precision: defualt\n", "parent 'defualt' is not declared"),
])
def test_a_bad_parents_file_stops_the_run_and_search(tmp_path: Path, parents: str,
                                                     reason: str) -> None:
    path = tree(tmp_path, {"parents.yaml": parents}) / "parents.yaml"
    settings = Settings(data_dir=tmp_path / "data", tenant_parents=path)
    root = tree(tmp_path / "docs", GROUP)
    with pytest.raises(TenantTreeError, match=reason):
        ingest(settings, root)
    with ManifestStore(settings.manifest) as manifest:
        assert manifest.documents() == [] and manifest.last_run() is None
    with pytest.raises(TenantTreeError, match=reason):
        Searcher(settings)
