"""A real chat-completions endpoint on 127.0.0.1 with scripted replies, for the tests.

``ChatServer([Reply("1"), Reply(status=500), ...])`` serves the replies in order, one per
request (any path, any method), and records every request (method, path, headers, raw and
JSON body). A script item may also be a function of the recorded request returning a
Reply (to echo what the client sent); ``responder=`` answers once the script is used up.
When nothing is left it answers 500 "no scripted reply left", so a client that asks too
often fails instead of looping: every test stays bounded. A second server on another port
(``ChatServer([])``) records whether a client that was redirected there came, and with
which headers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted response: a reply text (``content``), or a raw status/body."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # raw body; overrides content
    delay: float = 0.0  # seconds to wait before answering (timeouts)
    null_content: bool = False  # a 200 whose message content is JSON null
    json: Any = None  # a JSON body; overrides content
    logprobs: list[dict[str, Any]] | None = None  # choices[0].logprobs.content
    finish_reason: str = "stop"

    def encode(self, model: str) -> bytes:
        if self.body is not None:
            return self.body
        if self.json is not None:
            return json.dumps(self.json).encode()
        if self.status != 200:
            return json.dumps({"error": {"message": f"scripted error {self.status}",
                                         "type": "server_error"}}).encode()
        content = None if self.null_content else self.content
        choice: dict[str, Any] = {
            "index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": "content_filter" if self.null_content else self.finish_reason}
        if self.logprobs is not None:
            choice["logprobs"] = {"content": self.logprobs}
        return json.dumps({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()


Script = Reply | Callable[[dict[str, Any]], Reply]


class ChatServer:
    """Serve scripted replies on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self, replies: list[Script],
                 responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.replies = list(replies)
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw)
                except ValueError:
                    payload = None
                request = {"method": self.command, "path": self.path,
                           "headers": dict(self.headers), "raw": raw, "json": payload}
                with server._lock:
                    server.requests.append(request)
                    script = (server.replies.pop(0) if server.replies
                              else server.responder)
                reply = (Reply(status=500, body=b'{"error": {"message": '
                                                b'"no scripted reply left"}}')
                         if script is None else script(request) if callable(script)
                         else script)
                if reply.delay:
                    time.sleep(reply.delay)
                model = payload.get("model", "") if isinstance(payload, dict) else ""
                body = reply.encode(model)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            do_POST = do_GET = do_PUT = _answer  # http.server's method names

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a handler still sleeping must not hold teardown
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def url(self) -> str:
        """The API root to give a client: ``http://127.0.0.1:<port>/v1``."""
        return f"{self.origin}/v1"

    def __enter__(self) -> ChatServer:  # noqa: PYI034 (typing.Self is 3.11+)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def user_messages(self) -> list[str]:
        """The user message of every request received, in order."""
        return [next(m["content"] for m in r["json"]["messages"] if m["role"] == "user")
                for r in self.requests]
