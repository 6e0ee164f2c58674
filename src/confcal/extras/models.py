"""A small client for OpenAI-compatible chat-completions endpoints, on the standard library.

:class:`ChatCompletionsClient` posts ``{"model", "messages", ...}`` to
``<base_url>/chat/completions`` and returns the reply text. It works with any server that
speaks that protocol (OpenAI, Azure-style gateways, vLLM, Ollama, llama.cpp's server,
LiteLLM, ...), with ``urllib`` only.

- **The API key comes from the environment only**: ``api_key_env`` names the variable
  (default ``OPENAI_API_KEY``), read at each request. It is never a parameter, never stored
  on the client, never shown in a repr, an error or a log record. ``api_key_env=None`` sends
  no key (local servers).
- **Timeouts and retries**: each request has a timeout; a 429, a 5xx, a timeout or a
  refused connection is retried up to ``max_retries`` times, waiting what the server's
  ``Retry-After`` header asks or else ``backoff * 2**attempt`` seconds (capped at
  ``max_wait``). Other HTTP errors (400, 401, 404, ...) are not retried.
- **Clear errors**: :class:`ModelHTTPError` (with the status and the server's message),
  :class:`ModelConnectionError`, :class:`ModelResponseError` (a 200 whose body has no reply
  text), all :class:`ModelError`, a :class:`confcal.exceptions.ConfcalError`.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timezone
from http.client import HTTPException
from typing import Any

from .._validation import is_real
from ..exceptions import ModelError, ModelResponseError, ValidationError

__all__ = [
    "MAX_IMAGE_SIZE",
    "MODALITIES",
    "RETRY_STATUSES",
    "STRATEGIES",
    "AnthropicClient",
    "BedrockClient",
    "ChatClient",
    "ChatCompletionsClient",
    "ChatRequest",
    "ChatResponse",
    "ExtractionRun",
    "ModelAnswerError",
    "ModelCallError",
    "OpenAICompatibleClient",
    "build_request",
    "extract_logprob",
    "extract_verbalized",
    "run_extraction",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
]

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
"""HTTP statuses worth retrying: timeouts, conflicts, rate limits and server errors."""

_EXCERPT = 300  # characters of a server's error body quoted in an error message


class ModelHTTPError(ModelError):
    """The server answered with an HTTP error status.

    Attributes
    ----------
    status : int
    attempts : int
        Requests made, retries included.
    """

    def __init__(self, message: str, *, status: int, attempts: int) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class ModelConnectionError(ModelError):
    """No HTTP answer: refused connection, DNS failure, timeout, dropped connection."""


def _excerpt(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace").strip()
    try:  # OpenAI-style {"error": {"message": ...}} says it best
        message = json.loads(text)["error"]["message"]
        if isinstance(message, str) and message:
            text = message
    except (ValueError, KeyError, TypeError):
        pass
    return text if len(text) <= _EXCERPT else text[:_EXCERPT - 3] + "..."


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header: delay-seconds or an HTTP-date."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # unreadable: fall back to the client's own backoff
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now)


def _check_messages(messages: Any) -> list[dict[str, str]]:
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise ValidationError(
            f"messages must be a list of {{'role': ..., 'content': ...}} dicts; found "
            f"{type(messages).__name__}")
    if not messages:
        raise ValidationError("messages must not be empty; found 0 messages")
    bad = [i for i, m in enumerate(messages)
           if not (isinstance(m, Mapping) and isinstance(m.get("role"), str)
                   and isinstance(m.get("content"), str))]
    if bad:
        raise ValidationError(
            f"messages must be dicts with string 'role' and 'content'; found {len(bad)} "
            f"breaking it, first at index {bad[0]} ({messages[bad[0]]!r})")
    return [dict(m) for m in messages]


def _number(value: Any, name: str, *, minimum: float, strict: bool) -> float:
    # numpy scalars too (a value read from a table); the request carries float(value)
    ok = is_real(value) and (value > minimum if strict else value >= minimum)
    if not ok:
        rule = f"> {minimum:g}" if strict else f">= {minimum:g}"
        raise ValidationError(f"{name} must be a finite number {rule}; found {value!r}")
    return float(value)


@dataclass(frozen=True)
class ChatCompletionsClient:
    """A client for one model behind an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    base_url : str
        The API root, e.g. ``"https://api.openai.com/v1"`` or ``"http://127.0.0.1:8000/v1"``;
        requests go to ``<base_url>/chat/completions``.
    model : str
        The model name sent with every request.
    api_key_env : str or None, default "OPENAI_API_KEY"
        The environment variable holding the key, sent as ``Authorization: Bearer``. None
        sends no key. The key is read at each request and never kept.
    timeout : float, default 60
        Seconds to wait for each response.
    max_retries : int, default 4
        Retries after a retryable failure (so at most ``max_retries + 1`` requests).
    backoff : float, default 1.0
        Wait before retry k (0-based) when the server gives no ``Retry-After``:
        ``backoff * 2**k`` seconds, at most ``max_wait``.
    max_wait : float, default 60
        The longest single wait. A ``Retry-After`` asking for more is an error at once
        rather than a silent stall.
    temperature : float or None, default 0.0
        Sent unless None (0 for judging: the same answer gets the same verdict).
    max_tokens : int or None
        Sent unless None.
    sleep : callable, default time.sleep
        How to wait (tests pass a recorder).

    Examples
    --------
    >>> client = ChatCompletionsClient("http://127.0.0.1:8000/v1", "judge-model",
    ...                                api_key_env=None, timeout=30)
    >>> client.url, client.timeout, client.max_retries
    ('http://127.0.0.1:8000/v1/chat/completions', 30.0, 4)
    >>> client.complete([{"role": "user", "content": "2+2?"}])  # doctest: +SKIP
    '4'
    """

    base_url: str
    model: str
    api_key_env: str | None = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 1.0
    max_wait: float = 60.0
    temperature: float | None = 0.0
    max_tokens: int | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.base_url, str)
                and self.base_url.startswith(("http://", "https://"))
                and len(self.base_url.split("://", 1)[1].strip("/")) > 0):
            raise ValidationError(
                f"base_url must be an http:// or https:// URL such as "
                f"'https://api.openai.com/v1'; found {self.base_url!r}")
        if not (isinstance(self.model, str) and self.model.strip()):
            raise ValidationError(f"model must be a non-empty string; found {self.model!r}")
        if self.api_key_env is not None and not (isinstance(self.api_key_env, str)
                                                 and self.api_key_env.strip()):
            raise ValidationError(
                f"api_key_env must name an environment variable, or be None for no key; "
                f"found {self.api_key_env!r}")
        object.__setattr__(self, "timeout", _number(self.timeout, "timeout", minimum=0,
                                                    strict=True))
        if (isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int)
                or self.max_retries < 0):
            raise ValidationError(f"max_retries must be an integer >= 0; found "
                                  f"{self.max_retries!r}")
        object.__setattr__(self, "backoff", _number(self.backoff, "backoff", minimum=0,
                                                    strict=False))
        object.__setattr__(self, "max_wait", _number(self.max_wait, "max_wait", minimum=0,
                                                     strict=False))
        if self.temperature is not None:
            object.__setattr__(self, "temperature", _number(self.temperature, "temperature",
                                                            minimum=0, strict=False))
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool)
                                            or not isinstance(self.max_tokens, int)
                                            or self.max_tokens < 1):
            raise ValidationError(f"max_tokens must be an integer >= 1 or None; found "
                                  f"{self.max_tokens!r}")
        if not callable(self.sleep):
            raise ValidationError(f"sleep must be callable; found {self.sleep!r}")

    @property
    def url(self) -> str:
        """Where requests go: ``<base_url>/chat/completions``."""
        return self.base_url.rstrip("/") + "/chat/completions"

    def _headers(self) -> dict[str, str]:
        from .._version import __version__

        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"confcal/{__version__}"}
        if self.api_key_env is not None:
            key = os.environ.get(self.api_key_env, "").strip()
            if not key:
                raise ModelError(
                    f"the API key must be in the environment variable {self.api_key_env}; "
                    f"found it unset or empty (set it, or use api_key_env=None for an "
                    f"endpoint that needs no key)")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, body: bytes, headers: dict[str, str]) -> tuple[int, Any, bytes]:
        """(status, headers, body) of one request; raises only for no HTTP answer."""
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as exc:  # an HTTP answer with an error status
            try:
                data = exc.read()
            except (OSError, HTTPException, AttributeError):
                data = b""  # the status says enough; the body is only for the message
            finally:
                exc.close()
            return exc.code, exc.headers, data

    def create(self, messages: Sequence[Mapping[str, str]], **params: Any) -> dict[str, Any]:
        """Send one chat-completions request; return the response JSON.

        Parameters
        ----------
        messages : sequence of {"role": str, "content": str}
        **params
            Further request fields (``response_format``, ``logprobs``, ``seed``, ...),
            overriding the client's ``temperature`` and ``max_tokens``.

        Raises
        ------
        ModelHTTPError, ModelConnectionError, ModelResponseError, ModelError
        """
        payload: dict[str, Any] = {"model": self.model, "messages": _check_messages(messages)}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        payload.update(params)
        body = json.dumps(payload).encode("utf-8")
        headers = self._headers()
        attempts = 0
        while True:
            attempts += 1
            try:
                status, response_headers, data = self._post(body, headers)
            except (urllib.error.URLError, TimeoutError, ConnectionError, HTTPException) as exc:
                reason = getattr(exc, "reason", exc)
                problem = f"no answer from {self.url} ({type(exc).__name__}: {reason})"
                if attempts > self.max_retries:
                    raise ModelConnectionError(
                        f"{problem} after {attempts} attempt(s)") from None
                wait = self._backoff(attempts)
                logger.warning("%s; retrying in %.1f s", problem, wait)
                self.sleep(wait)
                continue
            if 200 <= status < 300:
                return self._parse(data)
            message = (f"{self.url} answered HTTP {status}"
                       + (f": {_excerpt(data)}" if data.strip() else ""))
            if status in (401, 403) and self.api_key_env is not None:
                message += f" (check the key in the environment variable {self.api_key_env})"
            if status not in RETRY_STATUSES and not 500 <= status < 600:
                raise ModelHTTPError(message, status=status, attempts=attempts)
            if attempts > self.max_retries:
                raise ModelHTTPError(f"{message}; gave up after {attempts} attempt(s)",
                                     status=status, attempts=attempts)
            asked = _retry_after(response_headers.get("Retry-After"), time.time())
            if asked is not None and asked > self.max_wait:
                raise ModelHTTPError(
                    f"{message}; the server asks to retry after {asked:.0f} s, more than "
                    f"max_wait={self.max_wait:g} s", status=status, attempts=attempts)
            wait = self._backoff(attempts) if asked is None else asked
            logger.warning("%s; retrying in %.1f s (attempt %d of %d)", message, wait,
                           attempts + 1, self.max_retries + 1)
            self.sleep(wait)

    def _backoff(self, attempts: int) -> float:
        return float(min(self.max_wait, self.backoff * 2 ** (attempts - 1)))

    def _parse(self, data: bytes) -> dict[str, Any]:
        try:
            response = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ModelResponseError(
                f"{self.url} answered 200 with a body that is not JSON: {_excerpt(data)!r}"
            ) from None
        if not isinstance(response, dict):
            raise ModelResponseError(
                f"{self.url} answered 200 with JSON that is not an object: {_excerpt(data)!r}")
        return response

    def complete(self, messages: Sequence[Mapping[str, str]], **params: Any) -> str:
        """Send the messages; return the text of the first choice.

        Raises
        ------
        ModelResponseError
            When the response has no ``choices[0].message.content`` string (a null content,
            as with a refusal or a tool call, included).
        ModelHTTPError, ModelConnectionError, ModelError
            As :meth:`create`.
        """
        response = self.create(messages, **params)
        try:
            choice = response["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ModelResponseError(
                f"{self.url} answered without choices[0].message.content: "
                f"{_excerpt(json.dumps(response).encode())!r}") from None
        if not isinstance(content, str):
            reason = choice.get("finish_reason") if isinstance(choice, dict) else None
            raise ModelResponseError(
                f"{self.url} answered with a {type(content).__name__} content, not text "
                f"(finish_reason {reason!r})")
        return content


# The ConfBench model-calling layer (issue 7) lives in clients.py and extraction.py and is
# re-exported here, so `confcal.extras.models` is the one import for calling models. These
# imports come last so that this module's own names exist first.
from .clients import (  # noqa: E402
    AnthropicClient,
    BedrockClient,
    ChatClient,
    ChatRequest,
    ChatResponse,
    ModelCallError,
    OpenAICompatibleClient,
)
from .extraction import (  # noqa: E402
    MAX_IMAGE_SIZE,
    MODALITIES,
    STRATEGIES,
    ExtractionRun,
    ModelAnswerError,
    build_request,
    extract_logprob,
    extract_verbalized,
    run_extraction,
)
