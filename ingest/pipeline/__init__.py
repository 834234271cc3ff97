"""The ingest pipeline's logic, runnable with or without Prefect: a RunContext carries a run's
state, and every document version moves through typed phases (job.py). flows/ingest.py wraps
the heavy steps as Prefect tasks and keeps only the flows."""

from ingest.pipeline.context import ENCODING, Clock, Progress, RunContext, Steps, progress_to
from ingest.pipeline.failures import REFUSED, Failure, Stage
from ingest.pipeline.job import Parsed, Planned, Prepared, VersionJob, Written
from ingest.pipeline.local import InProcess
from ingest.pipeline.report import STAGES, ChunkCounts, IngestSummary, ParseRunReport
from ingest.pipeline.run import current_generation, run_pipeline

__all__ = [
    "ENCODING",
    "REFUSED",
    "STAGES",
    "ChunkCounts",
    "Clock",
    "Failure",
    "InProcess",
    "IngestSummary",
    "ParseRunReport",
    "Parsed",
    "Planned",
    "Prepared",
    "Progress",
    "RunContext",
    "Stage",
    "Steps",
    "VersionJob",
    "Written",
    "current_generation",
    "progress_to",
    "run_pipeline",
]
