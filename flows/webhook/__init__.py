"""`kbflow serve`: a webhook receiver that turns document change events into incremental runs.

    POST /events   {"type": "created"|"updated"|"deleted", "uri": "...", "id": "optional"}
                   X-Kbflow-Timestamp: <unix seconds>
                   X-Kbflow-Signature: sha256=<hex HMAC-SHA256 of f"{timestamp}.{body}">
    GET  /health   liveness; signed the same way (over an empty body): counts, refused events

One module a responsibility, each importing only those above it:
    events    what a sender may send, and the checks every hostile body goes through
    outbox    the SQLite outbox: an accepted event is on disk before the 202 reply
    dispatch  the thread that batches pending events into runs and finishes them by outcome
    runs      the Prefect side: starting a deployment run, reading its outcome
    app       the HTTP receiving side (FastAPI), wiring the above together
"""
