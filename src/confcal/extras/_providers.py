"""Anthropic Messages over the shared transport, and Amazon Bedrock Converse over botocore.

Re-exported by :mod:`confcal.extras.clients`, where the protocol they speak is described.
:class:`AnthropicClient` builds the documented Messages request itself (``POST
/v1/messages`` with ``x-api-key`` and ``anthropic-version``) and reads the answer itself,
so it depends on no SDK version. :class:`BedrockClient` signs with botocore (SigV4 needs
it), imported when the first call is made.
"""

from __future__ import annotations

import base64
import functools
import logging
import re
import threading
import weakref
from typing import Any

from .._chat import ChatRequest, ChatResponse
from ..exceptions import (
    ModelCallError,
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ValidationError,
)
from ._http import (
    MAX_RESPONSE_BYTES,
    RETRY_STATUSES,
    Transport,
    check_options,
    has_lone_surrogate,
    holds_secret,
    read_key,
    redact,
    refused_sampling,
    sampling_refusal,
    usage_counts,
    user_agent,
)
from ._optional import require

__all__ = ["ANTHROPIC_VERSION", "ANTHROPIC_VERSIONS", "AnthropicClient", "BedrockClient"]

ANTHROPIC_VERSION = "2026-10-21"
"""The ``anthropic-version`` header :class:`AnthropicClient` sends by default (the Messages
API's current version, which takes no ``temperature``, ``top_p`` or ``top_k``)."""

ANTHROPIC_VERSIONS: tuple[str, ...] = ("2026-10-21", "2023-06-01")
"""The Messages API versions :class:`AnthropicClient` speaks (``api_version=``)."""

# the sampling parameters each Messages API version takes
_ANTHROPIC_SAMPLING = {"2026-10-21": frozenset(),
                       "2023-06-01": frozenset({"temperature", "top_p", "top_k"})}

# both APIs' words for "finished" and "cut at max_tokens", in the protocol's words
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def _check_request(request: Any, client: str, api: str) -> ChatRequest:
    if not isinstance(request, ChatRequest):
        raise ValidationError(f"request must be a ChatRequest; found {type(request).__name__}")
    if request.top_logprobs:
        raise ValidationError(f"top_logprobs must be 0 for {client}: {api} returns no token "
                              f"log-probabilities; found {request.top_logprobs}")
    return request


# ---------------------------------------------------------------------------------------
# Anthropic Messages
# ---------------------------------------------------------------------------------------
class AnthropicClient:
    """Anthropic Messages (``POST /v1/messages``), built and read by confcal; no SDK.

    Parameters
    ----------
    model : str
        e.g. ``"claude-sonnet-4-5"``.
    api_key_env : str, default "ANTHROPIC_API_KEY"
        The environment variable holding the key, sent as ``x-api-key`` and read at each
        call; unset or empty is a :class:`~confcal.exceptions.ModelCallError` before any
        request.
    timeout, max_retries, backoff, max_wait, max_response_bytes
        As :class:`~confcal.extras.clients.OpenAICompatibleClient`: the same transport,
        the same retried statuses (408, 409, 429 - Anthropic's rate limit - and every 5xx,
        529 "overloaded" included), the same ``Retry-After`` handling.
    base_url : str, default "https://api.anthropic.com"
        Another endpoint speaking the Messages API (a gateway, a local test server).
    api_version : {"2026-10-21", "2023-06-01"}, default "2026-10-21"
        The ``anthropic-version`` header. ``"2026-10-21"``, the current version, refuses
        ``temperature``, ``top_p`` and ``top_k`` (a request that sets one fails before it
        is sent, naming it); ``"2023-06-01"`` takes them for the models that still do
        (Claude Opus 4.7 and later refuse ``temperature`` under it too: the server's
        400 is then reported naming the parameter).

    Notes
    -----
    The request holds ``model``, ``max_tokens``, ``system`` (when not empty), the
    sampling parameters the request sets (only under ``"2023-06-01"``; ``temperature``
    within [0, 1]) and one user message: the page images as base64
    PNG ``image`` blocks, then the text. Nothing else: no field the current version
    refuses. The answer's ``text`` blocks are joined;
    ``stop_reason`` ``end_turn``/``stop_sequence`` is ``"stop"``, ``max_tokens`` is
    ``"length"``, any other is kept as the API says it. No token log-probabilities.

    Examples
    --------
    >>> client = AnthropicClient("claude-sonnet-4-5")
    >>> client, client.api_version
    (AnthropicClient(model='claude-sonnet-4-5', base_url='https://api.anthropic.com'), \
'2026-10-21')
    >>> client.payload(ChatRequest("", "Hi", max_tokens=16))
    {'model': 'claude-sonnet-4-5', 'max_tokens': 16, 'messages': [{'role': 'user', \
'content': [{'type': 'text', 'text': 'Hi'}]}]}
    """

    provider = "anthropic"
    supports_logprobs = False

    def __init__(self, model: str, *, api_key_env: str = "ANTHROPIC_API_KEY",
                 timeout: float = 60.0, max_retries: int = 4, backoff: float = 1.0,
                 max_wait: float = 60.0, max_response_bytes: int = MAX_RESPONSE_BYTES,
                 base_url: str | None = None, api_version: str = ANTHROPIC_VERSION) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValidationError(f"model must be a non-empty string; found {model!r}")
        if api_version not in ANTHROPIC_VERSIONS:
            raise ValidationError(f"api_version must be one of {list(ANTHROPIC_VERSIONS)}; "
                                  f"found {api_version!r}")
        if not isinstance(api_key_env, str) or not api_key_env.strip():
            raise ValidationError(f"api_key_env must name an environment variable; found "
                                  f"{api_key_env!r}")
        self._transport = Transport(base_url or "https://api.anthropic.com", timeout=timeout,
                                    max_retries=max_retries, backoff=backoff,
                                    max_wait=max_wait, max_response_bytes=max_response_bytes)
        self.model = model
        self.api_key_env = api_key_env
        self.base_url = self._transport.url("")
        self.timeout = self._transport.timeout
        self.max_retries = max_retries
        self.api_version = api_version

    def __repr__(self) -> str:
        return f"AnthropicClient(model={self.model!r}, base_url={self.base_url!r})"

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The Messages request body for ``request`` (what :meth:`complete` posts).

        Raises
        ------
        ModelCallError
            ``request`` sets a sampling parameter this client's ``api_version`` refuses,
            or a temperature above 1 (attempts 0: nothing is sent).
        """
        where = f"AnthropicClient {self.model}"
        sampling = request.sampling()
        for name, value in sampling.items():
            if name not in _ANTHROPIC_SAMPLING[self.api_version]:
                raise sampling_refusal(
                    where, name, value, f"anthropic-version {self.api_version} takes no "
                    f"{name} (the Messages API answers 400 to it, whatever its value)",
                    other="pass api_version='2023-06-01' for a model that still takes it")
        if sampling.get("temperature", 0.0) > 1:
            raise sampling_refusal(where, "temperature", sampling["temperature"],
                                   "the Messages API takes a temperature within [0, 1]",
                                   other="set it within [0, 1]")
        content: list[dict[str, Any]] = [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(im).decode("ascii")}}
            for im in request.images]
        content.append({"type": "text", "text": request.text})
        body: dict[str, Any] = {"model": self.model, "max_tokens": request.max_tokens,
                                "messages": [{"role": "user", "content": content}],
                                **sampling}
        if request.system:
            body["system"] = request.system
        return body

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one Messages request.

        Raises
        ------
        ModelCallError
            No key; an HTTP error, a redirect or retries exhausted (``ModelHTTPError``), no
            answer (``ModelConnectionError``), an answer that is not a Messages response
            or has no text block (``ModelResponseError``); a sampling parameter the
            ``api_version`` refuses (before any request), or one the server refuses (its
            400, with how to unset it).
        ValidationError
            ``request.top_logprobs`` asks for log-probabilities.
        """
        request = _check_request(request, "AnthropicClient", "the Messages API")
        body = self.payload(request)
        key = read_key(self.api_key_env, provider="Anthropic", optional_hint=False)
        headers = {"x-api-key": key, "anthropic-version": self.api_version,
                   "content-type": "application/json", "accept": "application/json",
                   "user-agent": user_agent()}
        try:
            reply = self._transport.post(
                "/v1/messages", body, headers=headers, secrets=[key],
                auth_hint=f"check the key in the environment variable {self.api_key_env}")
        except ModelHTTPError as exc:
            sent = {name: (name, value) for name, value in request.sampling().items()}
            raise refused_sampling(exc, sent) from None
        data = reply.data
        blocks = data.get("content")
        if data.get("type") != "message" or not isinstance(blocks, list):
            raise reply.error("with something that is not a Messages response (no "
                              "type 'message' with a content list)")
        texts: list[Any] = [b.get("text") for b in blocks
                            if isinstance(b, dict) and b.get("type") == "text"]
        reason = data.get("stop_reason")
        reason = reason if isinstance(reason, str) and reason else "unknown"
        if not texts or not all(isinstance(t, str) for t in texts):
            raise reply.error(f"without a reply text: no text block in content (stop_reason "
                              f"{reason!r})")
        return ChatResponse(text="".join(texts),
                            finish_reason=_STOP_REASONS.get(reason, reason),
                            usage=usage_counts(data.get("usage")))


# ---------------------------------------------------------------------------------------
# Amazon Bedrock Converse
# ---------------------------------------------------------------------------------------
# botocore's DEBUG records quote every request's headers and its canonical request (the
# session token of temporary credentials, and the signature, in the clear) and every
# answer's headers and body (whatever a server echoes)
_AWS_SECRET_LOGGERS = ("botocore.endpoint", "botocore.auth", "botocore.parsers")
# the credentials each live client last signed with, for the filter: read at each call,
# never from inside a log record (a refresh logs too, and holds botocore's lock)
_SIGNED_WITH: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()
_AWS_SECRETS = re.compile(r"(?i)(x-amz-security-token['\"]?\s*[:=]\s*b?['\"]?)[^'\"\s,}]+"
                          r"|(Signature[=:]\s*)[0-9a-f]+")


class _HideAwsSecrets(logging.Filter):
    """Rewrites a botocore log record without the session token or the signature."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            args = record.args
            if isinstance(args, tuple) and any(isinstance(a, bytes) for a in args):
                # a body quoted as bytes shows UTF-8 as \\xNN escapes: read it as text,
                # so that redaction sees a fullwidth or zero-width form as it is
                args = tuple(a.decode("utf-8", "replace") if isinstance(a, bytes) else a
                             for a in args)
            message = str(record.msg) % args if args else record.getMessage()
        except Exception:  # a malformed record is logging's to report, not ours
            return True
        cleaned = _AWS_SECRETS.sub(lambda m: (m.group(1) or m.group(2)) + "[redacted]",
                                   message)
        cleaned = redact(cleaned, [s for signed in list(_SIGNED_WITH.values())
                                   for s in signed])
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


class _Silent:
    """``debuglevel`` that is always 0: setting it (``HTTPConnection.debuglevel = 1``,
    ``set_debuglevel``) changes nothing, so a connection never prints what it sends."""

    @property
    def debuglevel(self) -> int:
        return 0

    @debuglevel.setter
    def debuglevel(self, level: int) -> None:
        pass


@functools.cache
def _quiet_pool(pool: type) -> type:
    """``pool`` (a urllib3 connection pool class) making connections that never print."""
    base: type = getattr(pool, "ConnectionCls")  # noqa: B009 - a class attribute of urllib3's
    connection = type(f"Quiet{base.__name__}", (_Silent, base), {})
    return type(f"Quiet{pool.__name__}", (pool,), {"ConnectionCls": connection})


def _silence_connections(client: Any) -> bool:
    """Make the connections of a botocore client never print, whatever
    ``http.client.HTTPConnection.debuglevel`` says; whether it could be done.

    With it set (a common way to debug HTTP), every connection prints the request it
    sends (the session token's header, the signature) and the answer's headers. botocore
    keeps its connection pool classes in one mapping its pool managers share; the quiet
    ones go there, for this client only.
    """
    session = getattr(getattr(client, "_endpoint", None), "http_session", None)
    pools = getattr(session, "_pool_classes_by_scheme", None)
    if not isinstance(pools, dict) or not all(
            isinstance(getattr(pool, "ConnectionCls", None), type) for pool in pools.values()):
        return False
    for scheme, pool in list(pools.items()):
        pools[scheme] = _quiet_pool(pool)
    return True


def _hide_aws_secrets() -> None:
    for name in _AWS_SECRET_LOGGERS:
        log = logging.getLogger(name)
        if not any(isinstance(f, _HideAwsSecrets) for f in log.filters):
            log.addFilter(_HideAwsSecrets())


# ChatRequest's sampling parameters as Converse's inferenceConfig names them
_CONVERSE_SAMPLING = {"temperature": "temperature", "top_p": "topP"}


class BedrockClient:
    """Amazon Bedrock's Converse API through ``botocore`` (no token log-probabilities).

    Parameters
    ----------
    model : str
        A Bedrock model id or inference profile, e.g.
        ``"us.anthropic.claude-sonnet-4-5-20250929-v1:0"``.
    region : str, optional
        The AWS region; botocore's default (``AWS_REGION``, the profile) otherwise.
    profile : str, optional
        A named AWS profile. Credentials come from botocore's chain (environment, profile,
        role), never from arguments; requests are SigV4-signed, so the secret key never
        travels.
    timeout : float, default 60.0
        Connect and read timeout, seconds.
    max_retries : int, default 4
        Retries by botocore's "standard" mode: throttling (429), 5xx, timeouts and
        connection errors, with backoff (so at most ``max_retries + 1`` requests).

    Notes
    -----
    ``inferenceConfig`` carries ``maxTokens`` and only the sampling parameters the request
    sets (``temperature``, ``topP``). Converse's ``inferenceConfig`` has no top-k (it is
    a model-specific field there), so a request setting ``top_k`` fails before it is
    sent, naming it. A ``ValidationException`` naming a parameter that was set (models
    that refuse ``temperature``) says how to unset it. The access key, secret key and
    session token are redacted from every message as the other clients redact their key
    (:func:`~confcal.extras._http.redact`: hex, split and fullwidth forms included), and
    an answer whose text echoes one is a ``ModelResponseError``.

    Attributes
    ----------
    runtime
        The ``bedrock-runtime`` botocore client, created on first use (a test wraps it in
        ``botocore.stub.Stubber``). Creating it also adds a filter to the
        ``botocore.endpoint``, ``botocore.auth`` and ``botocore.parsers`` loggers that
        removes the session token and the request signature from their DEBUG records
        (botocore quotes both), and the credentials of every live client in any form
        :func:`~confcal.extras._http.redact` knows (a server's echo in an answer body), and
        gives it connections that never print, whatever
        ``http.client.HTTPConnection.debuglevel`` says (with it set, every connection
        prints the headers it sends); a botocore where that cannot be done is refused
        (a :class:`~confcal.exceptions.ModelCallError`, before any request).

    Examples
    --------
    >>> BedrockClient("us.amazon.nova-pro-v1:0", region="us-east-1")
    BedrockClient(model='us.amazon.nova-pro-v1:0', region='us-east-1')
    """

    provider = "bedrock"
    supports_logprobs = False

    def __init__(self, model: str, *, region: str | None = None, profile: str | None = None,
                 timeout: float = 60.0, max_retries: int = 4) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValidationError(f"model must be a non-empty string; found {model!r}")
        check_options(timeout=timeout, max_retries=max_retries, backoff=0, max_wait=0,
                      max_response_bytes=1)
        for name, value in (("region", region), ("profile", profile)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValidationError(f"{name} must be a non-empty string or None; found "
                                      f"{value!r}")
        self.model = model
        self.region = region
        self.profile = profile
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self._client: Any = None
        self._session: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"BedrockClient(model={self.model!r}, region={self.region!r})"

    @property
    def runtime(self) -> Any:
        """The botocore ``bedrock-runtime`` client (created once, thread-safe)."""
        with self._lock:
            if self._client is None:
                _hide_aws_secrets()  # before botocore logs its first request
                session_module = require("botocore.session", user="BedrockClient",
                                         extra="bedrock")
                config = require("botocore.config", user="BedrockClient",
                                 extra="bedrock").Config(
                    connect_timeout=self.timeout, read_timeout=self.timeout,
                    retries={"total_max_attempts": self.max_retries + 1, "mode": "standard"})
                exceptions = require("botocore.exceptions", user="BedrockClient",
                                     extra="bedrock")
                try:
                    session = session_module.Session(profile=self.profile)
                    self._session = session
                    self._client = session.create_client("bedrock-runtime",
                                                         region_name=self.region,
                                                         config=config)
                except exceptions.BotoCoreError as exc:  # no region, unknown profile
                    raise ModelCallError(f"Bedrock {self.model}: the bedrock-runtime client "
                                         f"could not be created ({exc})", attempts=0) from None
                if not _silence_connections(self._client):
                    self._client = None
                    raise ModelCallError(
                        f"Bedrock {self.model}: this botocore keeps its connections where "
                        "confcal cannot stop them printing the session token under "
                        "http.client debugging; install a botocore the bedrock extra "
                        "supports", attempts=0)
            return self._client

    def _secrets(self) -> list[str]:
        """The access key, secret key and session token botocore signs with (what a
        message must never quote), read when needed: temporary credentials refresh."""
        try:
            credentials = self._session.get_credentials() if self._session else None
            frozen = credentials.get_frozen_credentials() if credentials else None
        except Exception:  # noqa: BLE001 - a failed refresh leaves nothing to redact
            return []
        if frozen is None:
            return []
        return [s for s in (frozen.access_key, frozen.secret_key, frozen.token)
                if isinstance(s, str) and s]

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The Converse parameters for ``request`` (what :meth:`complete` sends).

        Raises
        ------
        ModelCallError
            ``request`` sets ``top_k`` (attempts 0: nothing is sent).
        """
        content: list[dict[str, Any]] = [
            {"image": {"format": "png", "source": {"bytes": im}}} for im in request.images]
        content.append({"text": request.text})
        if request.top_k is not None:
            raise sampling_refusal(f"Bedrock converse {self.model}", "top_k", request.top_k,
                                   "Converse's inferenceConfig has no top_k")
        config: dict[str, Any] = {"maxTokens": request.max_tokens}
        for name, wire in _CONVERSE_SAMPLING.items():
            if getattr(request, name) is not None:
                config[wire] = getattr(request, name)
        params: dict[str, Any] = {
            "modelId": self.model, "messages": [{"role": "user", "content": content}],
            "inferenceConfig": config}
        if request.system:
            params["system"] = [{"text": request.system}]
        return params

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one Converse request.

        Raises
        ------
        ModelCallError
            An API error after botocore's retries (``ModelHTTPError`` with the status),
            no answer (``ModelConnectionError``), an answer without text
            (``ModelResponseError``), no credentials/region or a ``top_k``
            (``ModelCallError``).
        ValidationError
            ``request.top_logprobs`` asks for log-probabilities.
        """
        request = _check_request(request, "BedrockClient", "Converse")
        exceptions = require("botocore.exceptions", user="BedrockClient", extra="bedrock")
        where = f"Bedrock converse {self.model}"
        runtime = self.runtime
        _SIGNED_WITH[self] = tuple(self._secrets())  # what its log records must not quote
        try:
            response = runtime.converse(**self.payload(request))
        except exceptions.ClientError as exc:
            meta = exc.response.get("ResponseMetadata", {})
            status = meta.get("HTTPStatusCode")
            error = exc.response.get("Error", {})
            # the server's words, redacted before they are cut (a cut must not leave a
            # secret's prefix that redaction would no longer see whole)
            said = redact(f"{error.get('Code', '?')}: {error.get('Message', '')}",
                          self._secrets())
            failure = ModelHTTPError(
                f"{where} answered HTTP {status}: {said[:300]}", status=status,
                attempts=int(meta.get("RetryAttempts", 0)) + 1,
                retryable=status in RETRY_STATUSES)
            sent = {wire: (name, getattr(request, name))
                    for name, wire in _CONVERSE_SAMPLING.items()
                    if getattr(request, name) is not None}
            raise refused_sampling(failure, sent) from None
        except (exceptions.EndpointConnectionError, exceptions.ConnectTimeoutError,
                exceptions.ReadTimeoutError, exceptions.ConnectionClosedError) as exc:
            raise ModelConnectionError(f"{where} failed: no answer "
                                       f"({redact(str(exc), self._secrets())})",
                                       attempts=self.max_retries + 1, retryable=True) from None
        except exceptions.BotoCoreError as exc:  # credentials, parameter validation
            raise ModelCallError(f"{where} failed: {redact(str(exc), self._secrets())}",
                                 attempts=1) from None
        try:
            blocks = response["output"]["message"]["content"]
            texts = [b["text"] for b in blocks if "text" in b]
        except (KeyError, TypeError):
            raise ModelResponseError(f"{where} answered without output.message.content",
                                     status=200) from None
        reason = response.get("stopReason") or "unknown"
        if has_lone_surrogate(texts):
            raise ModelResponseError(f"{where} answered with a text holding a lone surrogate "
                                     "(half of a UTF-16 pair): not valid Unicode text",
                                     status=200)
        if not texts:
            raise ModelResponseError(f"{where} answered without a reply text: no text block "
                                     f"(stopReason {reason!r})", status=200)
        if holds_secret("".join(texts), self._secrets()):
            raise ModelResponseError(f"{where} answered 200 with a text that echoes the "
                                     "credentials it was signed with; refused, so that it "
                                     "reaches no cache, log or report", status=200)
        return ChatResponse(text="".join(texts), finish_reason=_STOP_REASONS.get(reason, reason),
                            usage=usage_counts(response.get("usage")))
