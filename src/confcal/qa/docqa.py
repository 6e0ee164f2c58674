"""Document question answering evaluation in the style of DocBench.

A system reads a whole document and answers questions about it; a judge scores each answer
1 (right) or 0 (wrong) against a reference answer. DocBench (Zou et al., 2024) has 229
PDFs and 1,102 questions in five domains and four question types, judged by GPT-4 with
three rules: yes/no answers must agree; short answers must match the key numbers, nouns
and dates; long answers must carry the same meaning. This module evaluates that way:

- **QA records** (:func:`check_records`, :func:`load_records`, :func:`load_docbench`,
  :func:`load_sample`): one row per answer, with columns ``doc_id, question, reference,
  answer, domain, qtype`` and optionally ``evidence, confidence, system``.
- **Judges** share one call, ``judge.judge(question, answer, reference, *, qtype=None,
  evidence=None) -> Verdict``: :class:`RuleJudge` (deterministic rules, no model) and
  :class:`LLMJudge` (the three-rule prompt sent to a chat model). :func:`judge_records`
  judges every record.
- **Tables**: :func:`accuracy_table` (accuracy with :func:`wilson_interval` intervals,
  overall, by domain and by type), :func:`judge_agreement` (percent agreement and Cohen's
  kappa, e.g. a judge against human verdicts) and :func:`calibration_table` (the verdicts
  and the answers' confidences through :func:`confcal.calibration_report`).

A verdict is 1, 0 or undecided (``None``). A judge that cannot decide says so: the rule
judge leaves an answer undecided rather than guess, and a model judge's reply that is not
exactly 0 or 1 is *unparseable*. Undecided and unparseable verdicts are counted in their
own columns and never folded into right or wrong (the DocBench scripts counted an
unreadable reply as right in one table and as wrong in another).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from statistics import NormalDist
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from . import _text as qt
from .._files import read_json_object
from .._validation import (
    check_budgets,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    is_missing,
    is_real,
)
from ..exceptions import ModelResponseError, UndefinedMetricWarning, ValidationError
from ..scoring.io import _open_text
from ..metrics._metrics import BINNINGS, DEFAULT_BUDGETS, TIES, calibration_report

__all__ = [
    "DOCBENCH_DOMAINS",
    "DOMAINS",
    "JUDGE_PROMPT",
    "QTYPES",
    "RECORD_COLUMNS",
    "RULES",
    "STATUSES",
    "ChatModel",
    "Judge",
    "LLMJudge",
    "RuleJudge",
    "Verdict",
    "accuracy_table",
    "calibration_table",
    "check_records",
    "judge_agreement",
    "judge_records",
    "load_docbench",
    "load_records",
    "load_sample",
    "parse_judge_reply",
    "wilson_interval",
]

DOMAINS = ("academia", "finance", "government", "laws", "news")
"""DocBench's five document domains (any non-empty label is accepted in records)."""

QTYPES = ("text-only", "multimodal", "meta-data", "unanswerable")
"""DocBench's four question types; a record's ``qtype`` must be one of them."""

RECORD_COLUMNS = ("doc_id", "question", "reference", "answer", "domain", "qtype",
                  "evidence", "confidence", "system")
"""QA record columns: the first six are required, the last three optional."""

_REQUIRED = RECORD_COLUMNS[:6]
_OPTIONAL = RECORD_COLUMNS[6:]

DOCBENCH_DOMAINS: tuple[tuple[str, int, int], ...] = (
    ("academia", 0, 48), ("finance", 49, 88), ("government", 89, 132),
    ("laws", 133, 178), ("news", 179, 228),
)
"""Domain of each DocBench document folder number (inclusive ranges, from the DocBench
release's evaluation notebook)."""

# DocBench's own ``type`` labels; the split multimodal labels say whether the evidence is a
# figure or a table, which the paper reports together.
_DOCBENCH_TYPES = {
    "text-only": "text-only", "multimodal": "multimodal", "multimodal-f": "multimodal",
    "multimodal-t": "multimodal", "meta-data": "meta-data", "una": "unanswerable",
    "unanswerable": "unanswerable",
}

STATUSES = ("correct", "wrong", "undecided", "unparseable")
"""What a verdict can be: score 1, score 0, and the two kinds of no score."""

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
    "contains-reference": "the answer contains every content word of the short reference",
    "similarity": "ANLS-style similarity of the short reference to the closest run of "
                  "answer words: accepted above one threshold, rejected below another",
    "long-answer": "a long reference needs a judgment of meaning; left undecided",
    "llm": "a model judge's reply, 0 or 1",
    "unparseable": "a model judge's reply that is not exactly 0 or 1",
})
"""Every rule name a built-in judge puts in :attr:`Verdict.rule`, with what it means."""


# ---------------------------------------------------------------------------- records
def _where(i: int, labels: Sequence[str] | None) -> str:
    return labels[i] if labels is not None else f"index {i}"


def _bad(name: str, column: str, rule: str, bad: Sequence[int], values: Sequence[Any],
         labels: Sequence[str] | None, hint: str = "") -> ValidationError:
    first = bad[0]
    noun = "value" if len(bad) == 1 else "values"
    return ValidationError(
        f"{name}: {column} must be {rule}; found {len(bad)} {noun} breaking it, first at "
        f"{_where(first, labels)} ({values[first]!r}){hint}")


def _is_text(v: Any) -> bool:
    return isinstance(v, str) and not is_missing(v)


def _as_frame(records: Any, name: str, labels: Sequence[str] | None,
              required: Sequence[str]) -> pd.DataFrame:
    if isinstance(records, pd.DataFrame):
        frame = records.reset_index(drop=True)
        missing = [c for c in required if c not in frame.columns]
        if missing:
            raise ValidationError(
                f"{name} must have the columns {', '.join(required)}; found {len(missing)} "
                f"missing ({', '.join(missing)}) among {', '.join(map(str, frame.columns))}")
        return frame.copy()
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise ValidationError(
            f"{name} must be a DataFrame or a list of dicts; found {type(records).__name__}")
    rows = list(records)
    not_dicts = [i for i, r in enumerate(rows) if not isinstance(r, Mapping)]
    if not_dicts:
        i = not_dicts[0]
        raise ValidationError(
            f"{name} must be a DataFrame or a list of dicts; found {len(not_dicts)} items "
            f"that are not dicts, first at {_where(i, labels)} ({type(rows[i]).__name__})")
    # A key left out of one record is not the same as a null value: refuse it rather than
    # let pandas fill NaN (a missing "answer" key would become an empty answer, judged 0).
    lacking = [i for i, r in enumerate(rows) if any(c not in r for c in required)]
    if lacking:
        i = lacking[0]
        absent = [c for c in required if c not in rows[i]]
        raise ValidationError(
            f"{name}: every record must have the keys {', '.join(required)}; found "
            f"{len(lacking)} records without some, first at {_where(i, labels)} (no "
            f"{', '.join(absent)})")
    return pd.DataFrame.from_records(rows) if rows else pd.DataFrame(columns=list(required))


def _check_records(records: Any, *, name: str = "records",
                   labels: Sequence[str] | None = None,
                   require_answer: bool = True) -> pd.DataFrame:
    required = _REQUIRED if require_answer else tuple(c for c in _REQUIRED if c != "answer")
    frame = _as_frame(records, name, labels, required)
    n = len(frame)
    if n == 0:
        raise ValidationError(f"{name} must not be empty; found 0 records")
    if labels is not None and len(labels) != n:  # internal callers only
        raise AssertionError("one label per record")

    def check(column: str, ok: Callable[[Any], bool], rule: str, hint: str = "") -> list[Any]:
        values = frame[column].tolist()
        bad = [i for i, v in enumerate(values) if not ok(v)]
        if bad:
            raise _bad(name, column, rule, bad, values, labels, hint)
        return values

    check("doc_id", lambda v: _is_text(v) or (isinstance(v, (int, np.integer))
                                              and not isinstance(v, (bool, np.bool_))),
          "a non-empty string or an integer")
    for column in ("question", "reference", "domain"):
        check(column, _is_text, "a non-empty string")
    qtypes = ", ".join(repr(q) for q in QTYPES)
    check("qtype", lambda v: isinstance(v, str) and v in QTYPES, f"one of {qtypes}",
          " (DocBench's own labels 'una', 'multimodal-f' and 'multimodal-t' are read by "
          "load_docbench)")
    if "answer" in frame.columns:
        check("answer", lambda v: is_missing(v) or isinstance(v, str),
              "a string (empty or null for no answer)")
    if "evidence" in frame.columns:
        check("evidence", lambda v: is_missing(v) or isinstance(v, str),
              "a string or null")
    if "system" in frame.columns:
        check("system", _is_text, "a non-empty string")
    if "confidence" in frame.columns:
        values = check("confidence",
                       lambda v: is_missing(v) or (is_real(v) and 0.0 <= float(v) <= 1.0),
                       "a number within [0, 1] or null")
        frame["confidence"] = np.array(
            [math.nan if is_missing(v) else float(v) for v in values], dtype=np.float64)
    order = [c for c in RECORD_COLUMNS if c in frame.columns]
    return frame[order + [c for c in frame.columns if c not in RECORD_COLUMNS]]


def check_records(records: Any, *, require_answer: bool = True) -> pd.DataFrame:
    """Validate QA records and return them as a DataFrame.

    Parameters
    ----------
    records : DataFrame or iterable of dicts
        One record per answer. Required: ``doc_id`` (string or integer), ``question``,
        ``reference`` (the reference answer), ``answer`` (the system's answer; null or ""
        when it gave none), ``domain`` (any non-empty label; DocBench's are
        :data:`DOMAINS`), ``qtype`` (one of :data:`QTYPES`). Optional: ``evidence`` (the
        reference text), ``confidence`` (the system's confidence in its answer, in [0, 1],
        null where it gave none) and ``system`` (which system answered). Other columns
        are kept as they are.
    require_answer : bool, default True
        False accepts question sets without answers (no ``answer`` column).

    Returns
    -------
    DataFrame
        A copy with a fresh 0..n-1 index and the record columns first, in the order of
        :data:`RECORD_COLUMNS`; ``confidence`` as float64 with NaN for null.

    Raises
    ------
    ValidationError
        Naming the column, the rule, how many values break it and the first (by index).

    Examples
    --------
    >>> rows = [{"doc_id": "d1", "question": "Who signed it?", "reference": "Jane Smith",
    ...          "answer": "Jane Smith", "domain": "laws", "qtype": "una"}]
    >>> check_records(rows)
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: records: qtype must be one of 'text-only', 'multimodal', 'meta-data', 'unanswerable'; found 1 value breaking it, first at index 0 ('una') (DocBench's own labels 'una', 'multimodal-f' and 'multimodal-t' are read by load_docbench)
    >>> rows[0]["qtype"] = "text-only"
    >>> check_records(rows).columns.tolist()
    ['doc_id', 'question', 'reference', 'answer', 'domain', 'qtype']
    """
    if not isinstance(require_answer, bool):
        raise ValidationError(f"require_answer must be True or False; found {require_answer!r}")
    return _check_records(records, require_answer=require_answer)


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines of a UTF-8 file, gunzipped for .gz."""
    # io's reader decodes, gunzips and names the file and line of a bad byte or gzip
    return ((number, line) for number, line in _open_text(path) if line.strip())


def _read_jsonl(path: Path, label: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    label = str(path) if label is None else label
    rows, labels = [], []
    for number, line in _text_lines(path):
        where = f"{label}, line {number}"
        rows.append(read_json_object(line, where=f"{where}:", what="a JSON object (one record)",
                                     source=label, line=number))
        labels.append(where)
    return rows, labels


def load_records(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read QA records from a JSONL file, one record (a JSON object) per line.

    Blank lines are skipped; ``.gz`` files are gunzipped. The records are checked as by
    :func:`check_records`, and every error names the file and line.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "r.jsonl").write_text(
    ...     '{"doc_id": "d1", "question": "Q?", "reference": "12", "answer": "12", '
    ...     '"domain": "news", "qtype": "text-only"}\\n{"doc_id": "d2"}\\n')
    >>> load_records(folder / "r.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: records: every record must have the keys doc_id, question, reference, answer, domain, qtype; found 1 records without some, first at .../r.jsonl, line 2 (no question, reference, answer, domain, qtype)
    """
    path = Path(path)
    if not path.is_file():
        raise ValidationError(f"path must be an existing JSONL file; found {str(path)!r}")
    rows, labels = _read_jsonl(path)
    if not rows:
        raise ValidationError(f"{path}: must hold at least one record; found none")
    return _check_records(rows, labels=labels)


def _docbench_domain(folder: str, domains: Any) -> str:
    if domains is None:
        number = int(folder) if folder.isdigit() else -1
        for domain, low, high in DOCBENCH_DOMAINS:
            if low <= number <= high:
                return domain
        raise ValidationError(
            f"folder {folder!r}: the domain of a DocBench folder is read from its number "
            f"(0-228); found a name that is not one, so pass domains= (a mapping or a "
            f"function from folder name to domain)")
    given: Any = domains.get(folder) if isinstance(domains, Mapping) else domains(folder)
    if not _is_text(given):
        raise ValidationError(
            f"domains must give a non-empty domain for every folder; found {given!r} for "
            f"folder {folder!r}")
    return str(given)


_NUMBERED_RE = re.compile(r"(\d+)\.\s*(.*)", re.DOTALL)


def _numbered_answers(path: Path, expected: int) -> list[str]:
    """Answers of a DocBench ``<system>_results.txt``: "1. ...", "2. ...", one per question.

    A line that does not start the next number continues the previous answer (DocBench's
    own reading). Text before "1." is an error, not a preamble to drop.
    """
    answers: list[str] = []
    for number, line in _text_lines(path):
        text = line.strip()
        m = _NUMBERED_RE.match(text)
        if m and int(m.group(1)) == len(answers) + 1:
            answers.append(m.group(2).strip())
        elif answers:
            answers[-1] = f"{answers[-1]} {text}"
        else:
            raise ValidationError(
                f"{path}, line {number}: answers must be numbered 1., 2., ...; found text "
                f"before answer 1 ({text[:60]!r})")
    if len(answers) != expected:
        raise ValidationError(
            f"{path}: must hold one numbered answer per question ({expected}); found "
            f"{len(answers)}")
    return answers


def _system_answers(folder: Path, system: str, expected: int) -> tuple[list[Any], list[str]]:
    jsonl = folder / f"{system}_results.jsonl"
    if jsonl.is_file():
        rows, labels = _read_jsonl(jsonl)
        if len(rows) != expected:
            raise ValidationError(
                f"{jsonl}: must hold one answer per question ({expected}); found {len(rows)}")
        lacking = [i for i, r in enumerate(rows) if "sys_ans" not in r]
        if lacking:
            raise ValidationError(
                f'{labels[lacking[0]]}: must have the key "sys_ans" (the system\'s answer); '
                f"found {len(lacking)} lines without it")
        return [r["sys_ans"] for r in rows], labels
    text = folder / f"{system}_results.txt"
    if text.is_file():
        return list(_numbered_answers(text, expected)), [f"{text}, answer {i + 1}"
                                                         for i in range(expected)]
    raise ValidationError(
        f"{folder}: must hold the answers of system {system!r} as {jsonl.name} or "
        f"{text.name}; found neither")


def load_docbench(root: str | os.PathLike[str], *, system: str | None = None,
                  domains: Mapping[str, str] | Callable[[str], str] | None = None
                  ) -> pd.DataFrame:
    """Read DocBench's layout: a folder per document holding ``<n>_qa.jsonl``.

    Each line of ``<n>/<n>_qa.jsonl`` is ``{"question", "answer", "evidence", "type"}``,
    where ``answer`` is the *reference* answer. With ``system``, that system's answers are
    read from ``<n>/<system>_results.jsonl`` (DocBench's open-model output, one object with
    ``"sys_ans"`` per question) or else ``<n>/<system>_results.txt`` (numbered answers
    "1. ...", "2. ..."), one per question in order.

    Parameters
    ----------
    root : str or path-like
        The folder holding the document folders. Hidden entries and files beside the
        folders are not read.
    system : str, optional
        Whose answers to read. Without it the records have no ``answer`` column (a
        question set, to be answered and then judged).
    domains : mapping or callable, optional
        Folder name -> domain. Default: DocBench's numbering (:data:`DOCBENCH_DOMAINS`).

    Returns
    -------
    DataFrame
        Records with ``doc_id`` (the folder name), ``question``, ``reference``,
        ``answer`` and ``system`` (with ``system``), ``domain``, ``qtype`` (DocBench's
        ``una`` read as ``unanswerable``, ``multimodal-f``/``-t`` as ``multimodal``) and
        ``evidence``, in folder order (numeric when the names are numbers), then line
        order.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "51").mkdir()
    >>> qa = {"question": "What was net income?", "answer": "$5.5 million",
    ...       "evidence": "Net income was $5.5 million.", "type": "text-only"}
    >>> _ = (root / "51" / "51_qa.jsonl").write_text(json.dumps(qa) + "\\n")
    >>> _ = (root / "51" / "gpt-4o_results.txt").write_text("1. 5,500,000 dollars\\n")
    >>> load_docbench(root, system="gpt-4o")[["doc_id", "answer", "domain", "qtype"]]
      doc_id               answer   domain      qtype
    0     51  5,500,000 dollars  finance  text-only
    """
    root = Path(root)
    if not root.is_dir():
        raise ValidationError(f"root must be an existing folder; found {str(root)!r}")
    if system is not None and not _is_text(system):
        raise ValidationError(f"system must be a non-empty string; found {system!r}")
    if domains is not None and not (isinstance(domains, Mapping) or callable(domains)):
        raise ValidationError(
            f"domains must be a mapping or a function from folder name to domain; found "
            f"{type(domains).__name__}")
    folders = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit()
                                    else 0, p.name))
    if not folders:
        raise ValidationError(f"{root}: must hold one folder per document; found none")
    rows: list[dict[str, Any]] = []
    labels: list[str] = []
    for folder in folders:
        qa_file = folder / f"{folder.name}_qa.jsonl"
        if not qa_file.is_file():
            raise ValidationError(f"{folder}: must hold {qa_file.name}; found no such file")
        domain = _docbench_domain(folder.name, domains)
        lines = [(n, line) for n, line in _text_lines(qa_file)]
        answers: list[Any] = []
        if system is not None:
            answers, _ = _system_answers(folder, system, len(lines))
        for k, (number, line) in enumerate(lines):
            where = f"{qa_file}, line {number}"
            qa = read_json_object(line, where=f"{where}:", what="a JSON object (one record)",
                                  source=qa_file, line=number)
            absent = [key for key in ("question", "answer", "type") if key not in qa]
            if absent:
                raise ValidationError(
                    f'{where}: must have the keys "question", "answer" and "type"; found '
                    f"it without {', '.join(absent)}")
            qtype = _DOCBENCH_TYPES.get(qa["type"]) if isinstance(qa["type"], str) else None
            if qtype is None:
                raise ValidationError(
                    f"{where}: type must be one of {', '.join(map(repr, _DOCBENCH_TYPES))}; "
                    f"found {qa['type']!r}")
            row = {"doc_id": folder.name, "question": qa["question"],
                   "reference": qa["answer"]}
            if system is not None:
                row["answer"] = answers[k]
            row.update(domain=domain, qtype=qtype, evidence=qa.get("evidence"))
            if system is not None:
                row["system"] = system
            rows.append(row)
            labels.append(where)
    return _check_records(rows, labels=labels, require_answer=system is not None)


_SAMPLE_FILE = "docqa_sample.jsonl"


def load_sample() -> pd.DataFrame:
    """The bundled synthetic DocBench-style sample: 40 questions, 3 systems, 120 records.

    Eight invented documents (two per domain, none real) and ten questions per domain
    spread over the four question types, each answered by three simulated systems:
    ``sim-careful`` (with a confidence per answer, and a human verdict per answer in the
    ``human`` column), ``sim-terse`` and ``sim-verbose``. Made by the seeded script
    ``scripts/make_docqa_sample.py``, which reproduces the file byte for byte.

    Examples
    --------
    >>> sample = load_sample()
    >>> len(sample), sample["system"].nunique(), sorted(sample["qtype"].unique())
    (120, 3, ['meta-data', 'multimodal', 'text-only', 'unanswerable'])
    >>> int(sample["confidence"].notna().sum()), int(sample["human"].notna().sum())
    (40, 40)
    """
    resource = resources.files("confcal").joinpath("data").joinpath(_SAMPLE_FILE)
    with resources.as_file(resource) as path:
        rows, labels = _read_jsonl(Path(path), label=_SAMPLE_FILE)
    return _check_records(rows, labels=labels)


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
        tried, or ``"unparseable"`` for a model reply that is not exactly 0 or 1.
    reason : str
        What the judge saw, for people reading the verdicts.

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

    def __post_init__(self) -> None:
        if not (self.score is None or (type(self.score) is int and self.score in (0, 1))):
            raise ValidationError(f"score must be 1, 0 or None; found {self.score!r}")
        if not _is_text(self.rule):
            raise ValidationError(f"rule must be a non-empty string; found {self.rule!r}")
        if not isinstance(self.reason, str):
            raise ValidationError(f"reason must be a string; found {self.reason!r}")

    @property
    def status(self) -> str:
        """``"correct"``, ``"wrong"``, ``"unparseable"`` or ``"undecided"``."""
        if self.score is not None:
            return "correct" if self.score == 1 else "wrong"
        return "unparseable" if self.rule == "unparseable" else "undecided"


@runtime_checkable
class Judge(Protocol):
    """Anything with the judges' shared call (:class:`RuleJudge`, :class:`LLMJudge`)."""

    def judge(self, question: str, answer: Any, reference: str, *, qtype: str | None = None,
              evidence: str | None = None) -> Verdict: ...


def _text_arg(value: Any, name: str) -> str:
    if not _is_text(value):
        raise ValidationError(f"{name} must be a non-empty string; found {value!r}")
    return str(value)


def _qtype_arg(qtype: Any) -> str | None:
    if qtype is None:
        return None
    return check_option(qtype, "qtype", QTYPES)


def _answer_arg(answer: Any) -> str | None:
    """The answer text, or None when there is none (null, NaN, "" or spaces)."""
    if is_missing(answer):
        return None
    if not isinstance(answer, str):
        raise ValidationError(f"answer must be a string or None; found {answer!r}")
    return answer


_EMPTY = Verdict(0, "empty-answer", "the answer is empty; DocBench scores an empty answer 0")


# -------------------------------------------------------------------------- rule judge
_UNIT_WORDS = frozenset({
    # currencies, percent and scale words, hedges: words a number carries, not content
    "dollar", "dollars", "usd", "us", "eur", "euro", "euros", "pound", "pounds", "gbp",
    "yen", "jpy", "yuan", "rmb", "cny", "inr", "rupees", "percent", "per", "cent", "pct",
    "thousand", "thousands", "million", "millions", "billion", "billions", "trillion", "mn",
    "bn", "mln", "bln", "tn", "about", "around", "approximately", "approx", "roughly",
    "nearly", "almost", "over", "under", "more", "less", "than", "total", "some", "just",
    "exactly", "only",
})


def _fmt_quantities(quantities: Sequence[qt.Quantity]) -> str:
    return ", ".join(q.text for q in quantities) or "none"


@dataclass(frozen=True)
class _Facts:
    """The dates and numbers of a text, read once."""

    dates: qt.Dates
    plain_numbers: list[qt.Quantity]  # numbers outside the dates
    residue: str  # the text without its dates and numbers

    @classmethod
    def read(cls, text: str, dayfirst: bool) -> _Facts:
        dates = qt.dates_in(text, dayfirst=dayfirst)
        return cls(dates, qt.quantities_in(dates.rest), qt.strip_quantities(dates.rest))

    @property
    def numbers(self) -> list[qt.Quantity]:
        """The plain numbers and the year of every date (a year answers "which year")."""
        years = [qt.Quantity(float(d.year), False, d.isoformat()) for d in self.dates.full]
        years += [qt.Quantity(float(y), False, f"{y}-{m:02d}") for y, m in self.dates.months]
        return self.plain_numbers + years


@dataclass(frozen=True)
class RuleJudge:
    """A deterministic judge: DocBench's three rules as text rules, no model.

    The rules, in the order they are tried (each verdict names the one that decided, see
    :data:`RULES`):

    1. ``exact-match``: the answer equals the reference up to case, punctuation and
       articles: 1. ``empty-answer``: no answer: 0.
    2. ``unanswerable``: when ``qtype`` is ``"unanswerable"`` or the reference itself
       declines ("The document does not mention...", "Not stated"), a declining answer is
       1 and any other answer 0. A declining answer that also states dates or numbers the
       question does not is left undecided.
    3. ``yes-no``: when the reference opens with yes or no ("Yes, it does", "No.",
       "Correct"), the answer must open with the same; an answer with neither is
       undecided (but a decline of a "yes" question is 0).
    4. ``declined-answerable``: an answer that declines a question the reference answers
       is 0 (undecided when it states the reference's numbers anyway).
    5. Short references (at most ``max_short_words`` content words beyond the question):

       - ``date`` and ``number``: every date and number of the reference that the question
         does not already state must be in the answer: dates in any format
         :func:`confcal.parse_date` reads, at the reference's precision ("March 2024" is
         matched by any day of it); numbers with separators, scale words and percents
         ("5.5 million" = "5,500,000"; "12%" = "0.12" when the question asks for a share),
         equal when the more precise one rounds to the other as written ("5,512,000" is
         "5.5 million"; "2009" is not "2019") or within ``rel_tol``. A missing one is 0,
         or undecided when the answer states no date (no number beyond the question's)
         at all. When all are there
         but the reference also has words the answer lacks ("5 branches" vs "5 offices"),
         undecided.
       - ``contains-reference``: the answer has every content word of the reference: 1.
       - ``similarity``: 1 - normalized edit distance between the reference's content words
         and the closest run of answer words (ANLS-style): 1 at ``accept_similarity`` or
         above; 0 below ``reject_similarity`` when the answer is short too; else undecided.

       An answer with a negation the reference lacks ("not Jane Smith") is undecided
       where it would have been 1 by containment or similarity.
    6. ``long-answer``: a longer reference needs a judgment of meaning: undecided.

    Parameters
    ----------
    rel_tol : float, default 0.0
        Extra relative tolerance for numbers: |a - b| <= rel_tol * max(|a|, |b|) also
        matches. None by default: rounding to the written precision already accepts
        "about 5.5 million" for 5,478,921, and a relative tolerance cannot tell years
        apart (2009 is within 1% of 2019).
    accept_similarity, reject_similarity : float, default 0.9 and 0.5
        Similarity thresholds of the ``similarity`` rule (0.5 is ANLS's cut-off, below
        which ANLS scores 0).
    max_short_words : int, default 10
        A reference with more content words than this, beyond those of the question, is
        long.
    dayfirst : bool, default False
        Read an ambiguous 03/01/2024 as 3 January (False) or 1 March (True).

    Notes
    -----
    The rules read English. ``evidence`` is accepted for the shared call and not used:
    a rule judge compares with the reference answer only.

    Examples
    --------
    >>> judge = RuleJudge()
    >>> verdict = judge.judge("What was net income?", "5.5 million dollars", "$5,500,000")
    >>> verdict.score, verdict.rule
    (1, 'number')
    >>> verdict.reason
    'the reference states $5,500,000; the answer states 5.5 million'
    >>> judge.judge("Does the policy cover floods?", "No, it does not.", "Yes.")
    Verdict(score=0, rule='yes-no', reason='the reference says yes; the answer says no')
    >>> judge.judge("What is the CEO's salary?", "The report does not mention it.",
    ...             "Not mentioned in the document", qtype="unanswerable").score
    1
    >>> judge.judge("Why did sales fall?", "Because of the weather.",
    ...             "Sales fell because a new competitor cut prices in every region where "
    ...             "the company sells its main product line.").status
    'undecided'
    """

    rel_tol: float = 0.0
    accept_similarity: float = 0.9
    reject_similarity: float = 0.5
    max_short_words: int = 10
    dayfirst: bool = False

    def __post_init__(self) -> None:
        if not (is_real(self.rel_tol) and 0.0 <= float(self.rel_tol) < 1.0):
            raise ValidationError(f"rel_tol must be a number in [0, 1); found {self.rel_tol!r}")
        check_probability(self.accept_similarity, "accept_similarity", open_high=False)
        check_probability(self.reject_similarity, "reject_similarity", open_low=False)
        if not self.reject_similarity <= self.accept_similarity:
            raise ValidationError(
                f"reject_similarity must be <= accept_similarity; found "
                f"{self.reject_similarity!r} > {self.accept_similarity!r}")
        check_positive_int(self.max_short_words, "max_short_words", 1)
        if not isinstance(self.dayfirst, bool):
            raise ValidationError(f"dayfirst must be True or False; found {self.dayfirst!r}")

    def judge(self, question: str, answer: Any, reference: str, *, qtype: str | None = None,
              evidence: str | None = None) -> Verdict:
        """Judge one answer; see the class docstring for the rules.

        Parameters
        ----------
        question, reference : str
        answer : str or None
            None, NaN or "" is no answer.
        qtype : one of :data:`QTYPES`, optional
        evidence : str, optional
            Not used by the rules.

        Returns
        -------
        Verdict
        """
        question = _text_arg(question, "question")
        reference = _text_arg(reference, "reference")
        qtype = _qtype_arg(qtype)
        text = _answer_arg(answer)
        if text is None:
            return _EMPTY
        if qt.words(text) == qt.words(reference):
            return Verdict(1, "exact-match", "the answer is the reference")
        ref_yes = qt.polarity(reference)
        if qtype == "unanswerable" or (ref_yes is None and qt.declines(reference)):
            return self._unanswerable(question, text)
        if ref_yes is not None:
            return self._yes_no(ref_yes, text)
        if qt.declines(text):
            return self._declined(question, text, reference)
        return self._short(question, text, reference)

    # -- the rules -------------------------------------------------------------------
    def _unanswerable(self, question: str, answer: str) -> Verdict:
        if not qt.declines(answer):
            return Verdict(0, "unanswerable", "the reference says the document does not "
                                              "contain the answer; the answer gives one")
        q = _Facts.read(question, self.dayfirst)
        a = _Facts.read(answer, self.dayfirst)
        extra = [x for x in a.numbers if not any(qt.close(x, y, self.rel_tol, False)
                                                 for y in q.numbers)]
        if extra:
            return Verdict(None, "unanswerable",
                           f"the answer declines but also states {_fmt_quantities(extra)}")
        return Verdict(1, "unanswerable", "the reference and the answer both decline")

    def _yes_no(self, ref_yes: bool, answer: str) -> Verdict:
        said = qt.polarity(answer)
        ref_word = "yes" if ref_yes else "no"
        if said is None:
            if qt.declines(answer) and ref_yes:
                return Verdict(0, "declined-answerable",
                               "the reference says yes; the answer declines")
            return Verdict(None, "yes-no",
                           f"the reference says {ref_word}; the answer opens with neither")
        return Verdict(int(said == ref_yes), "yes-no",
                       f"the reference says {ref_word}; the answer says "
                       f"{'yes' if said else 'no'}")

    def _declined(self, question: str, answer: str, reference: str) -> Verdict:
        verdict = self._key_values(question, answer, reference)
        if verdict is not None and verdict.score == 1:
            return Verdict(None, "declined-answerable",
                           "the answer declines but states the reference's key values")
        return Verdict(0, "declined-answerable",
                       "the reference answers the question; the answer declines")

    def _key_values(self, question: str, answer: str, reference: str) -> Verdict | None:
        """The date and number rules, or None when the reference states neither."""
        q = _Facts.read(question, self.dayfirst)
        r = _Facts.read(reference, self.dayfirst)
        if not (r.dates or r.plain_numbers):
            return None
        a = _Facts.read(answer, self.dayfirst)
        share = qt.share_question(question)
        full = [(i, True) for i in range(len(r.dates.full))]
        months = [(i, False) for i in range(len(r.dates.months))]
        # What the question already states is context, not the answer ("What was revenue
        # in 2023?" "Revenue in 2023 was $5.5M": the answer need not repeat 2023) -- unless
        # the question states them all ("2019 or 2020?"), when they are the answer.
        dates = [d for d in full + months if not q.dates.has(r.dates, *d)] or full + months
        beyond = [x for x in r.plain_numbers
                  if not any(qt.close(x, y, self.rel_tol, share) for y in q.numbers)]
        numbers = beyond or r.plain_numbers
        ref_dates = r.dates.describe()
        missing_dates = [ref_dates[i if is_full else len(r.dates.full) + i]
                         for i, is_full in dates if not a.dates.has(r.dates, i, is_full)]
        if missing_dates:
            if not a.dates:
                return Verdict(None, "date", f"the reference states {missing_dates[0]}; the "
                                             "answer states no date that can be read")
            return Verdict(0, "date", f"the reference states {', '.join(missing_dates)}; the "
                                      f"answer states {', '.join(a.dates.describe())}")
        missing = [x for x in numbers
                   if not any(qt.close(x, y, self.rel_tol, share) for y in a.numbers)]
        rule = "number" if numbers else "date"
        if missing:
            # An answer whose only numbers are the question's has not stated one of its own
            # ("revenue in 2023 grew strongly"): nothing to compare, so no verdict -- unless
            # the answer is to pick one of the question's numbers ("2019 or 2020?").
            own = a.numbers if not beyond else [
                y for y in a.numbers
                if not any(qt.close(y, x, self.rel_tol, share) for x in q.numbers)]
            if not own:
                return Verdict(None, "number", f"the reference states "
                                               f"{_fmt_quantities(missing)}; the answer states "
                                               "no number of its own that can be read")
            return Verdict(0, "number", f"the reference states {_fmt_quantities(missing)}; "
                                        f"the answer states {_fmt_quantities(a.numbers)}")
        question_words = frozenset(qt.words(question))
        answer_words = frozenset(qt.words(answer))
        residue = [w for w in qt.content_words(r.residue, question_words)
                   if w not in _UNIT_WORDS and w not in answer_words]
        if residue:
            return Verdict(None, rule, f"the {rule}s match but the answer does not say "
                                       f"{' '.join(residue)!r}")
        if rule == "number":
            matched = [next(y for y in a.numbers if qt.close(x, y, self.rel_tol, share))
                       for x in numbers]
            return Verdict(1, "number", f"the reference states {_fmt_quantities(numbers)}; "
                                        f"the answer states {_fmt_quantities(matched)}")
        return Verdict(1, "date", f"the reference states {', '.join(ref_dates)}; the answer "
                                  "states the same")

    def _short(self, question: str, answer: str, reference: str) -> Verdict:
        question_words = frozenset(qt.words(question))
        core = (qt.content_words(reference, question_words) or qt.content_words(reference)
                or qt.words(reference))
        if len(core) > self.max_short_words:
            ref_words, ans_words = qt.words(reference), qt.words(answer)
            k = len(ref_words)
            if any(ans_words[i:i + k] == ref_words for i in range(len(ans_words) - k + 1)):
                return Verdict(1, "contains-reference", "the answer contains the reference")
            return Verdict(None, "long-answer",
                           f"the reference has {len(core)} content words beyond the "
                           f"question (more than {self.max_short_words}): a judgment of "
                           "meaning is needed")
        verdict = self._key_values(question, answer, reference)
        if verdict is not None:
            return verdict
        # A negation the reference lacks can reverse a match ("it was not Jane Smith").
        flipped = qt.negated(answer) and not qt.negated(reference)
        answer_words = qt.words(answer)
        if set(core) <= set(answer_words):
            if flipped:
                return Verdict(None, "contains-reference", "the answer contains the "
                                                           "reference but also a negation")
            return Verdict(1, "contains-reference",
                           f"the answer contains {' '.join(core)!r}")
        answer_core = qt.content_words(answer, question_words) or answer_words
        score = qt.similarity(core, answer_core)
        seen = f"similarity {score:.2f} of {' '.join(core)!r} to the closest answer words"
        if score >= self.accept_similarity:
            if flipped:
                return Verdict(None, "similarity", f"{seen}, but the answer has a negation")
            return Verdict(1, "similarity", seen)
        if score < self.reject_similarity and len(answer_core) <= self.max_short_words:
            return Verdict(0, "similarity", seen)
        return Verdict(None, "similarity", seen)


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
        _text_arg(self.prompt_template, "prompt_template")
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
        question = _text_arg(question, "question")
        reference = _text_arg(reference, "reference")
        _qtype_arg(qtype)
        if evidence is not None and not is_missing(evidence) and not isinstance(evidence, str):
            raise ValidationError(f"evidence must be a string or None; found {evidence!r}")
        text = _answer_arg(answer)
        if text is None:
            return _EMPTY
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


# ------------------------------------------------------------------------ judging all
def judge_records(records: Any, judge: Judge, *, prefix: str = "verdict") -> pd.DataFrame:
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
        ``<prefix>_reason``.

    Examples
    --------
    >>> rows = [{"doc_id": "d1", "question": "Is it signed?", "reference": "Yes",
    ...          "answer": "Yes, it is.", "domain": "laws", "qtype": "text-only"},
    ...         {"doc_id": "d1", "question": "Who signed it?", "reference": "Jane Smith",
    ...          "answer": None, "domain": "laws", "qtype": "text-only"}]
    >>> judge_records(rows, RuleJudge())[["verdict", "verdict_status", "verdict_rule"]]
       verdict verdict_status  verdict_rule
    0        1        correct        yes-no
    1        0          wrong  empty-answer
    """
    frame = _check_records(records)
    if not callable(getattr(judge, "judge", None)):
        raise ValidationError(
            f"judge must have a judge(question, answer, reference, *, qtype, evidence) "
            f"method; found {type(judge).__name__}")
    if not (isinstance(prefix, str) and re.fullmatch(r"\w+", prefix)):
        raise ValidationError(f"prefix must be a word such as 'verdict'; found {prefix!r}")
    columns = [prefix, f"{prefix}_status", f"{prefix}_rule", f"{prefix}_reason"]
    clash = [c for c in columns if c in frame.columns]
    if clash:
        raise ValidationError(
            f"records must not already have the verdict columns; found {', '.join(clash)} "
            f"(pass another prefix)")
    has_evidence = "evidence" in frame.columns
    verdicts: list[Verdict] = []
    for i, row in enumerate(frame.itertuples(index=False)):
        evidence = row.evidence if has_evidence else None
        try:
            verdict = judge.judge(row.question, row.answer, row.reference, qtype=row.qtype,
                                  evidence=None if is_missing(evidence) else evidence)
        except Exception as exc:
            if hasattr(exc, "add_note"):  # Python 3.11+
                exc.add_note(f"while judging record {i} (doc_id {row.doc_id!r})")
            raise
        if not isinstance(verdict, Verdict):
            raise ValidationError(
                f"judge.judge must return a Verdict; found {type(verdict).__name__} for "
                f"record {i}")
        verdicts.append(verdict)
    frame[columns[0]] = pd.array([v.score for v in verdicts], dtype="Int64")
    frame[columns[1]] = [v.status for v in verdicts]
    frame[columns[2]] = [v.rule for v in verdicts]
    frame[columns[3]] = [v.reason for v in verdicts]
    return frame


def _consistent(status: Any, score: float) -> bool:
    if status == "correct":
        return score == 1.0
    if status == "wrong":
        return score == 0.0
    return status in ("undecided", "unparseable") and math.isnan(score)


def _as_list(values: Any, name: str) -> list[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValidationError(
            f"{name} must be a sequence of Verdicts or of 1/0/None; found "
            f"{type(values).__name__}")
    return list(values.tolist() if hasattr(values, "tolist") else values)


def _verdict_arrays(verdicts: Any, n: int, name: str, frame: pd.DataFrame | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(scores as float 1/0/NaN, statuses) from Verdicts, scores or a column name."""
    if isinstance(verdicts, str):
        if frame is None or verdicts not in frame.columns:
            found = "" if frame is None else f" among {', '.join(map(str, frame.columns))}"
            raise ValidationError(
                f"{name} must be a column of the records when given by name; found no "
                f"column {verdicts!r}{found}")
        status_column = f"{verdicts}_status"
        values = frame[verdicts].tolist()
        statuses = frame[status_column].tolist() if status_column in frame.columns else None
    else:
        values = _as_list(verdicts, name)
        statuses = None
    if len(values) != n:
        raise ValidationError(f"{name} must have one verdict per record ({n}); found "
                              f"{len(values)}")
    scores = np.empty(n, dtype=np.float64)
    status = np.empty(n, dtype=object)
    bad: list[int] = []
    for i, v in enumerate(values):
        if isinstance(v, Verdict):
            scores[i] = math.nan if v.score is None else v.score
            status[i] = v.status
        elif is_missing(v):
            scores[i] = math.nan
            status[i] = "undecided"
        elif (isinstance(v, (bool, np.bool_)) or is_real(v)) and v in (0, 1):
            scores[i] = float(v)
            status[i] = "correct" if v == 1 else "wrong"
        else:
            bad.append(i)
    if bad:
        raise _bad("verdicts", name, "a Verdict, 1, 0 or None", bad, values, None)
    if statuses is not None:
        # A stored status column says which missing scores were unparseable replies.
        wrong = [i for i, (s, x) in enumerate(zip(statuses, scores))
                 if not _consistent(s, float(x))]
        if wrong:
            raise _bad("verdicts", status_column,
                       f"one of {', '.join(STATUSES)} and agree with {verdicts!r}",
                       wrong, statuses, None)
        status = np.asarray(statuses, dtype=object)
    return scores, status


# -------------------------------------------------------------------------- statistics
def wilson_interval(successes: int, n: int, *, confidence_level: float = 0.95
                    ) -> tuple[float, float]:
    """Wilson score interval for a proportion of ``successes`` out of ``n``.

    (p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), z the normal quantile of
    (1 + level)/2. Unlike the normal (Wald) interval it stays within [0, 1] and does not
    collapse to a point at 0 or n successes.

    Parameters
    ----------
    successes, n : int
        0 <= successes <= n.
    confidence_level : float in (0, 1), default 0.95

    Returns
    -------
    (low, high) : tuple of float
        NaN for n = 0, with an :class:`UndefinedMetricWarning`.

    Examples
    --------
    >>> # 8 of 10, z = 1.96: centre (8 + 1.92)/(10 + 3.84) = 0.7167,
    >>> # half-width 1.96/13.84 * sqrt(8*2/10 + 0.96) = 0.2266 -> (0.490, 0.943)
    >>> [round(x, 3) for x in wilson_interval(8, 10)]
    [0.49, 0.943]
    """
    k = check_positive_int(successes, "successes", 0)
    n = check_positive_int(n, "n", 0)
    if k > n:
        raise ValidationError(f"successes must be <= n ({n}); found {k}")
    level = check_probability(confidence_level, "confidence_level")
    if n == 0:
        warnings.warn("wilson_interval is undefined: n = 0 trials; returning NaN",
                      UndefinedMetricWarning, stacklevel=2)
        return math.nan, math.nan
    return _wilson(k, n, NormalDist().inv_cdf(0.5 + level / 2))


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    z2 = z * z
    centre = (k + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4)
    # At k = 0 (k = n) centre and half are equal in exact arithmetic, so the bound is 0 (1);
    # floating point leaves a residue of 1e-17 that must not read as "above zero".
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def _groupings(by: Any, frame: pd.DataFrame) -> list[tuple[str, ...]]:
    if isinstance(by, str):
        by = (by,)
    if not isinstance(by, Sequence):
        raise ValidationError(
            f"by must be a sequence of column names (or of tuples of them); found {by!r}")
    out: list[tuple[str, ...]] = []
    for entry in by:
        group = (entry,) if isinstance(entry, str) else entry
        if (not isinstance(group, Sequence) or not group
                or not all(isinstance(c, str) for c in group)):
            raise ValidationError(
                f"by must hold column names or tuples of them; found {entry!r}")
        absent = [c for c in group if c not in frame.columns]
        if absent:
            raise ValidationError(
                f"by must name columns of the records; found {', '.join(map(repr, absent))}, "
                f"not among {', '.join(map(str, frame.columns))}")
        out.append(tuple(group))
    return out


_KNOWN_ORDER = {"domain": DOMAINS, "qtype": QTYPES}


def _label(value: Any) -> str:
    if is_missing(value):
        return "(missing)"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))  # an integer column with gaps is float in pandas: 1, not 1.0
    return str(value)


def _sort_key(columns: tuple[str, ...], key: tuple[str, ...]) -> tuple[Any, ...]:
    """DocBench's order for domains and types, then alphabetical."""
    out: list[Any] = []
    for column, label in zip(columns, key):
        order = _KNOWN_ORDER.get(column, ())
        out.append((order.index(label) if label in order else len(order), label))
    return tuple(out)


_COUNT_COLUMNS = ("n", "correct", "wrong", "undecided", "unparseable", "judged")


def _counts(status: np.ndarray) -> dict[str, int]:
    counts = {s: int(np.count_nonzero(status == s)) for s in STATUSES}
    return {"n": int(status.size), **counts, "judged": counts["correct"] + counts["wrong"]}


def accuracy_table(records: Any, verdicts: Any, *,
                   by: Sequence[str | Sequence[str]] = ("domain", "qtype"),
                   confidence_level: float = 0.95) -> pd.DataFrame:
    """Accuracy overall and by group, with Wilson intervals; undecided counted apart.

    Parameters
    ----------
    records : DataFrame or list of dicts
        QA records (see :func:`check_records`; the ``answer`` column is not needed).
    verdicts : sequence of Verdict or of 1/0/None, or str
        One per record, in order; or the name of a records column holding them (as
        :func:`judge_records` writes it; its ``<name>_status`` column then tells
        unparseable from undecided).
    by : sequence of str or of tuples of str, default ("domain", "qtype")
        Each entry is one breakdown: a column gives a row per value (by domain, by
        qtype), a tuple of columns a row per combination.
    confidence_level : float, default 0.95
        Of the Wilson intervals.

    Returns
    -------
    DataFrame
        ``system`` (when the records have one: systems are never pooled), ``by``
        ("overall" or the breakdown, e.g. "domain" or "domain+qtype"), ``group`` ("all" or
        the value(s), joined by ", "), ``n`` (records), ``correct``, ``wrong``,
        ``undecided``, ``unparseable``, ``judged`` (= correct + wrong), ``accuracy`` (=
        correct / judged) and ``ci_low``, ``ci_high``.

    Notes
    -----
    Accuracy is over decided verdicts only; undecided and unparseable verdicts are
    neither right nor wrong, and their counts are in the table so that a reader can see
    how much was left out. A group with no decided verdict has accuracy NaN (one
    :class:`UndefinedMetricWarning` for the table).

    Examples
    --------
    >>> rows = [{"doc_id": i, "question": "Q?", "reference": "R", "answer": "A",
    ...          "domain": d, "qtype": "text-only"}
    ...         for i, d in enumerate(["news", "news", "news", "laws"])]
    >>> table = accuracy_table(rows, [1, 0, None, 1], by=["domain"])
    >>> table[["by", "group", "n", "correct", "undecided", "judged", "accuracy"]]
           by  group  n  correct  undecided  judged  accuracy
    0  overall    all  4        2          1       3  0.666667
    1   domain   laws  1        1          0       1  1.000000
    2   domain   news  3        1          1       2  0.500000
    """
    frame = _check_records(records, require_answer=False)
    groupings = _groupings(by, frame)
    level = check_probability(confidence_level, "confidence_level")
    _, status = _verdict_arrays(verdicts, len(frame), "verdicts", frame)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    systems: list[Any] = ([None] if "system" not in frame.columns
                          else sorted(frame["system"].unique(), key=str))
    rows: list[dict[str, Any]] = []
    for system in systems:
        part = (np.ones(len(frame), dtype=bool) if system is None
                else (frame["system"] == system).to_numpy())
        head = {} if system is None else {"system": system}
        rows.append({**head, "by": "overall", "group": "all", **_counts(status[part])})
        for columns in groupings:
            # Groups are told apart by their labels, so that missing values (None, NaN)
            # form one "(missing)" group instead of being dropped as pandas' groupby would.
            keys = [tuple(_label(v) for v in values)
                    for values in zip(*(frame[c].tolist() for c in columns))]
            index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
            codes = np.array([index[key] for key in keys])
            present = {keys[i] for i in np.flatnonzero(part)}
            for key in sorted(present, key=lambda k: _sort_key(columns, k)):
                mask = part & (codes == index[key])
                rows.append({**head, "by": "+".join(columns), "group": ", ".join(key),
                             **_counts(status[mask])})
    table = pd.DataFrame(rows)
    judged = table["judged"].to_numpy()
    correct = table["correct"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        table["accuracy"] = np.where(judged > 0, correct / np.maximum(judged, 1), math.nan)
    bounds = [_wilson(int(k), int(m), z) if m > 0 else (math.nan, math.nan)
              for k, m in zip(correct, judged)]
    table["ci_low"] = [b[0] for b in bounds]
    table["ci_high"] = [b[1] for b in bounds]
    empty = np.flatnonzero(judged == 0)
    if empty.size:
        first = table.iloc[int(empty[0])]
        where = ", ".join(f"{c} {first[c]}" for c in ("system", "by", "group") if c in table)
        warnings.warn(
            f"accuracy is undefined for {empty.size} group(s) with no decided verdict "
            f"(first: {where}); returning NaN", UndefinedMetricWarning, stacklevel=2)
    return table


def judge_agreement(a: Any, b: Any) -> dict[str, Any]:
    """How often two judges agree, and Cohen's kappa, on the answers both decided.

    Parameters
    ----------
    a, b : sequence of Verdict or of 1/0/None, same length
        Verdicts on the same answers in the same order, e.g. a judge's and a human's.
        Pairs where either is undecided or unparseable are left out and counted.

    Returns
    -------
    dict
        ``"agreement"``: fraction of compared pairs with the same verdict;
        ``"kappa"``: Cohen's kappa, (p_o − p_e) / (1 − p_e) with p_e the agreement
        expected from each judge's rate of 1s; ``"table"``: the 2×2 counts (DataFrame,
        rows ``a`` = 1, 0 and columns ``b`` = 1, 0); ``"n"``: pairs compared;
        ``"excluded"``: pairs left out; ``"undecided_a"``, ``"undecided_b"``: verdicts
        without a score on each side.

    Notes
    -----
    With no pair to compare, agreement and kappa are NaN; kappa is NaN too when p_e = 1
    (both judges gave one same verdict throughout). Each comes with an
    :class:`UndefinedMetricWarning`.

    Examples
    --------
    >>> # pairs (1,1) (1,1) (1,0) (0,0) (0,0) (0,1) and one left out: p_o = 4/6;
    >>> # a has three 1s of 6 and b three: p_e = .5*.5 + .5*.5 = .5 -> kappa = (2/3 - .5)/.5
    >>> result = judge_agreement([1, 1, 1, 0, 0, 0, None], [1, 1, 0, 0, 0, 1, 1])
    >>> round(result["agreement"], 4), round(result["kappa"], 4), result["excluded"]
    (0.6667, 0.3333, 1)
    >>> result["table"]
    b  1  0
    a
    1  2  1
    0  1  2
    """
    a, b = _as_list(a, "a"), _as_list(b, "b")
    n_a = len(a)
    if len(b) != n_a:
        raise ValidationError(
            f"a and b must have the same length (one verdict per answer); found {n_a} and "
            f"{len(b)}")
    sa, _ = _verdict_arrays(a, n_a, "a")
    sb, _ = _verdict_arrays(b, n_a, "b")
    both = ~np.isnan(sa) & ~np.isnan(sb)
    x, y = sa[both] == 1, sb[both] == 1
    counts = [[int(np.count_nonzero(x & y)), int(np.count_nonzero(x & ~y))],
              [int(np.count_nonzero(~x & y)), int(np.count_nonzero(~x & ~y))]]
    table = pd.DataFrame(counts, index=pd.Index([1, 0], name="a"),
                         columns=pd.Index([1, 0], name="b"))
    n = int(both.sum())
    result: dict[str, Any] = {
        "agreement": math.nan, "kappa": math.nan, "table": table, "n": n,
        "excluded": int(n_a - n), "undecided_a": int(np.isnan(sa).sum()),
        "undecided_b": int(np.isnan(sb).sum()),
    }
    if n == 0:
        warnings.warn("judge_agreement is undefined: no answer was decided by both judges; "
                      "returning NaN", UndefinedMetricWarning, stacklevel=2)
        return result
    observed = (counts[0][0] + counts[1][1]) / n
    p_a, p_b = x.mean(), y.mean()
    expected = float(p_a * p_b + (1 - p_a) * (1 - p_b))
    result["agreement"] = observed
    if expected >= 1.0:
        warnings.warn("kappa is undefined: both judges gave the same single verdict to every "
                      "answer (expected agreement 1); returning NaN",
                      UndefinedMetricWarning, stacklevel=2)
    else:
        result["kappa"] = (observed - expected) / (1.0 - expected)
    return result


def _calibration(frame: pd.DataFrame, status: np.ndarray, *, budgets: Sequence[float],
                 n_bins: int, binning: str, ties: str
                 ) -> list[tuple[dict[str, Any], Any]]:
    """(counts, CalibrationReport or None) per system that gave any confidence."""
    confidence = frame["confidence"].to_numpy(dtype=np.float64)
    systems: list[Any] = ([None] if "system" not in frame.columns
                          else sorted(frame["system"].unique(), key=str))
    decided = (status == "correct") | (status == "wrong")
    out = []
    for system in systems:
        part = (np.ones(len(frame), dtype=bool) if system is None
                else (frame["system"] == system).to_numpy())
        has = part & ~np.isnan(confidence)
        if not has.any():
            continue  # a system that states no confidence is not a calibration subject
        use = has & decided
        counts = {"records": int(part.sum()),
                  "without_confidence": int(part.sum() - has.sum()),
                  "unjudged": int((has & ~decided).sum())}
        if system is not None:
            counts = {"system": system, **counts}
        report = None
        if use.any():
            report = calibration_report(status[use] == "correct", confidence[use],
                                        budgets=budgets, n_bins=n_bins, binning=binning,
                                        ties=ties)
        else:
            whose = "the records" if system is None else f"system {system!r}"
            warnings.warn(
                f"calibration is undefined for {whose}: no answer has both a confidence and "
                f"a decided verdict; returning NaN", UndefinedMetricWarning, stacklevel=3)
        out.append((counts, report))
    return out


def calibration_table(records: Any, verdicts: Any, *,
                      budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                      binning: str = "quantile", ties: str = "expected") -> pd.DataFrame:
    """Can the answers' confidence be trusted? The verdicts through calibration_report.

    Every answer with a confidence and a decided verdict enters
    :func:`confcal.calibration_report` unchanged (correct = verdict 1): AUROC, ECE, MCE,
    Brier and ECARB, one row per system.

    Parameters
    ----------
    records : DataFrame or list of dicts
        QA records with a ``confidence`` column (null where a system gave none).
    verdicts : sequence of Verdict or of 1/0/None, or str
        As in :func:`accuracy_table`.
    budgets, n_bins, binning, ties
        As in :func:`confcal.calibration_report`.

    Returns
    -------
    DataFrame
        ``system`` (when the records have one), ``records``, ``without_confidence``
        (answers without one), ``unjudged`` (answers with a confidence but an undecided
        or unparseable verdict), then the columns of
        :meth:`confcal.CalibrationReport.to_frame` over the remaining answers (``n`` of
        them).

    Notes
    -----
    A system none of whose records carries a confidence has no row. A system whose
    answers with a confidence are all undecided has NaN metrics (with an
    :class:`UndefinedMetricWarning`), as do undefined metrics inside the report (AUROC
    when every answer is right, ECARB without errors).

    Examples
    --------
    >>> rows = [{"doc_id": i, "question": "Q?", "reference": "R", "answer": "A",
    ...          "domain": "news", "qtype": "text-only", "confidence": c}
    ...         for i, c in enumerate([0.9, 0.8, 0.3, 0.6, None])]
    >>> table = calibration_table(rows, [1, 1, 0, None, 1], budgets=[0.25], n_bins=2)
    >>> table[["records", "without_confidence", "unjudged", "n", "auroc", "ecarb@0.25"]]
       records  without_confidence  unjudged  n  auroc  ecarb@0.25
    0        5                   1         1  3    1.0         3.0
    """
    frame = _check_records(records, require_answer=False)
    if "confidence" not in frame.columns:
        raise ValidationError(
            f"records must have a confidence column to measure calibration; found the "
            f"columns {', '.join(map(str, frame.columns))}")
    _, status = _verdict_arrays(verdicts, len(frame), "verdicts", frame)
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    ties = check_option(ties, "ties", TIES)
    parts = _calibration(frame, status, budgets=budgets, n_bins=n_bins, binning=binning,
                         ties=ties)
    if not parts:
        raise ValidationError(
            f"records must carry a confidence to measure calibration; found none in "
            f"{len(frame)} records")
    metric_columns = (["n", "n_errors", "accuracy", "auroc", "ece", "mce", "brier"]
                      + [f"ecarb@{b:g}" for b in budgets]
                      + [f"ecarb_ceiling@{b:g}" for b in budgets])
    rows = []
    for counts, report in parts:
        if report is None:
            metrics: dict[str, Any] = {c: math.nan for c in metric_columns}
            metrics.update(n=0, n_errors=0)
        else:
            metrics = report.to_frame().iloc[0].to_dict()
        rows.append({**counts, **metrics})
    table = pd.DataFrame(rows)
    return table.astype({"n": "int64", "n_errors": "int64"})
