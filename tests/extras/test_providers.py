"""AnthropicClient against a local Messages server; BedrockClient through botocore's Stubber.

No SDK stand-in module anywhere: the Anthropic request is built and read by confcal and
checked here against the documented Messages format by a real server on 127.0.0.1;
Bedrock's Converse call goes through the real botocore client, whose request and answer
``botocore.stub.Stubber`` checks against the service model.
"""

from __future__ import annotations

import base64
import io
import json
import logging
from typing import Any

import pytest

from _chat_server import ChatServer, Reply
from _optional import need_module
from confcal.exceptions import (
    ModelCallError,
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ValidationError,
)
from confcal.extras import _http
from confcal.extras.clients import AnthropicClient, BedrockClient, ChatRequest
from confcal.extras.extraction import (
    ModelAnswerError,
    build_request,
    extract_logprob,
    extract_verbalized,
    run_extraction,
)
from confcal.scoring.comparators import Number, Text
from confcal.scoring.schema import Field, Schema

SCHEMA = Schema({"Agency": Field(Text()), "GrossTotal": Field(Number())})
OCR = [("ACME", 0.98), ("Total", 0.99), ("100.00", 0.87)]
KEY = "sk-ant-test-0123456789abcdef"
ANSWER = json.dumps({"Agency": [{"value": "ACME", "probability": 0.8}],
                     "GrossTotal": [{"value": 100.0, "probability": 0.9}]})
# The Messages API's documented request fields (docs.anthropic.com, "Messages"): confcal
# may send only these
MESSAGES_REQUEST_FIELDS = {"model", "messages", "max_tokens", "system", "temperature",
                           "stop_sequences", "top_p", "top_k", "metadata", "stream", "tools",
                           "tool_choice", "thinking", "service_tier"}


def png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buffer, "PNG")
    return buffer.getvalue()


def message(text: str = ANSWER, stop: str = "end_turn", **extra: Any) -> Reply:
    return Reply(json={"id": "msg_01", "type": "message", "role": "assistant",
                       "model": "claude-test", "content": [{"type": "text", "text": text}],
                       "stop_reason": stop, "stop_sequence": None,
                       "usage": {"input_tokens": 12, "output_tokens": 34}, **extra})


@pytest.fixture(autouse=True)
def _local_only(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setattr(_http, "_sleep", lambda s: None)


def anthropic(server: ChatServer, **kw: Any) -> AnthropicClient:
    return AnthropicClient("claude-test", base_url=server.origin, timeout=5, **kw)


# --------------------------------------------------------------------------- Anthropic
def test_anthropic_posts_the_documented_messages_request():
    with ChatServer([message()]) as server:
        doc = extract_verbalized(anthropic(server), SCHEMA, image=png(), ocr=OCR,
                                 max_tokens=300)
    assert doc["Agency"]["candidates"][0] == {"value": "ACME", "probability": 0.8}
    (request,) = server.requests
    assert request["method"] == "POST" and request["path"] == "/v1/messages"
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2026-10-21"
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers  # the key travels once, in its documented header
    body = request["json"]
    assert set(body) <= MESSAGES_REQUEST_FIELDS
    assert set(body) == {"model", "max_tokens", "messages", "system"}
    assert body["model"] == "claude-test" and body["max_tokens"] == 300
    assert "no reasoning" in body["system"]
    (turn,) = body["messages"]
    assert turn["role"] == "user"
    image, text = turn["content"]
    assert image == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png",
        "data": base64.b64encode(build_request(SCHEMA, image=png()).images[0]).decode()}}
    assert text["type"] == "text" and "ACME\t0.98" in text["text"]


def test_anthropic_reads_text_blocks_stop_reasons_and_usage():
    answer = message(stop="max_tokens")
    answer.json["content"] = [{"type": "thinking", "thinking": "hm", "signature": "s"},
                              {"type": "text", "text": "part one, "},
                              {"type": "text", "text": "part two"}]
    with ChatServer([answer, message(stop="refusal")]) as server:
        client = anthropic(server)
        cut = client.complete(ChatRequest("s", "t"))
        other = client.complete(ChatRequest("s", "t"))
    assert cut.text == "part one, part two" and cut.finish_reason == "length"
    assert cut.usage == {"input_tokens": 12, "output_tokens": 34}
    assert other.finish_reason == "refusal"  # the API's own word, kept


def test_anthropic_without_a_system_prompt_sends_none():
    with ChatServer([message()]) as server:
        anthropic(server).complete(ChatRequest("", "text"))
    assert "system" not in server.requests[0]["json"]


def test_anthropic_answer_without_text_is_a_response_error():
    empty = message()
    empty.json["content"] = [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]
    with ChatServer([empty]) as server, pytest.raises(
            ModelResponseError, match="without a reply text: no text block in content "
                                      "\\(stop_reason 'end_turn'\\)"):
        anthropic(server).complete(ChatRequest("s", "t"))


def test_anthropic_an_answer_cut_at_max_tokens_is_an_answer_error():
    with ChatServer([message(stop="max_tokens")]) as server, pytest.raises(
            ModelAnswerError, match="cut at max_tokens"):
        extract_verbalized(anthropic(server), SCHEMA, ocr=OCR)


def test_anthropic_errors_overloaded_is_retried_and_errors_are_quoted():
    overloaded = Reply(status=529, json={"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}})
    invalid = Reply(status=400, json={"type": "error", "error": {
        "type": "invalid_request_error", "message": "max_tokens: must be at most 64000"}})
    with ChatServer([overloaded, message(), invalid]) as server:
        client = anthropic(server)
        assert client.complete(ChatRequest("s", "t")).text == ANSWER
        with pytest.raises(ModelHTTPError, match="HTTP 400: max_tokens: must be at most 64000"):
            client.complete(ChatRequest("s", "t"))
    assert len(server.requests) == 3


def test_anthropic_refuses_what_the_api_cannot_do(monkeypatch):
    client = AnthropicClient("claude-test", base_url="http://127.0.0.1:9")
    with pytest.raises(ValidationError, match="must return token log-probabilities"):
        extract_logprob(client, SCHEMA, ocr=OCR)
    with pytest.raises(ValidationError, match="top_logprobs must be 0 for AnthropicClient"):
        client.complete(ChatRequest("s", "t", top_logprobs=2))
    old = AnthropicClient("claude-test", base_url="http://127.0.0.1:9", api_version="2023-06-01")
    with pytest.raises(ModelCallError, match="temperature=1.5 before sending it: the Messages "
                                             "API takes a temperature within \\[0, 1\\]"):
        old.complete(ChatRequest("s", "t", temperature=1.5))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ModelCallError, match="ANTHROPIC_API_KEY must hold the Anthropic API key"):
        client.complete(ChatRequest("s", "t"))
    assert KEY not in repr(client)


def test_anthropic_failures_are_records_in_a_run(tmp_path):
    # a failure never aborts the run: the bad document is one record, the others are read
    def answer(request: dict[str, Any]) -> Reply:
        text = request["json"]["messages"][0]["content"][-1]["text"]
        return Reply(status=400, json={"type": "error", "error": {"message": "bad image"}}) \
            if "doc-b" in text else message()

    corpus = {d: {"ocr": [(d, 1.0), *OCR]} for d in ("doc-a", "doc-b")}
    with ChatServer([], responder=answer) as server:
        run = run_extraction(anthropic(server), corpus, modality="ocr", strategy="verbalized",
                             schema=SCHEMA, cache_dir=tmp_path, progress=False)
    assert list(run.predictions) == ["doc-a"]
    assert run.failures["doc-b"]["kind"] == "call" and "bad image" in \
        run.failures["doc-b"]["message"]


# ----------------------------------------------------------------------------- Bedrock
@pytest.fixture
def bedrock(monkeypatch) -> BedrockClient:
    need_module("botocore")
    # botocore needs credentials to exist (the Stubber answers before anything is signed
    # or sent); no instance-metadata lookup, no network
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)


def converse_answer(text: str = ANSWER, stop: str = "end_turn") -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
            "stopReason": stop,
            "usage": {"inputTokens": 5, "outputTokens": 30, "totalTokens": 35},
            "metrics": {"latencyMs": 10}}


def test_bedrock_sends_the_converse_request_and_reads_the_answer(bedrock):
    from botocore.stub import Stubber

    request = build_request(SCHEMA, strategy="verbalized", image=png(), ocr=OCR,
                            max_tokens=300)
    with Stubber(bedrock.runtime) as stub:
        stub.add_response("converse", converse_answer(stop="max_tokens"), {
            "modelId": "test.model-v1:0", "system": [{"text": request.system}],
            "messages": [{"role": "user", "content": [
                {"image": {"format": "png", "source": {"bytes": request.images[0]}}},
                {"text": request.text}]}],
            "inferenceConfig": {"maxTokens": 300}})  # nothing the request did not set
        response = bedrock.complete(request)
        stub.assert_no_pending_responses()
    assert response.text == ANSWER and response.finish_reason == "length"
    assert response.usage == {"inputTokens": 5, "outputTokens": 30, "totalTokens": 35}


def test_bedrock_in_a_run_and_its_errors_are_the_family(bedrock, tmp_path):
    from botocore.stub import Stubber

    corpus = {"a": {"ocr": OCR}, "b": {"ocr": [("other", 1.0), *OCR]}}
    with Stubber(bedrock.runtime) as stub:
        stub.add_response("converse", converse_answer())
        stub.add_client_error("converse", service_error_code="ThrottlingException",
                              service_message="Too many requests", http_status_code=429)
        run = run_extraction(bedrock, corpus, modality="ocr", strategy="verbalized",
                             schema=SCHEMA, concurrency=1, cache_dir=tmp_path, progress=False)
    assert list(run.predictions) == ["a"]
    failure = run.failures["b"]
    assert failure["kind"] == "call"
    assert "HTTP 429: ThrottlingException: Too many requests" in failure["message"]
    assert run.metadata["a"]["provider"] == "bedrock"

    with Stubber(bedrock.runtime) as stub:
        stub.add_client_error("converse", service_error_code="ValidationException",
                              service_message="bad input", http_status_code=400)
        with pytest.raises(ModelHTTPError) as info:
            bedrock.complete(ChatRequest("s", "t"))
    assert info.value.status == 400 and not info.value.retryable


def test_bedrock_answer_without_text_is_a_response_error(bedrock):
    from botocore.stub import Stubber

    answer = converse_answer()
    answer["output"]["message"]["content"] = [{"reasoningContent": {
        "reasoningText": {"text": "hm"}}}]
    with Stubber(bedrock.runtime) as stub:
        stub.add_response("converse", answer)
        with pytest.raises(ModelResponseError, match="without a reply text"):
            bedrock.complete(ChatRequest("s", "t"))


def test_bedrock_an_unreachable_endpoint_is_a_connection_error(monkeypatch):
    import socket

    need_module("botocore")

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with socket.socket() as s:  # a free port on 127.0.0.1: nobody listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", f"http://127.0.0.1:{port}")
    client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=1, max_retries=0)
    with pytest.raises(ModelConnectionError, match="no answer"):
        client.complete(ChatRequest("s", "t"))


def test_bedrock_refuses_logprobs(bedrock):
    with pytest.raises(ValidationError, match="top_logprobs must be 0 for BedrockClient"):
        bedrock.complete(ChatRequest("s", "t", top_logprobs=2))


def test_botocore_debug_records_hold_no_session_token_or_signature(monkeypatch, caplog):
    # a real signed Converse request to a local endpoint: botocore's DEBUG records quote
    # the request headers and the canonical request, x-amz-security-token included
    need_module("botocore")
    import botocore.config
    import botocore.session

    token = "SESSIONtoken0123456789abcdefSESSIONtoken"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIATESTTESTTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secretSECRETsecret0123456789")
    monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)
    client.runtime  # created as a user's would be: the log filter goes on here
    with ChatServer([Reply(json=converse_answer("hi"))]) as server:
        client._client = botocore.session.Session().create_client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=server.origin,
            config=botocore.config.Config(retries={"total_max_attempts": 1}))
        with caplog.at_level(logging.DEBUG):
            assert client.complete(ChatRequest("sys", "text")).text == "hi"
    sent = server.requests[0]["headers"]
    assert sent["X-Amz-Security-Token"] == token  # it was sent, and signed for
    signature = sent["Authorization"].rsplit("Signature=", 1)[1]
    records = [r for r in caplog.records if r.name.startswith("botocore")]
    assert any(r.name == "botocore.auth" for r in records)
    assert any("x-amz-security-token:[redacted]" in r.getMessage() for r in records)
    for text in [caplog.text, *(r.getMessage() for r in records)]:
        assert token not in text and signature not in text
        assert "secretSECRETsecret" not in text


def test_bedrock_redacts_its_credentials_echoed_in_an_error(monkeypatch):
    # the attack: a server (or a proxy) echoing the session token, the access key and the
    # secret in its error message; the other clients redact their key, Bedrock did not
    need_module("botocore")
    token = "SESSIONtoken0123456789abcdefSESSIONtoken"
    key, secret = "AKIATESTTESTTEST", "secretSECRETsecret0123456789"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    echo = {"message": f"bad token {token}; key {key}; secret {secret[:12]}"}
    with ChatServer([Reply(status=403, json=echo,
                           headers={"x-amzn-ErrorType": "AccessDeniedException"})]) as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.origin)
        client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)
        with pytest.raises(ModelHTTPError) as info:
            client.complete(ChatRequest("s", "t"))
    assert server.requests[0]["headers"]["X-Amz-Security-Token"] == token  # it was sent
    message = str(info.value)
    assert "HTTP 403: AccessDeniedException: bad token [redacted]" in message
    for part in (token, key, secret[:12], token[:8], token[-8:]):
        assert part not in message


TOKEN = "SESSIONtoken0123456789abcdefSESSIONtoken"
ACCESS, SECRET = "AKIATESTTESTTEST", "secretSECRETsecret0123456789"


def aws_credentials(monkeypatch) -> None:
    need_module("botocore")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def no_aws_secret_in(text: str) -> None:
    """No 8 characters of the token, secret or access key, as written or as a reader
    reads them (NFKC, without spaces or format characters), nor 16 digits of their hex."""
    import unicodedata

    read = "".join(c for c in unicodedata.normalize("NFKC", text)
                   if not c.isspace() and unicodedata.category(c) != "Cf")
    for secret in (TOKEN, SECRET, ACCESS):
        hexed = secret.encode().hex()
        for seen in (text, read):
            assert not [i for i in range(len(secret) - 7) if secret[i:i + 8] in seen], text
            assert not [i for i in range(len(hexed) - 15)
                        if hexed[i:i + 16] in seen.lower()], text


def test_bedrock_prints_nothing_secret_with_http_client_debugging_on(monkeypatch, capsys):
    # the attack: HTTPConnection.debuglevel = 1 made every botocore connection print the
    # request it sent (X-Amz-Security-Token, the Authorization signature) to stdout
    import http.client

    aws_credentials(monkeypatch)
    monkeypatch.setattr(http.client.HTTPConnection, "debuglevel", 1)
    with ChatServer([Reply(json=converse_answer("hi"))] * 2) as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.origin)
        client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)
        assert client.complete(ChatRequest("sys", "text")).text == "hi"
        for pool in client.runtime._endpoint.http_session._pool_classes_by_scheme.values():
            pool.ConnectionCls("127.0.0.1").set_debuglevel(2)  # set on one: still 0
        assert client.complete(ChatRequest("sys", "again")).text == "hi"
    sent = server.requests[0]["headers"]
    assert sent["X-Amz-Security-Token"] == TOKEN  # it was sent, and signed for
    signature = sent["Authorization"].rsplit("Signature=", 1)[1]
    out = capsys.readouterr()
    for text in (out.out, out.err):
        assert signature not in text and "X-Amz-Security-Token" not in text
        no_aws_secret_in(text)
    # the class attribute is the user's, untouched: only this client's connections are quiet
    assert http.client.HTTPConnection.debuglevel == 1


def _aws_forms(secret: str) -> dict[str, str]:
    return {"hex": secret.encode().hex(), "hex-upper": secret.encode().hex().upper(),
            "space-split": " ".join(secret), "zero-width-split": "\u200b".join(secret),
            "fullwidth": "".join(chr(ord(c) + 0xFEE0) for c in secret)}


@pytest.mark.parametrize("form", list(_aws_forms("x")))
def test_bedrock_redacts_its_credentials_echoed_in_any_form(monkeypatch, form):
    aws_credentials(monkeypatch)
    echo = {"message": "; ".join(_aws_forms(s)[form] for s in (TOKEN, SECRET, ACCESS))}
    with ChatServer([Reply(status=403, json=echo,
                           headers={"x-amzn-ErrorType": "AccessDeniedException"})]) as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.origin)
        client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)
        with pytest.raises(ModelHTTPError) as info:
            client.complete(ChatRequest("s", "t"))
    assert "HTTP 403: AccessDeniedException: [redacted]" in str(info.value)
    no_aws_secret_in(str(info.value))


@pytest.mark.parametrize("form", ["plain", *_aws_forms("x")])
def test_bedrock_refuses_a_200_that_echoes_its_credentials(monkeypatch, tmp_path, form):
    # else the echo would reach the cache and the records of a run
    aws_credentials(monkeypatch)
    text = TOKEN if form == "plain" else _aws_forms(TOKEN)[form]
    with ChatServer([Reply(json=converse_answer(f"value {text}"))]) as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.origin)
        client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)
        run = run_extraction(client, {"a": {"ocr": OCR}}, modality="ocr",
                             strategy="verbalized", schema=SCHEMA, cache_dir=tmp_path,
                             progress=False)
    failure = run.failures["a"]
    assert failure["kind"] == "response"
    assert "echoes the credentials it was signed with" in failure["message"]
    no_aws_secret_in(failure["message"])
    assert list(tmp_path.rglob("*.json")) == []  # nothing reached the cache


def test_bedrock_refuses_a_botocore_whose_connections_it_cannot_quiet(monkeypatch):
    from confcal.extras import _providers

    aws_credentials(monkeypatch)
    client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)
    assert _providers._silence_connections(object()) is False  # no pools where expected
    monkeypatch.setattr(_providers, "_silence_connections", lambda runtime: False)
    with pytest.raises(ModelCallError, match="cannot stop them printing the session token"):
        client.complete(ChatRequest("s", "t"))
    assert client._client is None  # never used half-made


@pytest.mark.parametrize("form", ["plain", *_aws_forms("x")])
def test_botocore_debug_records_of_an_echoing_answer_hold_no_credential(monkeypatch, caplog,
                                                                       form):
    # botocore.parsers quotes every answer's body at DEBUG: a server echoing the session
    # token (as hex, split, fullwidth) put it in the log in the clear
    aws_credentials(monkeypatch)

    def written(secret: str) -> str:
        return secret if form == "plain" else _aws_forms(secret)[form]

    echo = {"message": "; ".join(written(s) for s in (TOKEN, SECRET))}
    with ChatServer([Reply(status=403, json=echo,
                           headers={"x-amzn-ErrorType": "AccessDeniedException"}),
                     Reply(body=json.dumps(converse_answer("ok")).encode().replace(
                         b"ok", json.dumps(written(TOKEN)).encode()[1:-1]))]) as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.origin)
        client = BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)
        with caplog.at_level(logging.DEBUG):
            with pytest.raises(ModelHTTPError):
                client.complete(ChatRequest("s", "t"))
            with pytest.raises(ModelResponseError, match="echoes the credentials"):
                client.complete(ChatRequest("s", "t"))
    records = [r for r in caplog.records if r.name == "botocore.parsers"]
    assert any("Response body" in r.getMessage() for r in records)
    assert any("[redacted]" in r.getMessage() for r in records)
    for text in [caplog.text, *(r.getMessage() for r in caplog.records)]:
        for secret in (TOKEN, SECRET):
            assert not [i for i in range(len(secret) - 7) if secret[i:i + 8] in text]
    no_aws_secret_in("\n".join(r.getMessage() for r in caplog.records
                               if r.name.startswith("botocore")).replace(ACCESS, ""))
