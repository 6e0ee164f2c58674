"""OpenAICompatibleClient against a real chat-completions server on 127.0.0.1.

The request it sends (text only, images, log-probabilities) and how it reads the answer:
the reply text, token log-probabilities with their alternatives, each token's bytes (a
token without them falls back to its text, that token only), and numbers no float holds.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

import pytest

from _chat_server import ChatServer, Reply
from confcal.calibration.confidence import BYTE_LEVEL_ALPHABET
from confcal.exceptions import ModelResponseError, ValidationError
from confcal.extras import _http
from confcal.extras.clients import ChatClient, ChatRequest, ChatResponse, OpenAICompatibleClient
from confcal.extras.extraction import extract_logprob
from confcal.scoring.comparators import Text
from confcal.scoring.schema import Field, Schema

SCHEMA = Schema({"Agency": Field(Text())})


@pytest.fixture(autouse=True)
def _local_only(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setattr(_http, "_sleep", lambda s: None)


def client(server: ChatServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(server.url, "test-model", api_key_env=None, timeout=5)


def entry(token: str, p: float, *, with_bytes: bool = True) -> dict[str, Any]:
    e: dict[str, Any] = {"token": token, "logprob": math.log(p),
                         "top_logprobs": [{"token": token, "logprob": math.log(p)},
                                          {"token": "?", "logprob": math.log(0.05)}]}
    e["bytes"] = list(token.encode()) if with_bytes else None
    return e


def spelled(data: bytes) -> str:
    chars = {b: c for c, b in BYTE_LEVEL_ALPHABET.items()}
    return "".join(chars[b] for b in data)


# ------------------------------------------------------------------------ the request
def test_plain_text_request_and_answer():
    with ChatServer([Reply("ACME")]) as server:
        response = client(server).complete(ChatRequest("sys", "Agency?", max_tokens=7))
    assert isinstance(client(server), ChatClient)
    assert response == ChatResponse("ACME", "stop", usage={
        "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["json"] == {"model": "test-model", "messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": "Agency?"}],
        "max_tokens": 7}  # no sampling parameter unless the request sets one
    assert "Authorization" not in request["headers"]  # api_key_env=None
    assert request["headers"]["User-Agent"].startswith("confcal/")


def test_images_go_first_as_png_data_urls_and_logprobs_are_asked_for():
    with ChatServer([Reply("x", logprobs=[entry("x", 0.5)])]) as server:
        client(server).complete(ChatRequest("s", "t", images=(b"\x89PNG-1", b"\x89PNG-2"),
                                            top_logprobs=3))
    body = server.requests[0]["json"]
    first, second, text = body["messages"][1]["content"]
    assert first["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(
        b"\x89PNG-1").decode()
    assert second["type"] == "image_url" and text == {"type": "text", "text": "t"}
    assert body["logprobs"] is True and body["top_logprobs"] == 3


def test_the_same_constructor_serves_plain_text_judging():
    # ChatClient use without log-probabilities: OpenAICompatibleClient(base_url, model,
    # api_key_env=...) and complete(ChatRequest) -> ChatResponse.text
    with ChatServer([Reply("Correctness: 1")]) as server:
        judge = OpenAICompatibleClient(server.url, "judge", api_key_env=None)
        assert judge.complete(ChatRequest("You grade.", "Q")).text == "Correctness: 1"
    assert "logprobs" not in server.requests[0]["json"]


# ---------------------------------------------------------------------- the reply text
def test_a_null_content_is_a_response_error_naming_the_finish_reason():
    with ChatServer([Reply(null_content=True)]) as server, pytest.raises(
            ModelResponseError, match="content is null \\(finish_reason 'content_filter'\\)"):
        client(server).complete(ChatRequest("s", "t"))


def test_content_parts_are_joined():
    body = {"choices": [{"message": {"content": [{"type": "text", "text": "AC"},
                                                 {"type": "text", "text": "ME"}]},
                         "finish_reason": "length"}]}
    with ChatServer([Reply(json=body)]) as server:
        response = client(server).complete(ChatRequest("s", "t"))
    assert (response.text, response.finish_reason) == ("ACME", "length")


# ----------------------------------------------------------------------- log-probabilities
def test_logprobs_with_bytes_are_spelled_byte_level():
    content = [entry('{"', 1.0), entry("Agency", 1.0), entry('":"', 1.0), entry("AC", 0.8),
               entry("ME", 0.5), entry('"}', 1.0)]
    with ChatServer([Reply('{"Agency":"ACME"}', logprobs=content)]) as server:
        response = client(server).complete(ChatRequest("s", "t", top_logprobs=2))
    assert response.token_style == "byte-level"
    assert response.tokens[3] == spelled(b"AC")
    assert response.token_logprobs[4] == pytest.approx(math.log(0.5))
    assert response.top_logprobs[4][1] == {"token": "?", "logprob": pytest.approx(
        math.log(0.05))}


def test_a_token_without_bytes_falls_back_for_that_token_only():
    # "é" (c3 a9) split over two tokens, each with its bytes; another token has
    # "bytes": null (the schema allows it) and is read from its text
    e_acute = "é".encode()
    content = [entry('{"', 1.0), entry("Agency", 1.0, with_bytes=False), entry('":"', 1.0),
               entry("M", 0.9), entry("\ufffd", 0.4), entry("\ufffddias", 1.0),
               entry('"}', 1.0)]
    content[4]["bytes"] = [e_acute[0]]
    content[5]["bytes"] = [e_acute[1], *b"dias"]
    with ChatServer([Reply('{"Agency":"Médias"}', logprobs=content)]) as server:
        response = client(server).complete(ChatRequest("s", "t", top_logprobs=2))
        assert response.tokens[1] == spelled(b"Agency")  # from its text
        assert response.tokens[4] == spelled(e_acute[:1])  # half a character, exact
        server.replies.append(Reply('{"Agency":"Médias"}', logprobs=content))
        doc = extract_logprob(client(server), SCHEMA, ocr=[("Médias", 1.0)], method="mean")
    assert doc["Agency"]["value"] == "Médias"
    # value tokens 'M', b'\xc3', b'\xa9dias': geometric mean of 0.9, 0.4, 1.0
    assert doc["Agency"]["confidence"] == pytest.approx((0.9 * 0.4) ** (1 / 3))


def test_without_any_bytes_tokens_stay_text():
    content = [entry("ACME", 0.5, with_bytes=False)]
    with ChatServer([Reply("ACME", logprobs=content)]) as server:
        response = client(server).complete(ChatRequest("s", "t", top_logprobs=2))
    assert response.token_style == "text" and response.tokens == ("ACME",)


@pytest.mark.parametrize("raw, message", [
    (b'-' + b'9' * 400, "logprob must be a finite number; found an integer of 400 digits"),
    (b'-1' + b'0' * 399 + b'.5', "logprob must be a finite number; found -inf"),
    (b'-1e400', "logprob must be a finite number; found -inf"),
    (b'"-0.5"', "logprob must be a number; found str"),
])
def test_a_logprob_no_float_holds_is_a_response_error(raw, message):
    body = (b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop", '
            b'"logprobs": {"content": [{"token": "x", "logprob": ' + raw
            + b', "top_logprobs": []}]}}]}')
    with ChatServer([Reply(body=body)]) as server, pytest.raises(ModelResponseError,
                                                                  match=message) as info:
        client(server).complete(ChatRequest("s", "t", top_logprobs=2))
    assert "content[0]" in str(info.value) and info.value.status == 200


@pytest.mark.parametrize("bad, message", [
    ({"bytes": [300]}, "bytes that is not a list of byte values 0-255"),
    ({"bytes": "AC"}, "bytes that is not a list of byte values"),
    ({"token": None}, "token that is not a string"),
    ({"top_logprobs": "x"}, "top_logprobs that is not a list of objects"),
])
def test_malformed_logprob_entries_are_response_errors(bad, message):
    with ChatServer([Reply("AC", logprobs=[{**entry("AC", 0.5), **bad}])]) as server, \
            pytest.raises(ModelResponseError, match=message):
        client(server).complete(ChatRequest("s", "t", top_logprobs=2))


def test_an_answer_that_is_not_a_completion_is_named():
    with ChatServer([Reply(json={"choices": [{"text": "legacy completion"}]})]) as server, \
            pytest.raises(ModelResponseError, match="without choices\\[0\\].message"):
        client(server).complete(ChatRequest("s", "t"))


# -------------------------------------------------------------------------- arguments
@pytest.mark.parametrize("kwargs, message", [
    ({"base_url": "127.0.0.1:8000"}, "base_url must be an http:// or https:// URL"),
    ({"base_url": "ftp://x/v1"}, "base_url must be an http:// or https:// URL"),
    ({"model": " "}, "model must be a non-empty string"),
    ({"api_key_env": ""}, "api_key_env must name an environment variable"),
    ({"timeout": 0}, "timeout must be a finite number of seconds > 0; found 0"),
    ({"timeout": float("inf")}, "timeout must be a finite number of seconds > 0"),
    ({"max_retries": -1}, "max_retries must be an integer >= 0; found -1"),
    ({"max_retries": True}, "max_retries must be an integer >= 0"),
    ({"backoff": -1.0}, "backoff must be a finite number of seconds >= 0"),
    ({"max_response_bytes": 0}, "max_response_bytes must be an integer >= 1"),
    ({"headers": {"X-A": 3}}, "headers\\['X-A'\\] must be a string"),
])
def test_arguments_are_validated(kwargs, message):
    options = {"base_url": "http://127.0.0.1:9/v1", "model": "m", **kwargs}
    with pytest.raises(ValidationError, match=message):
        OpenAICompatibleClient(options.pop("base_url"), options.pop("model"), **options)


def test_a_request_must_be_a_chat_request():
    with pytest.raises(ValidationError, match="request must be a ChatRequest"):
        OpenAICompatibleClient("http://127.0.0.1:9/v1", "m").complete("hi")  # type: ignore


def test_repr_shows_the_address_and_model_only():
    c = OpenAICompatibleClient("http://127.0.0.1:8000/v1/", "m", headers={"X-Org": "org-1"})
    assert repr(c) == "OpenAICompatibleClient(base_url='http://127.0.0.1:8000/v1', model='m')"
    assert "org-1" not in repr(c)


def test_image_bytes_in_a_request_are_png():
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, "PNG")
    assert ChatRequest("s", "t", images=[buffer.getvalue()]).images[0][:4] == b"\x89PNG"
