"""Verdicts and what every judge shares: the verdict type, its statuses and rules, the call.

Private module of :mod:`confcal.qa.docqa`, which re-exports its public names. It owns
:class:`Verdict` with what it can be (:data:`STATUSES`) and the rules that give one
(:data:`RULES`), the judges' shared call (:class:`Judge`) with its argument checks, and
:func:`judge_records`, which judges every record with any judge. The judges themselves live
in :mod:`confcal.qa._rule_judge` and :mod:`confcal.qa._judges` (the model judge).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, TypeAlias, runtime_checkable

import pandas as pd

from .._validation import check_option, is_missing
from ..exceptions import ValidationError
from ._records import QTYPES, Records, is_text, validate_records

STATUSES = ("correct", "wrong", "undecided", "unparseable", "failed")
"""What a verdict can be: score 1, score 0, and the three kinds of no score (a judge that
could not decide, a model reply that could not be read, a model call that failed)."""

CONVENTIONS = ("strict", "docbench")
"""How a model judge's reply is read and verdicts are aggregated: ``"strict"`` (confcal's:
the reply must be the digit; what is not decided is counted apart) or ``"docbench"`` (the
official DocBench evaluation's reading and aggregation; docs/docqa.md)."""

RULES: Mapping[str, str] = MappingProxyType({
    "exact-match": "the answer is the reference, up to case, punctuation and articles",
    "empty-answer": "an empty answer is wrong (DocBench's rule)",
    "unanswerable": "the reference says the document does not contain the answer: the "
                    "answer must decline too",
    "declined-answerable": "the answer declines a question the reference answers",
    "yes-no": "the answer's yes or no must agree with the reference's",
    "date": "every date the reference states (beyond the question) must be in the answer",
    "number": "every number the reference states (beyond the question) must be in the "
              "answer, up to the precision written and a relative tolerance",
    "sign": "the reference's number and the answer's must have the same sign, written "
            "(-3.5%) or worded (a loss, fell, a deficit)",
    "year": "the answer's number must be the one it gives for the year the question or the "
            "reference names",
    "range": "a range must be answered with the same range, a single number with no range",
    "pair-order": "several numbers must each keep their own words (52 for and 48 against)",
    "asked-entity": "of several numbers in the answer, the reference's must be the one "
                    "given for what the question names",
    "negation": "the reference with its sense reversed by a negation (or one dropped)",
    "acronym": "the answer names the short reference by its acronym, or spells out the "
               "reference's acronym",
    "contains-reference": "the answer contains every content word of the short reference",
    "similarity": "ANLS-style similarity of the short reference to the closest run of "
                  "answer words: accepted above one threshold, rejected below another",
    "long-answer": "a long reference needs a judgment of meaning; left undecided",
    "llm": "a model judge's reply, read as 0 or 1 by the verdict's convention",
    "unparseable": "a model judge's reply that its convention cannot read as 0 or 1",
    "model-error": "the model judge's call failed (the error is in the reason); asked "
                   "again by the next run",
})
"""Every rule name a built-in judge puts in :attr:`Verdict.rule`, with what it means."""


# ---------------------------------------------------------------------------- verdicts
# ---------------------------------------------------------------------------- verdicts
@dataclass(frozen=True)
class Verdict:
    """A judge's decision on one answer.

    Attributes
    ----------
    score : {1, 0, None}
        1 right, 0 wrong, None when the judge did not decide.
    rule : str
        The rule that decided (see :data:`RULES`); for ``score=None`` the rule that was
        tried, ``"unparseable"`` for a model reply its convention cannot read, or
        ``"model-error"`` for a model call that failed.
    reason : str
        What the judge saw, for people reading the verdicts.
    reply : str or None
        A model judge's reply as the model gave it (None for other judges and for a call
        that failed); the DocBench aggregation reads it (:func:`accuracy_table`).
    convention : str or None
        Which convention (:data:`CONVENTIONS`) read the reply; None for other judges.

    Examples
    --------
    >>> Verdict(1, "yes-no", "both say yes").status
    'correct'
    >>> Verdict(None, "unparseable", "reply: 'The answer is correct'").status
    'unparseable'
    """

    score: int | None
    rule: str
    reason: str = ""
    reply: str | None = field(default=None, repr=False)
    convention: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not (self.score is None or (type(self.score) is int and self.score in (0, 1))):
            raise ValidationError(f"score must be 1, 0 or None; found {self.score!r}")
        if not is_text(self.rule):
            raise ValidationError(f"rule must be a non-empty string; found {self.rule!r}")
        if not isinstance(self.reason, str):
            raise ValidationError(f"reason must be a string; found {self.reason!r}")
        if not (self.reply is None or isinstance(self.reply, str)):
            raise ValidationError(f"reply must be a string or None; found {self.reply!r}")
        if not (self.convention is None or self.convention in CONVENTIONS):
            raise ValidationError(f"convention must be one of {', '.join(CONVENTIONS)} or "
                                  f"None; found {self.convention!r}")

    @property
    def status(self) -> str:
        """``"correct"``, ``"wrong"``, ``"unparseable"``, ``"failed"`` or ``"undecided"``."""
        if self.score is not None:
            return "correct" if self.score == 1 else "wrong"
        if self.rule == "model-error":
            return "failed"
        return "unparseable" if self.rule == "unparseable" else "undecided"



Verdicts: TypeAlias = "Sequence[Verdict | int | None] | str"
"""Verdicts as the tables take them: one per record (a Verdict or 1/0/None), or the name
of a records column holding them."""

@runtime_checkable
class Judge(Protocol):
    """Anything with the judges' shared call (:class:`RuleJudge`, :class:`LLMJudge`)."""

    def judge(self, question: str, answer: Any, reference: str, *, qtype: str | None = None,
              evidence: str | None = None) -> Verdict: ...


def text_arg(value: Any, name: str) -> str:
    if not is_text(value):
        raise ValidationError(f"{name} must be a non-empty string; found {value!r}")
    return str(value)


def qtype_arg(qtype: Any) -> str | None:
    if qtype is None:
        return None
    return check_option(qtype, "qtype", QTYPES)


def answer_arg(answer: Any) -> str | None:
    """The answer text, or None when there is none (null, NaN, "" or spaces)."""
    if is_missing(answer):
        return None
    if not isinstance(answer, str):
        raise ValidationError(f"answer must be a string or None; found {answer!r}")
    return answer


EMPTY_VERDICT = Verdict(0, "empty-answer", "the answer is empty; DocBench scores an empty answer 0")


# ------------------------------------------------------------------------ judging all
def prefix_arg(prefix: Any, example: str) -> str:
    """A verdict columns' prefix: a word (letters, digits, underscores)."""
    if not (isinstance(prefix, str) and re.fullmatch(r"\w+", prefix)):
        raise ValidationError(f"prefix must be a word such as {example!r}; found {prefix!r}")
    return prefix


def add_verdicts(frame: pd.DataFrame, verdicts: Sequence[Verdict], prefix: str, *,
                 replies: bool) -> None:
    """Write the verdict columns into ``frame``: ``<prefix>`` (Int64), ``_status``,
    ``_rule``, ``_reason`` and, with ``replies``, ``_reply`` and ``_convention``."""
    frame[prefix] = pd.array([v.score for v in verdicts], dtype="Int64")
    frame[f"{prefix}_status"] = [v.status for v in verdicts]
    frame[f"{prefix}_rule"] = [v.rule for v in verdicts]
    frame[f"{prefix}_reason"] = [v.reason for v in verdicts]
    if replies:
        frame[f"{prefix}_reply"] = [v.reply for v in verdicts]
        frame[f"{prefix}_convention"] = [v.convention for v in verdicts]


def _judge_one(judge: Judge, i: int, row: Any, has_evidence: bool) -> Verdict:
    """The judge's verdict on record ``i``; an error names the record."""
    evidence = row.evidence if has_evidence else None
    try:
        # text as it is (a model judge's template is filled verbatim); null is None
        verdict = judge.judge(row.question, row.answer, row.reference, qtype=row.qtype,
                              evidence=evidence if isinstance(evidence, str) else None)
    except Exception as exc:
        if hasattr(exc, "add_note"):  # Python 3.11+
            exc.add_note(f"while judging record {i} (doc_id {row.doc_id!r})")
        raise
    if not isinstance(verdict, Verdict):
        raise ValidationError(
            f"judge.judge must return a Verdict; found {type(verdict).__name__} for "
            f"record {i}")
    return verdict


def judge_records(records: Records, judge: Judge, *, prefix: str = "verdict") -> pd.DataFrame:
    """Judge every record; return the records with the verdict columns added.

    Parameters
    ----------
    records : DataFrame or list of dicts
        QA records (see :func:`check_records`).
    judge : Judge
        Anything with ``judge(question, answer, reference, *, qtype, evidence)``.
    prefix : str, default "verdict"
        Name of the added columns, so that several judges' verdicts can sit side by side.

    Returns
    -------
    DataFrame
        The checked records plus ``<prefix>`` (1, 0 or <NA>, dtype Int64),
        ``<prefix>_status`` (one of :data:`STATUSES`), ``<prefix>_rule`` and
        ``<prefix>_reason``; when a model judge answered any record, also
        ``<prefix>_reply`` (its reply as given) and ``<prefix>_convention`` (which
        convention read it), which the DocBench aggregation reads.

    See Also
    --------
    accuracy_table : accuracy by domain and question type.
    judge_agreement : two judges compared.

    Examples
    --------
    >>> from confcal.qa.docqa import RuleJudge
    >>> rows = [{"doc_id": "d1", "question": "Is it signed?", "reference": "Yes",
    ...          "answer": "Yes, it is.", "domain": "laws", "qtype": "text-only"},
    ...         {"doc_id": "d1", "question": "Who signed it?", "reference": "Jane Smith",
    ...          "answer": None, "domain": "laws", "qtype": "text-only"}]
    >>> judge_records(rows, RuleJudge())[["verdict", "verdict_status", "verdict_rule"]]
       verdict verdict_status  verdict_rule
    0        1        correct        yes-no
    1        0          wrong  empty-answer
    """
    frame = validate_records(records)
    if not callable(getattr(judge, "judge", None)):
        raise ValidationError(
            f"judge must have a judge(question, answer, reference, *, qtype, evidence) "
            f"method; found {type(judge).__name__}")
    prefix = prefix_arg(prefix, "verdict")
    names = ["", "_status", "_rule", "_reason", "_reply", "_convention"]
    clash = [prefix + n for n in names if prefix + n in frame.columns]
    if clash:
        raise ValidationError(
            f"records must not already have the verdict columns; found {', '.join(clash)} "
            f"(pass another prefix)")
    has_evidence = "evidence" in frame.columns
    verdicts = [_judge_one(judge, i, row, has_evidence)
                for i, row in enumerate(frame.itertuples(index=False))]
    add_verdicts(frame, verdicts, prefix,
                 replies=any(v.convention is not None for v in verdicts))
    return frame
