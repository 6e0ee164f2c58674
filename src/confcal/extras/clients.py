"""Chat clients behind one small interface: OpenAI-compatible, Anthropic, Bedrock.

An extraction needs one thing from a model: send a system prompt, a text and maybe a page
image, and get text back (and, where the API offers them, each generated token's
log-probability with its top alternatives). :class:`ChatClient` is that interface (a
``Protocol``: any object with ``provider``, ``model``, ``supports_logprobs`` and
``complete(request)`` is a client), :class:`ChatRequest` and :class:`ChatResponse` the
data it speaks.

* :class:`OpenAICompatibleClient`: the chat-completions API of vLLM, TGI, Ollama, OpenAI
  and others, on the standard library's ``urllib`` (no SDK); token log-probabilities
  with ``top_logprobs`` alternatives.
* :class:`AnthropicClient`: Anthropic Messages through the ``anthropic`` SDK.
* :class:`BedrockClient`: Amazon Bedrock Converse through ``boto3``.

The SDKs are imported when a call is made. API keys come from the environment only (the
variable is named, the key is read at each call and never stored, logged or written);
Bedrock takes its credentials from boto3's own chain (environment, profile, role).
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import logging
import math
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from email.message import Message
from types import MappingProxyType
from typing import Any

from .._chat import ChatClient, ChatRequest, ChatResponse
from ..exceptions import ModelError, ValidationError

__all__ = [
    "AnthropicClient",
    "BedrockClient",
    "ChatClient",
    "ChatRequest",
    "ChatResponse",
    "ModelCallError",
    "OpenAICompatibleClient",
]

_LOG = logging.getLogger("confcal.extras")
_EXTRA = "models"
# a request timeout, rate limiting; every 5xx is retried too
_RETRY_STATUSES = frozenset({408, 429})
_ERROR_BODY = 500  # characters of an error response kept in the message
# Backoff jitter only spreads retries out; it never touches the global random state.
_JITTER = random.Random()
_sleep = time.sleep  # replaced by tests to record waits instead of waiting


def _require(module: str, package: str | None = None) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"this client needs {package or module}; install it with "
                          f"`pip install {package or module}` ({exc})") from exc


class ModelCallError(ModelError):
    """A model call failed: an HTTP error, a timeout, or a response that is not the API's.

    Attributes
    ----------
    status : int or None
        The HTTP status of the last attempt (None for a timeout or a connection error).
    attempts : int
        How many requests were made.
    retryable : bool
        Whether the last failure was of a kind that is retried (429, 5xx, timeouts).
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1,
                 retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts
        self.retryable = retryable


def _check_common(model: Any, timeout: Any, max_retries: Any) -> None:
    if not isinstance(model, str) or not model:
        raise ValidationError(f"model must be a non-empty string; found {model!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
            or not (math.isfinite(timeout) and timeout > 0):
        raise ValidationError(f"timeout must be a number of seconds > 0; found {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValidationError(f"max_retries must be an integer >= 0; found {max_retries!r}")


def _key_from(env: str | None) -> str | None:
    """The API key from the named environment variable (None: send no key)."""
    if env is None:
        return None
    key = os.environ.get(env)
    return key or None


# ---------------------------------------------------------------------------------------
# OpenAI-compatible chat completions on urllib
# ---------------------------------------------------------------------------------------
def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: a number or an HTTP date; None if absent.

    Examples
    --------
    >>> _retry_after("3"), _retry_after("0.5"), _retry_after(None), _retry_after("soon")
    (3.0, 0.5, None, None)
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _display_url(url: str) -> str:
    """The URL without user:password@ (it must never reach a log or a message)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "[redacted]") if secret else text


_BYTE_CHARS: dict[int, str] | None = None


def _byte_level(data: Sequence[int]) -> str:
    """Bytes spelled in GPT-2's byte-level alphabet (token_style="byte-level")."""
    global _BYTE_CHARS
    if _BYTE_CHARS is None:
        from ..calibration.confidence import BYTE_LEVEL_ALPHABET

        _BYTE_CHARS = {b: ch for ch, b in BYTE_LEVEL_ALPHABET.items()}
    return "".join(_BYTE_CHARS[b] for b in data)


def _read_logprobs(content: Any) -> tuple[tuple[str, ...], tuple[float, ...],
                                           tuple[tuple[Mapping[str, Any], ...] | None, ...],
                                           str]:
    """Tokens, log-probabilities, alternatives and token style from ``logprobs.content``."""
    if not isinstance(content, list) or not all(isinstance(e, Mapping) for e in content):
        raise TypeError("choices[0].logprobs.content must be a list of objects")
    # With every token's bytes the answer's bytes are exact (a multi-byte character split
    # across tokens has no text of its own): spell them byte-level.
    exact = all(isinstance(e.get("bytes"), list) for e in content) and bool(content)
    tokens: list[str] = []
    logprobs: list[float] = []
    tops: list[tuple[Mapping[str, Any], ...] | None] = []
    for i, entry in enumerate(content):
        if not isinstance(entry.get("token"), str) or not isinstance(
                entry.get("logprob"), (int, float)):
            raise TypeError(f"choices[0].logprobs.content[{i}] must have a string 'token' "
                            "and a number 'logprob'")
        tokens.append(_byte_level(entry["bytes"]) if exact else entry["token"])
        logprobs.append(float(entry["logprob"]))
        alternatives = entry.get("top_logprobs")
        if alternatives is None:
            tops.append(None)
        else:
            tops.append(tuple({"token": a.get("token"), "logprob": float(a["logprob"])}
                              for a in alternatives))
    return tuple(tokens), tuple(logprobs), tuple(tops), "byte-level" if exact else "text"


class OpenAICompatibleClient:
    """Chat completions on any OpenAI-compatible endpoint (vLLM, TGI, Ollama, OpenAI).

    Parameters
    ----------
    base_url : str
        The API root, e.g. ``"http://127.0.0.1:8000/v1"`` (requests go to
        ``<base_url>/chat/completions``).
    model : str
        The model name the server expects.
    api_key_env : str or None, default "OPENAI_API_KEY"
        The environment variable holding the API key, read at each call and sent as a
        bearer token; unset or empty sends no key (local servers need none); None never
        sends one.
    timeout : float, default 60.0
        Seconds each request may wait on the socket.
    max_retries : int, default 5
        Retries after a 408, a 429, a 5xx, a timeout or a dropped connection; other errors
        are raised at once.
    backoff : float, default 1.0
        Seconds before the first retry; doubled each time (at most ``max_wait``), with up
        to 10% random jitter. A ``Retry-After`` header (seconds or an HTTP date) is waited
        exactly instead.
    max_wait : float, default 120.0
        The longest single wait: a ``Retry-After`` asking for more fails at once rather
        than stalling the run.
    headers : mapping of str to str, optional
        Extra headers (e.g. an organisation id). Never logged.

    Examples
    --------
    >>> client = OpenAICompatibleClient("http://127.0.0.1:8000/v1", "qwen2-vl")
    >>> client
    OpenAICompatibleClient(base_url='http://127.0.0.1:8000/v1', model='qwen2-vl')
    >>> client.supports_logprobs, client.provider
    (True, 'openai-compatible')
    """

    provider = "openai-compatible"
    supports_logprobs = True

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = "OPENAI_API_KEY",
                 timeout: float = 60.0, max_retries: int = 5, backoff: float = 1.0,
                 max_wait: float = 120.0, headers: Mapping[str, str] | None = None) -> None:
        if not isinstance(base_url, str) or urllib.parse.urlsplit(base_url).scheme not in (
                "http", "https") or not urllib.parse.urlsplit(base_url).hostname:
            raise ValidationError(f"base_url must be an http(s) URL; found {base_url!r}")
        _check_common(model, timeout, max_retries)
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env):
            raise ValidationError(f"api_key_env must be an environment variable name or None; "
                                  f"found {api_key_env!r}")
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) \
                or not (math.isfinite(backoff) and backoff >= 0):
            raise ValidationError(f"backoff must be a number of seconds >= 0; found {backoff!r}")
        if isinstance(max_wait, bool) or not isinstance(max_wait, (int, float)) \
                or not (math.isfinite(max_wait) and max_wait >= 0):
            raise ValidationError(f"max_wait must be a number of seconds >= 0; found "
                                  f"{max_wait!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self._headers = MappingProxyType(dict(headers or {}))
        self._url = f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        return (f"OpenAICompatibleClient(base_url={_display_url(self.base_url)!r}, "
                f"model={self.model!r})")

    def _payload(self, request: ChatRequest) -> dict[str, Any]:
        if request.images:
            content: Any = [
                {"type": "image_url",
                 "image_url": {"url": "data:image/png;base64,"
                                      + base64.b64encode(im).decode("ascii")}}
                for im in request.images]
            content.append({"type": "text", "text": request.text})
        else:
            content = request.text  # plain text: what text-only servers accept
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": request.system},
                         {"role": "user", "content": content}],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.top_logprobs:
            payload["logprobs"] = True
            payload["top_logprobs"] = request.top_logprobs
        return payload

    def _post(self, body: bytes, key: str | None) -> tuple[int, Message, bytes]:
        """(status, headers, body) of one request; headers read case-insensitively."""
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   **self._headers}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.headers, exc.read()

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request, retrying 429, 5xx, timeouts and dropped connections.

        Raises
        ------
        ModelCallError
            A non-retryable HTTP error, retries exhausted, or a 200 response that is not a
            chat completion (the message names what is missing).
        ValidationError
            ``request`` is not a :class:`ChatRequest`.
        """
        if not isinstance(request, ChatRequest):
            raise ValidationError(f"request must be a ChatRequest; found {type(request).__name__}")
        key = _key_from(self.api_key_env)
        body = json.dumps(self._payload(request)).encode("utf-8")
        where = f"POST {_display_url(self._url)}"
        attempts = 0
        while True:
            attempts += 1
            status: int | None = None
            wait: float | None = None
            try:
                status, headers, data = self._post(body, key)
            except TimeoutError as exc:  # socket.timeout is TimeoutError since 3.10
                problem = f"no answer within timeout={self.timeout:g}s ({exc})"
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, TimeoutError):
                    problem = f"no answer within timeout={self.timeout:g}s ({exc.reason})"
                else:
                    problem = f"connection failed ({exc.reason})"
            except (ConnectionError, http.client.HTTPException) as exc:  # dropped mid-answer
                problem = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if status == 200:
                    return self._parse(data, where, attempts)
                text = data.decode("utf-8", "replace")[:_ERROR_BODY]
                problem = f"HTTP {status}: {_redact(text, key)}"
                if status in (401, 403) and self.api_key_env is not None:
                    problem += f" (check the key in the environment variable {self.api_key_env})"
                if status not in _RETRY_STATUSES and not 500 <= status < 600:
                    raise ModelCallError(f"{where} failed with {problem}", status=status,
                                         attempts=attempts, retryable=False)
                wait = _retry_after(headers.get("Retry-After"))
                if wait is not None and wait > self.max_wait:
                    raise ModelCallError(
                        f"{where} failed with {problem}; the server asks to retry after "
                        f"{wait:.0f}s, more than max_wait={self.max_wait:g}s",
                        status=status, attempts=attempts, retryable=True)
            if attempts > self.max_retries:
                raise ModelCallError(
                    f"{where} failed after {attempts} attempts (max_retries="
                    f"{self.max_retries}); last: {problem}", status=status, attempts=attempts,
                    retryable=True)
            if wait is None:
                wait = min(self.max_wait, self.backoff * 2 ** (attempts - 1))
                wait += _JITTER.uniform(0.0, 0.1 * wait)
            _LOG.warning("%s: %s; retry %d of %d in %.2fs", where, problem, attempts,
                         self.max_retries, wait)
            _sleep(wait)

    def _parse(self, data: bytes, where: str, attempts: int) -> ChatResponse:
        try:
            payload = json.loads(data)
            choice = payload["choices"][0]
            message = choice["message"]
            text = message.get("content")
            if text is None:
                text = ""  # a refusal or a tool call: no text answer, kept as empty
            if not isinstance(text, str):
                raise TypeError("choices[0].message.content must be a string")
            finish = choice.get("finish_reason") or "unknown"
            tokens = logprobs = tops = None
            style = "text"
            lp = choice.get("logprobs")
            if lp is not None and lp.get("content") is not None:
                tokens, logprobs, tops, style = _read_logprobs(lp["content"])
            usage = {k: int(v) for k, v in (payload.get("usage") or {}).items()
                     if isinstance(v, int) and not isinstance(v, bool)}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            excerpt = data[:200].decode("utf-8", "replace")
            raise ModelCallError(f"{where} answered 200 with something that is not a chat "
                                 f"completion ({type(exc).__name__}: {exc}); body starts "
                                 f"{excerpt!r}", status=200, attempts=attempts) from None
        return ChatResponse(text=text, finish_reason=str(finish), tokens=tokens,
                            token_logprobs=logprobs, top_logprobs=tops, token_style=style,
                            usage=usage)


# ---------------------------------------------------------------------------------------
# Anthropic Messages
# ---------------------------------------------------------------------------------------
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


class AnthropicClient:
    """Anthropic Messages through the ``anthropic`` SDK (no token log-probabilities).

    Parameters
    ----------
    model : str
        e.g. ``"claude-sonnet-4-5"``.
    api_key_env : str, default "ANTHROPIC_API_KEY"
        The environment variable holding the API key.
    timeout : float, default 60.0
    max_retries : int, default 5
        Passed to the SDK, which retries 429, 5xx and connection errors with backoff and
        honours ``Retry-After``.
    base_url : str, optional
        Another endpoint speaking the Messages API.

    Examples
    --------
    >>> AnthropicClient("claude-sonnet-4-5")
    AnthropicClient(model='claude-sonnet-4-5')
    """

    provider = "anthropic"
    supports_logprobs = False

    def __init__(self, model: str, *, api_key_env: str = "ANTHROPIC_API_KEY",
                 timeout: float = 60.0, max_retries: int = 5,
                 base_url: str | None = None) -> None:
        _check_common(model, timeout, max_retries)
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ValidationError(f"api_key_env must be an environment variable name; found "
                                  f"{api_key_env!r}")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.base_url = base_url

    def __repr__(self) -> str:
        return f"AnthropicClient(model={self.model!r})"

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request through the SDK.

        Raises
        ------
        ModelCallError
            The API answered with an error (after the SDK's retries), or no key is set.
        ValidationError
            ``request.top_logprobs`` asks for log-probabilities.
        """
        if not isinstance(request, ChatRequest):
            raise ValidationError(f"request must be a ChatRequest; found {type(request).__name__}")
        if request.top_logprobs:
            raise ValidationError("top_logprobs must be 0 for AnthropicClient: the Messages "
                                  f"API returns no token log-probabilities; found "
                                  f"{request.top_logprobs}")
        anthropic = _require("anthropic")
        key = _key_from(self.api_key_env)
        if key is None:
            raise ModelCallError(f"the environment variable {self.api_key_env} must hold the "
                                 "Anthropic API key; found it unset or empty")
        client = anthropic.Anthropic(api_key=key, timeout=self.timeout,
                                     max_retries=self.max_retries, base_url=self.base_url)
        content: list[dict[str, Any]] = [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(im).decode("ascii")}}
            for im in request.images]
        content.append({"type": "text", "text": request.text})
        try:
            message = client.messages.create(
                model=self.model, max_tokens=request.max_tokens,
                temperature=request.temperature, system=request.system,
                messages=[{"role": "user", "content": content}])
        except anthropic.APIStatusError as exc:
            raise ModelCallError(f"Anthropic {self.model} failed with HTTP {exc.status_code}: "
                                 f"{_redact(str(exc), key)[:_ERROR_BODY]}",
                                 status=exc.status_code, attempts=self.max_retries + 1,
                                 retryable=exc.status_code == 429 or exc.status_code >= 500
                                 ) from None
        except anthropic.APIError as exc:  # timeouts and connection errors
            raise ModelCallError(f"Anthropic {self.model} failed: "
                                 f"{_redact(str(exc), key)[:_ERROR_BODY]}",
                                 attempts=self.max_retries + 1, retryable=True) from None
        text = "".join(getattr(block, "text", "") for block in message.content
                       if getattr(block, "type", None) == "text")
        reason = message.stop_reason or "unknown"
        usage = {name: int(getattr(message.usage, name)) for name in
                 ("input_tokens", "output_tokens")
                 if isinstance(getattr(message.usage, name, None), int)}
        return ChatResponse(text=text, finish_reason=_STOP_REASONS.get(reason, reason),
                            usage=usage)


# ---------------------------------------------------------------------------------------
# Amazon Bedrock Converse
# ---------------------------------------------------------------------------------------
class BedrockClient:
    """Amazon Bedrock's Converse API through ``boto3`` (no token log-probabilities).

    Parameters
    ----------
    model : str
        A Bedrock model id or inference profile, e.g.
        ``"us.anthropic.claude-sonnet-4-5-20250929-v1:0"``.
    region : str, optional
        The AWS region; boto3's default (``AWS_REGION``, the profile) otherwise.
    profile : str, optional
        A named AWS profile. Credentials come from boto3's chain, never from arguments.
    timeout : float, default 60.0
        Connect and read timeout, seconds.
    max_retries : int, default 5
        Retries by botocore's "standard" mode (throttling, 5xx, timeouts, with backoff).

    Examples
    --------
    >>> BedrockClient("us.amazon.nova-pro-v1:0", region="us-east-1")
    BedrockClient(model='us.amazon.nova-pro-v1:0', region='us-east-1')
    """

    provider = "bedrock"
    supports_logprobs = False

    def __init__(self, model: str, *, region: str | None = None, profile: str | None = None,
                 timeout: float = 60.0, max_retries: int = 5) -> None:
        _check_common(model, timeout, max_retries)
        self.model = model
        self.region = region
        self.profile = profile
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self._client: Any = None

    def __repr__(self) -> str:
        return f"BedrockClient(model={self.model!r}, region={self.region!r})"

    def _runtime(self) -> Any:
        if self._client is None:
            boto3 = _require("boto3")
            config = _require("botocore.config", "boto3").Config(
                connect_timeout=self.timeout, read_timeout=self.timeout,
                retries={"total_max_attempts": self.max_retries + 1, "mode": "standard"})
            session = boto3.Session(profile_name=self.profile, region_name=self.region)
            self._client = session.client("bedrock-runtime", config=config)
        return self._client

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one Converse request.

        Raises
        ------
        ModelCallError
            The API answered with an error after botocore's retries.
        ValidationError
            ``request.top_logprobs`` asks for log-probabilities.
        """
        if not isinstance(request, ChatRequest):
            raise ValidationError(f"request must be a ChatRequest; found {type(request).__name__}")
        if request.top_logprobs:
            raise ValidationError("top_logprobs must be 0 for BedrockClient: Converse returns "
                                  f"no token log-probabilities; found {request.top_logprobs}")
        exceptions = _require("botocore.exceptions", "boto3")
        content: list[dict[str, Any]] = [
            {"image": {"format": "png", "source": {"bytes": im}}} for im in request.images]
        content.append({"text": request.text})
        try:
            response = self._runtime().converse(
                modelId=self.model, system=[{"text": request.system}],
                messages=[{"role": "user", "content": content}],
                inferenceConfig={"maxTokens": request.max_tokens,
                                 "temperature": float(request.temperature)})
        except exceptions.ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            raise ModelCallError(f"Bedrock {self.model} failed with HTTP {status}: "
                                 f"{str(exc)[:_ERROR_BODY]}", status=status,
                                 attempts=self.max_retries + 1,
                                 retryable=status == 429 or (status or 0) >= 500) from None
        except exceptions.BotoCoreError as exc:  # timeouts, connection, credentials
            raise ModelCallError(f"Bedrock {self.model} failed: {str(exc)[:_ERROR_BODY]}",
                                 attempts=self.max_retries + 1, retryable=True) from None
        blocks = response["output"]["message"]["content"]
        text = "".join(block.get("text", "") for block in blocks)
        reason = response.get("stopReason") or "unknown"
        usage = {k: int(v) for k, v in (response.get("usage") or {}).items()
                 if isinstance(v, int)}
        return ChatResponse(text=text, finish_reason=_STOP_REASONS.get(reason, reason),
                            usage=usage)
