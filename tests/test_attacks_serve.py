"""Issue 39, the serving findings: the API's tenant tree follows its file (4), one key cannot
starve the others (7), graph lookups see only what the reader may see (8), a hostile query
adapter file cannot break search (10). Real servers on 127.0.0.1 (uvicorn in a thread), the
real pipeline and the embedded stores, no mocks."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import httpx
import pytest
from test_attacks_api import api_server
from test_attacks_places import run
from test_serving import KEY_B, bearer, write_keys
from tests_support import SAMPLE_DOCS

from ingest.config import Settings
from ingest.search import search_index

QUERY = "婚假有几天"


@pytest.fixture
def site(tmp_path: Path) -> Settings:
    """The group's leave policy, a subsidiary key (tenant-b) and the parents file naming
    tenant-b a child of the group."""
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "leave_policy.md", docs)
    parents = tmp_path / "parents.yaml"
    parents.write_text("tenant-b: default\n", encoding="utf-8")
    settings = Settings(data_dir=tmp_path / "data", tenant_parents=parents,
                        api_keys_file=write_keys(tmp_path / "keys.json"))
    assert run(settings, docs).written == 1
    return settings


def found_docs(reply: httpx.Response) -> set[str]:
    return {r["doc_id"] for r in reply.json()["results"]}


def cli_docs(settings: Settings) -> set[str]:
    response = search_index(settings, QUERY, tenant_id="tenant-b", groups=["all-staff", "hr"],
                            as_of=date.today(), k=5)
    return {r.doc_id for r in response.results}


# ---- 4. the API re-reads the tenant parents file on change -----------------------------------

def test_4_the_api_follows_the_parents_file_and_refuses_while_it_is_broken(
        site: Settings) -> None:
    parents = site.tenant_parents
    assert parents is not None
    with api_server(site) as (url, _):
        def ask() -> httpx.Response:
            return httpx.post(f"{url}/search", json={"query": QUERY, "k": 5},
                              headers=bearer(KEY_B), timeout=60)

        before = ask()
        assert before.status_code == 200 and found_docs(before) == {"leave_policy"}
        parents.write_text("tenant-b: tenant-c\ntenant-c: tenant-b\n", encoding="utf-8")
        cyclic = ask()
        parents.write_text("tenant-b: [default\n", encoding="utf-8")
        broken = ask()
        parents.write_text(json.dumps({"tenant-c": "default"}), encoding="utf-8")
        cut_off = ask()
    assert (cyclic.status_code, broken.status_code) == (503, 503)
    assert "leave_policy" not in cyclic.text + broken.text
    assert cut_off.status_code == 200 and found_docs(cut_off) == set() == cli_docs(site)


# ---- 8. graph lookups see only what the reader may see ---------------------------------------

BOARD = ("# 董事会秘密议事规则\n\n第五条 董事会依据《公司章程》召开秘密会议，审议高管薪酬。\n\n"
         "第九条 秘密会议的召集程序依照本规则第五条执行。\n")
HANDBOOK = ("# 员工手册\n\n第一条 员工应遵守公司各项规章制度。\n\n"
            "第二条 违反本手册第一条的，依照《奖惩办法》处理。\n")


def test_8_a_reader_links_only_the_names_of_relations_it_may_see(tmp_path: Path) -> None:
    from ingest.search import Searcher
    from ingest.search.graph_channel import entity_relations

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (docs / "board.md").write_text(BOARD, encoding="utf-8")
    (docs / "board.md.meta.yaml").write_text("acl: [board]\n", encoding="utf-8")
    settings = Settings(data_dir=tmp_path / "data")
    assert run(settings, docs).written == 2
    today = date.today()

    def lookup(groups: list[str]) -> str:
        found = entity_relations(settings, "第五条", tenant_id="default", groups=groups,
                                 as_of=today)
        return found.model_dump_json()

    assert "董事会" in lookup(["board"])  # the relation exists and its reader finds it
    assert "董事会" not in lookup(["all-staff"]) and "公司章程" not in lookup(["all-staff"])
    question = "哪些制度引用了公司章程"
    with Searcher(settings) as searcher:
        routes = {group: searcher.search(question, tenant_id="default", groups=[group],
                                         as_of=today, k=5).graph_route
                  for group in ("board", "all-staff")}
    assert routes["board"] is not None and routes["all-staff"] is None


# ---- 7. fair share per key ---------------------------------------------------------------------

def test_7_one_key_flooding_with_long_queries_never_refuses_another(site: Settings) -> None:
    """A key keeps six connections busy with 1,000-character random Chinese queries (before:
    every other key's searches were refused, the queue and its expected work being full of
    the flood's). The other key's questions are all answered, each waiting for at most about
    one of the flood's searches, and the flood is refused beyond its own share."""
    import random
    import threading
    import time

    from test_serving import KEY_A

    rng, stop = random.Random(39), threading.Event()
    flooded: list[tuple[int, float]] = []

    def ask(url: str, key: str, query: str) -> tuple[int, float]:
        started = time.perf_counter()
        reply = httpx.post(f"{url}/search", json={"query": query, "k": 10},
                           headers=bearer(key), timeout=120)
        return reply.status_code, time.perf_counter() - started

    def flood(url: str) -> None:
        while not stop.is_set():
            query = "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(1000))
            flooded.append(ask(url, KEY_B, query))

    with api_server(site) as (url, _):
        floods = [threading.Thread(target=flood, args=(url,)) for _ in range(6)]
        for thread in floods:
            thread.start()
        time.sleep(3)  # the flood fills its share of the queue
        others = []
        for _ in range(10):
            others.append(ask(url, KEY_A, QUERY))
            time.sleep(0.2)
        stop.set()
        for thread in floods:
            thread.join()
    assert [status for status, _ in others] == [200] * 10
    flood_seconds = sorted(t for s, t in flooded if s == 200)
    assert flood_seconds and any(s == 503 for s, _ in flooded)
    assert max(t for _, t in others) < 2 * max(flood_seconds) + 1


def test_7_a_tenant_flooding_with_many_keys_never_starves_another_tenant(
        site: Settings, tmp_path: Path) -> None:
    """Eight keys of one tenant keep sixteen connections busy with 1,000-character queries
    (each search held to at least 0.25 s, as on a large corpus). Before, each key had its own
    turn and share: the flood filled the whole queue (the other tenant's questions got 503),
    and a question let in waited behind one search of each flooding key. Tenants now take
    turns and a tenant holds at most its share of the queue: every question of the other
    tenant is answered, and at most two flood searches start between its sending and its own
    search: the one running when it joined the queue and the one turn ahead of it in the round
    (counted from the order the server ran them, whatever the machine's speed)."""
    import random
    import threading
    import time

    from test_attacks_api import slowed
    from test_serving import KEY_A

    flood_keys = [f"tenant-b-flood-key-{n:02d}-0123456789" for n in range(8)]
    keys = json.loads(site.api_keys_file.read_text(encoding="utf-8"))  # type: ignore[union-attr]
    keys |= {key: {"tenant": "tenant-b", "groups": ["all-staff"]} for key in flood_keys}
    site.api_keys_file.write_text(json.dumps(keys), encoding="utf-8")  # type: ignore[union-attr]
    stop = threading.Event()
    started: list[tuple[str, float]] = []  # tenant and start of each search, in order run
    flooded: list[int] = []

    def flood(url: str, key: str, seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            query = "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(1000))
            flooded.append(httpx.post(f"{url}/search", json={"query": query, "k": 10},
                                      headers=bearer(key), timeout=300).status_code)

    with api_server(site) as (url, app):
        slowed(app, 0.25)
        service, timed = app.state.search, app.state.search._search

        def recorded(query: str, tenant: str, *args: object) -> str:
            started.append((tenant, time.perf_counter()))
            return timed(query, tenant, *args)

        service._search = recorded
        floods = [threading.Thread(target=flood, args=(url, key, n * 2 + half))
                  for n, key in enumerate(flood_keys) for half in (0, 1)]
        for thread in floods:
            thread.start()
        time.sleep(4)  # the flood fills the queue
        asked = []  # when each question was sent, and its status
        for _ in range(4):
            sent = time.perf_counter()
            asked.append((sent, httpx.post(f"{url}/search", json={"query": QUERY, "k": 10},
                                           headers=bearer(KEY_A), timeout=300).status_code))
        stop.set()
        for thread in floods:
            thread.join()
    assert [status for _, status in asked] == [200] * 4, asked
    assert 503 in flooded and 200 in flooded
    ours = [at for tenant, at in started if tenant == "default"]
    ahead = [sum(sent < at < mine for tenant, at in started if tenant == "tenant-b")
             for (sent, _), mine in zip(asked, ours, strict=True)]
    assert max(ahead) <= 2, ahead  # behind eight keys' turns it would be about eight


# ---- 10. a hostile query adapter file ------------------------------------------------------------

def npy(array: object = None, *, lying_shape: tuple[int, ...] | None = None) -> bytes:
    """An .npy member: an array as numpy writes it, or a header that declares `lying_shape`
    of float32 with a few bytes behind it."""
    import io

    import numpy as np

    out = io.BytesIO()
    if lying_shape is None:
        np.save(out, array, allow_pickle=False)
        return out.getvalue()
    np.lib.format.write_array_header_1_0(
        out, {"descr": "<f4", "fortran_order": False, "shape": lying_shape})
    return out.getvalue() + b"\0" * 64


@pytest.mark.parametrize("kind", ["huge declared shape", "structured dtype", "huge values"])
def test_10_a_hostile_adapter_file_leaves_search_as_it_was(site: Settings, kind: str) -> None:
    import zipfile

    import numpy as np

    from ingest.search import Searcher
    from ingest.search.adapter import ADAPTER_FILE

    def ask() -> list[tuple[str, float]]:
        with Searcher(site) as searcher:
            found = searcher.search(QUERY, tenant_id="default", groups=["all-staff"],
                                    as_of=date.today(), k=5)
        return [(r.chunk_id, round(r.score, 6)) for r in found.results]

    before = ask()
    model = np.array(site.embedding_model)
    fine = np.zeros((512, 8), np.float32)
    members = {
        "huge declared shape": {"down": npy(lying_shape=(512, 2**40)),
                                "up": npy(lying_shape=(512, 2**40))},
        "structured dtype": {"down": npy(np.zeros((512, 8), [("a", "<f4"), ("b", "<f4")])),
                             "up": npy(fine)},
        "huge values": {"down": npy(np.full((512, 8), 3e38, np.float32)),
                        "up": npy(np.full((512, 8), -3e38, np.float32))},
    }[kind]
    with zipfile.ZipFile(site.data_dir / ADAPTER_FILE, "w") as archive:
        archive.writestr("model.npy", npy(model))
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    assert before and ask() == before
