"""flows/ modules import each other in one direction only (issue #27: api ↔ webhook/serving and
deployments ↔ ingest used to import each other, which made import order matter)."""

from __future__ import annotations

import ast
from pathlib import Path

FLOWS = Path(__file__).resolve().parents[1] / "flows"


def _imports() -> dict[str, set[str]]:
    """Module -> the flows modules it imports, at the top or inside a function (packages such as
    flows/webhook/ included; `from flows.pkg import module` counts as importing that module)."""
    files = {}
    for path in FLOWS.rglob("*.py"):
        parts = path.relative_to(FLOWS.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        found = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("flows."):
                for alias in node.names:
                    inner = f"{node.module}.{alias.name}"
                    found.add(inner if inner in files else str(node.module))
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
    assert "flows.webhook.app" in graph["flows.api"]
    assert "flows.webhook.events" in graph["flows.webhook.dispatch"]
