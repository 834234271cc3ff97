"""Keep CLI output to what the user asked for.

Prefect's temporary local API logs its own start, stop and telemetry attempts, and under load
"database is locked" retries and teardown tracebacks; transformers draws a
weight-loading bar. None of it is about the user's documents. Settings already present in the
environment win, so `PREFECT_LOGGING_LEVEL=INFO kbflow ingest …` shows Prefect's task logs again.

One default is not about noise: Prefect waits 20 s for its temporary server, less than a fresh
HOME's first start (database migrations) takes on a loaded 2-core machine (flows/orchestrator.py).
"""

from __future__ import annotations

import logging
import os

QUIET_ENVIRONMENT = {
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_LOGGING_LOG_PRINTS": "false",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "300",
}
NOISY_LOGGERS = ("uvicorn.error", "uvicorn", "aiosqlite", "sqlalchemy")


def quiet() -> None:
    """Call before Prefect, transformers or pymilvus are imported."""
    for name, value in QUIET_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
