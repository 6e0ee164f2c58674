"""Each provider's request contract, against a local server that enforces it.

The servers are real HTTP servers on 127.0.0.1 (tests/_chat_server.py) whose responders
refuse what the contract refuses, the way the providers answer (a 400 naming the field),
and count the requests: a client that sends what its contract forbids fails here as it
would against the provider. Bedrock goes through the real botocore client, whose request
``botocore.stub.Stubber`` checks. The provider matrix of docs/models.md is read and
checked row by row against what the clients send.
"""

from __future__ import annotations

import datetime
import http.client
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _chat_server import ChatServer, Reply
from _optional import need_module
from confcal.exceptions import ModelCallError, ModelHTTPError
from confcal.extras import _http
from confcal.extras._http import Transport
from confcal.extras.clients import (
    AnthropicClient,
    BedrockClient,
    ChatRequest,
    OpenAICompatibleClient,
)
from confcal.extras.extraction import run_extraction
from confcal.scoring.comparators import Number, Text
from confcal.scoring.schema import Field, Schema

KEY = "sk-contract-test-0123456789abcdef"
SCHEMA = Schema({"Agency": Field(Text()), "GrossTotal": Field(Number())})
CORPUS = {d: {"ocr": [(d, 1.0), ("ACME", 0.98), ("100.00", 0.87)]} for d in ("a", "b")}
VERBALIZED = json.dumps({"Agency": [{"value": "ACME", "probability": 0.8}],
                         "GrossTotal": [{"value": 100.0, "probability": 0.9}]})
PLAIN = json.dumps({"Agency": "ACME", "GrossTotal": 100.0})
SAMPLING = ("temperature", "top_p", "top_k")
SET = {"temperature": 0.0, "top_p": 0.5, "top_k": 40}  # a request setting all three


@pytest.fixture(autouse=True)
def _local_only(monkeypatch):
    monkeypatch.setenv("CONTRACT_KEY", KEY)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setattr(_http, "_sleep", lambda s: None)


def refuse(message: str, **error: Any) -> Reply:
    return Reply(status=400, json={"type": "error", "error": {
        "type": "invalid_request_error", "message": message, **error}})


# ------------------------------------------------------------------ Anthropic servers
# the Messages API's request fields under 2023-06-01; 2026-10-21 removed the sampling ones
MESSAGES_2023 = {"model", "messages", "max_tokens", "system", "temperature", "top_p",
                 "top_k", "stop_sequences", "metadata", "stream", "tools", "tool_choice",
                 "thinking", "service_tier"}
MESSAGES_2026 = MESSAGES_2023 - set(SAMPLING)


def message(text: str = VERBALIZED) -> Reply:
    return Reply(json={"id": "msg_01", "type": "message", "role": "assistant",
                       "model": "claude-test", "content": [{"type": "text", "text": text}],
                       "stop_reason": "end_turn", "stop_sequence": None,
                       "usage": {"input_tokens": 12, "output_tokens": 34}})


def anthropic_server(version: str, *, refuses_temperature: bool = False
                     ) -> Callable[[dict[str, Any]], Reply]:
    """A Messages endpoint enforcing ``version``'s rules (and a model's, optionally)."""
    allowed = MESSAGES_2026 if version == "2026-10-21" else MESSAGES_2023

    def answer(request: dict[str, Any]) -> Reply:
        headers = {k.lower(): v for k, v in request["headers"].items()}
        sent = headers.get("anthropic-version")
        if sent is None:
            return refuse("anthropic-version: header is required")
        if sent != version:
            return refuse(f"anthropic-version: {sent!r} is not the version this endpoint "
                          f"serves ({version!r})")
        if headers.get("x-api-key") != KEY:
            return Reply(status=401, json={"type": "error", "error": {
                "type": "authentication_error", "message": "invalid x-api-key"}})
        body = request["json"]
        for name in body:
            if name not in allowed:
                return refuse(f"{name}: Extra inputs are not permitted")
        if not {"model", "messages", "max_tokens"} <= set(body):
            return refuse("model, messages and max_tokens are required")
        if refuses_temperature and "temperature" in body:
            return refuse("`temperature` is deprecated for this model.")
        if not 0 <= body.get("temperature", 0) <= 1:
            return refuse("temperature: Input should be less than or equal to 1")
        return message()
    return answer


def anthropic(server: ChatServer, **kw: Any) -> AnthropicClient:
    return AnthropicClient("claude-test", base_url=server.origin, api_key_env="CONTRACT_KEY",
                           timeout=5, max_retries=0, **kw)


def test_anthropic_current_version_sends_nothing_it_refuses():
    with ChatServer([], responder=anthropic_server("2026-10-21")) as server:
        client = anthropic(server)
        assert client.complete(ChatRequest("You extract.", "Agency?", max_tokens=64)).text
        for name in SAMPLING:  # each refused before sending, naming it and the way out
            with pytest.raises(ModelCallError) as info:
                client.complete(ChatRequest("s", "t", **{name: SET[name]}))
            assert info.value.attempts == 0 and info.value.status is None
            message = str(info.value)
            assert f"refused {name}={float(SET[name]) if name != 'top_k' else SET[name]!r}" \
                in message
            assert f"anthropic-version 2026-10-21 takes no {name}" in message
            assert f"leave it unset ({name}=None" in message
            assert "api_version='2023-06-01'" in message
        assert len(server.requests) == 1  # only the request without sampling went out
    headers = {k.lower(): v for k, v in server.requests[0]["headers"].items()}
    assert headers["anthropic-version"] == "2026-10-21"
    assert set(server.requests[0]["json"]) == {"model", "max_tokens", "messages", "system"}


def test_the_version_servers_refuse_a_missing_or_other_version():
    # the enforcement the tests rely on: each server answers 400 to the other's header
    with ChatServer([], responder=anthropic_server("2026-10-21")) as new, \
            ChatServer([], responder=anthropic_server("2023-06-01")) as old:
        with pytest.raises(ModelHTTPError, match="'2023-06-01' is not the version"):
            anthropic(new, api_version="2023-06-01").complete(ChatRequest("s", "t"))
        with pytest.raises(ModelHTTPError, match="'2026-10-21' is not the version"):
            anthropic(old).complete(ChatRequest("s", "t"))
        body = json.dumps({"model": "m", "max_tokens": 8, "messages": []})
        for server in (new, old):
            conn = http.client.HTTPConnection("127.0.0.1", int(server.origin.rsplit(":", 1)[1]))
            conn.request("POST", "/v1/messages", body=body, headers={"x-api-key": KEY})
            reply = conn.getresponse()
            assert reply.status == 400 and b"header is required" in reply.read()
            conn.close()
        assert anthropic(old, api_version="2023-06-01").complete(ChatRequest("s", "t")).text
    with pytest.raises(ValueError, match=r"api_version must be one of \['2026-10-21', "
                                         r"'2023-06-01'\]; found '2024-01-01'"):
        AnthropicClient("m", api_version="2024-01-01")


def test_anthropic_previous_version_sends_set_sampling_as_given():
    with ChatServer([], responder=anthropic_server("2023-06-01")) as server:
        client = anthropic(server, api_version="2023-06-01")
        client.complete(ChatRequest("s", "t"))
        client.complete(ChatRequest("s", "t", **SET))
    unset, given = (r["json"] for r in server.requests)
    assert not set(SAMPLING) & set(unset)
    assert {name: given[name] for name in SAMPLING} == {"temperature": 0.0, "top_p": 0.5,
                                                        "top_k": 40}


def test_a_model_refusing_temperature_is_one_named_failure_per_document(tmp_path):
    server_rules = anthropic_server("2023-06-01", refuses_temperature=True)
    with ChatServer([], responder=server_rules) as server:
        run = run_extraction(anthropic(server, api_version="2023-06-01"), CORPUS,
                             modality="ocr", strategy="verbalized", schema=SCHEMA,
                             sampling={"temperature": 0.0}, cache_dir=tmp_path,
                             progress=False)
        assert len(server.requests) == 2  # one per document: a 400 is not retried
    assert run.predictions == {} and run.failure_counts["call"] == 2
    for failure in run.failures.values():
        assert failure["kind"] == "call"
        assert "`temperature` is deprecated for this model." in failure["message"]
        assert "the server refused temperature=0.0, which the request set: leave it " \
               "unset (temperature=None" in failure["message"]
    with ChatServer([], responder=server_rules) as server:  # unset: the model answers
        run = run_extraction(anthropic(server, api_version="2023-06-01"), CORPUS,
                             modality="ocr", strategy="verbalized", schema=SCHEMA,
                             cache_dir=tmp_path, progress=False)
    assert sorted(run.predictions) == ["a", "b"] and not run.failures


def test_a_sampling_parameter_the_current_version_refuses_costs_no_request(tmp_path):
    with ChatServer([], responder=anthropic_server("2026-10-21")) as server:
        run = run_extraction(anthropic(server), CORPUS, modality="ocr",
                             strategy="verbalized", schema=SCHEMA,
                             sampling={"top_p": 0.9}, cache_dir=tmp_path, progress=False)
        assert server.requests == []
    assert run.failure_counts["call"] == 2 and run.counts["failed"] == 2
    assert all("refused top_p=0.9 before sending it" in f["message"]
               for f in run.failures.values())


# --------------------------------------------------------------------- OpenAI servers
def completion(text: str, logprobs: Any = None, with_logprobs: bool = False) -> Reply:
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": text}}
    if with_logprobs:
        choice["logprobs"] = logprobs
    return Reply(json={"id": "c", "object": "chat.completion", "model": "m",
                       "choices": [choice], "usage": {"prompt_tokens": 1,
                                                      "completion_tokens": 1}})


def openai_error(message: str, param: str) -> Reply:
    return Reply(status=400, json={"error": {"message": message, "type":
                                             "invalid_request_error", "param": param,
                                             "code": "unsupported_parameter"}})


def openai_api(text: str = VERBALIZED) -> Callable[[dict[str, Any]], Reply]:
    """OpenAI's API as its reasoning models answer: max_completion_tokens only, no
    temperature but the default, no top_k, and no log-probabilities."""
    def answer(request: dict[str, Any]) -> Reply:
        body = request["json"]
        if "max_tokens" in body:
            return openai_error("Unsupported parameter: 'max_tokens' is not supported with "
                                "this model. Use 'max_completion_tokens' instead.",
                                "max_tokens")
        if "max_completion_tokens" not in body:
            return openai_error("max_completion_tokens is required here", "max_completion_tokens")
        if body.get("temperature", 1) != 1:
            return openai_error(f"Unsupported value: 'temperature' does not support "
                                f"{body['temperature']} with this model. Only the default "
                                "(1) value is supported.", "temperature")
        if "top_k" in body:
            return openai_error("Unrecognized request argument supplied: top_k", "top_k")
        return completion(text, None, with_logprobs=bool(body.get("logprobs")))
    return answer


def compatible_server(text: str = VERBALIZED) -> Callable[[dict[str, Any]], Reply]:
    """A self-hosted server's rule: the token limit is max_tokens (an unknown
    max_completion_tokens is refused, as strict servers do), sampling taken as given."""
    known = {"model", "messages", "max_tokens", "temperature", "top_p", "top_k", "logprobs",
             "top_logprobs", "stream", "stop"}

    def answer(request: dict[str, Any]) -> Reply:
        body = request["json"]
        for name in body:
            if name not in known:
                return openai_error(f"{name}: Extra inputs are not permitted", name)
        if "max_tokens" not in body:
            return openai_error("max_tokens is required", "max_tokens")
        return completion(text)
    return answer


def openai_client(url: str, **kw: Any) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(url, "m", api_key_env="CONTRACT_KEY", timeout=5,
                                  max_retries=0, **kw)


def official(server: ChatServer) -> OpenAICompatibleClient:
    """A client made for https://api.openai.com/v1 (the host picks its contract), whose
    transport is pointed at the local server that enforces that contract."""
    client = openai_client("https://api.openai.com/v1")
    client._transport = Transport(server.url, timeout=5, max_retries=0, backoff=0,
                                  max_wait=0, max_response_bytes=2**20)
    return client


def test_openai_api_gets_max_completion_tokens_and_no_unset_sampling():
    with ChatServer([], responder=openai_api()) as server:
        client = official(server)
        assert client.max_tokens_field == "max_completion_tokens"
        assert client.complete(ChatRequest("s", "t", max_tokens=99)).text == VERBALIZED
        body = server.requests[0]["json"]
        assert body["max_completion_tokens"] == 99 and "max_tokens" not in body
        assert not set(SAMPLING) & set(body)
        for name, value in (("temperature", 0.0), ("top_k", 40)):
            with pytest.raises(ModelHTTPError) as info:
                client.complete(ChatRequest("s", "t", **{name: value}))
            assert info.value.status == 400 and info.value.attempts == 1
            assert f"the server refused {name}={value!r}, which the request set: leave " \
                   f"it unset ({name}=None" in str(info.value)
        # the other name, chosen explicitly, meets this contract's refusal (not a
        # sampling parameter: no hint)
        wrong = openai_client(server.url, max_tokens_field="max_tokens")
        with pytest.raises(ModelHTTPError, match="Use 'max_completion_tokens' instead") as info:
            wrong.complete(ChatRequest("s", "t"))
        assert "leave it unset" not in str(info.value)
        assert len(server.requests) == 4


def test_compatible_servers_get_max_tokens_and_set_sampling_as_given():
    with ChatServer([], responder=compatible_server()) as server:
        client = openai_client(server.url)
        assert client.max_tokens_field == "max_tokens"  # 127.0.0.1 is not api.openai.com
        client.complete(ChatRequest("s", "t", max_tokens=7))
        client.complete(ChatRequest("s", "t", max_tokens=7, **SET))
        unset, given = (r["json"] for r in server.requests)
        assert unset["max_tokens"] == 7 and not set(SAMPLING) & set(unset)
        assert {name: given[name] for name in SAMPLING} == {"temperature": 0.0,
                                                            "top_p": 0.5, "top_k": 40}
        with pytest.raises(ModelHTTPError, match="max_completion_tokens: Extra inputs"):
            openai_client(server.url, max_tokens_field="max_completion_tokens").complete(
                ChatRequest("s", "t"))
    with pytest.raises(ValueError, match=r"max_tokens_field must be one of "
                                         r"\['max_completion_tokens', 'max_tokens'\] or None"):
        openai_client("http://127.0.0.1:9/v1", max_tokens_field="max_new_tokens")


@pytest.mark.parametrize("logprobs", [None, {"content": None}, {"content": []}],
                         ids=["null", "content-null", "content-empty"])
def test_a_logprob_run_without_logprobs_is_one_named_failure_per_document(logprobs, tmp_path):
    def answer(request: dict[str, Any]) -> Reply:
        assert request["json"]["logprobs"] is True  # they were asked for
        return completion(PLAIN, logprobs, with_logprobs=True)

    with ChatServer([], responder=answer) as server:
        run = run_extraction(openai_client(server.url), CORPUS, modality="ocr",
                             strategy="logprob", schema=SCHEMA, cache_dir=tmp_path,
                             progress=False)
        assert len(server.requests) == 2
    assert run.predictions == {}  # no confidence of 0, 1 or NaN made up for anything
    assert run.failure_counts == {"call": 0, "response": 0, "answer": 2, "cache": 0,
                                  "error": 0}
    for failure in run.failures.values():
        assert failure == {"kind": "answer", "stage": "extract", "message":
                           "the model returned no log-probabilities; use a verbalized "
                           "strategy or a server that returns them"}


def test_a_logprob_run_against_openai_reasoning_rules_fails_per_document(tmp_path):
    with ChatServer([], responder=openai_api(PLAIN)) as server:
        run = run_extraction(official(server), CORPUS, modality="ocr", strategy="logprob",
                             schema=SCHEMA, cache_dir=tmp_path, progress=False)
    assert run.failure_counts["answer"] == 2 and not run.predictions
    assert {f["message"] for f in run.failures.values()} == {
        "the model returned no log-probabilities; use a verbalized strategy or a server "
        "that returns them"}


# ---------------------------------------------------------------------------- Bedrock
@pytest.fixture
def bedrock(monkeypatch) -> BedrockClient:
    need_module("botocore")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return BedrockClient("test.model-v1:0", region="us-east-1", timeout=5, max_retries=0)


def converse(text: str = VERBALIZED) -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
            "stopReason": "end_turn", "usage": {"inputTokens": 5, "outputTokens": 30,
                                                "totalTokens": 35},
            "metrics": {"latencyMs": 10}}


def converse_params(config: dict[str, Any]) -> dict[str, Any]:
    return {"modelId": "test.model-v1:0", "system": [{"text": "s"}],
            "messages": [{"role": "user", "content": [{"text": "t"}]}],
            "inferenceConfig": config}


def test_bedrock_inference_config_carries_only_what_was_set(bedrock):
    from botocore.stub import Stubber

    with Stubber(bedrock.runtime) as stub:
        stub.add_response("converse", converse(), converse_params({"maxTokens": 64}))
        stub.add_response("converse", converse(), converse_params(
            {"maxTokens": 64, "temperature": 0.0}))
        stub.add_response("converse", converse(), converse_params(
            {"maxTokens": 64, "temperature": 0.5, "topP": 0.9}))
        bedrock.complete(ChatRequest("s", "t", max_tokens=64))
        bedrock.complete(ChatRequest("s", "t", max_tokens=64, temperature=0))
        bedrock.complete(ChatRequest("s", "t", max_tokens=64, temperature=0.5, top_p=0.9))
        stub.assert_no_pending_responses()
        with pytest.raises(ModelCallError) as info:  # nothing queued: nothing may be sent
            bedrock.complete(ChatRequest("s", "t", top_k=40))
    assert info.value.attempts == 0
    assert str(info.value) == (
        "Bedrock converse test.model-v1:0 refused top_k=40 before sending it: Converse's "
        "inferenceConfig has no top_k; leave it unset (top_k=None, the ChatRequest "
        "default; drop it from the caller's sampling=) so that the server decides")


def test_bedrock_a_model_naming_either_spelling_of_top_p_says_how_to_unset_it(bedrock):
    from botocore.stub import Stubber

    with Stubber(bedrock.runtime) as stub:
        for said in ("topP", "top_p"):
            stub.add_client_error("converse", service_error_code="ValidationException",
                                  http_status_code=400,
                                  service_message=f"{said} must not be set with temperature")
        for _ in range(2):
            with pytest.raises(ModelHTTPError, match=r"the server refused top_p=0\.9, which "
                                                     r"the request set"):
                bedrock.complete(ChatRequest("s", "t", top_p=0.9))
        # a 400 about something else is left as the server said it
        stub.add_client_error("converse", service_error_code="ValidationException",
                              http_status_code=400, service_message="messages: bad role")
        with pytest.raises(ModelHTTPError) as info:
            bedrock.complete(ChatRequest("s", "t", top_p=0.9))
    assert "leave it unset" not in str(info.value)


def test_bedrock_a_model_refusing_temperature_says_how_to_unset_it(bedrock, tmp_path):
    from botocore.stub import Stubber

    with Stubber(bedrock.runtime) as stub:
        for _ in CORPUS:
            stub.add_client_error(
                "converse", service_error_code="ValidationException", http_status_code=400,
                service_message="The model returned the following errors: temperature is "
                                "not supported for this model")
        run = run_extraction(bedrock, CORPUS, modality="ocr", strategy="verbalized",
                             schema=SCHEMA, sampling={"temperature": 0.2}, concurrency=1,
                             cache_dir=tmp_path, progress=False)
        stub.assert_no_pending_responses()
    assert run.failure_counts["call"] == 2
    for failure in run.failures.values():
        assert "HTTP 400: ValidationException" in failure["message"]
        assert "the server refused temperature=0.2, which the request set" in \
            failure["message"]


# --------------------------------------------------------- the matrix, row by row
MODELS_MD = Path(__file__).resolve().parents[2] / "docs" / "models.md"


def contract_rows() -> dict[str, dict[str, str]]:
    text = MODELS_MD.read_text(encoding="utf-8")
    section = text.split("### Request contracts", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header, cells, strict=True))
    return rows


def observe(kind: str, bedrock_client: BedrockClient | None = None) -> dict[str, Any]:
    """What a client of ``kind`` sends: version header, token field, sampling sent when
    all three are set one at a time (or refused before sending), log-probabilities."""
    seen: dict[str, Any] = {"sent": set(), "refused": set()}
    if kind == "bedrock":
        from botocore.stub import Stubber

        assert bedrock_client is not None
        with Stubber(bedrock_client.runtime) as stub:
            stub.add_response("converse", converse(), converse_params({"maxTokens": 9}))
            bedrock_client.complete(ChatRequest("s", "t", max_tokens=9))
            for name, wire in (("temperature", "temperature"), ("top_p", "topP")):
                stub.add_response("converse", converse(), converse_params(
                    {"maxTokens": 9, wire: float(SET[name])}))
                bedrock_client.complete(ChatRequest("s", "t", max_tokens=9,
                                                    **{name: SET[name]}))
                seen["sent"].add(wire)
            try:
                bedrock_client.complete(ChatRequest("s", "t", max_tokens=9, top_k=40))
            except ModelCallError as exc:
                assert exc.attempts == 0
                seen["refused"].add("top_k")
            stub.assert_no_pending_responses()
        seen.update(version=None, field="inferenceConfig.maxTokens",
                    logprobs=bedrock_client.supports_logprobs)
        return seen
    make: dict[str, Callable[[ChatServer], Any]] = {
        "anthropic-2026": anthropic,
        "anthropic-2023": lambda s: anthropic(s, api_version="2023-06-01"),
        "openai-api": official,
        "compatible": lambda s: openai_client(s.url),
    }

    def accept_all(request: dict[str, Any]) -> Reply:
        return message() if request["path"] == "/v1/messages" else completion("ok")

    with ChatServer([], responder=accept_all) as server:
        client = make[kind](server)
        client.complete(ChatRequest("s", "t", max_tokens=9))
        for name in SAMPLING:
            before = len(server.requests)
            try:
                client.complete(ChatRequest("s", "t", max_tokens=9, **{name: SET[name]}))
            except ModelCallError as exc:
                assert exc.attempts == 0 and len(server.requests) == before
                seen["refused"].add(name)
            else:
                seen["sent"].add(name)
                assert name in server.requests[-1]["json"]
    first = server.requests[0]
    headers = {k.lower(): v for k, v in first["headers"].items()}
    seen["version"] = (f"anthropic-version: {headers['anthropic-version']}"
                       if "anthropic-version" in headers else None)
    (seen["field"],) = [f for f in ("max_tokens", "max_completion_tokens")
                        if f in first["json"]]
    seen["logprobs"] = client.supports_logprobs
    return seen


ROWS = {"Anthropic Messages, current": "anthropic-2026",
        "Anthropic Messages, previous": "anthropic-2023",
        "OpenAI API": "openai-api",
        "OpenAI-compatible server (vLLM, llama.cpp, TGI, Ollama)": "compatible",
        "Amazon Bedrock Converse": "bedrock"}


def test_the_matrix_has_a_tested_row_per_contract():
    assert set(contract_rows()) == set(ROWS)


@pytest.mark.parametrize("row", list(ROWS))
def test_the_provider_matrix_row_by_row(row, monkeypatch):
    kind = ROWS[row]
    client = None
    if kind == "bedrock":
        need_module("botocore")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        client = BedrockClient("test.model-v1:0", region="us-east-1", max_retries=0)
    seen = observe(kind, client)
    cells = contract_rows()[row]
    if seen["version"] is None:
        assert cells["API version"].startswith("none")
    else:
        assert f"`{seen['version']}`" in cells["API version"]
    assert cells["token-limit field"].startswith(f"`{seen['field']}`")
    sampling = cells["sampling parameters"]
    for name in seen["sent"]:
        assert f"`{name}`" in sampling and "when set" in sampling
    if seen["refused"] == set(SAMPLING):
        assert sampling.startswith("none:") and "fails before sending" in sampling
    elif seen["refused"]:
        (name,) = seen["refused"]
        assert f"`{name}` fails before sending" in sampling
    else:
        assert "fails before sending" not in sampling
    assert cells["log-probabilities"].startswith("yes" if seen["logprobs"] else "none")
    checked = datetime.date.fromisoformat(cells["checked"])
    assert checked <= datetime.date.today()
    assert re.fullmatch(r"`[A-Za-z]+Client\(.*\)`", cells["client"])
