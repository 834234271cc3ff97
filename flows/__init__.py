"""Prefect flows and the kbflow command line (they import ingest/, never the reverse)."""
