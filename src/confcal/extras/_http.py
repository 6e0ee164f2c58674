"""The one HTTP transport of every model client: safe by default, on the standard library.

Every HTTP provider (OpenAI-compatible chat completions, Anthropic Messages) posts JSON
through :class:`Transport`, so one set of rules holds everywhere:

* **No redirect is followed.** :mod:`http.client` follows none by itself; a 3xx answer to
  a POST is a :class:`~confcal.exceptions.ModelHTTPError` naming the status and the
  *origin* of the redirect target (scheme, host, port: never its path, query or
  credentials). Credentials therefore only ever reach the origin they were configured for.
* **TLS is always verified** (:func:`ssl.create_default_context`: certificate chain and
  host name); there is no option to turn it off. An HTTPS endpoint behind ``HTTPS_PROXY``
  is reached through a CONNECT tunnel, so the proxy sees the host name and nothing else.
  Plain-HTTP endpoints (local servers) are connected to directly.
* **A deadline per request**: ``timeout`` bounds each attempt as a whole, connect to the
  last byte of the answer, not only each read of the socket (a server sending a byte at a
  time, or ``100 Continue`` lines for ever, is cut off at it); malformed HTTP (a negative
  chunk size) is a failed attempt, retried like a dropped connection.
* **Bounded retries**: a status in :data:`RETRY_STATUSES` (408, 409, 429 and every 5xx,
  the set both official OpenAI and Anthropic SDKs retry), a timeout or a dropped
  connection is retried up to ``max_retries`` times. The wait is the server's
  ``Retry-After`` (delay-seconds or an HTTP-date) when it gives one, else
  ``backoff * 2**(attempt - 1)`` seconds plus up to ``jitter`` of it, at most ``max_wait``;
  a ``Retry-After`` beyond ``max_wait`` fails at once rather than stalling a run.
* **Bounded reads**: at most ``max_response_bytes`` of a 2xx body are read (64 KiB of an
  error body); a larger answer is a :class:`~confcal.exceptions.ModelResponseError`.
* **Safe decoding**: a body that is not UTF-8 JSON, JSON nested beyond the interpreter's
  recursion limit, ``NaN``/``Infinity``, a lone surrogate escape (``"\\ud800"``: valid
  JSON, but no text a file can hold), or a number no float can hold is a
  :class:`~confcal.exceptions.ModelResponseError`, never a ``RecursionError`` or an
  ``OverflowError``.
* **Secrets stay secret**: every text that reaches a message or a log record goes through
  :func:`redact` first, which removes each secret, and any run of 8 or more of its
  consecutive characters, whether written plainly, JSON-escaped (``\\u0073``, ``\\/``),
  percent-encoded, as HTML character references (up to two levels deep), inside base64
  text, as hex (16 or more digits, either case), with white space or invisible format
  characters between its characters, or in fullwidth or other compatibility forms; an
  ``HTTPS_PROXY``'s ``user:password`` and password are secrets too. A 2xx body that
  echoes a secret is refused (it would otherwise reach the cache, a report or a CSV).
  Redaction happens before any truncation. Connections never print (whatever
  ``http.client.HTTPConnection.debuglevel`` says).

The standard library is used on purpose: :mod:`http.client` follows no redirect and keeps
no cookies or connection pools of its own, so every rule above is this module's, visible
in one place, and the extra installs nothing for HTTP.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import logging
import math
import random
import re
import socket
import ssl
import threading
import time
import unicodedata
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timezone
from typing import Any

from .._validation import is_real
from ..exceptions import (
    ModelCallError,
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ValidationError,
)

__all__ = [
    "MAX_RESPONSE_BYTES",
    "RETRY_STATUSES",
    "Reply",
    "Transport",
    "check_base_url",
    "check_headers",
    "check_options",
    "display_url",
    "finite_number",
    "fold",
    "has_lone_surrogate",
    "holds_secret",
    "logger",
    "read_key",
    "readings",
    "redact",
    "refused_sampling",
    "sampling_refusal",
    "retry_after",
    "usage_counts",
    "user_agent",
]

logger = logging.getLogger("confcal.extras")
"""The one logger of every model client (retries are logged at WARNING, redacted)."""

RETRY_STATUSES: frozenset[int] = frozenset({408, 409, 429, *range(500, 600)})
"""HTTP statuses retried: request timeout, conflict, rate limit and every server error."""

MAX_RESPONSE_BYTES = 32 * 2**20
"""The default cap on a 2xx body (32 MiB: a logprob answer of 8192 tokens is ~3 MiB)."""

_ERROR_BODY_BYTES = 64 * 1024  # of an error body, only quoted: no need for more
_EXCERPT = 300  # characters of a server's text quoted in a message
_WHOLE = "the whole request, connect to last byte"
_MIN_RUN = 8  # a run of this many consecutive characters of a secret is redacted
_REDACTED = "[redacted]"
_sleep: Callable[[float], None] = time.sleep  # tests record the waits instead
_JITTER = random.Random()  # spreads retries out; never touches the global random state


# ---------------------------------------------------------------------------------------
# redaction
# ---------------------------------------------------------------------------------------
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\[\"\\/bfnrt]|%[0-9a-fA-F]{2}"
                     r"|&#[0-9]{1,7};|&#[xX][0-9a-fA-F]{1,6};")
# JSON's own escapes: a secret holding '"' or '\\' is always written with them in JSON,
# and a literal "%41" or "&#65;" of the secret must then not be decoded in the same pass
_JSON_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\[\"\\/bfnrt]")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
           "t": "\t"}


# what a reader skips between the characters of a secret: white space and the invisible
# format characters (Unicode category Cf: zero-width space and joiners, soft hyphen,
# direction marks, word joiner, byte-order mark, tags); tests check that this class holds
# every Cf character of the interpreter's Unicode database
_INVISIBLE = re.compile(
    "[\\s\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]")
_UNPLAIN = re.compile(r"[^\x21-\x7e]")  # the characters folding may change


def _unescape(token: str) -> str:
    if token[0] == "\\":
        return chr(int(token[2:], 16)) if token[1] == "u" else _SIMPLE[token[1]]
    if token[0] == "%":
        return chr(int(token[1:], 16))
    body = token[2:-1]
    code = int(body[1:], 16) if body[0] in "xX" else int(body)
    return chr(code) if code <= 0x10FFFF else token


def _fold_char(char: str) -> str:
    """What ``char`` reads as: nothing when invisible, else its compatibility form.

    NFKD makes a fullwidth ``ｓ`` (or a mathematical ``𝐬``) the ``s`` it stands for;
    texts equal under NFKC are equal under NFKD.
    """
    if _INVISIBLE.match(char):
        return ""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKD", char))


def fold(text: str) -> str:
    """``text`` as a reader sees it: without white space or invisible format characters,
    each character in its compatibility form (a fullwidth letter as the letter).

    Examples
    --------
    >>> fold("s k-\u200blive \uff53\uff4b")
    'sk-livesk'
    """
    text = "".join(text.split())  # str.split's white space is \\s's: str.isspace
    if text.isascii():  # no format character, and NFKD changes nothing
        return text
    return _INVISIBLE.sub("", unicodedata.normalize("NFKD", _INVISIBLE.sub("", text)))


Span = tuple[str, list[int], list[int]]  # a view of a text: per character, its source span


def _decode(text: str, pattern: re.Pattern[str] = _ESCAPE,
            replace: Callable[[str], str] = _unescape) -> Span:
    """``text`` with each match of ``pattern`` replaced (one level of escapes decoded, by
    default); per resulting character, the span of ``text`` it came from."""
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for m in pattern.finditer(text):
        pieces.append(text[pos:m.start()])
        starts.extend(range(pos, m.start()))
        ends.extend(range(pos + 1, m.start() + 1))
        decoded = replace(m.group())
        pieces.append(decoded)
        starts.extend([m.start()] * len(decoded))
        ends.extend([m.end()] * len(decoded))
        pos = m.end()
    pieces.append(text[pos:])
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    return "".join(pieces), starts, ends


def _then(outer: Span, inner: Span) -> Span:
    """``inner`` (a view of ``outer``'s text) with its spans mapped back to the source."""
    _, s, e = outer
    text, s_, e_ = inner
    return text, [s[i] for i in s_], [e[i - 1] for i in e_]


def _views(text: str) -> tuple[list[Span], list[Span]]:
    """The readings of ``text`` a secret is looked for in, mapped back to ``text``.

    Decoded: the text itself, and one and two levels of escapes decoded (all kinds, or
    JSON's first, then all: a literal ``%41`` of a secret beside JSON's ``\\"`` is not
    decoded in the same pass). Folded: each of these read by :func:`fold` (white space
    and invisible characters skipped, fullwidth letters read as letters).
    """
    plain: Span = (text, list(range(len(text))), list(range(1, len(text) + 1)))
    once = _decode(text)
    json_once = _decode(text, _JSON_ESCAPE)
    decoded = list({view[0]: view for view in (
        plain, once, _then(once, _decode(once[0])), json_once,
        _then(json_once, _decode(json_once[0])))}.values())
    folded: dict[str, Span] = {}
    for view in decoded:
        read = _then(view, _decode(view[0], _UNPLAIN, _fold_char))
        folded.setdefault(read[0], read)
    return decoded, list(folded.values())


def _grams(secret: str, run: int = _MIN_RUN) -> set[str]:
    n = min(run, len(secret))
    return {secret[i:i + n] for i in range(len(secret) - n + 1)}


def _runs(text: str, secret: str, run: int = _MIN_RUN) -> list[tuple[int, int]]:
    """The [start, end) runs of ``text`` made of windows of ``run`` characters (all of a
    shorter secret) that occur in ``secret``."""
    grams = _grams(secret, run)
    if not any(g in text for g in grams):
        return []
    n = min(run, len(secret))
    runs: list[tuple[int, int]] = []
    for i in range(len(text) - n + 1):
        if text[i:i + n] in grams:
            if runs and i <= runs[-1][1]:
                runs[-1] = (runs[-1][0], i + n)
            else:
                runs.append((i, i + n))
    return runs


def _base64_forms(secret: str) -> set[str]:
    """The secret as it appears inside base64 text (``Basic`` auth, a proxy's header dump).

    Inside a longer base64 text the secret starts at any of three byte alignments; for
    each, the characters that encode whole 3-byte groups of it are the same whatever
    surrounds it (standard and URL-safe alphabets). Fewer than 6 bytes (8 characters)
    would match noise, so a shorter secret has no base64 form.
    """
    raw = secret.encode("utf-8", "surrogatepass")
    forms = set()
    for skip in range(3):
        chunk = raw[skip:]
        chunk = chunk[:len(chunk) - len(chunk) % 3]
        if len(chunk) >= 6:
            text = base64.b64encode(chunk).decode("ascii")
            forms |= {text, text.replace("+", "-").replace("/", "_")}
    return forms


def _forms(secrets: Iterable[str | None]) -> list[tuple[str, int]]:
    """Every written form of the secrets, each with the run of it that is redacted.

    The secret itself, and folded (:func:`fold`: a secret holding a space is looked for
    in folded text without it); inside base64 text; and as hex, lower and upper case,
    where a run is 16 digits (8 bytes of the secret, as 8 characters are for the rest;
    fewer would match plain numbers: the hex of a digit is two digits).
    """
    given = {s for s in secrets if s}
    forms = {s: _MIN_RUN for s in given}
    for secret in given:
        folded = fold(secret)
        if folded:
            forms.setdefault(folded, _MIN_RUN)
        for form in _base64_forms(secret):
            forms.setdefault(form, _MIN_RUN)
        raw = secret.encode("utf-8", "surrogatepass").hex()
        if len(raw) >= 2 * _MIN_RUN:
            forms.setdefault(raw, 2 * _MIN_RUN)
            forms.setdefault(raw.upper(), 2 * _MIN_RUN)
    return sorted(forms.items(), key=lambda item: len(item[0]), reverse=True)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret, and every run of 8+ of its characters, replaced.

    The one redaction of the package: every message, log record and failure record that
    may quote a server goes through it. A secret is found written plainly or with one or
    two levels of JSON escapes (``\\uXXXX``, ``\\/``), percent-encoding or HTML character
    references, in any mixture; inside base64 text; as hex (16+ digits, either case);
    with white space or invisible format characters (zero-width space, soft hyphen, ...)
    between its characters; and in compatibility forms such as fullwidth letters
    (equal under NFKC). The replaced span is the written form, so nothing of it survives.

    Examples
    --------
    >>> key = "sk-live-0123456789abcdef"
    >>> redact('{"error": "bad key sk-live-0123456789abcdef"}', [key])
    '{"error": "bad key [redacted]"}'
    >>> redact('key \\\\u0073k-live-0123456789\\\\/ ...', [key])
    'key [redacted]\\\\/ ...'
    >>> redact("first 12: sk-live-0123", [key])
    'first 12: [redacted]'
    >>> redact("hex 736b2d6c6976652d30313233 and s k - l i v e - 0 1", [key])
    'hex [redacted] and [redacted]'
    >>> redact("wide \uff53\uff4b\uff0d\uff4c\uff49\uff56\uff45\uff0d!", [key])
    'wide [redacted]!'
    """
    keys = _forms(secrets)
    if not keys or not text or not _holds(readings(text), keys):
        return text
    decoded, folded = _views(text)
    spans: list[tuple[int, int]] = []
    for secret, run in keys:
        # a form that folding leaves as it is, found in a decoded reading, is found in
        # its folded one too (at the same place): the folded readings suffice for it
        for view, starts, ends in folded if fold(secret) == secret else decoded + folded:
            spans.extend((starts[a], ends[b - 1]) for a, b in _runs(view, secret, run))
    if not spans:
        return text
    spans.sort()
    merged = [spans[0]]
    for a, b in spans[1:]:
        if a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    out, pos = [], 0
    for a, b in merged:
        out.append(text[pos:a])
        out.append(_REDACTED)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def readings(text: str) -> tuple[list[str], list[str]]:
    """The decoded and the folded readings of ``text`` :func:`redact` looks in, without
    their source spans (whole-text operations: fast on a 32 MiB body)."""
    def level(s: str, pattern: re.Pattern[str] = _ESCAPE) -> str:
        return pattern.sub(lambda m: _unescape(m.group()), s)
    once, json_once = level(text), level(text, _JSON_ESCAPE)
    decoded = list(dict.fromkeys((text, once, level(once), json_once, level(json_once))))
    return decoded, list(dict.fromkeys(map(fold, decoded)))


def _holds(views: tuple[list[str], list[str]], keys: list[tuple[str, int]]) -> bool:
    decoded, folded = views
    for secret, run in keys:
        forms = folded if fold(secret) == secret else decoded + folded  # as in redact
        # every run of n characters of the secret holds one of its blocks of n // 2 taken
        # at multiples of n // 2: no block anywhere, no run (4x fewer scans of the text)
        n = min(run, len(secret))
        b = max(1, n // 2)
        blocks = {secret[j:j + b] for j in range(0, len(secret) - b + 1, b)}
        if any(block in form for block in blocks for form in forms) and any(
                g in form for g in _grams(secret, run) for form in forms):
            return True
    return False


def holds_secret(text: str, secrets: Iterable[str | None]) -> bool:
    """Whether ``text`` holds a secret in any form :func:`redact` removes (fast path).

    Examples
    --------
    >>> holds_secret("echo: 73 6B 2D 6C 69 76 65 2D 30 31 32 33", ["sk-live-0123456789"])
    True
    >>> holds_secret('{"text": "the total is 100.00"}', ["sk-live-0123456789"])
    False
    """
    keys = _forms(secrets)
    return bool(keys and text) and _holds(readings(text), keys)


def _excerpt(text: str, secrets: list[str]) -> str:
    """The server's message (``error.message`` of a JSON error) or the text, redacted, cut."""
    text = redact(text.strip(), secrets)
    try:
        message = json.loads(text)["error"]
        message = message["message"] if isinstance(message, Mapping) else message
        if isinstance(message, str) and message.strip():
            text = redact(message.strip(), secrets)
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        pass
    return text if len(text) <= _EXCERPT else text[:_EXCERPT - 3] + "..."


# ---------------------------------------------------------------------------------------
# URLs, keys, options
# ---------------------------------------------------------------------------------------
def display_url(parts: urllib.parse.SplitResult) -> str:
    """scheme://host[:port]/path: what a message may show of a URL (no query, no userinfo)."""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path}"


def check_base_url(base_url: Any, name: str = "base_url") -> urllib.parse.SplitResult:
    """The parsed ``base_url``; refused when it is not http(s) or carries credentials.

    A ``user:password@`` or a query string (``?api-key=...``) would travel in every URL
    and log line: both are refused with a message that does not quote them. Keys come from
    the environment (``api_key_env``) and travel in a header.

    Examples
    --------
    >>> check_base_url("https://user:hunter2@api.example/v1")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: base_url must not hold credentials: found a user name or \
password before the host of 'https://api.example/v1'; name the environment variable that holds \
the key in api_key_env instead
    """
    if not isinstance(base_url, str):
        raise ValidationError(f"{name} must be an http:// or https:// URL such as "
                              f"'https://api.openai.com/v1'; found {type(base_url).__name__}")
    odd = next(((i, c) for i, c in enumerate(base_url.strip())
                if not 0x20 < ord(c) < 0x7F), None)
    if odd is not None:
        # http.client cannot send it (a line break would even inject a header); the URL
        # itself is not quoted, it may hold a credential
        raise ValidationError(f"{name} must be an ASCII URL without spaces or control "
                              f"characters (percent-encode a path, write a host name in "
                              f"punycode); found {odd[1]!r} at character {odd[0]}")
    parts = urllib.parse.urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = display_url(parts) if "@" in parts.netloc or parts.query else base_url
        raise ValidationError(f"{name} must be an http:// or https:// URL such as "
                              f"'https://api.openai.com/v1'; found {shown!r}")
    shown = display_url(parts)
    if "@" in parts.netloc:
        raise ValidationError(f"{name} must not hold credentials: found a user name or "
                              f"password before the host of {shown!r}; name the environment "
                              "variable that holds the key in api_key_env instead")
    if parts.query or parts.fragment or base_url.rstrip().endswith(("?", "#")):
        names = sorted({k for k, _ in urllib.parse.parse_qsl(parts.query,
                                                             keep_blank_values=True)})
        raise ValidationError(f"{name} must not have a query string or fragment (a key there "
                              f"would travel in every URL and log line); found {shown!r} "
                              f"with the parameters {names}; put the key in the "
                              "environment variable named by api_key_env")
    try:
        parts.port
    except ValueError:
        raise ValidationError(f"{name} must have a numeric port; found a port that is not "
                              f"a number after the host {parts.hostname!r}") from None
    return parts


def read_key(env: str, *, provider: str, optional_hint: bool) -> str:
    """The key in the environment variable ``env``; a clear error when unset or unusable."""
    import os

    key = os.environ.get(env, "").strip()
    if not key:
        hint = (" (set it, or pass api_key_env=None for an endpoint that needs no key)"
                if optional_hint else "")
        raise ModelCallError(f"the environment variable {env} must hold the {provider} API "
                             f"key; found it unset or empty{hint}", attempts=0)
    if any(ord(c) < 0x21 or ord(c) > 0x7E for c in key):
        raise ModelCallError(f"the environment variable {env} must hold an API key of "
                             "printable ASCII characters without spaces; found other "
                             "characters (a line break or a control character?)", attempts=0)
    return key


def check_options(*, timeout: Any, max_retries: Any, backoff: Any, max_wait: Any,
                  max_response_bytes: Any) -> None:
    """The shared client options; the one wording of their errors."""
    for name, value, strict in (("timeout", timeout, True), ("backoff", backoff, False),
                                ("max_wait", max_wait, False)):
        if not is_real(value) or (value <= 0 if strict else value < 0):
            raise ValidationError(f"{name} must be a finite number of seconds "
                                  f"{'>' if strict else '>='} 0; found {value!r}")
    for name, value, low in (("max_retries", max_retries, 0),
                             ("max_response_bytes", max_response_bytes, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValidationError(f"{name} must be an integer >= {low}; found {value!r}")


def usage_counts(usage: Any) -> dict[str, int]:
    """The integer token counts of a ``usage`` object (others, nested ones, are left out)."""
    if not isinstance(usage, Mapping):
        return {}
    return {str(k): v for k, v in usage.items()
            if isinstance(v, int) and not isinstance(v, bool)}


def check_headers(headers: Any) -> dict[str, str]:
    """Extra request headers: str names and values without line breaks (never quoted)."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise ValidationError(f"headers must be a mapping of str to str; found "
                              f"{type(headers).__name__}")
    out = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not name.strip() or any(c in name for c in ":\r\n"):
            raise ValidationError(f"headers names must be non-empty strings without ':' or "
                                  f"line breaks; found {name!r}")
        if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
            # the value is not shown: a header may carry a credential
            raise ValidationError(f"headers[{name!r}] must be a string without line breaks")
        out[name] = value
    return out


_UNSET_HINT = ("leave it unset ({name}=None, the ChatRequest default; drop it from the "
               "caller's sampling=) so that the server decides")


def sampling_refusal(where: str, name: str, value: Any, why: str, *,
                     other: str = "") -> ModelCallError:
    """A request refused before it is sent: ``why`` a set sampling parameter cannot go.

    The message names the parameter, its value and how to unset it (``other`` adds a
    second way, such as an older API version that still takes it). ``attempts`` is 0:
    nothing was sent.

    Examples
    --------
    >>> print(sampling_refusal("Bedrock converse m", "top_k", 40,
    ...                        "Converse's inferenceConfig has no top_k"))
    Bedrock converse m refused top_k=40 before sending it: Converse's inferenceConfig has no \
top_k; leave it unset (top_k=None, the ChatRequest default; drop it from the caller's \
sampling=) so that the server decides
    """
    hint = _UNSET_HINT.format(name=name) + (f", or {other}" if other else "")
    return ModelCallError(f"{where} refused {name}={value!r} before sending it: {why}; {hint}",
                          attempts=0)


def refused_sampling(exc: ModelHTTPError, sent: Mapping[str, tuple[str, Any]]
                     ) -> ModelHTTPError:
    """``exc`` with a hint when the server's 400/422 names a sampling parameter it was sent.

    ``sent`` maps each sampling parameter's name on the wire (``"temperature"``,
    ``"topP"``) to its :class:`~confcal._chat.ChatRequest` name and value; a message
    naming either spelling counts. A server that refuses one ("`temperature` is
    deprecated for this model", "temperature: Extra inputs are not permitted",
    "Unsupported value: 'temperature' ...") names it in its message;
    the error is then re-raised saying which parameter the request set and how to unset
    it. Any other error is returned unchanged.

    Examples
    --------
    >>> exc = ModelHTTPError("POST https://api.example/v1/messages answered HTTP 400: "
    ...                      "`temperature` is deprecated for this model.", status=400)
    >>> print(refused_sampling(exc, {"temperature": ("temperature", 0.0)}))
    POST https://api.example/v1/messages answered HTTP 400: `temperature` is deprecated for \
this model.; the server refused temperature=0.0, which the request set: leave it unset \
(temperature=None, the ChatRequest default; drop it from the caller's sampling=) so that \
the server decides
    """
    if exc.status not in (400, 422):
        return exc
    text = str(exc)
    for wire, (name, value) in sent.items():
        spelled = "|".join(re.escape(w) for w in dict.fromkeys((wire, name)))
        if re.search(rf"(?<![A-Za-z0-9_])(?:{spelled})(?![A-Za-z0-9_])", text):
            return ModelHTTPError(
                f"{text}; the server refused {name}={value!r}, which the request set: "
                f"{_UNSET_HINT.format(name=name)}", status=exc.status,
                attempts=exc.attempts, retryable=exc.retryable)
    return exc


def user_agent() -> str:
    from .._version import __version__

    return f"confcal/{__version__}"


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP-date.

    None when absent or unreadable (the client's own backoff applies); a date in the past
    is 0.

    Examples
    --------
    >>> retry_after("3"), retry_after("0.5"), retry_after(None), retry_after("soon")
    (3.0, 0.5, None, None)
    >>> retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
    10.0
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT
            when = when.replace(tzinfo=timezone.utc)
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def finite_number(value: Any, where: str) -> float:
    """``value`` as a finite float; a :class:`ModelResponseError` naming ``where`` otherwise.

    JSON holds integers of any length and exponents beyond a float's range: a 400-digit
    log-probability would overflow, ``1e400`` reads as infinity. Both are refused here.

    Examples
    --------
    >>> finite_number(-0.25, "logprob")
    -0.25
    >>> finite_number(-10 ** 400, "choices[0].logprobs.content[3].logprob")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ModelResponseError: choices[0].logprobs.content[3].logprob must be a \
finite number; found an integer of 401 digits, beyond a float's range
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelResponseError(f"{where} must be a number; found "
                                 f"{type(value).__name__}", status=200)
    try:
        number = float(value)
    except OverflowError:
        raise ModelResponseError(f"{where} must be a finite number; found an integer of "
                                 f"{len(str(abs(value)))} digits, beyond a "
                                 "float's range", status=200) from None
    if not math.isfinite(number):
        raise ModelResponseError(f"{where} must be a finite number; found {number!r}",
                                 status=200)
    return number


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # json decodes valid pairs to one char
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(value: Any) -> bool:
    """Whether a decoded JSON value holds a lone surrogate in a string or a key.

    Examples
    --------
    >>> import json
    >>> has_lone_surrogate(json.loads('{"a": ["\\\\ud800"]}'))
    True
    >>> has_lone_surrogate(json.loads('{"a": "\\\\ud83d\\\\ude00"}'))  # a pair: one character
    False
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# ---------------------------------------------------------------------------------------
# the transport
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    """A decoded 2xx answer: the JSON object, where it came from, and how many requests."""

    data: dict[str, Any]
    where: str
    attempts: int

    def error(self, message: str) -> ModelResponseError:
        """A :class:`ModelResponseError` about this reply (the body was read, not usable)."""
        return ModelResponseError(f"{self.where} answered 200 {message}", status=200,
                                  attempts=self.attempts)


def _proxy_pair(proxy: urllib.parse.SplitResult) -> str | None:
    """``user:password`` of a proxy URL (sent as Basic ``Proxy-Authorization``), or None."""
    if proxy.username is None:
        return None
    return (f"{urllib.parse.unquote(proxy.username)}:"
            f"{urllib.parse.unquote(proxy.password or '')}")


class _Retry(Exception):
    def __init__(self, problem: str, status: int | None, wait: float | None) -> None:
        super().__init__(problem)
        self.problem, self.status, self.wait = problem, status, wait


class _CutShort(http.client.HTTPException):
    """The body ended before the length the answer declared: a transport failure."""

    def __init__(self, got: int, declared: int | None) -> None:
        super().__init__(f"body cut short after {got:,} of {declared:,} bytes"
                         if declared is not None else
                         f"body cut short after {got:,} bytes of a chunked body (the "
                         "connection closed before its last chunk)")


_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_MAX_LINE = 65536  # the longest header or chunk-size line, as http.client reads them


class _Response(http.client.HTTPResponse):
    """An answer whose chunk sizes are read strictly.

    :mod:`http.client` reads a chunk size with ``int(line, 16)``, which takes ``-5``
    (and then reads to the end of the connection, whatever its length), ``0x5`` or
    ``5_0``; here a size is 1 to 16 hex digits, anything else is malformed HTTP, and a
    connection closed where a size was due is a body cut short.
    """

    def _read_next_chunk_size(self) -> int:
        line = self.fp.readline(_MAX_LINE + 1) if self.fp is not None else b""
        if len(line) > _MAX_LINE:
            raise http.client.LineTooLong("chunk size")
        if not line:
            raise http.client.IncompleteRead(b"")
        size = line.split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(size):  # the connection is closed by the caller
            raise http.client.HTTPException(f"malformed HTTP (chunk size {size[:20]!r})")
        return int(size, 16)


class Transport:
    """POST JSON to one origin, with the rules of the module docstring.

    Parameters
    ----------
    base_url : str
        Checked by :func:`check_base_url`.
    timeout, max_retries, backoff, max_wait, max_response_bytes
        As the clients document them (:func:`check_options`).
    jitter : float, default 0.1
        The most random extra wait, as a fraction of the backoff.
    sleep : callable, optional
        How to wait; the module's ``time.sleep`` when None.

    Examples
    --------
    >>> Transport("http://127.0.0.1:8000/v1", timeout=30, max_retries=2, backoff=1.0,
    ...           max_wait=60, max_response_bytes=2**20).url("/chat/completions")
    'http://127.0.0.1:8000/v1/chat/completions'
    """

    def __init__(self, base_url: str, *, timeout: float, max_retries: int, backoff: float,
                 max_wait: float, max_response_bytes: int, jitter: float = 0.1,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.parts = check_base_url(base_url)
        check_options(timeout=timeout, max_retries=max_retries, backoff=backoff,
                      max_wait=max_wait, max_response_bytes=max_response_bytes)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self.max_response_bytes = max_response_bytes
        self.jitter = float(jitter)
        self.sleep = sleep
        self.base_path = self.parts.path.rstrip("/")

    def url(self, path: str) -> str:
        """The displayable URL of ``path`` under the base URL."""
        return display_url(self.parts._replace(path=self.base_path + path))

    def _connection(self) -> http.client.HTTPConnection:
        host = self.parts.hostname or ""
        port = self.parts.port
        if self.parts.scheme == "http":
            return http.client.HTTPConnection(host, port, timeout=self.timeout)
        # certificate chain and host name verified; there is no switch to turn it off
        context = ssl.create_default_context()
        p = self._proxy()
        if p is not None:
            headers = {}
            pair = _proxy_pair(p)
            if pair is not None:
                headers["Proxy-Authorization"] = "Basic " + base64.b64encode(
                    pair.encode()).decode("ascii")
            conn = http.client.HTTPSConnection(p.hostname or "", p.port or 8080,
                                               timeout=self.timeout, context=context)
            conn.set_tunnel(host, port or 443, headers=headers)  # TLS runs end to end
            return conn
        return http.client.HTTPSConnection(host, port, timeout=self.timeout, context=context)

    def _proxy(self) -> urllib.parse.SplitResult | None:
        """The ``HTTPS_PROXY`` an https endpoint is tunnelled through, or None."""
        if self.parts.scheme != "https":
            return None
        proxy = urllib.request.getproxies().get("https")
        if not proxy or urllib.request.proxy_bypass(self.parts.hostname or ""):
            return None
        return urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")

    def _quiet(self) -> http.client.HTTPConnection:
        """A connection that prints nothing, whatever ``HTTPConnection.debuglevel`` says.

        ``http.client.HTTPConnection.debuglevel = 1`` (a common way to debug HTTP) makes
        every connection print the request it sends, the key's header included, and the
        answer's headers: this transport's connections never do.
        """
        conn = self._connection()
        conn.set_debuglevel(0)
        conn.response_class = _Response
        return conn

    def _once(self, path: str, body: bytes, headers: Mapping[str, str]
              ) -> tuple[int, Any, bytes, bool]:
        """(status, headers, body, too_large) of one request, within ``timeout`` as a
        whole: a socket timeout bounds each read only, so a server sending a byte at a
        time, or ``100 Continue`` lines for ever, would hold the call without end. A
        timer shuts the socket down at the deadline; what the read then raises becomes a
        TimeoutError."""
        conn = self._quiet()
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:  # already closed
                    pass

        timer = threading.Timer(self.timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            conn.connect()
            if expired.is_set():  # the deadline passed while connecting
                raise TimeoutError(_WHOLE)
            answer = self._exchange(conn, path, body, headers)
            if expired.is_set():  # a read cut short by the shutdown returns what it had
                raise TimeoutError(_WHOLE)
            return answer
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if expired.is_set():
                raise TimeoutError(_WHOLE) from None
            if not isinstance(exc, OSError | http.client.HTTPException):
                # http.client on a malformed chunk size (a certificate error is a
                # ValueError too, and an OSError: kept as it is)
                raise http.client.HTTPException(f"malformed HTTP ({exc})") from None
            raise
        finally:
            timer.cancel()
            conn.close()

    def _exchange(self, conn: http.client.HTTPConnection, path: str, body: bytes,
                  headers: Mapping[str, str]) -> tuple[int, Any, bytes, bool]:
        """The request on an open connection, and its answer read up to the limit."""
        conn.request("POST", self.base_path + path, body=body, headers=dict(headers))
        response = conn.getresponse()
        ok = 200 <= response.status < 300
        limit = self.max_response_bytes if ok else _ERROR_BODY_BYTES
        declared = response.length  # Content-Length as http.client read it, or None
        if ok and declared is not None and declared > limit:
            return response.status, response.msg, b"", True
        try:
            data = response.read(limit + 1)
        except http.client.IncompleteRead as exc:  # a chunk, or the last one, never came
            inner = exc.__cause__  # the chunk being read, when the cut came inside one
            got = len(exc.partial) + (len(inner.partial)
                                      if isinstance(inner, http.client.IncompleteRead) else 0)
            raise _CutShort(got, None) from None
        if declared is not None and len(data) < min(declared, limit + 1):
            # http.client returns what came before the connection closed, short or not
            raise _CutShort(len(data), declared)
        if len(data) > limit:
            if ok:
                return response.status, response.msg, b"", True
            data = data[:limit]
        return response.status, response.msg, data, False

    def post(self, path: str, payload: Mapping[str, Any], *, headers: Mapping[str, str],
             secrets: Iterable[str | None] = (), auth_hint: str = "") -> Reply:
        """POST ``payload`` as JSON; the decoded 2xx object, or a ModelCallError.

        ``secrets`` are redacted from every message and log record, and a 2xx body that
        holds one is refused; ``auth_hint`` is appended to a 401/403 message.
        """
        proxy = self._proxy()
        pair = None if proxy is None else _proxy_pair(proxy)
        # a proxy's credentials are secrets too: a proxy's 407 may quote its header back
        keys = [s for s in (*secrets, *(() if pair is None
                                        else (pair, pair.partition(":")[2]))) if s]
        where = f"POST {self.url(path)}"
        body = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._attempt(path, body, headers, keys, where, attempts, auth_hint)
            except _Retry as retry:
                if attempts > self.max_retries:
                    raise (ModelConnectionError if retry.status is None else ModelHTTPError)(
                        f"{where} failed after {attempts} attempts (max_retries="
                        f"{self.max_retries}); last: {retry.problem}", status=retry.status,
                        attempts=attempts, retryable=True) from None
                wait = retry.wait
                if wait is None:  # capped after the jitter: never more than max_wait
                    wait = self.backoff * 2.0 ** min(attempts - 1, 60)
                    wait += _JITTER.uniform(0.0, self.jitter * wait) if self.jitter else 0.0
                    wait = min(self.max_wait, wait)
                logger.warning("%s: %s; retry %d of %d in %.2fs", where, retry.problem,
                               attempts, self.max_retries, wait)
                (_sleep if self.sleep is None else self.sleep)(wait)

    def _send(self, path: str, body: bytes, headers: Mapping[str, str], keys: list[str],
              where: str, attempts: int) -> tuple[int, Any, bytes, bool]:
        """One request's answer; a failure to get it is a _Retry (or, for a certificate
        that was not verified, a ModelConnectionError: it does not heal)."""
        try:
            return self._once(path, body, headers)
        except ssl.SSLCertVerificationError as exc:  # not transient: never retried
            raise ModelConnectionError(
                f"{where} failed: the server's TLS certificate was not verified "
                f"({redact(exc.verify_message or str(exc), keys)}); certificates are always "
                "verified", attempts=attempts) from None
        except TimeoutError as exc:  # socket.timeout is TimeoutError
            raise _Retry(f"no answer within timeout={self.timeout:g}s "
                         f"({redact(str(exc), keys) or 'timed out'})", None, None) from None
        except _CutShort as exc:  # the connection closed inside the body
            raise _Retry(str(exc), None, None) from None
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, DNS, TLS
            raise _Retry(f"connection failed ({type(exc).__name__}: "
                         f"{redact(str(exc), keys)})", None, None) from None

    def _attempt(self, path: str, body: bytes, headers: Mapping[str, str], keys: list[str],
                 where: str, attempts: int, auth_hint: str) -> Reply:
        status, response_headers, data, too_large = self._send(path, body, headers, keys,
                                                               where, attempts)
        if 200 <= status < 300:
            if too_large:
                raise ModelResponseError(
                    f"{where} answered {status} with a body larger than max_response_bytes="
                    f"{self.max_response_bytes}; not read", status=status, attempts=attempts)
            return self._decode(data, status, keys, where, attempts)
        text = data.decode("utf-8", "replace")
        if 300 <= status < 400:
            target = response_headers.get("Location")
            origin = "an unknown address"
            if target:
                t = urllib.parse.urlsplit(urllib.parse.urljoin(self.url(path), target.strip()))
                try:
                    port = f":{t.port}" if t.port else ""
                except ValueError:
                    port = ""
                # the host name comes back lowercased: so is the secret looked for in it
                origin = redact(f"{t.scheme}://{t.hostname or ''}{port}",
                                [*keys, *(k.lower() for k in keys)])
            raise ModelHTTPError(
                f"{where} answered HTTP {status}, a redirect to {origin}; redirects are never "
                "followed for a POST (the credential would go with it): set base_url to the "
                "address that answers", status=status, attempts=attempts)
        problem = f"HTTP {status}" + (f": {_excerpt(text, keys)}" if text.strip() else "")
        if status in (401, 403) and auth_hint:
            problem += f" ({auth_hint})"
        if status not in RETRY_STATUSES:
            raise ModelHTTPError(f"{where} answered {problem}", status=status,
                                 attempts=attempts)
        wait = retry_after(response_headers.get("Retry-After"))
        if wait is not None and wait > self.max_wait:
            raise ModelHTTPError(
                f"{where} answered {problem}; the server asks to retry after {wait:.0f}s, "
                f"more than max_wait={self.max_wait:g}s", status=status, attempts=attempts,
                retryable=True)
        raise _Retry(problem, status, wait)

    def _decode(self, data: bytes, status: int, keys: list[str], where: str,
                attempts: int) -> Reply:
        def refuse(message: str) -> ModelResponseError:
            return ModelResponseError(f"{where} answered {status} {message}", status=status,
                                      attempts=attempts)

        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise refuse(f"with a body that is not UTF-8 ({exc.reason} at byte "
                         f"{exc.start})") from None
        if holds_secret(text, keys):
            raise refuse("with a body that echoes the credential sent with the request; "
                         "refused, so that it reaches no cache, log or report")
        try:
            value = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise refuse("with JSON nested too deeply to read (beyond the interpreter's "
                         "recursion limit)") from None
        except ValueError as exc:
            raise refuse(f"with a body that is not JSON ({str(exc)[:120]}); it starts "
                         f"{_excerpt(text[:2 * _EXCERPT], keys)[:200]!r}") from None
        if not isinstance(value, dict):
            raise refuse(f"with JSON that is not an object (a {type(value).__name__})")
        if _SURROGATE_ESCAPE.search(text) and has_lone_surrogate(value):
            # "\ud800" alone is valid JSON but no text: no file, cache or CSV could hold it
            raise refuse("with a string holding a lone surrogate escape (half of a UTF-16 "
                         "pair): not valid Unicode text")
        return Reply(value, where, attempts)
