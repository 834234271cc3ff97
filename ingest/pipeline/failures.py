"""A document (or path) that did not make it through a run, and why: one typed record that
feeds the run summary, the manifest's reason, the publish gate and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, computed_field

# Where a failure happened. "source": a path turned away before reading (outside the document
# roots, a link out of the folder, a deleted file); "read": the file or its sidecar; "parse":
# the parser (the publish gate's parse-error rate counts these); then the later stages.
Stage = Literal["source", "read", "parse", "chunk", "diff", "graph", "write"]

# The kind of a path kbflow turned away on purpose: its message is the whole reason.
REFUSED = "refused"


class Failure(BaseModel):
    stage: Stage
    kind: str  # the exception's type name, or REFUSED
    message: str
    path: str
    doc_id: str = ""
    version_id: str = ""
    # Whose document it is, when its metadata was read: the console shows a failure to the
    # readers of that tenant and those groups, as search would show the document.
    tenant_id: str | None = None
    acl: list[str] = []

    @computed_field  # type: ignore[prop-decorator]
    @property
    def reason(self) -> str:
        """What the manifest records and the CLI, webhook and summary show."""
        return self.message if self.kind == REFUSED else f"{self.kind}: {self.message}"

    @property
    def key(self) -> tuple[str, str]:
        return self.doc_id, self.version_id

    @classmethod
    def raised(cls, stage: Stage, exc: BaseException, path: str | Path,
               key: tuple[str, str] = ("", "")) -> Failure:
        return cls(stage=stage, kind=type(exc).__name__, message=str(exc), path=str(path),
                   doc_id=key[0], version_id=key[1])

    @classmethod
    def refused(cls, stage: Stage, message: str, path: str | Path,
                key: tuple[str, str] = ("", "")) -> Failure:
        return cls(stage=stage, kind=REFUSED, message=message, path=str(path),
                   doc_id=key[0], version_id=key[1])
