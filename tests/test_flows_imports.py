"""flows/ modules import each other in one direction only (issue #27: api ↔ webhook/serving and
deployments ↔ ingest used to import each other, which made import order matter)."""

from __future__ import annotations

import ast
from pathlib import Path

FLOWS = Path(__file__).resolve().parents[1] / "flows"


def _imports() -> dict[str, set[str]]:
    """Module -> the flows modules it imports, at the top or inside a function."""
    graph: dict[str, set[str]] = {}
    for path in FLOWS.glob("*.py"):
        found = graph.setdefault(f"flows.{path.stem}", set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("flows."):
                found.add(str(node.module))
    return graph


def test_no_import_cycle_among_flows_modules() -> None:
    graph = _imports()
    cycles = []

    def walk(module: str, path: list[str]) -> None:
        for target in sorted(graph.get(module, ())):
            if target in path:
                cycles.append([*path[path.index(target):], target])
            else:
                walk(target, [*path, target])

    for module in graph:
        walk(module, [module])
    assert cycles == []
    assert "flows.ingest" in graph["flows.deployments"]  # the direction that stays
    assert "flows.webhook" in graph["flows.api"]
