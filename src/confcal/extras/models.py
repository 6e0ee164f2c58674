"""Calling models: the chat clients and the ConfBench extraction, in one import.

Everything here is defined in :mod:`confcal.extras.clients` (the clients and the chat
protocol) and :mod:`confcal.extras.extraction` (asking for extractions with confidence),
and re-exported. The one name of its own, :class:`ChatCompletionsClient` (the
``complete(messages) -> str`` client the QA model judge used), is deprecated: it is a thin
wrapper over :class:`~confcal.extras.clients.OpenAICompatibleClient` and its transport, so
it has the same retried statuses, limits, empty-reply and missing-key handling, redaction,
logger and errors. Use ``OpenAICompatibleClient(...).complete(ChatRequest(...))``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._validation import is_real
from ..exceptions import (
    ModelCallError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ValidationError,
)
from ._http import MAX_RESPONSE_BYTES, RETRY_STATUSES, Transport
from ._openai import read_completion
from .clients import (
    AnthropicClient,
    BedrockClient,
    ChatClient,
    ChatRequest,
    ChatResponse,
    OpenAICompatibleClient,
)
from .extraction import (
    MAX_IMAGE_SIZE,
    MODALITIES,
    STRATEGIES,
    ExtractionRun,
    ModelAnswerError,
    build_request,
    extract_logprob,
    extract_two_stage,
    extract_verbalized,
    run_extraction,
)

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
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "OpenAICompatibleClient",
    "build_request",
    "extract_logprob",
    "extract_two_stage",
    "extract_verbalized",
    "run_extraction",
]


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
            f"breaking it, first at index {bad[0]} (keys {sorted(map(str, messages[bad[0]]))})"
            if isinstance(messages[bad[0]], Mapping) else
            f"messages must be dicts with string 'role' and 'content'; found {len(bad)} "
            f"breaking it, first at index {bad[0]} (a {type(messages[bad[0]]).__name__})")
    return [dict(m) for m in messages]


@dataclass(frozen=True)
class ChatCompletionsClient:
    """Deprecated: ``complete(messages) -> str`` over :class:`OpenAICompatibleClient`.

    Constructing one emits a :class:`DeprecationWarning`. It posts through the very client
    and transport of :class:`~confcal.extras.clients.OpenAICompatibleClient`: no redirect
    followed, TLS verified, the same retried statuses (408, 409, 429, 5xx), the key from
    the environment (unset is an error; None sends none), redacted everywhere.

    Parameters
    ----------
    base_url, model, api_key_env, timeout, max_retries, backoff, max_wait
        As :class:`~confcal.extras.clients.OpenAICompatibleClient`.
    temperature : float or None, default 0.0
        Sent unless None.
    max_tokens : int or None
        Sent unless None.
    sleep : callable, default time.sleep
        How to wait between retries (no jitter: the waits are ``backoff * 2**k`` exactly,
        or what ``Retry-After`` asks).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     client = ChatCompletionsClient("http://127.0.0.1:8000/v1", "judge-model",
    ...                                    api_key_env=None, timeout=30)
    >>> client.url, client.timeout, client.max_retries
    ('http://127.0.0.1:8000/v1/chat/completions', 30.0, 4)
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
        warnings.warn("ChatCompletionsClient is deprecated; use "
                      "confcal.extras.clients.OpenAICompatibleClient and its "
                      "complete(ChatRequest(...)) instead (it goes in the next release)",
                      DeprecationWarning, stacklevel=3)
        if not callable(self.sleep):
            raise ValidationError(f"sleep must be callable; found {self.sleep!r}")
        client = OpenAICompatibleClient(self.base_url, self.model,
                                        api_key_env=self.api_key_env, timeout=self.timeout,
                                        max_retries=self.max_retries, backoff=self.backoff,
                                        max_wait=self.max_wait)
        if self.temperature is not None and not (is_real(self.temperature)
                                                 and self.temperature >= 0):
            raise ValidationError(f"temperature must be a finite number >= 0 or None; found "
                                  f"{self.temperature!r}")
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool)
                                            or not isinstance(self.max_tokens, int)
                                            or self.max_tokens < 1):
            raise ValidationError(f"max_tokens must be an integer >= 1 or None; found "
                                  f"{self.max_tokens!r}")
        for name in ("timeout", "backoff", "max_wait"):
            object.__setattr__(self, name, float(getattr(self, name)))
        if self.temperature is not None:
            object.__setattr__(self, "temperature", float(self.temperature))
        object.__setattr__(self, "_client", client)
        # the same transport settings, with this client's sleep and no jitter
        object.__setattr__(self, "_transport", Transport(
            self.base_url, timeout=self.timeout, max_retries=self.max_retries,
            backoff=self.backoff, max_wait=self.max_wait,
            max_response_bytes=MAX_RESPONSE_BYTES, jitter=0.0, sleep=self.sleep))

    @property
    def url(self) -> str:
        """Where requests go: ``<base_url>/chat/completions``."""
        return self._client.base_url + "/chat/completions"  # type: ignore[attr-defined]

    def _send(self, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> Any:
        payload: dict[str, Any] = {"model": self.model, "messages": _check_messages(messages)}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        payload.update(params)
        reply = self._client.send(payload, transport=self._transport)  # type: ignore
        return reply

    def create(self, messages: Sequence[Mapping[str, str]], **params: Any) -> dict[str, Any]:
        """Send one chat-completions request; return the response JSON object.

        ``params`` are further request fields (``response_format``, ``seed``, ...),
        overriding ``temperature`` and ``max_tokens``.

        Raises
        ------
        ModelCallError
            As :meth:`OpenAICompatibleClient.complete`.
        """
        return self._send(messages, params).data

    def complete(self, messages: Sequence[Mapping[str, str]], **params: Any) -> str:
        """Send the messages; return the reply text of the first choice.

        Raises
        ------
        ModelResponseError
            No ``choices[0].message.content`` text (null content, as a refusal gives).
        ModelCallError
            As :meth:`create`.
        """
        return read_completion(self._send(messages, params)).text
