"""Tenant scopes (issue 25): the parents file, what a reader of each tenant sees, and the
search answer naming each hit's tenant, its distance from the reader and its authority."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.config import Settings
from ingest.scopes import TenantTree, TenantTreeError

PARENTS = {"hc-precision": "default", "hc-logistics": "default",
           "hc-precision-east": "hc-precision"}


def write_parents(tmp_path: Path, parents: object, name: str = "parents.yaml") -> Settings:
    path = tmp_path / name
    path.write_text(json.dumps(parents, ensure_ascii=False), encoding="utf-8")
    return Settings(data_dir=tmp_path / "data", tenant_parents=path)


def test_a_reader_sees_its_tenant_then_its_ancestors(tmp_path: Path) -> None:
    tree = TenantTree.load(write_parents(tmp_path, PARENTS))
    assert tree.visible("hc-precision-east") == ["hc-precision-east", "hc-precision", "default"]
    assert tree.visible("hc-logistics") == ["hc-logistics", "default"]
    assert tree.visible("default") == ["default"]  # a parent never sees its children's
    assert tree.visible("unlisted") == ["unlisted"]
    assert tree.ancestors("hc-precision-east") == ["hc-precision", "default"]
    assert tree.within("hc-precision-east", "hc-precision")
    assert not tree.within("hc-logistics", "hc-precision")  # a sibling
    assert not tree.within("default", "hc-precision")  # a parent
    assert tree.precedence == "narrower"


def test_yaml_parents_file_and_declared_precedence(tmp_path: Path) -> None:
    path = tmp_path / "parents.yaml"
    path.write_text("# group structure\nhc-precision: default\n2024: default\n", "utf-8")
    tree = TenantTree.load(Settings(tenant_parents=path, scope_precedence="broader"))
    assert tree.visible("2024") == ["2024", "default"]  # a name, not the number 2024
    assert tree.precedence == "broader"
    assert TenantTree.load(Settings()).visible("x") == ["x"]  # unset: every tenant alone


@pytest.mark.parametrize(("parents", "reason"), [
    ({"a": "b", "b": "a"}, "cycle: a → b → a"),
    ({"a": "a"}, "cycle: a → a"),
    ({"a": "b", "b": "c", "c": "a", "d": "default"}, "cycle"),
    ({"hc-precision": "defualt"}, "parent 'defualt' is not declared"),
    ({"sub:a": "default"}, "must not contain ':'"),
    ({"sub": "default", " b": "default"}, "must not be empty or start or end with spaces"),
    ({"sub\u200b": "default"}, "invisible"),
    ({"sub": ["default"]}, "is not a name"),
    (["sub", "default"], "expected a mapping"),
])
def test_a_bad_parents_file_is_refused_with_its_reason(tmp_path: Path, parents: object,
                                                        reason: str) -> None:
    with pytest.raises(TenantTreeError, match=reason.replace("(", r"\(")):
        TenantTree.load(write_parents(tmp_path, parents))


def test_an_unreadable_parents_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TenantTreeError, match="cannot read the tenant parents file"):
        TenantTree.load(Settings(tenant_parents=tmp_path / "absent.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [unclosed\n", "utf-8")
    with pytest.raises(TenantTreeError, match="not valid YAML"):
        TenantTree.load(Settings(tenant_parents=bad))


def test_authority_levels_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().authority_levels == ["policy", "notice", "faq", "chat"]
    monkeypatch.setenv("KBFLOW_AUTHORITY_LEVELS", "law, policy,faq")
    assert Settings().authority_levels == ["law", "policy", "faq"]
    monkeypatch.setenv("KBFLOW_AUTHORITY_LEVELS", '["law", "policy"]')
    assert Settings().authority_levels == ["law", "policy"]
    monkeypatch.setenv("KBFLOW_AUTHORITY_LEVELS", "law,,faq")
    with pytest.raises(ValueError, match="distinct and non-empty"):
        Settings()
