"""The operator console that `kbflow serve` mounts under /console (with the search API): the
documents and their failures, a document's chunks on its pages, the evidence a question gets,
generations and the webhook outbox. Server-rendered (Jinja2, plain CSS, a little plain JS)."""

from flows.console.routes import console_router

__all__ = ["console_router"]
