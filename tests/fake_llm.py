"""A stand-in for an OpenAI-compatible chat-completions endpoint: a real HTTP server on
127.0.0.1 (http.server in a thread) that records every request it gets."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def situating_reply(request: dict) -> str:
    """A deterministic context naming the section the prompt gives for the chunk."""
    user = request["messages"][-1]["content"]
    section = next((line.removeprefix("section: ") for line in user.split("\n")
                    if line.startswith("section: ")), "the document")
    return f"This passage belongs to {section}. It states one rule of the policy."


class FakeLLM:
    def __init__(self, reply: Callable[[dict], str] = situating_reply, fail_first: int = 0,
                 delay: float = 0.0) -> None:
        self.reply = reply
        self.fail_first = fail_first
        self.delay = delay
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, path: str, body: dict) -> tuple[int, dict]:
        with self._lock:
            self.requests.append(body)
            failing = len(self.requests) <= self.fail_first
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.delay)
            if path != "/v1/chat/completions":
                return 404, {"error": {"message": f"no route {path}"}}
            if failing:
                return 503, {"error": {"message": "overloaded"}}
            content = self.reply(body)
            return 200, {
                "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        finally:
            with self._lock:
                self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                status, payload = fake._answer(self.path, json.loads(self.rfile.read(length)))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

        return Handler
