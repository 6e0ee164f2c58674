"""Reading OpenAI chat-completions answers: the reply text, token log-probabilities, usage.

Kept apart from :class:`confcal.extras.clients.OpenAICompatibleClient`, which reads every
answer with it, so that the reading can be tested on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._chat import ChatResponse
from ..exceptions import ModelResponseError
from ._http import Reply, finite_number, usage_counts

__all__ = ["read_completion", "read_logprobs"]

_BYTE_CHARS: dict[int, str] | None = None


def _byte_level(data: Sequence[int] | bytes) -> str:
    """Bytes spelled in GPT-2's byte-level alphabet (token_style="byte-level")."""
    global _BYTE_CHARS
    if _BYTE_CHARS is None:
        from ..calibration.confidence import BYTE_LEVEL_ALPHABET

        _BYTE_CHARS = {b: ch for ch, b in BYTE_LEVEL_ALPHABET.items()}
    return "".join(_BYTE_CHARS[b] for b in data)


def _token_bytes(entry: Mapping[str, Any], where: str, reply: Reply) -> bytes | None:
    raw = entry.get("bytes")
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in raw):
        raise reply.error(f"with {where}.bytes that is not a list of byte values 0-255")
    return bytes(raw)


def read_logprobs(content: Any, reply: Reply) -> tuple[
        tuple[str, ...], tuple[float, ...], tuple[tuple[Mapping[str, Any], ...] | None, ...],
        str]:
    """Tokens, log-probabilities, alternatives and token style from ``logprobs.content``.

    When some token carries its ``bytes``, every token is spelled byte-level: its bytes
    when it has them, else the UTF-8 of its text (that token only falls back), so a
    multi-byte character split across tokens is rebuilt exactly.
    """
    where = "choices[0].logprobs.content"
    if not isinstance(content, list) or not all(isinstance(e, Mapping) for e in content):
        raise reply.error(f"with {where} that is not a list of objects")
    spelled = [_token_bytes(e, f"{where}[{i}]", reply) for i, e in enumerate(content)]
    byte_level = any(b is not None for b in spelled)
    tokens: list[str] = []
    logprobs: list[float] = []
    tops: list[tuple[Mapping[str, Any], ...] | None] = []
    for i, entry in enumerate(content):
        token = entry.get("token")
        if not isinstance(token, str):
            raise reply.error(f"with {where}[{i}].token that is not a string")
        logprobs.append(_number(entry.get("logprob"), f"{where}[{i}].logprob", reply))
        if byte_level:
            data = spelled[i]
            tokens.append(_byte_level(token.encode("utf-8", "surrogatepass")
                                      if data is None else data))
        else:
            tokens.append(token)
        alternatives = entry.get("top_logprobs")
        if alternatives is None:
            tops.append(None)
            continue
        if not isinstance(alternatives, list) or not all(
                isinstance(a, Mapping) for a in alternatives):
            raise reply.error(f"with {where}[{i}].top_logprobs that is not a list of objects")
        tops.append(tuple({"token": a.get("token"),
                           "logprob": _number(a.get("logprob"),
                                              f"{where}[{i}].top_logprobs[{j}].logprob", reply)}
                          for j, a in enumerate(alternatives)))
    return (tuple(tokens), tuple(logprobs), tuple(tops),
            "byte-level" if byte_level else "text")


def _number(value: Any, where: str, reply: Reply) -> float:
    try:
        return finite_number(value, where)
    except ModelResponseError as exc:
        raise reply.error(f"with {exc}") from None


def read_completion(reply: Reply) -> ChatResponse:
    """A chat-completions object as a :class:`ChatResponse`; ModelResponseError if it is not.

    A reply without text (``content`` null, as a refusal or a tool call gives, or no
    choices) is a :class:`~confcal.exceptions.ModelResponseError`: there is nothing to read.
    """
    data = reply.data
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise reply.error("without choices[0]: not a chat completion")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise reply.error("without choices[0].message: not a chat completion")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) and finish else "unknown"
    content = message.get("content")
    if isinstance(content, list):  # content parts, as some servers answer
        parts = [p.get("text") for p in content
                 if isinstance(p, Mapping) and p.get("type") == "text"]
        content = "".join(p for p in parts if isinstance(p, str)) if parts else None
    if not isinstance(content, str):
        raise reply.error(f"without a reply text: choices[0].message.content is "
                          f"{'null' if content is None else type(content).__name__} "
                          f"(finish_reason {finish!r})")
    tokens = logprobs = tops = None
    style = "text"
    lp = choice.get("logprobs")
    if isinstance(lp, Mapping) and lp.get("content") is not None:
        tokens, logprobs, tops, style = read_logprobs(lp["content"], reply)
    elif lp is not None and not isinstance(lp, Mapping):
        raise reply.error("with choices[0].logprobs that is not an object")
    return ChatResponse(text=content, finish_reason=finish, tokens=tokens,
                        token_logprobs=logprobs, top_logprobs=tops, token_style=style,
                        usage=usage_counts(data.get("usage")))
