"""The model judge: a prompt sent to a chat model, its reply read by one of two conventions.

Private module of :mod:`confcal.qa.docqa`, which re-exports its public names:
:data:`JUDGE_PROMPT`, :func:`check_template`, :func:`parse_judge_reply`, :class:`LLMJudge`,
:class:`CascadeJudge`, :func:`load_docbench_verdicts`.
The judge speaks the project's one chat protocol (:class:`confcal._chat.ChatClient`) and
keeps its answers in a :class:`confcal._chat.ChatCache`, so a run that failed midway is
resumed without asking anything twice.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._chat import ChatCache, ChatClient, ChatRequest, ChatResponse, check_sampling
from .._files import read_json_object
from .._validation import check_option, is_missing
from ..exceptions import ModelError, ValidationError
from ._records import (
    check_domains,
    docbench_domain,
    docbench_qtype,
    is_text,
    text_lines,
    validate_records,
)
from ._verdicts import (
    CONVENTIONS,
    EMPTY_VERDICT,
    Judge,
    Verdict,
    add_verdicts,
    answer_arg,
    prefix_arg,
    qtype_arg,
    text_arg,
)

# --------------------------------------------------------------------------- the prompt
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
"""confcal's judge prompt (DocBench's three rules in its own words); ``{question}``,
``{answer}``, ``{reference}`` and ``{evidence}`` are filled in."""

# The two placeholder styles and what each name stands for: confcal's single braces and
# the DocBench paper's double braces (its Table 5 prompt).
_CONFCAL_FIELDS = {"question": "question", "answer": "answer", "reference": "reference",
                   "evidence": "evidence"}
_DOCBENCH_FIELDS = {"question": "question", "sys_ans": "answer", "ref_ans": "reference",
                    "ref_text": "evidence"}
# Double braces first, so "{{question}}" is one DocBench placeholder, not "{question}" in
# braces; spaces inside double braces are caught to be reported, never silently kept.
_TOKEN_RE = re.compile(r"\{\{(\s*\w*\s*)\}\}|\{(\w+)\}")


def _placeholders(style: str) -> str:
    if style == "docbench":
        return ", ".join(f"{{{{{name}}}}}" for name in _DOCBENCH_FIELDS)
    return ", ".join(f"{{{name}}}" for name in _CONFCAL_FIELDS)


def _placeholders_in(template: str) -> tuple[list[str], list[str], list[str]]:
    """The DocBench (double-brace) and confcal (single-brace) placeholder names of a
    template, in order, and its unknown placeholders as written."""
    double, single, unknown = [], [], []
    for m in _TOKEN_RE.finditer(template):
        if m.group(1) is not None and m.group(1) in _DOCBENCH_FIELDS:
            double.append(m.group(1))
        elif m.group(1) is None and m.group(2) in _CONFCAL_FIELDS:
            single.append(m.group(2))
        else:
            unknown.append(m.group(0))
    return double, single, unknown


def check_template(template: Any) -> str:
    """Check a judge prompt template and say which placeholder style it uses.

    Two styles: confcal's ``{question}``, ``{answer}``, ``{reference}``, ``{evidence}``
    (:data:`JUDGE_PROMPT`), and the DocBench paper's ``{{question}}``, ``{{sys_ans}}``,
    ``{{ref_ans}}``, ``{{ref_text}}`` (its Table 5 prompt, which users pass as they have
    it). Any other word in braces is an unknown placeholder, and so is a mix of the two
    styles; the answer's and the reference's placeholders are required. Braces around
    anything but one word (a JSON example, ``{ }``) are text.

    Parameters
    ----------
    template : str

    Returns
    -------
    {"confcal", "docbench"}

    Raises
    ------
    ValidationError
        Naming every unknown or missing placeholder.

    Examples
    --------
    >>> check_template("Q: {{question}} A: {{sys_ans}} R: {{ref_ans}} T: {{ref_text}}")
    'docbench'
    >>> check_template("Q: {question} A: {answer} R: {reference} {note}")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: prompt_template has an unknown placeholder {note}; the
    placeholders are {question}, {answer}, {reference}, {evidence} (confcal's) or {{question}},
    {{sys_ans}}, {{ref_ans}}, {{ref_text}} (the DocBench paper's)
    """
    text_arg(template, "prompt_template")
    double, single, unknown = _placeholders_in(template)
    both = (f"the placeholders are {_placeholders('confcal')} (confcal's) or "
            f"{_placeholders('docbench')} (the DocBench paper's)")
    if unknown:
        listed = ", ".join(dict.fromkeys(unknown))
        noun = "placeholder" if len(set(unknown)) == 1 else "placeholders"
        raise ValidationError(f"prompt_template has an unknown {noun} {listed}; {both}")
    if double and single:
        raise ValidationError(
            f"prompt_template must use one placeholder style; found both "
            f"{', '.join('{{' + n + '}}' for n in dict.fromkeys(double))} and "
            f"{', '.join('{' + n + '}' for n in dict.fromkeys(single))}")
    style = "docbench" if double else "confcal"
    names = double or single
    fields = _DOCBENCH_FIELDS if double else _CONFCAL_FIELDS
    spell = "{{%s}}" if double else "{%s}"
    needed = [spell % n for n, role in fields.items()
              if role in ("answer", "reference") and n not in names]
    if needed:
        raise ValidationError(
            f"prompt_template must hold the answer's and the reference's placeholders; found "
            f"it without {' and '.join(needed)} ({both})")
    return style


# --------------------------------------------------------------------------- the reply
# The whole reply must be the digit, optionally after the form's label "Correctness:"
# (the prompt ends with it and models often echo it); anything else is unparseable.
_REPLY_RE = re.compile(r"(?:-\s*)?(?:correctness\s*:\s*)?([01])", re.IGNORECASE)
# The official DocBench aggregation looks at a reply's first 20 characters only.
DOCBENCH_HEAD = 20


def docbench_digits(text: str) -> tuple[bool, bool]:
    """(a "1" among the first 20 characters, a "0" among them): all DocBench reads."""
    head = text[:DOCBENCH_HEAD]
    return "1" in head, "0" in head


def parse_judge_reply(text: str | None, *, convention: str = "strict") -> int | None:
    """Read a judge model's reply: 1, 0, or None when the convention cannot read it.

    Parameters
    ----------
    text : str or None
        The reply; None (a reply without content) is unparseable.
    convention : {"strict", "docbench"}, default "strict"
        ``"strict"``: the digit alone, surrounding whitespace allowed, optionally after the
        form's label ``Correctness:``; everything else -- words, both digits, "1.",
        "**1**", an empty reply -- is None. ``"docbench"``: as the official DocBench
        evaluation reads a reply, by its first 20 characters only: a "1" there and no "0"
        is 1, a "0" and no "1" is 0 ("Correctness: 1" followed by a reason, "**1**",
        "1.", "Score: 1" are all 1). A reply with neither digit there, or with both, is
        None: the official aggregation counts it one way in one table and the other way
        in the other (:func:`accuracy_table` reproduces that from the reply).

    Returns
    -------
    {1, 0, None}

    Examples
    --------
    >>> [parse_judge_reply(t) for t in ("1", "0", "Correctness: 1", " 1\\n")]
    [1, 0, 1, 1]
    >>> [parse_judge_reply(t) for t in ("The answer is correct", "", "1 or 0", "**1**")]
    [None, None, None, None]
    >>> [parse_judge_reply(t, convention="docbench")
    ...  for t in ("**1**", "Score: 0. Wrong.", "The answer is correct", "1 or 0")]
    [1, 0, None, None]
    """
    convention = check_option(convention, "convention", CONVENTIONS)
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValidationError(f"text must be a string or None; found {type(text).__name__}")
    if convention == "docbench":
        one, zero = docbench_digits(text)
        return None if one == zero else int(one)
    m = _REPLY_RE.fullmatch(text.strip())
    return int(m.group(1)) if m else None


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def reply_verdict(reply: str, convention: str) -> Verdict:
    """The verdict a reply gives under a convention (rule ``llm`` or ``unparseable``)."""
    score = parse_judge_reply(reply, convention=convention)
    shown = f"reply: {_shorten(repr(reply))}"
    if score is not None:
        return Verdict(score, "llm", shown, reply=reply, convention=convention)
    if convention == "docbench":
        one, _ = docbench_digits(reply)
        found = "both a 1 and a 0" if one else "no 1 and no 0"
        shown += f" ({found} in its first {DOCBENCH_HEAD} characters)"
    return Verdict(None, "unparseable", shown, reply=reply, convention=convention)


# ------------------------------------------------------------------------- the judge
@dataclass(frozen=True)
class LLMJudge:
    """DocBench's model judge: a prompt per answer, the reply read by a convention.

    Parameters
    ----------
    client : ChatClient
        Any object with ``provider``, ``model``, ``supports_logprobs`` and
        ``complete(ChatRequest) -> ChatResponse``, e.g.
        :class:`confcal.extras.clients.OpenAICompatibleClient`.
    prompt_template : str, default :data:`JUDGE_PROMPT`
        confcal's placeholders (``{question}``, ``{answer}``, ``{reference}``,
        ``{evidence}``) or the DocBench paper's (``{{question}}``, ``{{sys_ans}}``,
        ``{{ref_ans}}``, ``{{ref_text}}``), checked by :func:`check_template`. The values
        are put in as they are, in one pass, and nothing else of the template changes:
        missing evidence is the empty string. Only the default prompt writes "(none)"
        there, in its own wording.
    system_prompt : str
        The system message (the official evaluation sends its own; pass it here).
    convention : {"strict", "docbench"}, default "strict"
        How replies are read (:func:`parse_judge_reply`); every verdict records it.
    cache_dir : path, optional
        Keep every reply in a :class:`confcal._chat.ChatCache` there (kind
        ``"qa-judge"``) and use a kept reply instead of asking again: a run that stopped
        or failed midway is resumed by running it again. Failed calls are not kept.
    max_tokens : int, default 256
        The longest reply asked for (a verdict needs a few tokens; the DocBench reading
        looks at 20 characters).
    sampling : mapping, optional
        Sampling parameters to send (``temperature``, ``top_p``, ``top_k``); none by
        default, so the server decides.

    Attributes
    ----------
    counts : dict of str to int
        ``asked`` (replies the model gave), ``cached`` (replies read from ``cache_dir``),
        ``failed`` (calls that raised a :class:`confcal.exceptions.ModelError`),
        ``not_asked`` (empty answers, scored 0 without asking) and ``unreadable`` (cache
        entries that could not be read as a reply: asked again and replaced).

    See Also
    --------
    RuleJudge : a judge without a model.
    CascadeJudge : both in turn.

    Notes
    -----
    An empty answer is scored 0 without asking the model (the prompt's own rule). A
    reply the convention cannot read is ``Verdict(None, "unparseable", ...)``. A call that
    fails (a :class:`confcal.exceptions.ModelError`: retries exhausted, a refused request,
    a response that is not the API's) is ``Verdict(None, "model-error", ...)``, status
    ``"failed"``: recorded, counted apart, and the run goes on. Any other exception
    raises. ``qtype`` is accepted for the shared call; the prompt asks the model to tell
    the kind of question itself, as DocBench's does. No sampling parameter is sent unless
    ``sampling`` sets one (``{"temperature": 0.0}`` for greedy replies, where the server
    takes it).

    Examples
    --------
    >>> from confcal._chat import ChatResponse
    >>> class Scripted:  # a stand-in for a chat client
    ...     provider, model, supports_logprobs = "scripted", "m", False
    ...     def __init__(self, *replies): self.replies = list(replies)
    ...     def complete(self, request): return ChatResponse(self.replies.pop(0), "stop")
    >>> judge = LLMJudge(Scripted("Correctness: 1", "**1**"))
    >>> judge.judge("Who signed?", "Jane Smith", "J. Smith")
    Verdict(score=1, rule='llm', reason="reply: 'Correctness: 1'")
    >>> judge.judge("Who signed?", "Jane Smith", "J. Smith").status
    'unparseable'
    >>> paper = LLMJudge(Scripted("**1**"), convention="docbench")
    >>> verdict = paper.judge("Who signed?", "Jane Smith", "J. Smith")
    >>> verdict.score, verdict.convention, verdict.reply
    (1, 'docbench', '**1**')
    """

    client: Any
    prompt_template: str = field(default=JUDGE_PROMPT, repr=False)
    system_prompt: str = field(default=JUDGE_SYSTEM_PROMPT, repr=False)
    convention: str = "strict"
    cache_dir: str | os.PathLike[str] | None = field(default=None, repr=False)
    max_tokens: int = field(default=256, repr=False)
    sampling: Mapping[str, Any] | None = field(default=None, repr=False, hash=False)
    counts: dict[str, int] = field(init=False, repr=False, compare=False)
    _chat: Any = field(init=False, repr=False, compare=False)
    _style: str = field(init=False, repr=False, compare=False)
    _cache: ChatCache | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not callable(getattr(self.client, "complete", None)):
            raise ValidationError(
                f"client must have a complete(request) method (a confcal ChatClient); found "
                f"{type(self.client).__name__}")
        if not isinstance(self.client, ChatClient):
            lacking = [name for name in ("provider", "model", "supports_logprobs")
                       if not hasattr(self.client, name)]
            raise ValidationError(
                f"client must be a confcal ChatClient (provider, model, supports_logprobs and "
                f"complete(ChatRequest) -> ChatResponse); found {type(self.client).__name__}, "
                f"without {', '.join(lacking)}")
        object.__setattr__(self, "_chat", self.client)
        object.__setattr__(self, "_style", check_template(self.prompt_template))
        if not isinstance(self.system_prompt, str):
            raise ValidationError(f"system_prompt must be a string; found {self.system_prompt!r}")
        object.__setattr__(self, "convention",
                           check_option(self.convention, "convention", CONVENTIONS))
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) \
                or self.max_tokens < 1:
            raise ValidationError(f"max_tokens must be an integer >= 1; found "
                                  f"{self.max_tokens!r}")
        object.__setattr__(self, "sampling", MappingProxyType(check_sampling(self.sampling)))
        cache = None if self.cache_dir is None else ChatCache(self.cache_dir, kind="qa-judge")
        object.__setattr__(self, "_cache", cache)
        object.__setattr__(self, "counts",
                           {"asked": 0, "cached": 0, "failed": 0, "not_asked": 0,
                            "unreadable": 0})

    def prompt(self, question: str, answer: str, reference: str, *,
               evidence: str | None = None) -> str:
        """The user message for one answer.

        Examples
        --------
        >>> class Constant:
        ...     provider, model, supports_logprobs = "constant", "m", False
        ...     def complete(self, request): ...
        >>> print("\\n".join(LLMJudge(Constant()).prompt("Q?", "A", "R").splitlines()[-7:-3]))
        Question: Q?
        User answer: A
        Reference answer: R
        Reference text: (none)
        >>> LLMJudge(Constant(), prompt_template="{{sys_ans}}|{{ref_ans}}|{{ref_text}}|"
        ...          ).prompt("Q?", " 5 {{ref_ans}}", "5", evidence=None)
        ' 5 {{ref_ans}}|5||'
        """
        if self.prompt_template == JUDGE_PROMPT:  # confcal's own wording for no evidence
            shown = "(none)" if is_missing(evidence) else str(evidence)
        else:  # verbatim: a string as it is (spaces too), nothing for None
            shown = evidence if isinstance(evidence, str) else ""
        values = {"question": question, "answer": answer, "reference": reference,
                  "evidence": shown}
        fields = _DOCBENCH_FIELDS if self._style == "docbench" else _CONFCAL_FIELDS

        def fill(m: re.Match[str]) -> str:
            name = m.group(1) if m.group(1) is not None else m.group(2)
            return values[fields[name]]

        # One pass, so a placeholder written inside an answer is text, never filled.
        return _TOKEN_RE.sub(fill, self.prompt_template)

    def request(self, question: str, answer: str, reference: str, *,
                evidence: str | None = None) -> ChatRequest:
        """The chat request for one answer (what is sent and what keys the cache)."""
        return ChatRequest(self.system_prompt,
                           self.prompt(question, answer, reference, evidence=evidence),
                           max_tokens=self.max_tokens, **(self.sampling or {}))

    def judge(self, question: str, answer: Any, reference: str, *, qtype: str | None = None,
              evidence: str | None = None) -> Verdict:
        """Ask the model (or the cache); see the class docstring."""
        question = text_arg(question, "question")
        reference = text_arg(reference, "reference")
        qtype_arg(qtype)
        if evidence is not None and not is_missing(evidence) and not isinstance(evidence, str):
            raise ValidationError(f"evidence must be a string or None; found {evidence!r}")
        text = answer_arg(answer)
        if text is None:
            self.counts["not_asked"] += 1
            return EMPTY_VERDICT
        request = self.request(question, text, reference, evidence=evidence)
        chat, cache = self._chat, self._cache
        key = None if cache is None else cache.key(chat, request)
        unreadable = 0 if cache is None else len(cache.unreadable)
        response = None if cache is None or key is None else cache.get(key)
        if cache is not None and len(cache.unreadable) > unreadable:
            self.counts["unreadable"] += 1  # asked again below; put replaces the entry
        if response is not None:
            self.counts["cached"] += 1
        else:
            try:
                response = chat.complete(request)
            except ModelError as exc:
                self.counts["failed"] += 1
                return Verdict(None, "model-error",
                               f"the model call failed ({type(exc).__name__}): "
                               f"{_shorten(str(exc))}", convention=self.convention)
            if not isinstance(response, ChatResponse):
                raise ValidationError(
                    f"client.complete must return a ChatResponse; found "
                    f"{type(response).__name__}")
            self.counts["asked"] += 1
            if cache is not None and key is not None:
                cache.put(key, response)
        return reply_verdict(response.text, self.convention)


# ------------------------------------------------------------------------ the cascade
MODEL_RULES = ("llm", "unparseable", "model-error")
"""The rules of a model judge's verdicts: what a cascade's model judge decided."""


@dataclass(frozen=True)
class CascadeJudge:
    """The rule judge first; what it leaves undecided goes to the model judge.

    Parameters
    ----------
    first : Judge
        Usually :class:`RuleJudge`: cheap, deterministic, undecided when unsure.
    then : Judge
        Usually :class:`LLMJudge`: asked only about the answers ``first`` did not decide.

    Attributes
    ----------
    counts : dict of str to int
        ``decided_first`` (answers ``first`` decided) and ``sent_on`` (answers passed to
        ``then``). :func:`cascade_table` counts who decided what from the verdicts.

    See Also
    --------
    RuleJudge : the first judge.
    LLMJudge : the judge for what is left.
    cascade_table : what each stage decided.

    Notes
    -----
    A verdict passed on is ``then``'s, its reason prefixed with what ``first`` said; its
    rule is ``then``'s (``llm``, ``unparseable``, ``model-error`` for a model judge), so
    the verdicts alone tell who decided.

    Examples
    --------
    >>> from confcal._chat import ChatResponse
    >>> from confcal.qa.docqa import RuleJudge
    >>> class Always1:
    ...     provider, model, supports_logprobs = "always", "m", False
    ...     def complete(self, request): return ChatResponse("1", "stop")
    >>> cascade = CascadeJudge(RuleJudge(), LLMJudge(Always1()))
    >>> cascade.judge("Is it signed?", "Yes", "Yes").rule
    'exact-match'
    >>> long = ("Sales rose sharply in the last quarter because two new plants opened and "
    ...         "the export licences were granted")
    >>> cascade.judge("Why did sales rise?", "New plants and export licences", long).rule
    'llm'
    >>> cascade.counts
    {'decided_first': 1, 'sent_on': 1}
    """

    first: Judge
    then: Judge
    counts: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("first", "then"):
            if not callable(getattr(getattr(self, name), "judge", None)):
                raise ValidationError(
                    f"{name} must have a judge(question, answer, reference, *, qtype, "
                    f"evidence) method; found {type(getattr(self, name)).__name__}")
        object.__setattr__(self, "counts", {"decided_first": 0, "sent_on": 0})

    def judge(self, question: str, answer: Any, reference: str, *, qtype: str | None = None,
              evidence: str | None = None) -> Verdict:
        """The first judge's verdict, or the second's when the first did not decide."""
        verdict = self.first.judge(question, answer, reference, qtype=qtype, evidence=evidence)
        if not isinstance(verdict, Verdict):
            raise ValidationError(f"first.judge must return a Verdict; found "
                                  f"{type(verdict).__name__}")
        if verdict.score is not None:
            self.counts["decided_first"] += 1
            return verdict
        self.counts["sent_on"] += 1
        then = self.then.judge(question, answer, reference, qtype=qtype, evidence=evidence)
        if not isinstance(then, Verdict):
            raise ValidationError(f"then.judge must return a Verdict; found "
                                  f"{type(then).__name__}")
        reason = f"first judge undecided ({verdict.rule}: {verdict.reason}); {then.reason}"
        return Verdict(then.score, then.rule, reason, reply=then.reply,
                       convention=then.convention)


# ------------------------------------------------------------- the official verdicts
_EVAL_SUFFIX = "_eval_output.jsonl"
_EVAL_KEYS = ("question", "answer", "type", "sys_ans", "file", "eval")


def _eval_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(_EVAL_SUFFIX))
        if files:
            return files
        raise ValidationError(f"{path}: must hold DocBench evaluation outputs "
                              f"(*{_EVAL_SUFFIX}); found none", source=path)
    raise ValidationError(f"path must be an existing *{_EVAL_SUFFIX} file or a folder of them; "
                          f"found {str(path)!r}")


def _system_name(file: Path, system: str | None) -> str:
    """The system whose verdicts a file holds: ``system``, or the file's name before
    ``_eval_output.jsonl``."""
    name = system if system is not None else (
        file.name[:-len(_EVAL_SUFFIX)] if file.name.endswith(_EVAL_SUFFIX) else file.stem)
    if not name:
        raise ValidationError(f"{file}: the system's name is read from the file name "
                              f"(<system>{_EVAL_SUFFIX}); found none, so pass system=",
                              source=file)
    return name


def _verdict_line(line: str, file: Path, number: int, system: str, domains: Any
                  ) -> tuple[dict[str, Any], Verdict]:
    """One line of an evaluation output: the record it is about and the official verdict."""
    where = f"{file}, line {number}"
    item = read_json_object(line, where=f"{where}:", what="a JSON object (one verdict)",
                            source=file, line=number)
    absent = [key for key in _EVAL_KEYS if key not in item]
    if absent:
        raise ValidationError(
            f"{where}: must have the keys {', '.join(map(repr, _EVAL_KEYS))}; found "
            f"it without {', '.join(absent)}", source=file, line=number)
    if not isinstance(item["eval"], str):
        raise ValidationError(f"{where}: eval must be the judge's reply (a string); "
                              f"found {item['eval']!r}", source=file, line=number)
    folder = item["file"]
    if isinstance(folder, bool) or not isinstance(folder, (str, int)):
        raise ValidationError(f"{where}: file must be the document folder's name; "
                              f"found {folder!r}", source=file, line=number)
    try:
        domain = docbench_domain(str(folder), domains)
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc}", source=file, line=number) from None
    row = {"doc_id": str(folder), "question": item["question"], "reference": item["answer"],
           "answer": item["sys_ans"], "domain": domain,
           "qtype": docbench_qtype(item["type"], where), "evidence": item.get("evidence"),
           "system": system, "docbench_type": item["type"]}
    return row, reply_verdict(item["eval"], "docbench")


def load_docbench_verdicts(path: str | os.PathLike[str], *, system: str | None = None,
                           domains: Mapping[str, str] | Callable[[str], str] | None = None,
                           prefix: str = "docbench") -> pd.DataFrame:
    """Read the official DocBench evaluation's verdicts (``<system>_eval_output.jsonl``).

    Each line of the official ``evaluate.py`` output is a question of ``<n>_qa.jsonl``
    (``question``, ``answer`` = the reference, ``evidence``, ``type``) with the system's
    answer (``sys_ans``), the document folder (``file``) and the judge model's reply
    (``eval``). They become QA records with the verdict columns of
    :func:`judge_records`, the reply read by the ``"docbench"`` convention, so that
    :func:`accuracy_table` re-aggregates them (``convention="docbench"`` gives the
    official numbers) and :func:`judge_agreement` compares them with confcal's judges.

    Parameters
    ----------
    path : str or path-like
        One ``*_eval_output.jsonl`` file, or a folder: every such file in it, one system
        each.
    system : str, optional
        The system's name; default the file name before ``_eval_output.jsonl``. Only for
        a single file.
    domains : mapping or callable, optional
        Folder name -> domain, as for :func:`load_docbench`; default DocBench's numbering.
    prefix : str, default "docbench"
        Name of the verdict columns.

    Returns
    -------
    DataFrame
        ``doc_id`` (``file``), ``question``, ``reference``, ``answer`` (``sys_ans``),
        ``domain``, ``qtype``, ``evidence``, ``system``, ``docbench_type`` (the ``type``
        as written), then ``<prefix>`` (1, 0 or <NA>), ``<prefix>_status``,
        ``<prefix>_rule``, ``<prefix>_reason``, ``<prefix>_reply`` (``eval``) and
        ``<prefix>_convention`` (``"docbench"``), in file then line order. Every line is
        kept, as the official notebook counts them (a resumed official run that wrote a
        question twice has it twice).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> line = {"question": "What was net income?", "answer": "$5.5 million",
    ...         "evidence": "", "type": "text-only", "sys_ans": "5,500,000 dollars",
    ...         "file": "51", "eval": "Correctness: 1\\nThe amounts are equal."}
    >>> _ = (folder / "gpt-4o_eval_output.jsonl").write_text(json.dumps(line) + "\\n")
    >>> frame = load_docbench_verdicts(folder / "gpt-4o_eval_output.jsonl")
    >>> frame[["doc_id", "system", "domain", "docbench", "docbench_status"]]
      doc_id  system   domain  docbench docbench_status
    0     51  gpt-4o  finance         1         correct
    """
    path = Path(path)
    files = _eval_files(path)
    if system is not None and (not is_text(system) or len(files) > 1):
        raise ValidationError(f"system must be a non-empty string, and only for one file; "
                              f"found {system!r} for {len(files)} files")
    check_domains(domains)
    prefix = prefix_arg(prefix, "docbench")
    rows: list[dict[str, Any]] = []
    labels: list[str] = []
    verdicts: list[Verdict] = []
    for file in files:
        name = _system_name(file, system)
        for number, line in text_lines(file):
            row, verdict = _verdict_line(line, file, number, name, domains)
            rows.append(row)
            labels.append(f"{file}, line {number}")
            verdicts.append(verdict)
    if not rows:
        raise ValidationError(f"{path}: must hold at least one verdict; found none", source=path)
    frame = validate_records(rows, labels=labels)
    add_verdicts(frame, verdicts, prefix, replies=True)
    return frame
