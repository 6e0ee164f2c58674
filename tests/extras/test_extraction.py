"""confcal.extras.clients and confcal.extras.extraction against a real local HTTP server.

Every test that calls a model starts a chat-completions server on 127.0.0.1 (http.server in
a thread) that answers from a script: a queue of replies, or a function of the request.
Nothing else on the network is contacted (the providers are tested in test_providers.py,
the transport in test_http.py). Waits between retries are recorded instead of slept,
except where the test is about a socket timeout.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from confcal.exceptions import ModelResponseError, ValidationError
from confcal.extras import _http
from confcal.extras._corpus import check_documents
from confcal.extras.clients import (
    ChatClient,
    ChatRequest,
    ChatResponse,
    ModelCallError,
    OpenAICompatibleClient,
)
from confcal.extras.extraction import (
    FAILURE_KINDS,
    MAX_IMAGE_SIZE,
    ModelAnswerError,
    build_request,
    extract_logprob,
    extract_two_stage,
    extract_verbalized,
    run_extraction,
)
from confcal.scoring import score_documents
from confcal.scoring.comparators import Number, Text
from confcal.scoring.schema import Field, Items, Schema

SCHEMA = Schema({"Agency": Field(Text()), "GrossTotal": Field(Number()),
                 "LineItems": Items({"Rate": Field(Number())})})
OCR = [("ACME", 0.98), ("Media", 0.91), ("Total", 0.99), ("100.00", 0.87)]
SECRET = "sk-test-not-a-real-key-8d1f"

TOPK_ANSWER = json.dumps({
    "Agency": [{"value": "ACME Media", "probability": 0.7},
               {"value": "ACME", "probability": 0.2}],
    "GrossTotal": [{"value": 100.0, "probability": 0.9}],
    "LineItems": [{"Rate": [{"value": 5, "probability": 0.6}]}],
})


# --------------------------------------------------------------------------- server
Reply = tuple[int, dict[str, str], bytes, float]  # status, headers, body, delay (s)


def completion(text: str, *, finish: str = "stop", logprobs: list[dict] | None = None
               ) -> Reply:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text},
                              "finish_reason": finish}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
            "choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode(), 0.0


def error(status: int, message: str = "scripted error", headers: dict[str, str] | None = None
          ) -> Reply:
    body = json.dumps({"error": {"message": message}}).encode()
    return status, {"Content-Type": "application/json", **(headers or {})}, body, 0.0


class Script:
    """What the server answers: queued replies, else a function of the request body."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    def next(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return error(500, "unscripted request")


class Handler(BaseHTTPRequestHandler):
    script: Script  # set per server

    def do_POST(self) -> None:
        script = self.server.script  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with script.lock:
            script.requests.append({"path": self.path, "headers": dict(self.headers),
                                    "body": body})
            script.in_flight += 1
            script.max_in_flight = max(script.max_in_flight, script.in_flight)
        answered = False
        try:
            status, headers, payload, delay = script.next(body)
            if delay:
                time.sleep(delay)
            # out of flight before the answer leaves: once the client has it, its next
            # request may arrive before this thread would reach a later decrement
            with script.lock:
                script.in_flight -= 1
                answered = True
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)
        finally:
            if not answered:
                with script.lock:
                    script.in_flight -= 1

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.script = script  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the client's backoff waits instead of sleeping them."""
    recorded: list[float] = []
    monkeypatch.setattr(_http, "_sleep", recorded.append)
    return recorded


def client_for(url: str, **kwargs: Any) -> OpenAICompatibleClient:
    options = {"api_key_env": None, "timeout": 5.0, "max_retries": 3, "backoff": 0.01}
    return OpenAICompatibleClient(url, "test-model", **{**options, **kwargs})


def user_content(request: dict[str, Any]) -> Any:
    return request["body"]["messages"][1]["content"]


def png_size(data_url: str) -> tuple[int, int]:
    from PIL import Image

    assert data_url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(data_url.split(",", 1)[1]))).size


# ------------------------------------------------------------------ verbalized, modalities
def test_verbalized_ocr_only_sends_the_1s_topk_prompt_and_parses_the_answer(server):
    url, script = server
    script.queue.append(completion(TOPK_ANSWER))
    doc = extract_verbalized(client_for(url), SCHEMA, ocr=OCR, k=3, max_tokens=500)
    assert doc["Agency"]["candidates"][0] == {"value": "ACME Media", "probability": 0.7}
    assert doc["LineItems"][0]["Rate"] == {"candidates": [{"value": 5, "probability": 0.6}]}
    (request,) = script.requests
    body = request["body"]
    assert request["path"] == "/v1/chat/completions"
    assert body["model"] == "test-model" and body["max_tokens"] == 500
    assert "temperature" not in body and "logprobs" not in body
    text = user_content(request)
    assert isinstance(text, str)  # OCR only: no image part at all
    assert "top 3 candidate values" in text and "ACME\t0.98" in text and "100.00\t0.87" in text
    assert "no reasoning" in body["messages"][0]["content"]


def test_image_modality_sends_a_png_scaled_to_fit_1200_by_1000(server):
    from PIL import Image

    url, script = server
    for _ in range(3):
        script.queue.append(completion(TOPK_ANSWER))
    client = client_for(url)
    extract_verbalized(client, SCHEMA, image=Image.new("RGB", (2400, 1000), "white"))
    extract_verbalized(client, SCHEMA, image=Image.new("L", (1000, 2000), 255), ocr=OCR)
    extract_verbalized(client, SCHEMA, image=Image.new("RGBA", (300, 200)))
    first, second, third = (user_content(r) for r in script.requests)
    assert MAX_IMAGE_SIZE == (1200, 1000)
    # 2400 x 1000 -> width-bound: x0.5 -> 1200 x 500; 1000 x 2000 -> height-bound: 500 x 1000
    assert png_size(first[0]["image_url"]["url"]) == (1200, 500)
    assert "OCR" not in first[-1]["text"]
    assert png_size(second[0]["image_url"]["url"]) == (500, 1000)
    assert "ACME\t0.98" in second[-1]["text"]
    assert png_size(third[0]["image_url"]["url"]) == (300, 200)  # never enlarged


def test_inputs_are_checked_before_any_call(server):
    url, script = server
    client = client_for(url)
    with pytest.raises(ValidationError, match="image or ocr must be given"):
        extract_verbalized(client, SCHEMA)
    with pytest.raises(ValidationError, match=r"ocr\[1\] confidence must be a number within "
                                              r"\[0, 1\].*found 91"):
        extract_verbalized(client, SCHEMA, ocr=[("ACME", 0.98), ("Media", 91)])
    import numpy as np

    with pytest.raises(ValidationError, match="numpy array, which does not say"):
        extract_verbalized(client, SCHEMA, image=np.zeros((40, 40, 3), dtype=np.uint8))
    with pytest.raises(ValidationError, match="must be a readable image"):
        extract_verbalized(client, SCHEMA, image=b"not an image")
    assert script.requests == []


# ----------------------------------------------------------------------- retries, errors
def test_429_then_success_waits_what_retry_after_asks(server, waits):
    url, script = server
    script.queue.extend([error(429, "slow down", {"Retry-After": "3"}),
                         completion(TOPK_ANSWER)])
    doc = extract_verbalized(client_for(url), SCHEMA, ocr=OCR)
    assert doc["GrossTotal"]["candidates"][0]["value"] == 100.0
    assert len(script.requests) == 2
    assert waits == [3.0]  # the header, exactly, not the client's backoff


def test_a_500_is_retried_with_doubling_backoff_then_reported(server, waits):
    url, script = server
    script.responder = lambda body: error(500, "overloaded")
    client = client_for(url, max_retries=2, backoff=0.5)
    with pytest.raises(ModelCallError, match=r"failed after 3 attempts \(max_retries=2\); "
                                              r"last: HTTP 500.*overloaded") as info:
        extract_verbalized(client, SCHEMA, ocr=OCR)
    assert info.value.status == 500 and info.value.attempts == 3 and info.value.retryable
    assert len(script.requests) == 3
    # 0.5 then 1.0 seconds, each with at most 10% jitter
    assert len(waits) == 2
    assert 0.5 <= waits[0] <= 0.55 and 1.0 <= waits[1] <= 1.1


def test_a_500_then_success_recovers(server, waits):
    url, script = server
    script.queue.extend([error(500), completion(TOPK_ANSWER)])
    assert extract_verbalized(client_for(url), SCHEMA, ocr=OCR)["Agency"]
    assert len(script.requests) == 2 and len(waits) == 1


def test_client_errors_are_not_retried(server, waits):
    url, script = server
    script.queue.append(error(400, "max_tokens is too large"))
    with pytest.raises(ModelCallError, match="HTTP 400.*max_tokens is too large") as info:
        extract_verbalized(client_for(url), SCHEMA, ocr=OCR)
    assert info.value.status == 400 and not info.value.retryable
    assert len(script.requests) == 1 and waits == []


def test_a_retry_after_beyond_max_wait_fails_at_once(server, waits):
    url, script = server
    script.queue.append(error(429, headers={"Retry-After": "3600"}))
    with pytest.raises(ModelCallError, match="retry after 3600s, more than max_wait=60s"):
        extract_verbalized(client_for(url), SCHEMA, ocr=OCR)
    assert len(script.requests) == 1 and waits == []


def test_a_malformed_json_answer_is_an_answer_error(server):
    url, script = server
    script.queue.append(completion("Sure! The agency is ACME Media and the total is 100."))
    with pytest.raises(ModelAnswerError, match="verbalized answer cannot be read: answer must "
                                               "contain a JSON object") as info:
        extract_verbalized(client_for(url), SCHEMA, ocr=OCR)
    assert info.value.response is not None and "Sure!" in info.value.response.text


def test_a_body_that_is_not_a_chat_completion_is_a_response_error(server):
    url, script = server
    script.queue.append((200, {"Content-Type": "application/json"}, b"<html>oops</html>", 0.0))
    with pytest.raises(ModelResponseError, match="answered 200 with a body that is not JSON "
                                                 ".*it starts '<html>oops"):
        extract_verbalized(client_for(url), SCHEMA, ocr=OCR)


def test_an_answer_cut_at_max_tokens_is_not_read(server):
    url, script = server
    script.queue.append(completion(TOPK_ANSWER[:60], finish="length"))
    with pytest.raises(ModelAnswerError, match=r"cut at max_tokens=40 \(finish_reason "
                                               r"'length', 60 characters\)"):
        extract_verbalized(client_for(url), SCHEMA, ocr=OCR, max_tokens=40)


def test_a_timeout_is_retried(server, waits):
    url, script = server
    # the first answer comes after the client has given up; the retry is answered at once
    script.queue.extend([(*completion(TOPK_ANSWER)[:3], 1.0), completion(TOPK_ANSWER)])
    started = time.monotonic()
    doc = extract_verbalized(client_for(url, timeout=0.2), SCHEMA, ocr=OCR)
    assert doc["Agency"] and len(script.requests) == 2 and len(waits) == 1
    assert time.monotonic() - started < 5


def test_timeouts_until_retries_run_out(server, waits):
    url, script = server
    script.responder = lambda body: (*completion(TOPK_ANSWER)[:3], 0.6)
    with pytest.raises(ModelCallError, match=r"failed after 2 attempts.*no answer within "
                                             r"timeout=0.2s") as info:
        extract_verbalized(client_for(url, timeout=0.2, max_retries=1), SCHEMA, ocr=OCR)
    assert info.value.status is None and info.value.retryable


def test_a_refused_connection_is_reported(waits):
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nobody listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = client_for(f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(ModelCallError, match="failed after 2 attempts.*connection failed"):
        extract_verbalized(client, SCHEMA, ocr=OCR)


# -------------------------------------------------------------------------- logprobs
TOKENS = ['{"', 'Agency', '":', ' "', 'AC', 'ME', '",', ' "', 'Gross', 'Total', '":', ' 1',
          '00', ',', ' "', 'Line', 'Items', '":', ' [{"', 'Rate', '":', ' 5', '}]}']
PROBS = {4: 0.8, 5: 0.5, 11: 0.6, 12: 0.9, 21: 0.7}  # token index -> probability


def logprob_content(tokens: list[str], probs: dict[int, float], *, runner_up: float = 0.1,
                    with_bytes: bool = False) -> list[dict[str, Any]]:
    content = []
    for i, token in enumerate(tokens):
        p = probs.get(i, 1.0)
        entry: dict[str, Any] = {
            "token": token, "logprob": math.log(p),
            "top_logprobs": [{"token": token, "logprob": math.log(p)},
                             {"token": "?", "logprob": math.log(runner_up)}]}
        if with_bytes:
            entry["bytes"] = list(token.encode("utf-8"))
        content.append(entry)
    return content


def test_logprob_extraction_requests_logprobs_and_aggregates_value_tokens(server):
    url, script = server
    script.queue.append(completion("".join(TOKENS), logprobs=logprob_content(TOKENS, PROBS)))
    doc = extract_logprob(client_for(url), SCHEMA, ocr=OCR)
    body = script.requests[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    assert not {"temperature", "top_p", "top_k"} & set(body)  # the server decides
    assert doc["Agency"]["value"] == "ACME"
    assert doc["Agency"]["confidence"] == pytest.approx(0.8)   # first value token 'AC'
    assert doc["GrossTotal"] == {"value": 100, "confidence": pytest.approx(0.6)}
    assert doc["LineItems"][0]["Rate"]["confidence"] == pytest.approx(0.7)


def test_logprob_margin_reads_the_top_alternatives(server):
    url, script = server
    script.queue.append(completion("".join(TOKENS),
                                   logprobs=logprob_content(TOKENS, PROBS, runner_up=0.2)))
    doc = extract_logprob(client_for(url), SCHEMA, image=_png_bytes(), method="margin")
    # at ' 1': p1 = 0.6, p2 = 0.2 -> (0.6 - 0.2) / (0.6 + 0.2) = 0.5
    assert doc["GrossTotal"]["confidence"] == pytest.approx(0.5)


def test_logprob_token_bytes_rebuild_a_character_split_across_tokens(server):
    url, script = server
    # "é" is two bytes; a tokenizer may split them, and neither half is text on its own
    tokens = ['{"', 'Agency', '":', ' "', 'M', 'X', 'dias', '"}']
    content = logprob_content(tokens, {4: 0.9, 5: 0.4})
    e_acute = "é".encode()
    content[5]["token"] = "\ufffd"          # what the text field shows for half a character
    content[5]["bytes"] = [e_acute[0]]
    content[6]["token"] = "\ufffddias"
    for i, entry in enumerate(content):
        if i == 6:
            entry["bytes"] = [e_acute[1], *b"dias"]
        elif i != 5:
            entry["bytes"] = list(entry["token"].encode())
    script.queue.append(completion('{"Agency": "Médias"}', logprobs=content))
    doc = extract_logprob(client_for(url), SCHEMA, ocr=OCR, method="mean")
    assert doc["Agency"]["value"] == "Médias"
    # value tokens 'M', b'\xc3', b'\xa9dias': geometric mean of 0.9, 0.4, 1.0
    assert doc["Agency"]["confidence"] == pytest.approx((0.9 * 0.4) ** (1 / 3))


def test_logprob_answer_without_logprobs_is_an_answer_error(server):
    url, script = server
    script.queue.append(completion('{"Agency": "ACME"}'))
    with pytest.raises(ModelAnswerError, match="the model returned no log-probabilities; use "
                                               "a verbalized strategy or a server that "
                                               "returns them"):
        extract_logprob(client_for(url), SCHEMA, ocr=OCR)


class _TextOnly:
    provider = "stand-in"
    model = "no-logprobs"
    supports_logprobs = False

    def __init__(self, text: str = TOPK_ANSWER) -> None:
        self.text = text
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return ChatResponse(text=self.text, finish_reason="stop")


def test_logprob_strategy_needs_a_client_with_logprobs():
    client = _TextOnly()
    assert isinstance(client, ChatClient)  # the Protocol: any object with these members
    with pytest.raises(ValidationError, match="must return token log-probabilities"):
        extract_logprob(client, SCHEMA, ocr=OCR)
    with pytest.raises(ValidationError, match="must return token log-probabilities"):
        run_extraction(client, {"a": {"ocr": OCR}}, modality="ocr", strategy="logprob",
                       progress=False)
    assert extract_verbalized(client, SCHEMA, ocr=OCR)["Agency"]
    assert client.calls == 1


# ------------------------------------------------------------------------ run_extraction
def _doc_of(body: dict[str, Any]) -> str:
    text = body["messages"][1]["content"]
    text = text if isinstance(text, str) else text[-1]["text"]
    return next(w for w in ("doc-a", "doc-b", "doc-c") if w in text)


def _corpus() -> dict[str, dict[str, Any]]:
    return {name: {"ocr": [(name, 1.0), *OCR]} for name in ("doc-a", "doc-b", "doc-c")}


def test_run_extraction_resumes_from_the_cache_without_paying_twice(server, tmp_path,
                                                                  monkeypatch, waits):
    url, script = server
    monkeypatch.setenv("CONFCAL_TEST_KEY", SECRET)
    client = client_for(url, api_key_env="CONFCAL_TEST_KEY", max_retries=0)
    cache = tmp_path / "cache"

    # first run: doc-b's endpoint is down
    script.responder = lambda body: (error(503, "down") if _doc_of(body) == "doc-b"
                                     else completion(TOPK_ANSWER))
    run = run_extraction(client, _corpus(), modality="ocr", strategy="verbalized",
                         schema=SCHEMA, cache_dir=cache, progress=False)
    assert list(run.predictions) == ["doc-a", "doc-c"]
    failure = run.failures["doc-b"]
    assert failure["kind"] == "call" and "HTTP 503" in failure["message"]
    assert failure["stage"] == "extract"
    assert dict(run.counts) == {"documents": 3, "ok": 2, "failed": 1, "cached": 0, "called": 2,
                                "rejected": 0, "unreadable": 0}
    assert dict(run.failure_counts) == {"call": 1, "response": 0, "answer": 0, "cache": 0,
                                        "error": 0}
    assert len(script.requests) == 3

    # second run: only doc-b is asked again
    script.responder = lambda body: completion(TOPK_ANSWER)
    run = run_extraction(client, _corpus(), modality="ocr", strategy="verbalized",
                         schema=SCHEMA, cache_dir=cache, progress=False)
    assert list(run.predictions) == ["doc-a", "doc-b", "doc-c"] and not run.failures
    assert dict(run.counts) == {"documents": 3, "ok": 3, "failed": 0, "cached": 2, "called": 1,
                                "rejected": 0, "unreadable": 0}
    assert [_doc_of(r["body"]) for r in script.requests[3:]] == ["doc-b"]

    # third run: nothing is asked at all
    run_extraction(client, _corpus(), modality="ocr", strategy="verbalized", schema=SCHEMA,
                   cache_dir=cache, progress=False)
    assert len(script.requests) == 4

    # the key went to the server, and nowhere on disk
    assert script.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    files = list(cache.rglob("*"))
    assert len([f for f in files if f.suffix == ".json"]) == 3
    for f in files:
        if f.is_file():
            text = f.read_text()
            assert SECRET not in text and "Authorization" not in text and "Bearer" not in text


def test_cache_key_changes_with_model_prompt_and_image(server, tmp_path):
    from PIL import Image

    url, script = server
    script.responder = lambda body: completion(TOPK_ANSWER)
    cache = tmp_path / "cache"
    page = io.BytesIO()
    Image.new("RGB", (60, 40), "white").save(page, "PNG")
    other = io.BytesIO()
    Image.new("RGB", (60, 40), "black").save(other, "PNG")

    def run(client: OpenAICompatibleClient, image: bytes, k: int = 4) -> None:
        run_extraction(client, {"d": {"image": image}}, modality="image",
                       strategy="verbalized", schema=SCHEMA, cache_dir=cache, k=k,
                       progress=False)

    run(client_for(url), page.getvalue())
    run(client_for(url), page.getvalue())                      # same: cached
    run(client_for(url), other.getvalue())                     # another image
    run(client_for(url), page.getvalue(), k=3)                 # another prompt
    run(OpenAICompatibleClient(url, "other-model", api_key_env=None), page.getvalue())
    assert len(script.requests) == 4
    # the endpoint's address is not part of the key: the same model elsewhere reuses it
    before = len(script.requests)
    run(client_for(url.replace("127.0.0.1", "localhost")), page.getvalue())
    assert len(script.requests) == before


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_cached_answers_follow_the_umask(server, tmp_path, mask, mode):
    # as the core writers: mkstemp's 0600 would make a shared cache unreadable to the team,
    # and a private umask must keep the answers private
    import os
    import stat

    url, script = server
    script.responder = lambda body: completion(TOPK_ANSWER)
    cache = tmp_path / "cache"
    old = os.umask(mask)
    try:
        run_extraction(client_for(url), _corpus(), modality="ocr", strategy="verbalized",
                       schema=SCHEMA, cache_dir=cache, progress=False)
    finally:
        os.umask(old)
    written = sorted(cache.rglob("*.json"))
    assert len(written) == 3
    assert {stat.S_IMODE(f.stat().st_mode) for f in written} == {mode}
    assert not [f for f in cache.rglob("*") if f.name.startswith(".")]  # no temporary file


def test_a_cache_entry_that_is_not_an_answer_is_refetched_and_reported(server, tmp_path):
    url, script = server
    script.responder = lambda body: completion(TOPK_ANSWER)
    kwargs = {"modality": "ocr", "strategy": "verbalized", "schema": SCHEMA,
              "cache_dir": tmp_path, "progress": False}
    run_extraction(client_for(url), _corpus(), **kwargs)
    entry = sorted(tmp_path.rglob("*.json"))[0]
    entry.write_text("[1, 2]")
    run = run_extraction(client_for(url), _corpus(), **kwargs)
    assert not run.failures and run.counts["ok"] == 3
    assert run.counts["unreadable"] == 1 and run.unreadable == (entry,)
    assert run.counts["cached"] == 2 and run.counts["called"] == 1
    assert len(script.requests) == 4  # the one bad entry bought again
    assert "1 cache entry unreadable and refetched" in run.summary()
    assert json.loads(entry.read_text())["response"]["text"]  # replaced by the answer
    again = run_extraction(client_for(url), _corpus(), **kwargs)
    assert again.counts["cached"] == 3 and again.counts["unreadable"] == 0


def test_a_cache_entry_copied_from_another_document_is_refetched_and_reported(server,
                                                                             tmp_path):
    url, script = server
    answers = {d: TOPK_ANSWER.replace("ACME Media", f"ACME {d}") for d in ("doc-a", "doc-b")}
    script.responder = lambda body: completion(answers[_doc_of(body)])
    corpus = {d: _corpus()[d] for d in ("doc-a", "doc-b")}
    kwargs = {"modality": "ocr", "strategy": "verbalized", "schema": SCHEMA,
              "cache_dir": tmp_path, "progress": False}
    first = run_extraction(client_for(url), corpus, **kwargs)
    assert first.predictions["doc-b"]["Agency"]["candidates"][0]["value"] == "ACME doc-b"
    a, b = sorted(tmp_path.rglob("*.json"), key=lambda f: "doc-a" in f.read_text())[::-1]
    assert "doc-a" in a.read_text() and "doc-b" in b.read_text()
    shutil.copy(a, b)  # doc-b's entry now holds doc-a's answer
    run = run_extraction(client_for(url), corpus, **kwargs)
    # never used: doc-b is asked again and gets its own answer back
    assert run.predictions["doc-b"]["Agency"]["candidates"][0]["value"] == "ACME doc-b"
    assert run.counts["rejected"] == 1 and run.rejected == (b,)
    assert run.counts["cached"] == 1 and run.counts["called"] == 1
    assert "1 cache entry rejected and refetched" in run.summary()
    assert "doc-b" in b.read_text()  # overwritten by the fresh answer


def test_run_extraction_records_unreadable_answers_and_caches_them(server, tmp_path):
    url, script = server
    script.responder = lambda body: (completion("I cannot read this page.")
                                     if _doc_of(body) == "doc-c" else completion(TOPK_ANSWER))
    kwargs = {"modality": "ocr", "strategy": "verbalized", "schema": SCHEMA,
              "cache_dir": tmp_path, "progress": False}
    run = run_extraction(client_for(url), _corpus(), **kwargs)
    assert run.failures["doc-c"]["kind"] == "answer"
    assert "cannot be read" in run.failures["doc-c"]["message"]
    rerun = run_extraction(client_for(url), _corpus(), **kwargs)
    assert len(script.requests) == 3  # the unreadable answer is not bought again
    assert rerun.failures["doc-c"] == run.failures["doc-c"]


def test_run_extraction_feeds_score_documents(server):
    url, script = server
    script.responder = lambda body: completion(TOPK_ANSWER)
    run = run_extraction(client_for(url), _corpus(), modality="ocr", strategy="verbalized",
                         schema=SCHEMA, concurrency=2, progress=False)
    truths = {d: {"Agency": "ACME Media", "GrossTotal": "100.00", "LineItems": [{"Rate": 5}]}
              for d in _corpus()}
    result = score_documents(SCHEMA, truths, run.predictions, metadata=run.metadata)
    entities = result.entities
    assert set(entities["modality"]) == {"ocr"} and set(entities["strategy"]) == {"verbalized"}
    assert set(entities["model"]) == {"test-model"}
    assert entities["correct"].all() and len(entities) == 9


def test_run_extraction_keeps_at_most_concurrency_requests_in_flight(server):
    url, script = server
    script.responder = lambda body: (*completion(TOPK_ANSWER)[:3], 0.15)
    corpus = {f"doc-{i}": {"ocr": OCR} for i in range(6)}
    run = run_extraction(client_for(url), corpus, modality="ocr", strategy="verbalized",
                         schema=SCHEMA, concurrency=2, progress=False)
    assert run.counts["ok"] == 6
    assert script.max_in_flight == 2


def test_run_extraction_checks_every_document_before_the_first_call(server):
    url, script = server
    corpus = {"a": {"ocr": OCR}, "b": {"image": _png_bytes()}}
    with pytest.raises(ValidationError, match=r"documents\['b'\] must have ocr for modality "
                                              r"'ocr'; found no ocr"):
        run_extraction(client_for(url), corpus, modality="ocr", strategy="verbalized",
                       schema=SCHEMA, progress=False)
    with pytest.raises(ValidationError, match=r"documents\['a'\] must have ocr and image"):
        run_extraction(client_for(url), corpus, modality="ocr+image", strategy="verbalized",
                       schema=SCHEMA, progress=False)
    with pytest.raises(ValidationError, match="modality must be one of"):
        run_extraction(client_for(url), corpus, modality="pdf", strategy="verbalized",
                       progress=False)
    bad = {"a": {"image": b"\x89PNG broken"}}
    with pytest.raises(ValidationError, match=r"documents\['a'\]: image must be a readable"):
        run_extraction(client_for(url), bad, modality="image", strategy="verbalized",
                       schema=SCHEMA, progress=False)
    assert script.requests == []



@pytest.mark.parametrize("documents, message", [
    ("doc.png", r"documents must be a mapping doc_id -> \{'image': \.\.\., 'ocr': \.\.\.\} or "
                r"\(doc_id, inputs\) pairs; found str"),
    ([("a", {"ocr": "x"}), ("b",)], r"documents must be \(doc_id, inputs\) pairs; found "
                                    r"\('b',\) at position 1"),
    ({}, r"documents must not be empty; found 0 documents"),
    ([(["a"], {"ocr": "x"})], r"documents doc ids must be hashable; found \['a'\] at "
                              r"position 0"),
    ([(None, {"ocr": "x"})], r"documents doc ids must not be missing; found None at position 0"),
    ([("a", {"ocr": "x"}), ("a", {"ocr": "y"})], r"documents must not repeat a doc id; found "
                                                 r"'a' at positions 0 and 1"),
    ({"a": {"ocr": "x", "pdf": "y"}}, r"documents\['a'\] must be a mapping with the keys "
                                      r"'image' and/or 'ocr'; found \['ocr', 'pdf'\]"),
    ({"a": "x"}, r"documents\['a'\] must be a mapping with the keys 'image' and/or 'ocr'; "
                 r"found 'x'"),
])
def test_each_document_rule_is_checked(documents, message):
    # one case per rule of the documents argument, in the order they are checked
    with pytest.raises(ValidationError, match=message):
        check_documents(documents, "ocr")


def test_checked_documents_keep_only_what_the_modality_reads():
    docs = {"a": {"ocr": "words", "image": "page.png"}}
    assert check_documents(docs, "ocr") == [("a", None, "words")]
    assert check_documents(docs, "image") == [("a", "page.png", None)]
    assert check_documents(list(docs.items()), "ocr+image") == [("a", "page.png", "words")]

def test_run_extraction_shows_a_progress_bar(server, capsys):
    url, script = server
    script.responder = lambda body: completion(TOPK_ANSWER)
    run_extraction(client_for(url), _corpus(), modality="ocr", strategy="verbalized",
                   schema=SCHEMA, progress=True)
    assert "test-model ocr verbalized" in capsys.readouterr().err


# --------------------------------------------------------------------------- API keys
def test_the_api_key_comes_from_the_environment_and_is_never_shown(server, monkeypatch,
                                                                   caplog, waits):
    url, script = server
    monkeypatch.setenv("CONFCAL_TEST_KEY", SECRET)
    client = client_for(url, api_key_env="CONFCAL_TEST_KEY", max_retries=1)
    assert SECRET not in repr(client) and SECRET not in str(vars(client))
    # a server that echoes the key in its error body
    script.queue.extend([error(500, f"bad key {SECRET}"), error(401, f"bad key {SECRET}")])
    with caplog.at_level(logging.DEBUG), pytest.raises(ModelCallError) as info:
        extract_verbalized(client, SCHEMA, ocr=OCR)
    assert info.value.status == 401
    assert SECRET not in str(info.value) and "[redacted]" in str(info.value)
    assert "check the key in the environment variable CONFCAL_TEST_KEY" in str(info.value)
    assert caplog.records and all(SECRET not in r.getMessage() for r in caplog.records)
    assert [r["headers"]["Authorization"] for r in script.requests] == [f"Bearer {SECRET}"] * 2

    monkeypatch.delenv("CONFCAL_TEST_KEY")
    with pytest.raises(ModelCallError, match="CONFCAL_TEST_KEY must hold"):
        extract_verbalized(client, SCHEMA, ocr=OCR)
    assert len(script.requests) == 2  # a named variable that is unset sends nothing
    script.queue.append(completion(TOPK_ANSWER))
    extract_verbalized(client_for(url), SCHEMA, ocr=OCR)  # api_key_env=None: no key at all
    assert "Authorization" not in script.requests[-1]["headers"]


def test_an_echoed_key_reaches_no_failure_record_cache_summary_or_csv(server, tmp_path,
                                                                      monkeypatch, waits):
    url, script = server
    monkeypatch.setenv("CONFCAL_TEST_KEY", SECRET)
    escaped = "".join(f"\\u{ord(c):04x}" for c in SECRET)

    def answer(body: dict[str, Any]) -> Reply:
        doc = _doc_of(body)
        if doc == "doc-a":  # a 200 whose reply text repeats the key, JSON-escaped
            text = json.dumps({"error": "x"})[:-1] + f', "k": "{escaped}"}}'
            choice = {"message": {"content": text}, "finish_reason": "stop"}
            return 200, {}, json.dumps({"choices": [choice]}).encode().replace(
                b"\\\\", b"\\"), 0.0
        if doc == "doc-b":  # an error body that quotes it, after 600 characters
            return error(401, "x" * 600 + f" key {SECRET}")
        return 200, {}, f"not json {SECRET[:20]}".encode(), 0.0  # a non-JSON 200

    script.responder = answer
    client = client_for(url, api_key_env="CONFCAL_TEST_KEY", max_retries=0)
    run = run_extraction(client, _corpus(), modality="ocr", strategy="verbalized",
                         schema=SCHEMA, cache_dir=tmp_path / "cache", progress=False)
    assert run.failures["doc-a"]["kind"] == "response"
    assert run.failures["doc-b"]["kind"] == "call"
    assert run.failures["doc-c"]["kind"] == "response"
    truths = {d: {"Agency": "ACME Media", "GrossTotal": 100, "LineItems": []}
              for d in _corpus()}
    csv = tmp_path / "entities.csv"
    score_documents(SCHEMA, truths, run.predictions, metadata=run.metadata,
                    allow_empty=True).entities.to_csv(csv)  # every call failed
    texts = [json.dumps(dict(f)) for f in run.failures.values()]
    texts += [run.summary(), repr(run), csv.read_text()]
    texts += [f.read_text() for f in (tmp_path / "cache").rglob("*") if f.is_file()]
    for text in texts:
        assert SECRET not in text and SECRET[:12] not in text and SECRET[-12:] not in text


def test_credentials_in_the_url_are_refused_without_quoting_them():
    with pytest.raises(ValidationError, match="base_url must not hold credentials") as info:
        OpenAICompatibleClient("http://user:hunter2@127.0.0.1:9/v1", "m", api_key_env=None)
    assert "hunter2" not in str(info.value)


def test_client_arguments_are_validated():
    with pytest.raises(ValidationError, match="base_url must be an http"):
        OpenAICompatibleClient("127.0.0.1:8000", "m")
    with pytest.raises(ValidationError, match="timeout must be a finite number of seconds > 0"):
        OpenAICompatibleClient("http://127.0.0.1/v1", "m", timeout=0)
    with pytest.raises(ValidationError, match="max_retries must be an integer >= 0"):
        OpenAICompatibleClient("http://127.0.0.1/v1", "m", max_retries=-1)
    with pytest.raises(ValidationError, match="top_logprobs must be an integer >= 2"):
        build_request(SCHEMA, strategy="logprob", ocr=OCR, top_logprobs=1)


# ------------------------------------------------------------------- Anthropic, Bedrock
def _png_bytes() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buffer, "PNG")
    return buffer.getvalue()


# ------------------------------------------------------------- one failure, one record
class _Raises:
    """A client of someone else's making that fails in its own way (as an SDK might)."""

    provider, model, supports_logprobs = "custom", "raiser", True

    def __init__(self, inner: OpenAICompatibleClient) -> None:
        self.inner = inner

    def complete(self, request: ChatRequest) -> ChatResponse:
        if "doc-f" in request.text:
            raise TypeError("create() got an unexpected keyword argument 'temperature'")
        return self.inner.complete(request)


def test_every_kind_of_failure_is_one_record_and_the_run_goes_on(server, waits):
    url, script = server
    deep = '{"Agency": ' + "[" * 100_000 + "]" * 100_000 + "}"

    def answer(body: dict[str, Any]) -> Reply:
        doc = next(w for w in ("doc-a", "doc-b", "doc-c", "doc-d", "doc-e", "doc-f")
                   if w in body["messages"][1]["content"])
        return {"doc-a": completion(TOPK_ANSWER),
                "doc-b": error(400, "context length exceeded"),
                "doc-c": (200, {}, b"[" * 100_000 + b"]" * 100_000, 0.0),
                "doc-d": completion("no JSON here"),
                "doc-e": completion(deep)}[doc]

    script.responder = answer
    corpus = {d: {"ocr": [(d, 1.0), *OCR]} for d in
              ("doc-a", "doc-b", "doc-c", "doc-d", "doc-e", "doc-f")}
    run = run_extraction(_Raises(client_for(url, max_retries=0)), corpus, modality="ocr",
                         strategy="verbalized", schema=SCHEMA, progress=False)
    assert list(run.predictions) == ["doc-a"]
    kinds = {d: f["kind"] for d, f in run.failures.items()}
    assert kinds == {"doc-b": "call", "doc-c": "response", "doc-d": "answer",
                     "doc-e": "answer", "doc-f": "error"}
    assert "nested too deeply" in run.failures["doc-c"]["message"]
    assert "nests deeper than 200 levels" in run.failures["doc-e"]["message"]
    assert run.failures["doc-f"]["message"] == ("TypeError: create() got an unexpected "
                                                "keyword argument 'temperature'")
    assert dict(run.failure_counts) == {"call": 1, "response": 1, "answer": 2, "cache": 0,
                                        "error": 1}
    assert tuple(run.failure_counts) == FAILURE_KINDS
    assert run.summary() == ("raiser ocr verbalized: 6 documents, 1 ok, 5 failed (call 1, "
                             "response 1, answer 2, error 1); 0 cached, 3 called")


def test_an_overflowing_logprob_is_a_failure_of_its_document_only(server):
    url, script = server
    good = completion("".join(TOKENS), logprobs=logprob_content(TOKENS, PROBS))
    body = json.loads(good[2])
    body["choices"][0]["logprobs"]["content"][4]["logprob"] = -int("9" * 400)
    bad = (200, {}, json.dumps(body).encode(), 0.0)
    script.responder = lambda b: bad if "doc-b" in b["messages"][1]["content"] else good
    run = run_extraction(client_for(url), _corpus(), modality="ocr", strategy="logprob",
                         schema=SCHEMA, progress=False)
    assert list(run.predictions) == ["doc-a", "doc-c"]
    failure = run.failures["doc-b"]
    assert failure["kind"] == "response"
    assert "content[4].logprob must be a finite number; found an integer of 400 digits" in \
        failure["message"]


# ------------------------------------------------------------------ two-stage verbalized
VALUES = {"Agency": "ACME Media", "GrossTotal": 100.0, "LineItems": [{"Rate": 5}, {"Rate": 7}]}
SCORES = {"Agency": 0.9, "GrossTotal": 0.75, "LineItems": [{"Rate": 0.5}, {"Rate": 0.25}]}


def two_stage_server(script: Script, scores: dict[str, Any] = SCORES,
                     values: dict[str, Any] = VALUES) -> None:
    from confcal.extras._two_stage import SCORING_SYSTEM

    def answer(body: dict[str, Any]) -> Reply:
        if body["messages"][0]["content"] == SCORING_SYSTEM:
            return completion(json.dumps(scores))
        return completion("```json\n" + json.dumps(values) + "\n```")

    script.responder = answer


def _text_of(request: dict[str, Any]) -> str:
    content = user_content(request)
    return content if isinstance(content, str) else content[-1]["text"]


def test_two_stage_extracts_then_scores_the_extracted_values(server):
    url, script = server
    two_stage_server(script)
    doc = extract_two_stage(client_for(url), SCHEMA, image=_png_bytes(), ocr=OCR,
                            max_tokens=400)
    assert doc == {"Agency": {"value": "ACME Media", "confidence": 0.9},
                   "GrossTotal": {"value": 100.0, "confidence": 0.75},
                   "LineItems": [{"Rate": {"value": 5, "confidence": 0.5}},
                                 {"Rate": {"value": 7, "confidence": 0.25}}]}
    first, second = script.requests
    assert "logprobs" not in first["body"] and "logprobs" not in second["body"]
    assert "Give each field's value" in _text_of(first)
    scoring = _text_of(second)
    assert json.dumps(VALUES) in scoring  # the extracted values, as extracted
    assert "ACME\t0.98" in scoring  # the same document inputs: the OCR ...
    # ... and the very same page image
    assert user_content(second)[0] == user_content(first)[0]
    assert '"LineItems": [{"Rate": 0.0}, {"Rate": 0.0}]' in scoring  # the answer's form
    assert second["body"]["max_tokens"] == 400


def test_two_stage_with_another_scorer_records_who_scored(server, tmp_path):
    url, script = server
    two_stage_server(script)
    extractor, scorer = client_for(url), OpenAICompatibleClient(url, "judge-model",
                                                               api_key_env=None)
    kwargs = {"modality": "ocr", "strategy": "two-stage", "schema": SCHEMA,
              "cache_dir": tmp_path, "progress": False}
    run = run_extraction(extractor, _corpus(), scorer=scorer, **kwargs)
    assert not run.failures and run.counts["called"] == 6
    assert [r["body"]["model"] for r in script.requests].count("judge-model") == 3
    assert dict(run.metadata["doc-a"]) == {
        "provider": "openai-compatible", "model": "test-model", "modality": "ocr",
        "strategy": "two-stage", "confidence_provider": "openai-compatible",
        "confidence_model": "judge-model"}
    truths = {d: {"Agency": "ACME Media", "GrossTotal": "100.00",
                  "LineItems": [{"Rate": 5}, {"Rate": 8}]} for d in _corpus()}
    entities = score_documents(SCHEMA, truths, run.predictions,
                               metadata=run.metadata).entities
    assert set(entities["model"]) == {"test-model"}
    assert set(entities["confidence_model"]) == {"judge-model"}
    rates = entities[entities["field"] == "LineItems.Rate"]
    # per document: 5 is right and was scored 0.5; 7 != 8 is wrong and was scored 0.25
    assert rates.groupby("confidence")["correct"].agg(list).to_dict() == {
        0.25: [False] * 3, 0.5: [True] * 3}

    # resumable: a second run asks nothing
    before = len(script.requests)
    again = run_extraction(extractor, _corpus(), scorer=scorer, **kwargs)
    assert len(script.requests) == before and again.counts["cached"] == 6
    assert dict(again.predictions) == dict(run.predictions)


def test_two_stage_a_failed_scoring_call_is_asked_again_alone(server, tmp_path, waits):
    url, script = server
    two_stage_server(script)
    from confcal.extras._two_stage import SCORING_SYSTEM

    inner = script.responder
    script.responder = lambda body: (error(503) if body["messages"][0]["content"]
                                     == SCORING_SYSTEM and "doc-b" in _text_of({"body": body})
                                     else inner(body))
    kwargs = {"modality": "ocr", "strategy": "two-stage", "schema": SCHEMA,
              "cache_dir": tmp_path, "progress": False}
    client = client_for(url, max_retries=0)
    run = run_extraction(client, _corpus(), **kwargs)
    assert run.failures["doc-b"]["kind"] == "call"
    assert run.failures["doc-b"]["stage"] == "score"
    assert run.metadata["doc-b"]["confidence_model"] == "test-model"  # scored by itself
    script.responder = inner
    before = len(script.requests)
    rerun = run_extraction(client, _corpus(), **kwargs)
    assert not rerun.failures
    (asked,) = script.requests[before:]  # only doc-b's scoring call
    assert asked["body"]["messages"][0]["content"] == SCORING_SYSTEM
    assert "doc-b" in _text_of(asked)


@pytest.mark.parametrize("scores, message", [
    ({"Agency": 0.9, "GrossTotal": 0.75, "LineItems": [{"Rate": 0.5}]},
     "field LineItems must hold 2 line item records, as extracted; found 1 records"),
    ({"Agency": 0.9, "LineItems": [{"Rate": 0.5}, {"Rate": 0.2}]},
     "must give a probability for field GrossTotal; found none"),
    ({"Agency": 1.5, "GrossTotal": 0.75, "LineItems": [{"Rate": 0.5}, {"Rate": 0.2}]},
     "field Agency must be a probability within \\[0, 1\\]; found 1.5"),
    ({"Agency": True, "GrossTotal": 0.75, "LineItems": [{"Rate": 0.5}, {"Rate": 0.2}]},
     "field Agency must be a probability within \\[0, 1\\]; found True"),
    # extra probabilities are errors too, never ignored: the answer is off the template
    ({"Agency": 0.9, "GrossTotal": 0.75, "LineItems": [{"Rate": 0.5}, {"Rate": 0.2}],
      "Bogus": 0.1}, "probabilities only for the extracted values; found field Bogus, "
                     "which is not a field of the schema"),
    ({"Agency": 0.9, "GrossTotal": 0.75,
      "LineItems": [{"Rate": 0.5}, {"Rate": 0.2, "Qty": 0.3}]},
     "found field LineItems\\[1\\].Qty, which was not extracted in that record"),
])
def test_two_stage_a_scoring_answer_must_cover_every_value(server, scores, message):
    url, script = server
    two_stage_server(script, scores=scores)
    with pytest.raises(ModelAnswerError, match="scoring answer \\(two-stage call 2\\) cannot "
                                               "be read: .*" + message):
        extract_two_stage(client_for(url), SCHEMA, ocr=OCR)


def test_two_stage_null_values_are_scored_too_and_unknown_keys_pass_through(server):
    url, script = server
    values = {"Agency": None, "GrossTotal": 12.5, "LineItems": None, "Note": "extra"}
    two_stage_server(script, values=values,
                     scores={"Agency": 0.6, "GrossTotal": 0.8, "LineItems": None})
    doc = extract_two_stage(client_for(url), SCHEMA, ocr=OCR)
    assert doc == {"Agency": {"value": None, "confidence": 0.6},
                   "GrossTotal": {"value": 12.5, "confidence": 0.8}, "LineItems": None,
                   "Note": "extra"}
    assert '"Note"' not in _text_of(script.requests[1])  # only schema fields are scored


def test_two_stage_a_probability_for_a_value_not_extracted_is_an_error(server):
    url, script = server
    values = {"Agency": "ACME", "LineItems": None}  # GrossTotal not extracted at all
    for scores, found in [({"Agency": 0.9, "GrossTotal": 0.8, "LineItems": None},
                           "GrossTotal, which was not extracted"),
                          ({"Agency": 0.9, "LineItems": 0.5},
                           "LineItems, whose line items were extracted as null")]:
        two_stage_server(script, values=values, scores=scores)
        with pytest.raises(ModelAnswerError, match=f"extracted values; found field {found}"):
            extract_two_stage(client_for(url), SCHEMA, ocr=OCR)


def test_a_lone_surrogate_in_an_answer_is_one_failure_and_the_run_goes_on(server, tmp_path):
    # "\ud800" alone is valid JSON but no text: before, writing the answer to the cache
    # raised UnicodeEncodeError out of run_extraction and ended the run
    url, script = server
    bad = (200, {}, json.dumps({"choices": [{"message": {"content": "ACME \ud800"},
                                             "finish_reason": "stop"}]}).encode(), 0.0)
    script.responder = (lambda b: bad if "doc-b" in b["messages"][1]["content"]
                        else completion(TOPK_ANSWER))
    run = run_extraction(client_for(url), _corpus(), modality="ocr", strategy="verbalized",
                         schema=SCHEMA, cache_dir=tmp_path, progress=False)
    assert list(run.predictions) == ["doc-a", "doc-c"]
    assert run.failures["doc-b"]["kind"] == "response"
    assert "lone surrogate" in run.failures["doc-b"]["message"]


class _Surrogates:
    """A client of one's own answering a text no file can hold."""

    provider, model, supports_logprobs = "mine", "surrogates", False

    def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse("\udc80", "stop")


def test_an_answer_the_cache_cannot_hold_is_a_cache_failure_not_a_crash(tmp_path):
    run = run_extraction(_Surrogates(), _corpus(), modality="ocr", strategy="verbalized",
                         schema=SCHEMA, cache_dir=tmp_path, progress=False)
    assert not run.predictions and run.failure_counts["cache"] == 3
    assert "could not be cached: UnicodeEncodeError" in run.failures["doc-a"]["message"]


def test_two_stage_call_1_must_give_scalar_values(server):
    url, script = server
    two_stage_server(script, values={"Agency": {"value": "ACME"}})
    with pytest.raises(ModelAnswerError, match="extraction answer \\(two-stage call 1\\) cannot "
                                               "be read: field Agency must be a scalar value"):
        extract_two_stage(client_for(url), SCHEMA, ocr=OCR)
    assert len(script.requests) == 1  # nothing to score: no second call


def test_a_scorer_only_goes_with_the_two_stage_strategy(server):
    url, _ = server
    with pytest.raises(ValidationError, match="scorer must be None for strategy 'verbalized'"):
        run_extraction(client_for(url), _corpus(), modality="ocr", strategy="verbalized",
                       scorer=client_for(url), progress=False)
    with pytest.raises(ValidationError, match="scorer must have provider, model"):
        run_extraction(client_for(url), _corpus(), modality="ocr", strategy="two-stage",
                       scorer=object(), progress=False)
