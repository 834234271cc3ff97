"""A small client for OpenAI-compatible chat-completions endpoints (POST {base}/chat/completions).

Shared by the two LLM stages: situating contexts for chunks and graph triple extraction. One
httpx.Client serves a thread pool of `concurrency` workers, so a batch never opens more
connections than the endpoint was sized for; transport errors, timeouts, 429 and 5xx replies are
retried with exponential backoff (honouring Retry-After); structured output goes through
`response_format` with a JSON schema. Every failure, a reply that is not JSON included, is an
LLMError, which the stages turn into a warning for the chunk concerned.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from ingest.config import Settings

Message = dict[str, str]
log = logging.getLogger(__name__)
_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class LLMError(RuntimeError):
    """The endpoint failed after all retries, or replied with something unusable."""


class LLMClient:
    def __init__(self, base_url: str, model: str, api_key: str = "", *, timeout: float = 60.0,
                 concurrency: int = 4, retries: int = 3, backoff: float = 0.5) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self.concurrency = max(1, concurrency)
        self.retries = retries
        self.backoff = backoff
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers,
                                  timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMClient | None:
        """None when no endpoint is configured: the LLM stages are then off."""
        if not settings.llm_base_url:
            return None
        return cls(settings.llm_base_url, settings.llm_model, settings.llm_api_key,
                   timeout=settings.llm_timeout_seconds, concurrency=settings.llm_concurrency)

    def close(self) -> None:
        self._http.close()

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
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
            }
        body = self._post(payload)
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
        if not conversations:
            return []
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda messages: self.chat(messages, **options), conversations))

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

        if not conversations:
            return []
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(one, conversations))

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        last, response = "no attempt", None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, response))
            try:
                response = self._http.post("/chat/completions", json=payload)
            except httpx.HTTPError as exc:  # connect errors, timeouts, broken replies
                last, response = f"{type(exc).__name__}: {exc}", None
                continue
            if response.status_code in _RETRY_STATUS:
                last = f"HTTP {response.status_code}"
                continue
            if response.is_error:
                raise LLMError(f"HTTP {response.status_code}: {response.text[:200]}")
            try:
                body = response.json()
            except ValueError as exc:  # an HTML error page or a proxy's login form, with 200
                raise LLMError(f"HTTP {response.status_code} reply is not JSON: "
                               f"{response.text[:200]!r}") from exc
            if not isinstance(body, dict):
                raise LLMError(f"unexpected chat-completions reply: {str(body)[:200]}")
            return body
        raise LLMError(f"chat completion failed after {self.retries + 1} attempts: {last}")

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        retry_after = response.headers.get("retry-after", "") if response is not None else ""
        if retry_after.replace(".", "", 1).isdigit():
            return min(float(retry_after), 30.0)
        return float(self.backoff * 2 ** (attempt - 1))
