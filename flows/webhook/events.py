"""What a webhook sender may send and how it is checked: every request body is hostile until
these functions have read it.

A uri is a file:// URI or a path relative to a document root (KBFLOW_DOCUMENT_ROOTS). One that
names a folder (`updated`, for a sender that reports "something changed here", or a scheduled
re-scan) has the run re-scan it as `kbflow ingest FOLDER` does: new and edited files in, removed
ones tombstoned, unchanged ones skipped by their hash, in the warm worker without a new process.
Other schemes, control characters, bodies over KBFLOW_WEBHOOK_MAX_BODY_BYTES (413, refused
before they are read) and JSON nested deeper than an event needs are refused at the door; every
malformed body is a 422, never a 500.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Literal
from urllib.parse import unquote, urlparse

from pydantic import BaseModel, Field, ValidationError, field_validator

from ingest.parse.roots import has_control_chars

TIMESTAMP_HEADER = "X-Kbflow-Timestamp"
SIGNATURE_HEADER = "X-Kbflow-Signature"
MAX_URI_CHARS = 4096  # PATH_MAX on Linux
MAX_ID_CHARS = 200
MAX_JSON_DEPTH = 4  # an event is one flat object


class ChangeEvent(BaseModel):
    type: Literal["created", "updated", "deleted"]
    uri: str = Field(min_length=1, max_length=MAX_URI_CHARS)
    id: str | None = Field(None, min_length=1, max_length=MAX_ID_CHARS,
                           description="sender's event id; a repeated one is a replay")

    @field_validator("uri")
    @classmethod
    def _a_local_path(cls, value: str) -> str:
        to_path(value)
        return value

    @field_validator("id")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and has_control_chars(value):
            raise ValueError("must not contain control characters")
        return value


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header value a sender puts on `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify(secret: str, timestamp: str | None, signature: str | None, body: bytes,
           max_age: float, now: float) -> str | None:
    """Why the request is not authentic, or None when it is."""
    if not timestamp or not signature:
        return "missing signature headers"
    try:
        sent = int(timestamp)  # whole seconds: no "nan" or "inf" slipping past the window check
    except ValueError:
        return "bad timestamp"
    if abs(now - sent) > max_age:
        return "timestamp outside the replay window"
    # bytes: compare_digest raises on a str header with non-ASCII characters
    if not hmac.compare_digest(sign(secret, timestamp, body).encode(), signature.encode()):
        return "bad signature"
    return None


def to_path(uri: str) -> str:
    """The local path a uri names: a file:// URI's path, or the uri itself when it has no scheme
    (a path, relative to a document root or absolute). ValueError for anything else: the
    pipeline reads local files only, and a URL is no file of ours."""
    if has_control_chars(uri):
        raise ValueError("uri contains control characters")
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise ValueError(f"file URI on another host ({parsed.netloc}) is refused")
        path = unquote(parsed.path)
        if not path or has_control_chars(path):
            raise ValueError("file URI with an empty path or encoded control characters")
        return path
    if parsed.scheme:
        raise ValueError(f"only file:// URIs and paths are accepted, not {parsed.scheme}:")
    return uri


def json_depth(body: bytes, limit: int) -> int:
    """How deep arrays and objects nest in `body` (strings skipped), counted only up to
    limit + 1: a deep body is refused before the JSON parser recurses into it."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def parse_event(body: bytes) -> ChangeEvent:
    """The event in a request body; ValueError with a readable reason for any malformed one."""
    if json_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        raise ValueError(f"not JSON: {exc}") from None
    try:
        return ChangeEvent.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: "
                             f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise ValueError(problems) from None
