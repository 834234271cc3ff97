"""`kbflow status` shows each failure's whole reason on a narrow terminal, and `kbflow search`
prints the verdict, its reason and both sides of a conflict (issue 41)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pymupdf
from tests_support import REPO, SAMPLE_DOCS, ingest

from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.models import State


def kbflow(*args: str, data: Path, columns: int, **env_extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    env |= {"COLUMNS": str(columns), **env_extra}
    done = subprocess.run([sys.executable, "-m", "flows.cli", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=600, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def squeezed(text: str) -> str:
    """The text without the line breaks and spaces a wrapped print adds."""
    return re.sub(r"\s+", "", text)


def test_status_prints_every_failure_reason_whole_on_a_narrow_terminal(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "leave_policy.md", docs)
    locked = pymupdf.open()
    locked.new_page().insert_text((72, 72), "salary")
    (docs / "salary_bands_of_the_whole_group_2026.pdf").write_bytes(locked.tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u"))
    settings = Settings(data_dir=tmp_path / "data")
    ingest(settings, docs)
    with ManifestStore(settings.manifest) as manifest:
        [failed] = [r for r in manifest.documents() if r.state == State.FAILED]
    assert failed.reason and len(failed.reason) > 30
    table = kbflow("status", data=settings.data_dir, columns=60)
    assert squeezed(failed.reason) in squeezed(table.split("reasons:", 1)[1])
    listing = kbflow("status", "--reasons", data=settings.data_dir, columns=60)
    assert "leave_policy" not in listing  # only the versions with a reason
    assert squeezed(f"{failed.version_key}") in squeezed(listing)
    assert squeezed(failed.reason) in squeezed(listing)


def test_search_prints_the_verdict_its_reason_and_both_sides(tmp_path: Path) -> None:
    docs = shutil.copytree(REPO / "eval" / "evidence_docs", tmp_path / "docs")
    parents = str(REPO / "eval" / "evidence_tenants.yaml")
    settings = Settings(data_dir=tmp_path / "data", tenant_parents=Path(parents))
    ingest(settings, docs)
    question = ["search", "出差吃饭每天补贴是多少", "--as-of", "2026-04-01"]
    answer = json.loads(kbflow(*question, "--json", data=settings.data_dir, columns=200,
                               KBFLOW_TENANT_PARENTS=parents))
    assert answer["verdict"] == "conflict"
    text = kbflow(*question, data=settings.data_dir, columns=200,
                  KBFLOW_TENANT_PARENTS=parents)
    assert f"verdict: conflict — {answer['reason']}" in text
    conflict = answer["conflicts"][0]
    for side in (conflict["a"], conflict["b"]):
        assert squeezed(f"{side['value']} {side['doc_id']}") in squeezed(text)
        assert squeezed(side["sentence"]) in squeezed(text)
    none = kbflow("search", "外派到海外的员工安家费怎么发", "--as-of", "2026-04-01",
                  data=settings.data_dir, columns=200, KBFLOW_TENANT_PARENTS=parents)
    assert "verdict: no_answer — " in none
