"""The deprecated confcal.extras.models.ChatCompletionsClient against a real server.

It is a thin wrapper over OpenAICompatibleClient and the shared transport
(tests/extras/test_http.py checks the transport's rules for all clients at once); these
tests keep its own contract: ``complete(messages) -> str``, ``create(messages) -> dict``,
its options, an exact retry schedule through an injected ``sleep``, and a
DeprecationWarning when one is made. No other network than 127.0.0.1 is used.
"""

from __future__ import annotations

import email.utils
import logging
import socket
import time
import warnings

import pytest

from _chat_server import ChatServer, Reply
from confcal.exceptions import ConfcalError, ModelCallError, ValidationError
from confcal.extras.models import (
    ChatCompletionsClient,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
)

KEY = "sk-test-0123456789-secret"
MESSAGES = [{"role": "user", "content": "Is 2 + 2 = 4? Reply 1 or 0."}]


@pytest.fixture(autouse=True)
def _local_only(monkeypatch):
    # The key lives in the environment only; proxies must never see 127.0.0.1 traffic.
    monkeypatch.setenv("CONFCAL_TEST_KEY", KEY)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


class Sleeps(list):
    """A sleep that records how long it was asked to wait."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(*args, **options) -> ChatCompletionsClient:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ChatCompletionsClient(*args, **options)


def client(server: ChatServer, sleeps: Sleeps | None = None, **options) -> ChatCompletionsClient:
    options.setdefault("api_key_env", "CONFCAL_TEST_KEY")
    return make(server.url, "judge-model", sleep=sleeps if sleeps is not None else Sleeps(),
                **options)


def test_making_one_is_deprecated():
    with pytest.warns(DeprecationWarning, match="ChatCompletionsClient is deprecated; use "
                                                "confcal.extras.clients.OpenAICompatibleClient"):
        ChatCompletionsClient("http://127.0.0.1:9/v1", "m", api_key_env=None)


# ------------------------------------------------------------------------ the protocol
def test_complete_posts_the_chat_completions_request_and_returns_the_reply():
    with ChatServer([Reply("1")]) as server:
        assert client(server, max_tokens=5).complete(MESSAGES) == "1"
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["json"] == {"model": "judge-model", "messages": MESSAGES,
                               "temperature": 0.0, "max_tokens": 5}


def test_create_returns_the_response_and_extra_params_override_the_defaults():
    with ChatServer([Reply("0")]) as server:
        response = client(server).create(MESSAGES, temperature=0.7, seed=3)
    assert response["choices"][0]["message"]["content"] == "0"
    assert server.requests[0]["json"]["temperature"] == 0.7
    assert server.requests[0]["json"]["seed"] == 3


def test_base_url_with_a_trailing_slash_is_the_same_endpoint():
    with ChatServer([Reply("1")]) as server:
        c = make(server.url + "/", "m", api_key_env=None, sleep=Sleeps())
        c.complete(MESSAGES)
    assert server.requests[0]["path"] == "/v1/chat/completions"


def test_no_key_is_sent_when_api_key_env_is_none():
    with ChatServer([Reply("1")]) as server:
        client(server, api_key_env=None).complete(MESSAGES)
    assert "Authorization" not in server.requests[0]["headers"]


# ------------------------------------------------------------------------- the key
def test_a_missing_key_is_an_error_before_any_request(monkeypatch):
    monkeypatch.delenv("CONFCAL_TEST_KEY")
    message = "environment variable CONFCAL_TEST_KEY must hold the .* key; found it unset or empty"
    with ChatServer([Reply("1")]) as server, pytest.raises(ModelCallError, match=message):
        client(server).complete(MESSAGES)
    assert server.requests == []


def test_the_key_is_never_in_the_repr_errors_or_logs(caplog):
    sleeps = Sleeps()
    with ChatServer([Reply(status=500), Reply(status=401)]) as server:
        c = client(server, sleeps)
        with (caplog.at_level(logging.DEBUG, logger="confcal"),
              pytest.raises(ModelHTTPError) as info):
            c.complete(MESSAGES)
    assert info.value.status == 401
    assert "check the key in the environment variable CONFCAL_TEST_KEY" in str(info.value)
    for text in (repr(c), str(c), str(info.value), caplog.text):
        assert KEY not in text
    assert "500" in caplog.text  # the retry was logged, without the key


def test_the_key_is_not_a_parameter():
    with pytest.raises(TypeError):
        make("http://127.0.0.1:1/v1", "m", api_key=KEY)  # type: ignore[call-arg]


# ---------------------------------------------------------------------------- retries
def test_a_500_is_retried_after_the_backoff_then_succeeds():
    sleeps = Sleeps()
    with ChatServer([Reply(status=500), Reply("1")]) as server:
        assert client(server, sleeps, backoff=0.5).complete(MESSAGES) == "1"
    assert len(server.requests) == 2
    assert sleeps == [0.5]  # backoff * 2**0


def test_backoff_doubles_and_is_capped_at_max_wait():
    sleeps = Sleeps()
    replies = [Reply(status=503)] * 4 + [Reply("1")]
    with ChatServer(replies) as server:
        assert client(server, sleeps, backoff=0.5, max_wait=1.5).complete(MESSAGES) == "1"
    # 0.5 * 2**k for k = 0..3 = 0.5, 1, 2, 4, capped at 1.5
    assert sleeps == [0.5, 1.0, 1.5, 1.5]


def test_retry_after_seconds_on_429_is_honoured():
    sleeps = Sleeps()
    with ChatServer([Reply(status=429, headers={"Retry-After": "3"}), Reply("0")]) as server:
        assert client(server, sleeps).complete(MESSAGES) == "0"
    assert sleeps == [3.0]


def test_retry_after_as_an_http_date_is_honoured():
    sleeps = Sleeps()
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    with ChatServer([Reply(status=503, headers={"Retry-After": when}), Reply("1")]) as server:
        client(server, sleeps).complete(MESSAGES)
    (waited,) = sleeps
    assert 17 <= waited <= 21  # whole seconds in the header, and the clock moves


def test_a_retry_after_beyond_max_wait_fails_at_once_instead_of_stalling():
    sleeps = Sleeps()
    message = "asks to retry after 600s, more than max_wait=60s"
    replies = [Reply(status=429, headers={"Retry-After": "600"}), Reply("1")]
    with ChatServer(replies) as server, pytest.raises(ModelHTTPError, match=message):
        client(server, sleeps).complete(MESSAGES)
    assert sleeps == [] and len(server.requests) == 1


def test_retries_are_bounded_and_the_error_says_how_many_attempts():
    sleeps = Sleeps()
    message = r"failed after 3 attempts \(max_retries=2\); last: HTTP 502"
    with (ChatServer([Reply(status=502)] * 3) as server,
          pytest.raises(ModelHTTPError, match=message) as info):
        client(server, sleeps, max_retries=2).complete(MESSAGES)
    assert info.value.attempts == 3 and info.value.status == 502
    assert len(server.requests) == 3 and len(sleeps) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_not_retried_and_quote_the_server(status):
    sleeps = Sleeps()
    message = f"answered HTTP {status}: scripted error {status}"
    with (ChatServer([Reply(status=status), Reply("1")]) as server,
          pytest.raises(ModelHTTPError, match=message) as info):
        client(server, sleeps).complete(MESSAGES)
    assert info.value.status == status and info.value.attempts == 1
    assert sleeps == [] and len(server.requests) == 1


def test_a_timeout_is_retried_then_reported():
    sleeps = Sleeps()
    with ChatServer([Reply("1", delay=1.0), Reply("1", delay=1.0)]) as server:
        started = time.perf_counter()
        with pytest.raises(ModelConnectionError, match="after 2 attempts.*no answer within"):
            client(server, sleeps, timeout=0.2, max_retries=1).complete(MESSAGES)
        assert time.perf_counter() - started < 2.0
    assert len(sleeps) == 1


def test_a_refused_connection_is_retried_then_reported():
    with socket.socket() as s:  # a port that was free a moment ago and is closed now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = Sleeps()
    c = make(f"http://127.0.0.1:{port}/v1", "m", api_key_env=None, max_retries=2, sleep=sleeps)
    with pytest.raises(ModelConnectionError, match="after 3 attempts.*connection failed"):
        c.complete(MESSAGES)
    assert sleeps == [1.0, 2.0]


# ------------------------------------------------------------------ unreadable replies
@pytest.mark.parametrize("reply, message", [
    (Reply(body=b"<html>gateway</html>"), "body that is not JSON"),
    (Reply(body=b"[1, 2]"), "JSON that is not an object"),
    (Reply(body=b'{"choices": []}'), "without choices\\[0\\]"),
    (Reply(null_content=True), ("content is null \\(finish_reason 'content_filter'\\)")),
])
def test_a_200_without_reply_text_is_a_response_error(reply, message):
    with ChatServer([reply]) as server, pytest.raises(ModelResponseError, match=message):
        client(server).complete(MESSAGES)
    assert len(server.requests) == 1  # not retried: asking again would cost and repeat


def test_errors_are_confcal_errors():
    assert issubclass(ModelHTTPError, ModelError) and issubclass(ModelError, ConfcalError)
    assert issubclass(ModelResponseError, ModelCallError)
    assert issubclass(ModelConnectionError, ModelCallError)


# ------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, message", [
    ({"base_url": "api.openai.com/v1"}, "base_url must be an http:// or https:// URL"),
    ({"base_url": "http://"}, "base_url must be an http:// or https:// URL"),
    ({"model": " "}, "model must be a non-empty string"),
    ({"api_key_env": ""}, "api_key_env must name an environment variable"),
    ({"timeout": 0}, "timeout must be a finite number of seconds > 0; found 0"),
    ({"timeout": float("inf")}, "timeout must be a finite number of seconds > 0"),
    ({"max_retries": -1}, "max_retries must be an integer >= 0; found -1"),
    ({"max_retries": True}, "max_retries must be an integer >= 0"),
    ({"backoff": -1.0}, "backoff must be a finite number of seconds >= 0"),
    ({"temperature": -0.1}, "temperature must be a finite number >= 0"),
    ({"max_tokens": 0}, "max_tokens must be an integer >= 1 or None; found 0"),
    ({"sleep": 3}, "sleep must be callable"),
])
def test_options_are_validated(kwargs, message):
    options = {"base_url": "http://127.0.0.1:9/v1", "model": "m", **kwargs}
    with pytest.raises(ValidationError, match=message):
        make(**options)


@pytest.mark.parametrize("messages, message", [
    ("hello", "messages must be a list"),
    ([], "messages must not be empty"),
    ([{"role": "user"}], "found 1 breaking it, first at index 0"),
    ([{"role": "user", "content": "a"}, {"role": "user", "content": 3}],
     "first at index 1"),
])
def test_messages_are_validated_before_any_request(messages, message):
    with ChatServer([Reply("1")]) as server, pytest.raises(ValidationError, match=message):
        client(server).complete(messages)
    assert server.requests == []


def test_it_sends_through_the_one_client_and_transport():
    from confcal.extras.clients import OpenAICompatibleClient

    c = make("http://127.0.0.1:9/v1", "m", api_key_env=None)
    assert isinstance(c._client, OpenAICompatibleClient)
    with ChatServer([Reply(status=302, headers={"Location": "http://127.0.0.1:1/x"})]) as server, \
            pytest.raises(ModelHTTPError, match="redirects are never followed"):
        client(server).complete(MESSAGES)


def test_importing_the_core_does_not_import_the_client():
    import subprocess
    import sys

    code = ("import sys, confcal, confcal.qa.docqa; "
            "confcal.qa.docqa.RuleJudge().judge('Q?', 'a', 'a'); "
            "print([m for m in ('confcal.extras', 'confcal.extras.models', 'urllib.request') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
