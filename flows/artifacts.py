"""A Markdown summary of each run, stored as a Prefect artifact so the UI shows what a scheduled or
webhook-triggered run did without anyone reading its logs."""

from __future__ import annotations

from typing import Any

from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel

ARTIFACT_KEY = "kbflow-run-summary"  # one key: the UI keeps the history of every run under it


def summary_markdown(summary: BaseModel | dict[str, Any], title: str = "kbflow run") -> str:
    """Render a run summary (IngestSummary, RebuildReport or any dict) as a Markdown table:
    scalars and small dicts as rows, failures listed below so they are never hidden in JSON."""
    data = summary.model_dump(mode="json") if isinstance(summary, BaseModel) else dict(summary)
    failures = data.pop("failures", None) or []
    lines = [f"# {title}", "", "| what | value |", "|---|---|"]
    for key, value in data.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {_cell(v)}" for k, v in value.items()) or "—"
        elif isinstance(value, list):
            value = f"{len(value)} item(s)"
        lines.append(f"| {key} | {_cell(value)} |")
    lines += ["", f"## Failures ({len(failures)})", ""]
    for failure in failures:
        if isinstance(failure, dict):
            where = failure.get("path") or failure.get("doc_id") or "?"
            lines.append(f"- `{where}`: {_cell(failure.get('reason', failure))}")
        else:
            lines.append(f"- {_cell(failure)}")
    if not failures:
        lines.append("none")
    return "\n".join(lines) + "\n"


def publish_summary_artifact(summary: BaseModel | dict[str, Any],
                             title: str = "kbflow run") -> None:
    """Attach the summary to the current flow run (call it at the end of each flow)."""
    create_markdown_artifact(markdown=summary_markdown(summary, title), key=ARTIFACT_KEY,
                                    description=title)


def _cell(value: Any) -> str:
    """Table cells must stay on one line and must not close the table early."""
    return str(value).replace("|", "\\|").replace("\n", " ")
