"""A fake provider for API tests: a 127.0.0.1 HTTP server speaking each provider's wire
format from a script of replies, and the environment that points the API layer at it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

SECRET = "sk-TEST-very-secret-0123456789"
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY",
           "gemini": "GEMINI_API_KEY"}
BASE_ENV = {p: f"FOILBENCH_{p.upper()}_BASE_URL" for p in KEY_ENV}


def reply_body(provider: str, text: str, tokens_in: int = 100, tokens_out: int = 1) -> dict:
    if provider == "anthropic":
        return {"content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}
    if provider == "openai":
        return {"choices": [{"message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out}}
    return {"candidates": [{"content": {"parts": [{"text": text}]}}],
            "usageMetadata": {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out}}


class FakeProvider:
    """A 127.0.0.1 server on a random port answering from a script of at most 50 replies,
    or, when ``responder`` is set, from ``responder(request) -> (status, headers, payload)``
    (a request is the dict appended to ``requests``)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.script: list[tuple[int, dict, dict]] = []
        self.responder = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                is_json = self.headers.get("Content-Type", "").startswith("application/json")
                request = {"path": self.path, "headers": dict(self.headers),
                           "body": json.loads(raw) if is_json else None, "raw": raw}
                owner.requests.append(request)
                if owner.responder is not None:
                    status, headers, payload = owner.responder(request)
                else:
                    status, headers, payload = owner.script.pop(0) if owner.script else (
                        500, {}, {"error": "script exhausted"})
                data = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake(monkeypatch, tmp_path):
    server = FakeProvider()
    for provider in KEY_ENV:
        monkeypatch.setenv(KEY_ENV[provider], SECRET)
        monkeypatch.setenv(BASE_ENV[provider], server.url)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FOILBENCH_API_SPEND_CAP", raising=False)
    monkeypatch.delenv("FOILBENCH_API_PRICES", raising=False)
    yield server
    server.close()
