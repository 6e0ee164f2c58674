"""The model judge: a prompt sent to a chat model, its reply read strictly.

Private module of :mod:`confcal.qa.docqa`, which re-exports its public names:
:data:`JUDGE_PROMPT`, :func:`parse_judge_reply`, :class:`ChatModel` and :class:`LLMJudge`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._validation import is_missing
from ..exceptions import ModelResponseError, ValidationError
from ._verdicts import EMPTY_VERDICT, Verdict, answer_arg, qtype_arg, text_arg

# --------------------------------------------------------------------------- LLM judge
JUDGE_SYSTEM_PROMPT = "You are a careful, strict grader of answers to questions about documents."

JUDGE_PROMPT = """\
Grade a user's answer to a question about a document against the reference answer.

Use the rule for the kind of question:
1. Yes/no questions: the user's answer is correct only if its yes or no agrees with the \
reference answer.
2. Short answers (a name, number, date, place, or directive): the key details -- numbers, \
specific nouns and verbs, dates -- must match the reference answer. The same number may be \
written differently (5.5 million = 5,500,000).
3. Long or abstractive answers: the wording may differ, but the user's answer must carry \
the same meaning and the same key information as the reference answer.
If the reference answer says the document does not contain the answer, the user's answer \
is correct only if it says so too. An empty answer is wrong.
Consult the reference text only to clarify the reference answer.

Question: {question}
User answer: {answer}
Reference answer: {reference}
Reference text: {evidence}

Reply with a single digit and nothing else: 1 if the user's answer is correct, 0 if it is \
wrong.
Correctness:"""
"""The judge prompt (DocBench's three rules); ``{question}``, ``{answer}``, ``{reference}``
and ``{evidence}`` are filled in."""

_PLACEHOLDER_RE = re.compile(r"\{(question|answer|reference|evidence)\}")
# The whole reply must be the digit, optionally after the form's label "Correctness:"
# (the prompt ends with it and models often echo it); anything else is unparseable.
_REPLY_RE = re.compile(r"(?:-\s*)?(?:correctness\s*:\s*)?([01])", re.IGNORECASE)


def parse_judge_reply(text: str | None) -> int | None:
    """Read a judge model's reply strictly: 1, 0, or None when it is anything else.

    Accepted: the digit alone, surrounding whitespace allowed, optionally after the form's
    label ``Correctness:``. Everything else -- words, both digits, an empty reply -- is
    None: unparseable, to be counted apart and never guessed.

    Parameters
    ----------
    text : str or None
        The reply; None (a reply without content) is unparseable.

    Returns
    -------
    {1, 0, None}

    Examples
    --------
    >>> [parse_judge_reply(t) for t in ("1", "0", "Correctness: 1", " 1\\n")]
    [1, 0, 1, 1]
    >>> [parse_judge_reply(t) for t in ("The answer is correct", "", "1 or 0")]
    [None, None, None]
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValidationError(f"text must be a string or None; found {type(text).__name__}")
    m = _REPLY_RE.fullmatch(text.strip())
    return int(m.group(1)) if m else None


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: ``complete(messages)`` returns the reply text.

    ``messages`` is a list of ``{"role": ..., "content": ...}`` dicts in the
    chat-completions format. :class:`confcal.extras.models.ChatCompletionsClient` is one.
    """

    def complete(self, messages: list[dict[str, str]]) -> str: ...


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass(frozen=True)
class LLMJudge:
    """DocBench's model judge: the three-rule prompt, a reply read strictly as 0 or 1.

    Parameters
    ----------
    client : ChatModel
        Sends the messages and returns the reply text, e.g.
        :class:`confcal.extras.models.ChatCompletionsClient` for an OpenAI-compatible endpoint.
    prompt_template : str, default :data:`JUDGE_PROMPT`
        ``{question}``, ``{answer}``, ``{reference}`` and ``{evidence}`` are filled in;
        other braces are left alone.
    system_prompt : str
        The system message.

    Notes
    -----
    An empty answer is scored 0 without asking the model (the prompt's own rule). A reply
    :func:`parse_judge_reply` cannot read, or a response without a reply
    (:class:`confcal.extras.models.ModelResponseError`), is the verdict
    ``Verdict(None, "unparseable", ...)``; transport failures that outlast the client's
    retries raise. ``qtype`` is accepted for the shared call; the prompt asks the model to
    tell the kind of question itself, as DocBench's does.

    Examples
    --------
    >>> class Scripted:  # a stand-in for a chat model
    ...     def __init__(self, *replies): self.replies = list(replies)
    ...     def complete(self, messages): return self.replies.pop(0)
    >>> judge = LLMJudge(Scripted("Correctness: 1", "The answer is right."))
    >>> judge.judge("Who signed?", "Jane Smith", "J. Smith")
    Verdict(score=1, rule='llm', reason="reply: 'Correctness: 1'")
    >>> judge.judge("Who signed?", "Jane Smith", "J. Smith").status
    'unparseable'
    """

    client: ChatModel
    prompt_template: str = field(default=JUDGE_PROMPT, repr=False)
    system_prompt: str = field(default=JUDGE_SYSTEM_PROMPT, repr=False)

    def __post_init__(self) -> None:
        if not callable(getattr(self.client, "complete", None)):
            raise ValidationError(
                f"client must have a complete(messages) method; found "
                f"{type(self.client).__name__}")
        text_arg(self.prompt_template, "prompt_template")
        if not isinstance(self.system_prompt, str):
            raise ValidationError(f"system_prompt must be a string; found {self.system_prompt!r}")

    def prompt(self, question: str, answer: str, reference: str, *,
               evidence: str | None = None) -> str:
        """The user message for one answer.

        Examples
        --------
        >>> class Constant:
        ...     def complete(self, messages): return "1"
        >>> print("\\n".join(LLMJudge(Constant()).prompt("Q?", "A", "R").splitlines()[-7:-3]))
        Question: Q?
        User answer: A
        Reference answer: R
        Reference text: (none)
        """
        values = {"question": question, "answer": answer, "reference": reference,
                  "evidence": "(none)" if is_missing(evidence) else str(evidence)}
        # One pass, so braces inside an answer are never read as placeholders.
        return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], self.prompt_template)

    def judge(self, question: str, answer: Any, reference: str, *, qtype: str | None = None,
              evidence: str | None = None) -> Verdict:
        """Ask the model; see the class docstring."""
        question = text_arg(question, "question")
        reference = text_arg(reference, "reference")
        qtype_arg(qtype)
        if evidence is not None and not is_missing(evidence) and not isinstance(evidence, str):
            raise ValidationError(f"evidence must be a string or None; found {evidence!r}")
        text = answer_arg(answer)
        if text is None:
            return EMPTY_VERDICT
        messages = [{"role": "system", "content": self.system_prompt},
                    {"role": "user", "content": self.prompt(question, text, reference,
                                                            evidence=evidence)}]
        try:
            reply = self.client.complete(messages)
        except Exception as exc:
            if isinstance(exc, ModelResponseError):
                return Verdict(None, "unparseable", f"no reply: {_shorten(str(exc))}")
            raise
        if reply is not None and not isinstance(reply, str):
            return Verdict(None, "unparseable",
                           f"the client returned a {type(reply).__name__}, not text")
        score = parse_judge_reply(reply)
        shown = _shorten(repr(reply))
        if score is None:
            return Verdict(None, "unparseable", f"reply: {shown}")
        return Verdict(score, "llm", f"reply: {shown}")


