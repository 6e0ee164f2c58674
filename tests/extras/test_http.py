"""The one transport (confcal.extras._http) against real servers on 127.0.0.1.

Every rule is checked through the clients that use it (OpenAICompatibleClient,
AnthropicClient) where it matters that both
behave alike: redirects are never followed and the credential never reaches another
origin, the key never appears in a message, a repr or a log record whatever the server
echoes, unreadable bodies are the error family's members. Waits between retries are
recorded, never slept.
"""

from __future__ import annotations

import base64
import email.utils
import json
import logging
import re
import socket
import ssl
import subprocess
import threading
import time
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _chat_server import ChatServer, Reply
from _profiles import examples
from confcal.exceptions import (
    ConfcalError,
    ModelCallError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ValidationError,
)
from confcal.extras import _http
from confcal.extras.clients import AnthropicClient, ChatRequest, OpenAICompatibleClient

# "/" and "+" so that JSON's "\/" and percent-encoding change how it is written
KEY = "sk-test/0123456789+abcdefXYZ-secret"
REQUEST = ChatRequest("You grade.", "Is 2 + 2 = 4? Reply 1 or 0.", max_tokens=8)


@pytest.fixture(autouse=True)
def _local_only(monkeypatch):
    monkeypatch.setenv("CONFCAL_TEST_KEY", KEY)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    recorded: list[float] = []
    monkeypatch.setattr(_http, "_sleep", recorded.append)
    return recorded


def anthropic_message(text: str = "1") -> Reply:
    return Reply(json={"id": "msg_1", "type": "message", "role": "assistant",
                       "model": "claude-test", "content": [{"type": "text", "text": text}],
                       "stop_reason": "end_turn", "stop_sequence": None,
                       "usage": {"input_tokens": 3, "output_tokens": 1}})


# each: (name, make(url) -> client, call(client) -> text, a good reply)
def _openai(url: str, **kw: Any) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(url, "m", api_key_env="CONFCAL_TEST_KEY",
                                  **{"backoff": 0.01, **kw})


def _anthropic(url: str, **kw: Any) -> AnthropicClient:
    return AnthropicClient("claude-test", api_key_env="CONFCAL_TEST_KEY",
                           base_url=url.removesuffix("/v1"), **{"backoff": 0.01, **kw})


def _ask(client: Any) -> str:
    return client.complete(REQUEST).text


def _openai_api(url: str, **kw: Any) -> OpenAICompatibleClient:
    # the request contract of OpenAI's own API (max_completion_tokens), on a local server
    return _openai(url, max_tokens_field="max_completion_tokens", **kw)


def _anthropic_2023(url: str, **kw: Any) -> AnthropicClient:
    return _anthropic(url, api_version="2023-06-01", **kw)


# every request contract a client speaks: the key-safety rules hold for each
CLIENTS = [pytest.param(_openai, Reply("1"), id="openai-compatible"),
           pytest.param(_openai_api, Reply("1"), id="openai-api"),
           pytest.param(_anthropic, anthropic_message(), id="anthropic"),
           pytest.param(_anthropic_2023, anthropic_message(), id="anthropic-2023-06-01")]


def read_as(text: str) -> str:
    """``text`` as a reader sees it: NFKC, without white space or format characters."""
    return "".join(c for c in unicodedata.normalize("NFKC", text)
                   if not c.isspace() and unicodedata.category(c) != "Cf")


def no_trace_of_the_key(*texts: str) -> None:
    """Neither the key nor any 8 consecutive characters of it, in any text, nor any 16
    consecutive digits of its hex, also read without spaces and invisible characters."""
    runs = {KEY[i:i + 8] for i in range(len(KEY) - 7)}
    hexed = KEY.encode().hex()
    hex_runs = {hexed[i:i + 16] for i in range(len(hexed) - 15)}
    for text in texts:
        for seen in (text, read_as(text)):
            assert KEY not in seen
            assert not [r for r in runs if r in seen], text
            assert not [r for r in hex_runs if r in seen.lower()], text


# ------------------------------------------------------------------------- redirects
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("make, good", CLIENTS)
def test_a_redirect_is_never_followed_and_the_key_stays_home(make, good, status, waits):
    with ChatServer([]) as elsewhere:
        target = f"{elsewhere.origin}/v1/chat/completions?token=abc#frag"
        with ChatServer([Reply(status=status, headers={"Location": target})]) as home:
            with pytest.raises(ModelHTTPError) as info:
                _ask(make(home.url))
        assert elsewhere.requests == []  # the other origin never heard from the client
    assert len(home.requests) == 1 and waits == []
    message = str(info.value)
    assert info.value.status == status and not info.value.retryable
    assert f"HTTP {status}, a redirect to {elsewhere.origin};" in message
    assert "token=abc" not in message and "/chat/completions?" not in message
    assert "redirects are never followed" in message


def test_a_redirect_target_that_spells_the_key_is_redacted(waits):
    target = f"http://{KEY.replace('/', '-').replace('+', '-')}.example:8443/x?k={KEY}"
    with ChatServer([Reply(status=302, headers={"Location": target})]) as server:
        with pytest.raises(ModelHTTPError) as info:
            _openai(server.url).complete(REQUEST)
    no_trace_of_the_key(str(info.value))
    assert ":8443" in str(info.value)


# ------------------------------------------------------------------------ the key
def _echoes(request: dict[str, Any]) -> dict[str, str]:
    sent = request["headers"].get("Authorization", "").removeprefix("Bearer ") \
        or request["headers"].get("x-api-key", "")
    assert sent == KEY
    escaped = "".join(f"\\u{ord(c):04x}" for c in sent)
    return {
        "plain": f"Incorrect API key provided: {sent}",
        "json-u-escaped": escaped,
        "json-slash-escaped": sent.replace("/", "\\/"),
        "mixed": escaped[:30] + sent[5:].replace("/", "\\/"),
        "percent": "".join(f"%{b:02X}" for b in sent.encode()),
        "double-escaped": escaped.replace("\\", "\\\\"),
        "html": "".join(f"&#{ord(c)};" for c in sent),
        "first-20": sent[:20] + "...",
        "last-12": "..." + sent[-12:],
        "long-prefix": "x" * 600 + sent,  # past any excerpt: redacted before truncating
        "hex": sent.encode().hex(),
        "hex-upper": sent.encode().hex().upper(),
        "hex-spaced": " ".join(f"{b:02x}" for b in sent.encode()),
        "space-split": " ".join(sent),
        "zero-width-split": "\u200b".join(sent),
        "format-split": "".join(c + "\u00ad\u2060\ufeff\u200d"[i % 4]
                                for i, c in enumerate(sent)),
        "fullwidth": "".join(chr(ord(c) + 0xFEE0) for c in sent),
        "fullwidth-tab-split": "\t".join(chr(ord(c) + 0xFEE0) for c in sent[:12]),
    }


FORMS = list(_echoes({"headers": {"Authorization": f"Bearer {KEY}"}}))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("make, good", CLIENTS)
def test_an_echoed_key_never_reaches_a_message_or_a_log(make, good, form, waits, caplog):
    def json_error(status: int) -> Any:
        return lambda r: Reply(status=status, body=json.dumps(
            {"error": {"message": "bad key " + _echoes(r)[form]}}).encode().replace(
                b"\\\\", b"\\"))  # the server writes the escapes itself

    def text_error(status: int) -> Any:
        return lambda r: Reply(status=status, body=f"<html>{_echoes(r)[form]}</html>".encode())

    script = [json_error(500), text_error(502), json_error(401)]
    with (caplog.at_level(logging.DEBUG), ChatServer(script) as server,
          pytest.raises(ModelHTTPError) as info):
        client = make(server.url, max_retries=2)
        _ask(client)
    assert info.value.status == 401 and info.value.attempts == 3
    assert "check the key in the environment variable CONFCAL_TEST_KEY" in str(info.value)
    if form != "long-prefix":  # there the key lies beyond the excerpt quoted
        assert "[redacted]" in str(info.value)
    no_trace_of_the_key(str(info.value), repr(info.value), repr(client), str(vars(client)),
                        caplog.text, *(r.getMessage() for r in caplog.records))
    assert {r.name for r in caplog.records} == {"confcal.extras"}
    assert len(caplog.records) == 2  # two retries, logged once each


@pytest.mark.parametrize("form", ["plain", "json-u-escaped", "percent", "first-20", "hex",
                                  "hex-upper", "hex-spaced", "space-split",
                                  "zero-width-split", "format-split", "fullwidth"])
@pytest.mark.parametrize("make, good", CLIENTS)
def test_a_200_body_that_echoes_the_key_is_refused(make, good, form):
    def not_json(r: dict[str, Any]) -> Reply:
        return Reply(body=f"proxy says: {_echoes(r)[form]}".encode())

    def in_the_answer(r: dict[str, Any]) -> Reply:
        if isinstance(good.json, dict):  # Anthropic's shape
            body = dict(good.json, content=[{"type": "text", "text": _echoes(r)[form]}])
            return Reply(body=json.dumps(body).encode().replace(b"\\\\", b"\\"))
        return Reply(body=json.dumps({"choices": [{"message": {
            "content": _echoes(r)[form]}, "finish_reason": "stop"}]}).encode().replace(
                b"\\\\", b"\\"))

    for script in (not_json, in_the_answer):
        with ChatServer([script]) as server, pytest.raises(ModelResponseError) as info:
            _ask(make(server.url))
        no_trace_of_the_key(str(info.value))
        assert info.value.status == 200


def _base64_runs(secret: str) -> set[str]:
    """Every 8 characters of base64 that only the secret's own bytes decide."""
    runs = set()
    for skip in range(3):
        chunk = secret.encode()[skip:]
        text = base64.b64encode(chunk[:len(chunk) - len(chunk) % 3]).decode()
        runs |= {text[i:i + 8] for i in range(len(text) - 7)}
    return runs


@pytest.mark.parametrize("prefix", ["", "Bearer ", "x:"])  # three byte alignments
@pytest.mark.parametrize("make, good", CLIENTS)
def test_a_base64_echo_of_the_key_is_redacted_and_refused(make, good, prefix, waits, caplog):
    # a gateway that dumps the request's headers base64-encoded: before, quoted whole
    def encoded(r: dict[str, Any]) -> str:
        sent = r["headers"].get("Authorization", "").removeprefix("Bearer ") \
            or r["headers"].get("x-api-key", "")
        return base64.b64encode((prefix + sent).encode()).decode()

    script = [lambda r: Reply(status=500, body=f"headers: {encoded(r)}".encode()),
              lambda r: Reply(status=401, body=json.dumps(
                  {"error": {"message": f"bad credential {encoded(r)}"}}).encode())]
    with (caplog.at_level(logging.DEBUG), ChatServer(script) as server,
          pytest.raises(ModelHTTPError) as info):
        _ask(make(server.url, max_retries=1))
    texts = [str(info.value), caplog.text]
    assert "[redacted]" in str(info.value)
    with ChatServer([lambda r: Reply(body=f"echo {encoded(r)}".encode())]) as server, \
            pytest.raises(ModelResponseError, match="echoes the credential") as refused:
        _ask(make(server.url))
    texts.append(str(refused.value))
    no_trace_of_the_key(*texts)
    assert not [r for r in _base64_runs(KEY) if any(r in t for t in texts)]


def test_a_redirect_to_a_host_spelling_the_key_is_redacted_although_lowercased(waits):
    # urlsplit lowercases a host name: the key's capitals no longer match it as written
    key = "sk-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    with ChatServer([Reply(status=302, headers={"Location": f"http://{key}.evil:81/"})]) \
            as server, pytest.raises(ModelHTTPError) as info:
        OpenAICompatibleClient(server.url, "m", api_key_env=None,
                               headers={"X-Key": key}).complete(REQUEST)
    assert "a redirect to http://[redacted].evil:81;" in str(info.value)
    assert "abcdefgh" not in str(info.value)


def test_http_client_debugging_prints_nothing_of_the_key(monkeypatch, capsys):
    # HTTPConnection.debuglevel = 1 prints every request sent, its headers included
    import http.client

    monkeypatch.setattr(http.client.HTTPConnection, "debuglevel", 1)
    with ChatServer([Reply("1")]) as server:
        assert _openai(server.url).complete(REQUEST).text == "1"
    out = capsys.readouterr()
    no_trace_of_the_key(out.out, out.err)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("make, good", CLIENTS)
def test_a_lone_surrogate_in_a_200_is_a_response_error(make, good):
    # valid JSON, but no text: no cache file, record or CSV could hold it
    body = (b'{"choices": [{"message": {"content": "x \\ud800"}, "finish_reason": "stop"}],'
            b' "type": "message", "content": [{"type": "text", "text": "x \\udfff"}]}')
    with ChatServer([Reply(body=body)]) as server, \
            pytest.raises(ModelResponseError, match="lone surrogate"):
        _ask(make(server.url))
    pair = b'{"choices": [{"message": {"content": "\\ud83d\\ude00 \\\\ud800"}}]}'
    with ChatServer([Reply(body=pair)]) as server:  # a pair, and an escaped backslash
        assert _openai(server.url).complete(REQUEST).text == "\U0001F600 \\ud800"


def test_a_proxy_quoting_its_credentials_back_is_redacted(monkeypatch, waits, caplog):
    password = "hunter2-proxy-secret"
    seen: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))

    def proxy() -> None:  # refuses the CONNECT, quoting the Proxy-Authorization back
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                seen.append(data)
                auth = next(line.split(b" ", 2)[2] for line in data.split(b"\r\n")
                            if line.lower().startswith(b"proxy-authorization:"))
                conn.sendall(b"HTTP/1.1 407 you sent " + auth + b" = "
                             + password.encode() + b"\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=proxy, daemon=True).start()
    port = listener.getsockname()[1]
    monkeypatch.setenv("HTTPS_PROXY", f"http://alice:{password}@127.0.0.1:{port}")
    monkeypatch.delenv("no_proxy")
    monkeypatch.delenv("NO_PROXY")
    try:
        with caplog.at_level(logging.DEBUG), pytest.raises(ModelConnectionError) as info:
            _openai("https://api.example.invalid/v1", max_retries=1).complete(REQUEST)
    finally:
        listener.close()
    # the proxy saw a CONNECT and its own credentials, never the key
    assert len(seen) == 2 and all(s.startswith(b"CONNECT api.example.invalid:443 ")
                                  for s in seen)
    assert KEY.encode() not in b"".join(seen)
    basic = base64.b64encode(f"alice:{password}".encode()).decode()
    for text in (str(info.value), caplog.text):
        assert "Tunnel connection failed: 407 you sent [redacted]" in text
        assert password not in text and basic not in text


@pytest.mark.parametrize("make, good", CLIENTS)
def test_a_missing_key_is_an_error_before_any_request(make, good, monkeypatch):
    monkeypatch.delenv("CONFCAL_TEST_KEY")
    with ChatServer([good]) as server, pytest.raises(
            ModelCallError, match="environment variable CONFCAL_TEST_KEY must hold the .*API "
                                  "key; found it unset or empty") as info:
        _ask(make(server.url))
    assert server.requests == [] and info.value.attempts == 0


def test_a_key_with_a_line_break_is_refused_without_quoting_it(monkeypatch):
    monkeypatch.setenv("CONFCAL_TEST_KEY", "sk-abcdef\r\nX-Evil: 1")
    with ChatServer([Reply("1")]) as server, pytest.raises(ModelCallError) as info:
        _openai(server.url).complete(REQUEST)
    assert "printable ASCII" in str(info.value) and "abcdef" not in str(info.value)
    assert server.requests == []


def test_extra_header_values_are_redacted_like_the_key(waits):
    token = "org-private-token-77777777"
    with ChatServer([Reply(status=403, body=f"no access for {token}".encode())]) as server:
        client = OpenAICompatibleClient(server.url, "m", api_key_env=None,
                                        headers={"X-Gateway-Token": token})
        with pytest.raises(ModelHTTPError) as info:
            client.complete(REQUEST)
    assert server.requests[0]["headers"]["X-Gateway-Token"] == token
    assert token not in str(info.value) and "[redacted]" in str(info.value)
    with pytest.raises(ValidationError) as bad:
        OpenAICompatibleClient(server.url, "m", headers={"X-Token": f"{token}\r\nX: 1"})
    assert token not in str(bad.value)


# --------------------------------------------------------- credentials in the base URL
@pytest.mark.parametrize("url, hidden, shown", [
    ("https://user:hunter2@api.example/v1", "hunter2", "https://api.example"),
    ("https://sk-only-a-key-here@api.example/v1", "sk-only-a-key", "https://api.example"),
    ("https://api.example/v1?api-key=sk-in-the-query-99", "sk-in-the-query",
     "the parameters ['api-key']"),
    ("https://api.example/v1#sk-in-a-fragment-99", "sk-in-a-fragment", "https://api.example"),
    ("https://api.example:sk-port-secret/v1", "sk-port-secret", "numeric port"),
])
@pytest.mark.parametrize("make", [_openai, _anthropic])
def test_a_base_url_with_credentials_is_refused_without_quoting_them(make, url, hidden, shown):
    with pytest.raises(ValidationError) as info:
        make(url)
    assert hidden not in str(info.value) and shown in str(info.value)


@pytest.mark.parametrize("url, found", [
    ("http://127.0.0.1:9/v1\r\nX-Evil: 1", "'\\r' at character 21"),
    ("http://127.0.0.1:9/v 1", "' ' at character 20"),
    ("http://127.0.0.1:9/v1\x00", "'\\x00' at character 21"),
    ("http://127.0.0.1:9/v1/\u00e9", "'\u00e9' at character 22"),
])
@pytest.mark.parametrize("make", [_openai, _anthropic])
def test_a_base_url_http_client_cannot_send_is_refused_when_made(make, url, found):
    # before: retried as a connection error, or a UnicodeEncodeError out of complete()
    with pytest.raises(ValidationError, match="must be an ASCII URL without spaces or "
                                              "control characters") as info:
        make(url)
    assert str(info.value).endswith(f"found {found}")


# ---------------------------------------------------------------------------- retries
@pytest.mark.parametrize("status", [408, 409, 429, 500, 501, 502, 503, 504, 529])
@pytest.mark.parametrize("make, good", CLIENTS)
def test_the_same_statuses_are_retried_by_every_client(make, good, status, waits):
    with ChatServer([Reply(status=status), good]) as server:
        assert _ask(make(server.url)) == "1"
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 422])
@pytest.mark.parametrize("make, good", CLIENTS)
def test_client_errors_fail_at_once_quoting_the_server(make, good, status, waits):
    with ChatServer([Reply(status=status), good]) as server, pytest.raises(
            ModelHTTPError, match=f"answered HTTP {status}: scripted error {status}") as info:
        _ask(make(server.url))
    assert info.value.status == status and info.value.attempts == 1
    assert len(server.requests) == 1 and waits == []


def test_retry_after_in_seconds_and_as_an_http_date_is_waited_exactly(waits):
    date = email.utils.formatdate(time.time() + 20, usegmt=True)
    script = [Reply(status=429, headers={"Retry-After": "3"}),
              Reply(status=503, headers={"Retry-After": date}), Reply("1")]
    with ChatServer(script) as server:
        assert _openai(server.url).complete(REQUEST).text == "1"
    assert waits[0] == 3.0 and 17 <= waits[1] <= 21  # whole seconds in the date


def test_a_retry_after_beyond_max_wait_fails_at_once(waits):
    script = [Reply(status=429, headers={"Retry-After": "600"}), Reply("1")]
    with ChatServer(script) as server, pytest.raises(
            ModelHTTPError, match="retry after 600s, more than max_wait=60s") as info:
        _openai(server.url).complete(REQUEST)
    assert len(server.requests) == 1 and waits == [] and info.value.retryable


def test_backoff_doubles_with_bounded_jitter_and_retries_are_bounded(waits):
    with ChatServer([Reply(status=500)] * 4) as server, pytest.raises(
            ModelHTTPError, match=r"failed after 4 attempts \(max_retries=3\); last: "
                                  r"HTTP 500: scripted error 500") as info:
        _openai(server.url, backoff=0.5, max_wait=1.5, max_retries=3).complete(REQUEST)
    assert info.value.attempts == 4 and len(server.requests) == 4
    # 0.5, 1.0, then 2.0 capped at 1.5; each plus at most 10% jitter
    for wait, base in zip(waits, [0.5, 1.0, 1.5], strict=True):
        assert base <= wait <= base * 1.1


def test_a_refused_connection_is_retried_then_a_connection_error(waits):
    with socket.socket() as s:  # a port that was free a moment ago: nobody listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ModelConnectionError, match="failed after 3 attempts.*connection "
                                                   "failed") as info:
        _openai(f"http://127.0.0.1:{port}/v1", max_retries=2).complete(REQUEST)
    assert info.value.status is None and info.value.retryable and len(waits) == 2


def test_a_timeout_is_retried_then_a_connection_error(waits):
    with ChatServer([Reply("1", delay=1.0)] * 2) as server:
        started = time.monotonic()
        with pytest.raises(ModelConnectionError, match="no answer within timeout=0.2s"):
            _openai(server.url, timeout=0.2, max_retries=1).complete(REQUEST)
        assert time.monotonic() - started < 3
    assert len(waits) == 1


# ------------------------------------------------------------------ unreadable bodies
@pytest.mark.parametrize("body, message", [
    (b"<html>gateway</html>", "a body that is not JSON"),
    (b"\xff\xfe not utf-8", "a body that is not UTF-8"),
    (b"[1, 2]", "JSON that is not an object"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply to read"),
    (b'{"choices": [{"message": {"content": "1"}}], "x": NaN}', "not JSON"),
    (b'{"choices": []}', "without choices\\[0\\]"),
])
@pytest.mark.parametrize("make, good", CLIENTS)
def test_an_unreadable_200_is_a_response_error_never_a_crash(make, good, body, message):
    if make in (_anthropic, _anthropic_2023) and "choices" in message:
        message = "not a Messages response"
    with ChatServer([Reply(body=body)]) as server, pytest.raises(ModelResponseError,
                                                                  match=message) as info:
        _ask(make(server.url))
    assert len(server.requests) == 1  # not retried: asking again would cost and repeat
    assert info.value.status == 200 and isinstance(info.value, ModelCallError)


@pytest.mark.parametrize("make, good", CLIENTS)
def test_a_body_beyond_max_response_bytes_is_not_read(make, good):
    with ChatServer([Reply("x" * 5000)]) as server, pytest.raises(
            ModelResponseError, match="larger than max_response_bytes=1000; not read"):
        _ask(make(server.url, max_response_bytes=1000))


def test_a_body_without_content_length_is_capped_while_reading():
    class Streaming(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # no length: the body ends when the connection does

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"pad": "' + b"x" * 50_000 + b'"}')

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Streaming)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        client = OpenAICompatibleClient(f"http://127.0.0.1:{httpd.server_address[1]}/v1", "m",
                                        api_key_env=None, max_response_bytes=10_000)
        with pytest.raises(ModelResponseError, match="larger than max_response_bytes=10000"):
            client.complete(REQUEST)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_errors_are_one_family():
    for cls in (ModelHTTPError, ModelConnectionError, ModelResponseError):
        assert issubclass(cls, ModelCallError)
    assert issubclass(ModelCallError, ModelError) and issubclass(ModelError, ConfcalError)


# ------------------------------------------------------------------------------- TLS
@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                        "1", "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("openssl is needed to make a self-signed certificate")
    return str(cert), str(key)


@pytest.mark.parametrize("make, good", CLIENTS)
def test_tls_is_verified_and_a_self_signed_server_never_sees_the_key(make, good, self_signed,
                                                                     waits):
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(dict(self.headers))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"https://127.0.0.1:{httpd.server_address[1]}/v1"
        with pytest.raises(ModelConnectionError, match="TLS certificate was not verified"):
            make(url).complete(REQUEST)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert seen == [] and waits == []  # not retried: a certificate does not heal
    assert "verify" not in OpenAICompatibleClient.__init__.__code__.co_varnames


# --------------------------------------------------------------------------- helpers
def test_retry_after_parsing():
    now = 1_000_000.0
    assert _http.retry_after("7", now) == 7.0
    assert _http.retry_after(None, now) is None
    assert _http.retry_after("soon", now) is None
    assert _http.retry_after(email.utils.formatdate(now + 30, usegmt=True), now) == 30.0
    assert _http.retry_after(email.utils.formatdate(now - 30, usegmt=True), now) == 0.0
    assert _http.retry_after("-5", now) == 0.0


def test_redact_by_hand():
    key = "abcdefghijKLMNOP"
    # 'abcdefgh' is a run of 8 of the key's characters; 'abcdefg' (7) is not
    assert _http.redact("x abcdefgh y", [key]) == "x [redacted] y"
    assert _http.redact("x abcdefg y", [key]) == "x abcdefg y"
    # the escaped form is replaced as written: nothing of it survives
    assert _http.redact(r"k=\u0061bcdefghij\/", [key]) == r"k=[redacted]\/"
    assert _http.redact("%61%62cdefgh!", [key]) == "[redacted]!"
    # base64 inside a longer text: base64("abcdef") = "YWJjZGVm"; at byte 1,
    # base64("bcdefg") = "YmNkZWZn"; 8 characters encode 6 bytes of the key
    assert _http.redact("Basic YWJjZGVmZ2hp", [key]) == "Basic [redacted]"
    assert _http.redact("x YmNkZWZn y", [key]) == "x [redacted] y"
    assert _http.redact("x YWJjZGVm y", ["abcde"]) == "x YWJjZGVm y"  # 5 bytes: no form
    # a literal "%00" of a secret beside JSON's \" is not decoded in the same pass
    assert _http.redact('{"m": "0000%00\\""}', ['0000%00"']) == '{"m": "[redacted]"}'
    assert _http.redact("short", ["abc"]) == "short"
    assert _http.redact("has abc in it", ["abc"]) == "has [redacted] in it"


def _encode(secret: str, how: list[int]) -> str:
    """The secret written with per-character encodings (0 plain, 1 \\u, 2 %XX, 3 &#N;)."""
    out = []
    for c, h in zip(secret, how, strict=False):
        out.append([c, f"\\u{ord(c):04x}", f"%{ord(c):02X}", f"&#{ord(c)};"][h])
    return "".join(out) + secret[len(how):]


@settings(max_examples=examples(200), deadline=None)
@given(secret=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=8,
                      max_size=48),
       how=st.lists(st.integers(0, 3), max_size=48),
       before=st.text(max_size=40), after=st.text(max_size=40))
def test_redact_removes_every_written_form(secret, how, before, after):
    text = before + _encode(secret, how) + after
    cleaned = _http.redact(text, [secret])
    assert secret not in cleaned
    decoded = re.sub(r"\[redacted\]", "\0", cleaned)
    once = _http._ESCAPE.sub(lambda m: _http._unescape(m.group()), decoded)
    assert secret not in once and secret not in _http._ESCAPE.sub(
        lambda m: _http._unescape(m.group()), once)


@settings(max_examples=examples(200), deadline=None)
@given(secret=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=8,
                      max_size=48),
       before=st.text(max_size=30), after=st.text(max_size=30), ascii_only=st.booleans(),
       slash=st.booleans())
def test_redacted_json_decoded_by_the_json_module_holds_no_run_of_the_secret(
        secret, before, after, ascii_only, slash):
    # the reference: whatever json.loads reads back from the redacted body, the way a
    # program reading a message would, holds no 8 consecutive characters of the secret
    body = json.dumps({"error": {"message": before + secret + after}}, ensure_ascii=ascii_only)
    if slash:
        body = body.replace("/", "\\/")
    cleaned = _http.redact(body, [secret])
    try:
        text = json.loads(cleaned)["error"]["message"]
    except ValueError:  # a replaced span took JSON syntax with it: then read it as text
        text = cleaned
    runs = {secret[i:i + 8] for i in range(len(secret) - 7)}
    assert not [r for r in runs if r in text]


@settings(max_examples=examples(300), deadline=None)
@given(secret=st.text(st.sampled_from('ab/%\\"u0 '), min_size=1, max_size=12),
       text=st.text(st.sampled_from('ab/%\\"u0x \u200b\uff41\t'), max_size=40))
def test_the_fast_echo_check_agrees_with_trying_every_run(secret, text):
    # the reference: every run of every form of the secret looked for in every decoded
    # form of the text, and in each read without spaces and invisible characters
    def level(s: str, pattern: re.Pattern[str] = _http._ESCAPE) -> str:
        return pattern.sub(lambda m: _http._unescape(m.group()), s)

    decoded = (text, level(text), level(level(text)), level(text, _http._JSON_ESCAPE),
               level(level(text, _http._JSON_ESCAPE)))
    views = [*decoded, *map(read_as, decoded)]
    brute = any(form[i:i + min(run, len(form))] in view
                for form, run in _http._forms([secret])
                for i in range(len(form) - min(run, len(form)) + 1) for view in views)
    assert _http.holds_secret(text, [secret]) == brute


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e",
             "\U000e0041", " ", "\t", "\n", "\u3000", "\u00a0"]


@settings(max_examples=examples(200), deadline=None)
@given(secret=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=8,
                      max_size=40),
       gaps=st.lists(st.sampled_from(["", *INVISIBLE]), max_size=40),
       wide=st.lists(st.booleans(), max_size=40),
       before=st.text(max_size=20), after=st.text(max_size=20))
def test_redact_removes_a_secret_split_by_invisible_characters_or_written_wide(
        secret, gaps, wide, before, after):
    # the attacks: the key with spaces or zero-width characters between its characters,
    # or in fullwidth letters (the same text under NFKC)
    written = "".join((chr(ord(c) + 0xFEE0) if w else c) + g for c, g, w in zip(
        secret, gaps + [""] * len(secret), wide + [False] * len(secret), strict=False))
    cleaned = _http.redact(before + written + after, [secret])
    runs = {secret[i:i + 8] for i in range(len(secret) - 7)}
    assert not [r for r in runs if r in read_as(cleaned.replace("[redacted]", "\0"))]


@settings(max_examples=examples(100), deadline=None)
@given(secret=st.text(min_size=8, max_size=30), upper=st.booleans(),
       spaced=st.booleans(), before=st.text("0123456789abcdef ", max_size=20))
def test_redact_removes_the_hex_of_a_secret(secret, upper, spaced, before):
    raw = secret.encode("utf-8", "surrogatepass").hex()
    written = raw.upper() if upper else raw
    if spaced:
        written = " ".join(written[i:i + 2] for i in range(0, len(written), 2))
    cleaned = _http.redact(before + written + " end", [secret])
    # no 16 digits (8 bytes) of the secret's hex remain, however the text is read
    runs = {raw[i:i + 16] for i in range(len(raw) - 15)}
    assert not [r for r in runs if r in read_as(cleaned.replace("[redacted]", " ")).lower()]
    assert cleaned.endswith(" end")


def test_redact_by_hand_finds_the_new_forms_and_leaves_plain_numbers():
    key = "abcdefghijKLMNOP"
    # hex: 16 digits are 8 bytes of the key; 14 digits (7 bytes) are not
    assert _http.redact("x 6162636465666768 y", [key]) == "x [redacted] y"
    assert _http.redact("x 61626364656667 y", [key]) == "x 61626364656667 y"
    assert _http.redact("x 6162636465666768696A y", [key]) == "x [redacted] y"
    # split by spaces or invisible characters: the span from first to last is replaced
    assert _http.redact("x a b c d e f g h y", [key]) == "x [redacted] y"
    assert _http.redact("x a\u200bbcd\u2060efgh.", [key]) == "x [redacted]."
    assert _http.redact("x a b c d e f g y", [key]) == "x a b c d e f g y"  # 7 of them
    # fullwidth (NFKC) letters, and JSON escapes of them
    assert _http.redact("\uff41\uff42\uff43defgh", [key]) == "[redacted]"
    assert _http.redact(r"\uff41\uff42\uff43defgh", [key]) == "[redacted]"
    # a key of digits: its hex is digits, so only 16 of them count
    assert _http.redact("id 3132333435363738", ["12345678"]) == "id [redacted]"
    assert _http.redact("id 31323334", ["12345678"]) == "id 31323334"


def test_the_invisible_characters_are_every_format_character_of_unicode():
    cf = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    assert [c for c in cf + spaces if not _http._INVISIBLE.match(c)] == []
    assert _http.fold("".join(cf + spaces)) == ""


# ------------------------------------------------------------ a deadline per request
def _read_request(conn: socket.socket) -> None:
    """Read one whole request (head, then a body of its Content-Length) off ``conn``, so
    that a raw test server answers only after the client has finished sending."""
    conn.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
    while len(body) < length:
        body += conn.recv(65536)


class _Trickle:
    """A server on 127.0.0.1 that reads the request, then sends ``head`` and one byte of
    ``drip`` every ``every`` seconds, for ever (until the client hangs up)."""

    def __init__(self, head: bytes, drip: bytes, every: float = 0.3) -> None:
        self.head, self.drip, self.every = head, drip, every
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                _read_request(conn)
                try:
                    conn.sendall(self.head)
                    while not self.stop.is_set():
                        for i in range(len(self.drip)):
                            conn.sendall(self.drip[i:i + 1])
                            time.sleep(self.every)
                except OSError:
                    continue  # the client hung up: the next connection

    def __enter__(self) -> _Trickle:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(5)


@pytest.mark.parametrize("head, drip", [
    # one byte of the body every 0.3 s: each read is within the timeout, the whole is not
    (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n",
     b'{"a": "' + b"x" * 11 + b'"}'),
    # endless interim answers: http.client reads a 100 Continue and waits for the next
    (b"", b"HTTP/1.1 100 Continue\r\n\r\n"),
], ids=["trickled-body", "endless-100-continue"])
def test_a_request_ends_at_its_deadline_however_the_server_trickles(head, drip):
    with _Trickle(head, drip, every=0.3 if head else 0.01) as server:
        transport = _http.Transport(f"http://127.0.0.1:{server.port}/v1", timeout=1,
                                    max_retries=1, backoff=0, max_wait=0,
                                    max_response_bytes=1 << 20)
        started = time.monotonic()
        with pytest.raises(ModelConnectionError, match=(
                r"failed after 2 attempts .*no answer within timeout=1s \(the whole request, "
                r"connect to last byte\)")):
            transport.post("/chat", {"q": 1}, headers={})
        elapsed = time.monotonic() - started
    assert elapsed < 3.5, elapsed  # two attempts of 1 s each (it was 23 s for one)


def test_a_negative_chunk_size_is_one_retried_failure_not_a_bare_value_error():
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n-5\r\n")
    with _Trickle(head, b" ", every=0.3) as server:
        transport = _http.Transport(f"http://127.0.0.1:{server.port}/v1", timeout=2,
                                    max_retries=1, backoff=0, max_wait=0,
                                    max_response_bytes=1 << 20)
        with pytest.raises(ModelConnectionError, match="failed after 2 attempts") as info:
            transport.post("/chat", {"q": 1}, headers={})
    assert info.value.retryable


# ---------------------------------------------------------------- bodies cut short
class _Raw:
    """A server on 127.0.0.1 answering the n-th connection with ``answers[n]`` (the last
    one again after that) as raw bytes, then closing it; it counts the connections."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = answers
        self.served = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                _read_request(conn)
                answer = self.answers[min(self.served, len(self.answers) - 1)]
                self.served += 1
                try:
                    conn.sendall(answer)
                except OSError:
                    continue

    def __enter__(self) -> _Raw:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close alone does not)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(5)


COMPLETION = json.dumps({"choices": [{"message": {"role": "assistant", "content": "1"},
                                      "finish_reason": "stop"}]}).encode()
WHOLE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
         + str(len(COMPLETION)).encode() + b"\r\nConnection: close\r\n\r\n" + COMPLETION)
CUT = {
    # the server declares 100 bytes and closes after 7: http.client returns the 7
    "content-length": (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + COMPLETION[:7],
                       "body cut short after 7 of 100 bytes"),
    "inside-a-chunk": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n"
                       + COMPLETION[:7], "body cut short after 7 bytes of a chunked body"),
    "no-last-chunk": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n"
                      + COMPLETION[:7] + b"\r\n",
                      "body cut short after 7 bytes of a chunked body"),
    "an-error-body": (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 50\r\n\r\n{\"err",
                      "body cut short after 5 of 50 bytes"),
}


@pytest.mark.parametrize("cut", list(CUT))
def test_a_body_cut_short_is_a_transport_failure_retried_like_a_dropped_connection(
        cut, waits):
    answer, message = CUT[cut]
    with _Raw([answer, WHOLE]) as server:  # cut once, then whole: the retry succeeds
        assert _openai(server.url, max_retries=1).complete(REQUEST).text == "1"
    assert server.served == 2 and len(waits) == 1
    with _Raw([answer]) as server, pytest.raises(ModelConnectionError) as info:
        _openai(server.url, max_retries=2).complete(REQUEST)
    assert server.served == 3 and info.value.retryable and info.value.status is None
    assert f"failed after 3 attempts (max_retries=2); last: {message}" in str(info.value)
    assert "not JSON" not in str(info.value)


def test_a_body_cut_short_is_retried_by_the_anthropic_client_too(waits):
    body = json.dumps({"type": "message", "content": [{"type": "text", "text": "1"}],
                       "stop_reason": "end_turn"}).encode()
    whole = (b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode()
             + b"\r\n\r\n" + body)
    cut = b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" \
        + body[:10]
    with _Raw([cut, whole]) as server:
        assert _anthropic(server.url, max_retries=1).complete(REQUEST).text == "1"
    assert server.served == 2


@pytest.mark.parametrize("size", [b"-5", b"-0", b"0x5", b"5_0", b"+5", b"zz"])
def test_a_malformed_chunk_size_is_a_retried_failure_never_read_to_the_end(size, waits):
    # http.client takes "-5" (and then reads to the end of the connection, whatever
    # its length), "0x5", "5_0", "+5": each is malformed HTTP here
    answer = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size
              + b"\r\n" + COMPLETION + b"\r\n0\r\n\r\n")
    with _Raw([answer]) as server, pytest.raises(ModelConnectionError) as info:
        _openai(server.url, max_retries=1).complete(REQUEST)
    assert server.served == 2 and info.value.retryable
    assert f"malformed HTTP (chunk size {size!r})" in str(info.value)


@pytest.mark.parametrize("answer", [CUT["content-length"][0], CUT["no-last-chunk"][0],
                                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    b"-5\r\n" + COMPLETION],
                         ids=["content-length", "chunked", "negative-chunk-size"])
def test_malformed_http_becomes_one_failure_record_of_a_run(answer, waits, tmp_path):
    from confcal.extras.extraction import run_extraction
    from confcal.scoring.comparators import Text
    from confcal.scoring.schema import Field, Schema

    corpus = {"doc-a": {"ocr": [("ACME", 0.9)]}, "doc-b": {"ocr": [("Other", 0.9)]}}
    with _Raw([answer]) as server:
        run = run_extraction(_openai(server.url, max_retries=1), corpus, modality="ocr",
                             strategy="verbalized", schema=Schema({"A": Field(Text())}),
                             concurrency=1, cache_dir=tmp_path, progress=False)
    assert server.served == 4  # two documents, two attempts each
    assert list(run.failures) == ["doc-a", "doc-b"] and not run.predictions
    for failure in run.failures.values():
        assert failure["kind"] == "call" and "failed after 2 attempts" in failure["message"]
    assert list(tmp_path.rglob("*.json")) == []  # nothing cached of a cut answer
