"""One client for chat completions, shared by the two LLM stages (situating contexts, graph
triples), over either of two endpoints that speak the same OpenAI chat-completions payload:

- `HttpEndpoint`: POST {base}/chat/completions of any OpenAI-compatible server (vLLM, Ollama, a
  cloud API). Transport errors, timeouts, 429 and 5xx are retried with exponential backoff
  (honouring Retry-After).
- `LocalEndpoint` (ingest/llm/local.py): llama.cpp's own server code in this process
  (xllamacpp), on a GGUF model `kbflow fetch-llm` installed. Same payload, same reply, so the
  stages have one code path whichever runs; no port is served to anyone else.

Structured output goes through `response_format` with a JSON schema (llama.cpp turns it into a
grammar). Every failure, a reply that is not JSON included, is an LLMError, which the stages turn
into a warning for the chunk concerned.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

import httpx

from ingest.config import Settings

Message = dict[str, str]
T = TypeVar("T")
log = logging.getLogger(__name__)
_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_REPLY_BYTES = 1 << 20  # a chat reply is a few kB: anything over 1 MiB is refused unread


class LLMError(RuntimeError):
    """The endpoint failed after all retries, or replied with something unusable."""


class Endpoint(Protocol):
    """Where chat-completions payloads go: the reply body as a dict, or LLMError."""

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LLMClient:
    def __init__(self, endpoint: Endpoint, model: str, *, concurrency: int = 4,
                 max_tokens: int | None = None) -> None:
        self.endpoint = endpoint
        self.model = model
        self.concurrency = max(1, concurrency)
        self.max_tokens = max_tokens  # the default cap of a reply, when a call sets none

    @classmethod
    def over_http(cls, base_url: str, model: str, api_key: str = "", *, timeout: float = 60.0,
                  concurrency: int = 4, retries: int = 3, backoff: float = 0.5) -> LLMClient:
        return cls(HttpEndpoint(base_url, api_key, timeout=timeout, retries=retries,
                                backoff=backoff), model, concurrency=concurrency)

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMClient | None:
        """None when no LLM is configured: the LLM stages are then off."""
        if settings.llm_backend == "local":
            from ingest.llm.local import LocalEndpoint

            return cls(LocalEndpoint.of(settings), settings.llm_model_name, concurrency=1,
                       max_tokens=settings.llm_max_reply_tokens)
        if not settings.llm_base_url:
            return None
        return cls.over_http(settings.llm_base_url, settings.llm_model, settings.llm_api_key,
                             timeout=settings.llm_timeout_seconds,
                             concurrency=settings.llm_concurrency)

    def close(self) -> None:
        self.endpoint.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chat(self, messages: Sequence[Message], *, max_tokens: int | None = None,
             json_schema: dict[str, Any] | None = None, schema_name: str = "result") -> str:
        """The assistant's reply text (temperature 0: the same input should give the same reply).
        With `json_schema`, the endpoint is asked for strict JSON matching it."""
        payload: dict[str, Any] = {"model": self.model, "messages": list(messages),
                                   "temperature": 0}
        if (max_tokens or self.max_tokens) is not None:
            payload["max_tokens"] = max_tokens or self.max_tokens
        if json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
            }
        body = self.endpoint.complete(payload)
        try:
            return str(body["choices"][0]["message"]["content"] or "").strip()
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"unexpected chat-completions reply: {str(body)[:200]}") from exc

    def chat_json(self, messages: Sequence[Message], json_schema: dict[str, Any],
                  schema_name: str = "result", max_tokens: int | None = None) -> Any:
        reply = self.chat(messages, max_tokens=max_tokens, json_schema=json_schema,
                          schema_name=schema_name)
        try:
            return json.loads(reply)
        except json.JSONDecodeError as exc:
            raise LLMError(f"reply is not JSON: {reply[:200]}") from exc

    def chat_many(self, conversations: Sequence[Sequence[Message]], **options: Any) -> list[str]:
        """Replies in input order, at most `concurrency` requests in flight."""
        return self._in_parallel(lambda messages: self.chat(messages, **options), conversations)

    def chat_each(self, conversations: Sequence[Sequence[Message]], **options: Any
                  ) -> list[str | None]:
        """chat_many, except that a conversation whose request fails is None (logged): one bad
        reply or a timeout costs its own chunk, not the batch."""

        def one(messages: Sequence[Message]) -> str | None:
            try:
                return self.chat(messages, **options)
            except LLMError as exc:
                log.warning("LLM request failed, skipped: %s", exc)
                return None

        return self._in_parallel(one, conversations)

    def _in_parallel(self, ask: Callable[[Sequence[Message]], T],
                     conversations: Sequence[Sequence[Message]]) -> list[T]:
        if not conversations:
            return []
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(ask, conversations))


class HttpEndpoint:
    """An OpenAI-compatible server. One httpx.Client serves the client's thread pool, so a batch
    never opens more connections than the endpoint was sized for."""

    def __init__(self, base_url: str, api_key: str = "", *, timeout: float = 60.0,
                 retries: int = 3, backoff: float = 0.5) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.retries = retries
        self.backoff = backoff
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers,
                                  timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))

    def close(self) -> None:
        self._http.close()

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        last, status, retry_after = "no attempt", 0, ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, retry_after))
            try:
                status, retry_after, text = self._post(payload)
            except httpx.HTTPError as exc:  # connect errors, timeouts, broken replies
                last, retry_after = f"{type(exc).__name__}: {exc}", ""
                continue
            if status in _RETRY_STATUS:
                last = f"HTTP {status}"
                continue
            if status >= 400:
                raise LLMError(f"HTTP {status}: {text[:200]}")
            try:
                body = json.loads(text)
            except ValueError as exc:  # an HTML error page or a proxy's login form, with 200
                raise LLMError(f"HTTP {status} reply is not JSON: {text[:200]!r}") from exc
            if not isinstance(body, dict):
                raise LLMError(f"unexpected chat-completions reply: {str(body)[:200]}")
            return body
        raise LLMError(f"chat completion failed after {self.retries + 1} attempts: {last}")

    def _post(self, payload: dict[str, Any]) -> tuple[int, str, str]:
        """(status, Retry-After, body text), the body read only up to MAX_REPLY_BYTES."""
        with self._http.stream("POST", "/chat/completions", json=payload) as response:
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise LLMError(f"reply larger than {MAX_REPLY_BYTES} bytes, refused")
                chunks.append(chunk)
            text = b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")
            return response.status_code, response.headers.get("retry-after", ""), text

    def _delay(self, attempt: int, retry_after: str) -> float:
        if retry_after.replace(".", "", 1).isdigit():
            return min(float(retry_after), 30.0)
        return float(self.backoff * 2 ** (attempt - 1))
