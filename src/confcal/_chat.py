"""The one chat protocol every model client speaks and every caller uses.

A caller (extraction, a QA judge, a QA system run) builds a :class:`ChatRequest` and gets a
:class:`ChatResponse` from any object with ``provider``, ``model``, ``supports_logprobs``
and ``complete(request)`` (:class:`ChatClient`). The core layers use this protocol without
importing a client: the clients live in :mod:`confcal.extras.clients`, which re-exports
these three names.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .exceptions import ValidationError

__all__ = ["ChatClient", "ChatRequest", "ChatResponse"]


# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChatRequest:
    """One chat call: a system prompt, a user text, page images and decoding settings.

    Parameters
    ----------
    system : str
    text : str
    images : tuple of bytes, default ()
        PNG-encoded page images, sent before the text.
    max_tokens : int, default 4096
        The most tokens the answer may have; an answer cut there has
        ``finish_reason == "length"``.
    temperature : float, default 0.0
        0 is greedy decoding.
    top_logprobs : int, default 0
        0: no log-probabilities. n >= 1: each generated token's log-probability and its
        n most likely alternatives (clients without ``supports_logprobs`` refuse).

    Examples
    --------
    >>> request = ChatRequest("You extract data.", "Agency?", max_tokens=64)
    >>> request.fingerprint()["images"], request.fingerprint()["max_tokens"]
    ([], 64)
    """

    system: str
    text: str
    images: tuple[bytes, ...] = ()
    max_tokens: int = 4096
    temperature: float = 0.0
    top_logprobs: int = 0

    def __post_init__(self) -> None:
        for name in ("system", "text"):
            if not isinstance(getattr(self, name), str):
                raise ValidationError(f"{name} must be a string; found "
                                      f"{type(getattr(self, name)).__name__}")
        images = tuple(self.images)
        bad = [i for i, im in enumerate(images) if not isinstance(im, bytes)]
        if bad:
            raise ValidationError(f"images must be PNG bytes; found "
                                  f"{type(images[bad[0]]).__name__} at index {bad[0]}")
        object.__setattr__(self, "images", images)
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) \
                or self.max_tokens < 1:
            raise ValidationError(f"max_tokens must be an integer >= 1; found {self.max_tokens!r}")
        if isinstance(self.top_logprobs, bool) or not isinstance(self.top_logprobs, int) \
                or self.top_logprobs < 0:
            raise ValidationError(f"top_logprobs must be an integer >= 0; found "
                                  f"{self.top_logprobs!r}")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)) \
                or not (math.isfinite(self.temperature) and self.temperature >= 0):
            raise ValidationError(f"temperature must be a finite number >= 0; found "
                                  f"{self.temperature!r}")

    def fingerprint(self) -> dict[str, Any]:
        """Everything that decides the answer, JSON-ready, images as SHA-256 digests."""
        return {"system": self.system, "text": self.text,
                "images": [hashlib.sha256(im).hexdigest() for im in self.images],
                "max_tokens": self.max_tokens, "temperature": float(self.temperature),
                "top_logprobs": self.top_logprobs}


@dataclass(frozen=True)
class ChatResponse:
    """A model's answer.

    Attributes
    ----------
    text : str
    finish_reason : str
        ``"stop"`` (the model finished), ``"length"`` (cut at ``max_tokens``), or the
        provider's own word for anything else.
    tokens : tuple of str or None
        The generated tokens, when log-probabilities were requested and returned.
    token_logprobs : tuple of float or None
        Their natural-log probabilities.
    top_logprobs : tuple or None
        Per token, a tuple of ``{"token", "logprob"}`` dicts (the alternatives).
    token_style : str
        How ``tokens`` spell bytes (see :mod:`confcal.calibration.confidence`): ``"byte-level"``
        when
        the API gave each token's bytes, ``"text"`` otherwise.
    usage : mapping of str to int
        Token counts as the provider reports them.
    """

    text: str
    finish_reason: str
    tokens: tuple[str, ...] | None = None
    token_logprobs: tuple[float, ...] | None = None
    top_logprobs: tuple[tuple[Mapping[str, Any], ...] | None, ...] | None = None
    token_style: str = "text"
    usage: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict (what the extraction cache stores)."""
        return {"text": self.text, "finish_reason": self.finish_reason,
                "tokens": None if self.tokens is None else list(self.tokens),
                "token_logprobs": None if self.token_logprobs is None
                else list(self.token_logprobs),
                "top_logprobs": None if self.top_logprobs is None
                else [None if e is None else [dict(a) for a in e] for e in self.top_logprobs],
                "token_style": self.token_style, "usage": dict(self.usage)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatResponse:
        """The inverse of :meth:`to_dict`."""
        top = data.get("top_logprobs")
        return cls(
            text=data["text"], finish_reason=data["finish_reason"],
            tokens=None if data.get("tokens") is None else tuple(data["tokens"]),
            token_logprobs=None if data.get("token_logprobs") is None
            else tuple(data["token_logprobs"]),
            top_logprobs=None if top is None
            else tuple(None if e is None else tuple(e) for e in top),
            token_style=data.get("token_style", "text"), usage=dict(data.get("usage", {})))


@runtime_checkable
class ChatClient(Protocol):
    """What extraction needs from a model client.

    Attributes
    ----------
    provider : str
        A short name of the API (``"openai-compatible"``, ``"anthropic"``, ``"bedrock"``);
        with ``model`` it keys the extraction cache.
    model : str
    supports_logprobs : bool
        Whether :meth:`complete` honours ``request.top_logprobs``.
    """

    provider: str
    model: str
    supports_logprobs: bool

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request; retry transient failures; raise :class:`ModelCallError`."""
        ...
