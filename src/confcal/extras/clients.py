"""Chat clients behind one small interface: OpenAI-compatible, Anthropic, Bedrock.

An extraction, a QA judge or a QA run needs one thing from a model: send a system prompt,
a text and maybe page images, and get text back (and, where the API offers them, each
generated token's log-probability with its top alternatives). :class:`ChatClient` is that
interface (a ``Protocol``: any object with ``provider``, ``model``, ``supports_logprobs``
and ``complete(request)`` is a client), :class:`ChatRequest` and :class:`ChatResponse` the
data it speaks.

* :class:`OpenAICompatibleClient`: the chat-completions API of vLLM, TGI, Ollama, OpenAI
  and others; token log-probabilities with ``top_logprobs`` alternatives.
* :class:`AnthropicClient`: Anthropic Messages, built and read by confcal (no SDK).
* :class:`BedrockClient`: Amazon Bedrock Converse through ``botocore``.

The two HTTP clients share one transport (:mod:`confcal.extras._http`): no redirect is
followed, TLS is always verified, retries are bounded and honour ``Retry-After``, and no
key or credential reaches a message, a log record or the cache. Every failure is one of
the :class:`~confcal.exceptions.ModelCallError` family. API keys come from the environment
only (the variable is named, the key is read at each call and never stored).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .._chat import ChatClient, ChatRequest, ChatResponse
from ..exceptions import (
    ModelCallError,
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ValidationError,
)
from ._http import (
    MAX_RESPONSE_BYTES,
    Reply,
    Transport,
    check_headers,
    read_key,
    refused_sampling,
    user_agent,
)
from ._openai import read_completion

__all__ = [
    "AnthropicClient",
    "BedrockClient",
    "ChatClient",
    "ChatRequest",
    "ChatResponse",
    "ModelCallError",
    "ModelConnectionError",
    "ModelHTTPError",
    "ModelResponseError",
    "OpenAICompatibleClient",
]

# the names a chat-completions request may give its token limit, and the host whose
# requests use the first by default (OpenAI's own API)
_MAX_TOKENS_FIELDS = ("max_completion_tokens", "max_tokens")
_OPENAI_API_HOST = "api.openai.com"

class OpenAICompatibleClient:
    """Chat completions on any OpenAI-compatible endpoint (vLLM, TGI, Ollama, OpenAI).

    Parameters
    ----------
    base_url : str
        The API root, e.g. ``"http://127.0.0.1:8000/v1"`` (requests go to
        ``<base_url>/chat/completions``). A base URL with credentials in it
        (``user:pw@``, a query string) is refused: keys travel in a header only.
    model : str
        The model name the server expects.
    api_key_env : str or None, default "OPENAI_API_KEY"
        The environment variable holding the API key, read at each call and sent as
        ``Authorization: Bearer``; unset or empty is a
        :class:`~confcal.exceptions.ModelCallError` before any request. None sends no key
        (local servers).
    timeout : float, default 60.0
        Seconds one attempt may take as a whole: connecting, sending and reading the
        whole answer (not only each read of the socket).
    max_retries : int, default 4
        Retries after a 408, 409, 429, 5xx, a timeout or a dropped connection (so at most
        ``max_retries + 1`` requests); other errors are raised at once.
    backoff : float, default 1.0
        Seconds before the first retry; doubled each time (at most ``max_wait``), with up
        to 10% random jitter. A ``Retry-After`` header (seconds or an HTTP-date) is waited
        exactly instead.
    max_wait : float, default 60.0
        The longest single wait: a ``Retry-After`` asking for more fails at once.
    max_response_bytes : int, default 32 MiB
        The largest answer read.
    headers : mapping of str to str, optional
        Extra headers (e.g. an organisation id); their values are redacted like the key.
    max_tokens_field : {"max_completion_tokens", "max_tokens"} or None, default None
        The request field that carries ``ChatRequest.max_tokens``. None chooses by host:
        ``"max_completion_tokens"`` for ``api.openai.com`` (OpenAI's current name; its
        reasoning models refuse ``max_tokens``), ``"max_tokens"`` for every other server
        (vLLM, llama.cpp, TGI, Ollama take it). Name it for a gateway in front of OpenAI,
        or for a server that wants the other name.

    Notes
    -----
    ``temperature``, ``top_p`` and ``top_k`` are sent only when the request sets them. A
    server that refuses one that was set (OpenAI's reasoning models take no temperature
    but the default; OpenAI has no ``top_k``) answers 400 naming it: the
    :class:`~confcal.exceptions.ModelHTTPError` then says which parameter the request set
    and how to unset it.

    Examples
    --------
    >>> client = OpenAICompatibleClient("http://127.0.0.1:8000/v1", "qwen2-vl",
    ...                                 api_key_env=None)
    >>> client
    OpenAICompatibleClient(base_url='http://127.0.0.1:8000/v1', model='qwen2-vl')
    >>> client.supports_logprobs, client.provider, client.max_tokens_field
    (True, 'openai-compatible', 'max_tokens')
    >>> OpenAICompatibleClient("https://api.openai.com/v1", "gpt-5").max_tokens_field
    'max_completion_tokens'
    """

    provider = "openai-compatible"
    supports_logprobs = True

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = "OPENAI_API_KEY",
                 timeout: float = 60.0, max_retries: int = 4, backoff: float = 1.0,
                 max_wait: float = 60.0, max_response_bytes: int = MAX_RESPONSE_BYTES,
                 headers: Mapping[str, str] | None = None,
                 max_tokens_field: str | None = None) -> None:
        self._transport = Transport(base_url, timeout=timeout, max_retries=max_retries,
                                    backoff=backoff, max_wait=max_wait,
                                    max_response_bytes=max_response_bytes)
        if not isinstance(model, str) or not model.strip():
            raise ValidationError(f"model must be a non-empty string; found {model!r}")
        if api_key_env is not None and (not isinstance(api_key_env, str)
                                        or not api_key_env.strip()):
            raise ValidationError(f"api_key_env must name an environment variable, or be None "
                                  f"for no key; found {api_key_env!r}")
        self.base_url = self._transport.url("")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = self._transport.timeout
        self.max_retries = max_retries
        self.backoff = self._transport.backoff
        self.max_wait = self._transport.max_wait
        self.max_response_bytes = max_response_bytes
        self._headers = MappingProxyType(check_headers(headers))
        if max_tokens_field is None:
            host = (self._transport.parts.hostname or "").lower()
            max_tokens_field = _MAX_TOKENS_FIELDS[0 if host == _OPENAI_API_HOST else 1]
        elif max_tokens_field not in _MAX_TOKENS_FIELDS:
            raise ValidationError(f"max_tokens_field must be one of {list(_MAX_TOKENS_FIELDS)} "
                                  f"or None (chosen by host); found {max_tokens_field!r}")
        self.max_tokens_field = max_tokens_field

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(base_url={self.base_url!r}, model={self.model!r})"

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
            self.max_tokens_field: request.max_tokens,
            **request.sampling(),  # only what the request sets
        }
        if request.top_logprobs:
            payload["logprobs"] = True
            payload["top_logprobs"] = request.top_logprobs
        return payload

    def send(self, payload: Mapping[str, Any], *, transport: Transport | None = None
             ) -> Reply:
        """POST a chat-completions ``payload``; the decoded answer (all checks applied).

        Raises
        ------
        ModelCallError
            No key in ``api_key_env``; and every transport failure
            (:class:`~confcal.exceptions.ModelHTTPError`,
            :class:`~confcal.exceptions.ModelConnectionError`,
            :class:`~confcal.exceptions.ModelResponseError`).
        """
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": user_agent(), **self._headers}
        key = None
        if self.api_key_env is not None:
            key = read_key(self.api_key_env, provider="OpenAI-compatible",
                           optional_hint=True)
            headers["Authorization"] = f"Bearer {key}"
        hint = ("" if self.api_key_env is None
                else f"check the key in the environment variable {self.api_key_env}")
        return (transport or self._transport).post(
            "/chat/completions", payload, headers=headers,
            secrets=[key, *self._headers.values()], auth_hint=hint)

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request, retrying 408, 409, 429, 5xx, timeouts and dropped connections.

        Raises
        ------
        ModelCallError
            A non-retryable HTTP error or a redirect (``ModelHTTPError``; a 400 naming a
            sampling parameter the request set says how to unset it), retries
            exhausted, no answer (``ModelConnectionError``), or a 2xx answer that is not a
            chat completion with a reply text (``ModelResponseError``, naming what is
            missing).
        ValidationError
            ``request`` is not a :class:`ChatRequest`.
        """
        if not isinstance(request, ChatRequest):
            raise ValidationError(f"request must be a ChatRequest; found {type(request).__name__}")
        try:
            reply = self.send(self._payload(request))
        except ModelHTTPError as exc:
            sent = {name: (name, value) for name, value in request.sampling().items()}
            raise refused_sampling(exc, sent) from None
        return read_completion(reply)


# The other providers live in _providers.py (this module stays readable); they are
# re-exported here, the one import for clients. Imported last: they use the names above.
from ._providers import AnthropicClient, BedrockClient  # noqa: E402
