"""The one chat protocol every model client speaks and every caller uses.

A caller (extraction, a QA judge, a QA system run) builds a :class:`ChatRequest` and gets a
:class:`ChatResponse` from any object with ``provider``, ``model``, ``supports_logprobs``
and ``complete(request)`` (:class:`ChatClient`). The core layers use this protocol without
importing a client: the clients live in :mod:`confcal.extras.clients`, which re-exports
these names. :class:`ChatCache` keeps answers on disk, verified on read, for every caller.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ._files import atomic_write, read_json_object
from .exceptions import ValidationError

__all__ = ["SAMPLING_PARAMETERS", "ChatCache", "ChatClient", "ChatRequest", "ChatResponse",
           "check_sampling"]

SAMPLING_PARAMETERS: tuple[str, ...] = ("temperature", "top_p", "top_k")
"""The decoding settings a :class:`ChatRequest` sends only when set (None: not sent)."""


def check_sampling(sampling: Mapping[str, Any] | None, name: str = "sampling"
                   ) -> dict[str, Any]:
    """``sampling`` as keyword arguments of :class:`ChatRequest`, checked.

    A caller that builds requests for someone else (an extraction, a judge, a QA run) takes
    the sampling parameters as one mapping and passes them on: only the names of
    :data:`SAMPLING_PARAMETERS` are accepted, and an empty mapping or None sets none.

    Examples
    --------
    >>> check_sampling({"temperature": 0})
    {'temperature': 0}
    >>> check_sampling(None)
    {}
    >>> check_sampling({"temprature": 0})
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: sampling may name only temperature, top_p, top_k; \
found 'temprature'
    """
    if sampling is None:
        return {}
    if not isinstance(sampling, Mapping):
        raise ValidationError(f"{name} must be a mapping such as {{'temperature': 0}}, or None; "
                              f"found {type(sampling).__name__}")
    unknown = [k for k in sampling if k not in SAMPLING_PARAMETERS]
    if unknown:
        raise ValidationError(f"{name} may name only {', '.join(SAMPLING_PARAMETERS)}; "
                              f"found {unknown[0]!r}")
    values = {k: v for k, v in sampling.items() if v is not None}
    ChatRequest("", "", **values)  # the request's own checks, naming the parameter
    return values


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
    temperature : float or None, default None
        None: not sent, the server decides (its default, or the model's). A number >= 0 is
        sent as given (0: greedy decoding, where the server honours it); a client whose
        API refuses it fails the call with a message naming it.
    top_p : float or None, default None
        Nucleus sampling, in (0, 1]; sent only when set, like ``temperature``.
    top_k : int or None, default None
        Sample from the k most likely tokens (k >= 1); sent only when set.
    top_logprobs : int, default 0
        0: no log-probabilities. n >= 1: each generated token's log-probability and its
        n most likely alternatives (clients without ``supports_logprobs`` refuse).

    Examples
    --------
    >>> request = ChatRequest("You extract data.", "Agency?", max_tokens=64)
    >>> request.fingerprint()["images"], request.fingerprint()["max_tokens"]
    ([], 64)
    >>> request.sampling(), ChatRequest("s", "t", temperature=0).sampling()
    ({}, {'temperature': 0.0})
    """

    system: str
    text: str
    images: tuple[bytes, ...] = ()
    max_tokens: int = 4096
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    top_logprobs: int = 0

    def __post_init__(self) -> None:
        for name in ("system", "text"):
            if not isinstance(getattr(self, name), str):
                raise ValidationError(f"{name} must be a string; found "
                                      f"{type(getattr(self, name)).__name__}")
        object.__setattr__(self, "images", _checked_images(self.images))
        _check_count("max_tokens", self.max_tokens, 1)
        _check_count("top_logprobs", self.top_logprobs, 0)
        for name in ("temperature", "top_p"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _checked_sampling(name, getattr(self, name)))
        if self.top_k is not None:
            _check_count("top_k", self.top_k, 1, unset=True)

    def sampling(self) -> dict[str, float | int]:
        """The sampling parameters that are set (what a client sends), by name."""
        values = {name: getattr(self, name) for name in SAMPLING_PARAMETERS}
        return {name: value for name, value in values.items() if value is not None}

    def fingerprint(self) -> dict[str, Any]:
        """Everything that decides the answer, JSON-ready, images as SHA-256 digests.

        An unset sampling parameter is None: a request that leaves the temperature to the
        server is never taken for one that asked for temperature 0.
        """
        return {"system": self.system, "text": self.text,
                "images": [hashlib.sha256(im).hexdigest() for im in self.images],
                "max_tokens": self.max_tokens, "temperature": self.temperature,
                "top_p": self.top_p, "top_k": self.top_k,
                "top_logprobs": self.top_logprobs}


def _checked_images(images: Any) -> tuple[bytes, ...]:
    """The images as a tuple of bytes."""
    images = tuple(images)
    bad = [i for i, im in enumerate(images) if not isinstance(im, bytes)]
    if bad:
        raise ValidationError(f"images must be PNG bytes; found "
                              f"{type(images[bad[0]]).__name__} at index {bad[0]}")
    return images


def _check_count(name: str, value: Any, minimum: int, *, unset: bool = False) -> None:
    """``value`` is an integer (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        tail = ", or None to leave it unset" if unset else ""
        raise ValidationError(f"{name} must be an integer >= {minimum}{tail}; found {value!r}")


def _checked_sampling(name: str, value: Any) -> float:
    """A set temperature (a finite number >= 0) or top_p (in (0, 1]) as a float."""
    high = math.inf if name == "temperature" else 1.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0 or value > high \
            or (name == "top_p" and value == 0):
        wanted = "a finite number >= 0" if name == "temperature" else "a number in (0, 1]"
        raise ValidationError(f"{name} must be {wanted}, or None to leave it unset; "
                              f"found {value!r}")
    return float(value)


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
        """Send one request; retry transient failures; raise
        :class:`~confcal.exceptions.ModelCallError` (or a subclass) when the call fails."""
        ...


MAX_ENTRY_BYTES = 256 << 20
"""The largest cache entry read: an answer of a 32 MiB response with its log-probabilities
fits many times over."""


def _entry_bytes(path: Path) -> bytes:
    """A cache entry's bytes: a regular file's, at most :data:`MAX_ENTRY_BYTES`, opened
    without following a link and without blocking (a FIFO would hang the run)."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        kind = ("a symbolic link" if stat.S_ISLNK(info.st_mode) else "a FIFO"
                if stat.S_ISFIFO(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode)
                else "a device or socket")
        raise ValueError(f"must be a regular file; found {kind}")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        opened = os.fstat(fh.fileno())
        if not stat.S_ISREG(opened.st_mode):  # replaced between the two looks
            raise ValueError("must be a regular file; found it replaced while opened")
        data = fh.read(MAX_ENTRY_BYTES + 1)
    if len(data) > MAX_ENTRY_BYTES:
        raise ValueError(f"must be at most {MAX_ENTRY_BYTES:,} bytes; found more")
    return data


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)


def _counts(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
        for k, v in value.items())


def _alternatives(value: Any) -> bool:
    return isinstance(value, list) and all(
        e is None or (isinstance(e, list) and all(isinstance(a, dict) for a in e))
        for e in value)


# each field of ChatResponse.to_dict: (rule, whether null is allowed, its check)
_ANSWER_FIELDS: dict[str, tuple[str, bool, Any]] = {
    "text": ("a string", False, lambda v: isinstance(v, str)),
    "finish_reason": ("a string", False, lambda v: isinstance(v, str)),
    "token_style": ("a string", False, lambda v: isinstance(v, str)),
    "usage": ("an object of integers", False, _counts),
    "tokens": ("null or a list of strings", True, _strings),
    "token_logprobs": ("null or a list of numbers", True, _numbers),
    "top_logprobs": ("null or a list of lists of objects", True, _alternatives),
}
_ANSWER_DEFAULTS = {"token_style": "text", "usage": {}}


def _check_answer_types(answer: Mapping[str, Any]) -> None:
    """The types :meth:`ChatResponse.to_dict` writes, or a TypeError naming the field."""
    for name, (rule, nullable, ok) in _ANSWER_FIELDS.items():
        value = answer.get(name, _ANSWER_DEFAULTS.get(name))
        if not ((nullable and value is None) or ok(value)):
            raise TypeError(f"response.{name} must be {rule}; found {value!r:.60}")


class ChatCache:
    """Chat answers on disk, one JSON file per request, verified when read.

    Every caller that asks a model (extraction, the QA model judge, a QA system run) keeps
    its answers here, so an interrupted run resumes without asking anything twice. An
    entry is keyed by the SHA-256 digest of its *identity* (the caller's ``kind``, the
    client's provider and model, and the request's :meth:`ChatRequest.fingerprint`) and
    stores that identity and digest beside the answer. :meth:`get` recomputes the digest
    of the stored identity and compares it with the key asked for: an entry copied from
    another document, another model or another prompt does not match, is never used, and
    is counted in :attr:`rejected` (the caller asks again and :meth:`put` overwrites it).
    The answer's own digest is stored too, so an entry whose answer was edited by hand is
    rejected the same way.
    An entry that cannot be read as a cached answer (not a regular file - a symbolic link,
    a FIFO, a device -, larger than :data:`MAX_ENTRY_BYTES`, not JSON, missing fields,
    fields of the wrong type) is never used either: it is counted in :attr:`unreadable`,
    the caller asks again, and :meth:`put` replaces it atomically (a link itself, never
    its target). Only a folder where an entry belongs is an error naming it: it is not
    replaced, since it may hold the user's files.

    Nothing secret is stored: the identity holds prompt text, image digests and decoding
    settings, never headers, keys or base URLs.

    Parameters
    ----------
    directory : path
        Created, with its parents, if missing.
    kind : str
        What the answers are for (``"extraction"``, ``"qa-judge"``, ``"qa-run"``): a
        judge's answer is never served to an extraction that happens to send the same text.

    Attributes
    ----------
    rejected : list of Path
        Entries found under the asked key whose stored identity is not the request's.
    unreadable : list of Path
        Entries found under the asked key that could not be read as a cached answer.

    Examples
    --------
    >>> import tempfile
    >>> cache = ChatCache(tempfile.mkdtemp(), kind="qa-judge")
    >>> class Client:
    ...     provider, model, supports_logprobs = "openai-compatible", "m", False
    >>> request = ChatRequest("You grade.", "Is 2 + 2 = 4? Reply 1 or 0.")
    >>> key = cache.key(Client(), request)
    >>> cache.get(key) is None
    True
    >>> cache.put(key, ChatResponse("1", "stop"))
    >>> cache.get(key).text
    '1'
    """

    FORMAT = "confcal.chat-cache"
    VERSION = 4  # 2: prompt texts as digests; 3: the answer's digest; 4: unset sampling

    def __init__(self, directory: str | os.PathLike[str], *, kind: str) -> None:
        if not (isinstance(kind, str) and kind):
            raise ValidationError(f"kind must be a non-empty string; found {kind!r}")
        self.directory = Path(directory)
        self.kind = kind
        self.rejected: list[Path] = []
        self.unreadable: list[Path] = []
        self._identities: dict[str, dict[str, Any]] = {}
        if self.directory.exists() and not self.directory.is_dir():
            raise ValidationError(f"cache_dir {str(self.directory)!r} must be a folder; "
                                  f"found a file", source=self.directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValidationError(f"cache_dir {str(self.directory)!r} must be a folder that can "
                                  f"be created; found {type(exc).__name__}: {exc.strerror}",
                                  source=self.directory) from None

    def identity(self, client: Any, request: ChatRequest) -> dict[str, Any]:
        """What decides the answer: kind, provider, model and the request's fingerprint.

        The prompt texts are stored as their SHA-256 digests and lengths, like the images:
        a DocBench question sends a whole document (a 128k-token prompt is about 0.4 MB),
        and the digest identifies it as surely.
        """
        request_print = request.fingerprint()
        for name in ("system", "text"):
            text = request_print.pop(name)
            request_print[f"{name}_sha256"] = hashlib.sha256(
                text.encode("utf-8", "surrogatepass")).hexdigest()
            request_print[f"{name}_chars"] = len(text)
        return {"format": self.FORMAT, "version": self.VERSION, "kind": self.kind,
                "provider": str(client.provider), "model": str(client.model),
                "request": request_print}

    @staticmethod
    def digest(identity: Mapping[str, Any]) -> str:
        """The SHA-256 hex digest of an identity's canonical JSON."""
        text = json.dumps(identity, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def key(self, client: Any, request: ChatRequest) -> str:
        """The entry key of ``request`` sent to ``client`` (the digest of its identity)."""
        identity = self.identity(client, request)
        key = self.digest(identity)
        self._identities[key] = identity
        return key

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResponse | None:
        """The cached answer for ``key``; None when absent, unreadable or not matching.

        An entry is read only from a regular file (never through a symbolic link, from a
        FIFO or a device: a FIFO would hang the run) of at most :data:`MAX_ENTRY_BYTES`,
        and its answer's fields must have their types; anything else is counted in
        :attr:`unreadable` and asked again.

        Raises
        ------
        ValidationError
            A folder is where the entry belongs (named; it is not replaced).
        """
        path = self.path(key)
        if not os.path.lexists(path):
            return None
        try:
            data = read_json_object(_entry_bytes(path), where="the file", source=path)
            identity, stored, answer = data["identity"], data["key"], data["response"]
            answer_digest = data["response_sha256"]
            if not isinstance(identity, dict) or not isinstance(answer, dict):
                raise TypeError("identity or response is not an object")
            _check_answer_types(answer)
            response = ChatResponse.from_dict(answer)
        except (OSError, ValueError, KeyError, TypeError):
            if path.is_dir() and not path.is_symlink():
                raise ValidationError(f"cache_dir entry {str(path)!r} must be a cached answer "
                                      "(a file); found a folder, which is not replaced: "
                                      "move it away to call again", source=path) from None
            self.unreadable.append(path)
            return None
        expected = self._identities.get(key)
        if stored != key or self.digest(identity) != key \
                or (expected is not None and identity != expected) \
                or answer_digest != self.digest(answer):  # an edited answer is no answer
            self.rejected.append(path)
            return None
        return response

    def put(self, key: str, response: ChatResponse) -> None:
        """Store ``response`` under ``key`` (from :meth:`key`), atomically."""
        identity = self._identities.get(key)
        if identity is None:
            raise ValidationError(f"key {key!r} must come from this cache's key(); found an "
                                  f"unknown key")
        path = self.path(key)
        path.parent.mkdir(exist_ok=True)
        answer = response.to_dict()
        data = {"key": key, "identity": identity, "response": answer,
                "response_sha256": self.digest(answer)}
        # a crash mid-write leaves no half answer behind; the file follows the umask; an
        # unreadable entry (a link, a FIFO) is replaced itself, a link's target untouched
        atomic_write(path, json.dumps(data, ensure_ascii=False), follow_symlinks=False)
