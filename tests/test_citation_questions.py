"""Citation questions end to end on a company-style corpus: a policy cited with the group's
prefix (《XX集团采购管理办法》第九条), with another company prefix and by its own title is one
document cited by all three; `kbflow graph --citations` lists them with the citing clauses, and
what a clause cites with the cited clause's own text."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli import kbflow

DOCS = {
    "采购管理办法.md": "# 采购管理办法\n\n第九条 采购金额在五十万元以上的，须经采购委员会审议。\n\n"
                      "第十条 采购合同按《宏远集团合同管理办法》签订。\n",
    "资金管理办法.md": "# 资金管理办法\n\n第三条 大额付款按《XX集团采购管理办法》第九条执行。\n\n"
                      "第四条 付款须经财务部审核。\n",
    "合同管理办法.md": "# 宏远集团合同管理办法\n\n第五条 合同签订前须完成《宏远集团采购管理办法》"
                      "规定的比价。\n",
    "差旅费管理办法.md": "# 差旅费管理办法\n\n第二条 差旅中的采购适用《采购管理办法》，"
                        "凭《营业执照》复印件报销。\n",
}


def test_who_cites_a_prefixed_policy_and_what_a_clause_refers_to(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    data = tmp_path / "data"
    ingest = kbflow("ingest", str(docs), "--json", data=data)
    assert ingest.returncode == 0, ingest.stderr
    summary = json.loads(ingest.stdout)
    assert summary["graph"]["dangling_kinds"] == {"form": 1}

    cited = kbflow("graph", "采购管理办法", "--citations", "--json", data=data)
    assert cited.returncode == 0, cited.stderr
    answer = json.loads(cited.stdout)
    assert answer["title"] == "采购管理办法"
    by_title = {d["title"]: d["clauses"] for d in answer["incoming"]}
    assert set(by_title) == {"资金管理办法", "宏远集团合同管理办法", "差旅费管理办法"}
    fund = {(c["clause_no"], c["cited"], c["surface"], c["rule"]) for c in by_title["资金管理办法"]}
    assert ("第三条", "《采购管理办法》第九条", "《XX集团采购管理办法》第九条", "prefix") in fund
    outgoing = {(t["citation"]["clause_no"], t["document"]) for t in answer["outgoing"]}
    assert outgoing == {("第十条", "宏远集团合同管理办法")}

    clause = kbflow("graph", "《资金管理办法》第三条", "--citations", "--json", data=data)
    refers = json.loads(clause.stdout)["outgoing"]
    assert [(t["cited"], "五十万元" in t["target_text"]) for t in refers] == [
        ("《采购管理办法》第九条", True), ("采购管理办法", False)]  # the article and its document

    shown = kbflow("graph", "采购管理办法", "--citations", data=data)
    assert shown.returncode == 0, shown.stderr
    assert "cited by 3 documents" in shown.stdout and "《XX集团采购管理办法》第九条" in shown.stdout
