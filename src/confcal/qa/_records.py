"""QA records: their columns, their validation, and the readers that make them.

Private module of :mod:`confcal.qa.docqa`, which re-exports its public names. It owns the
record columns and DocBench's labels (:data:`DOMAINS`, :data:`QTYPES`,
:data:`RECORD_COLUMNS`, :data:`DOCBENCH_DOMAINS`), the one check every record passes
(:func:`validate_records`, behind the public :func:`check_records`, and its error builder
:func:`bad_values`), and the readers: JSONL records (:func:`load_records`), DocBench's
folder layout (:func:`load_docbench`) and the bundled sample (:func:`load_sample`).
Shared with the other ``qa`` modules: ``is_text``, ``bad_values``, ``validate_records``,
``text_lines``, ``docbench_domain``, ``docbench_qtype`` and ``NOTEBOOK_TYPES``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from .._files import read_json_object
from .._validation import is_missing, is_real
from ..exceptions import ValidationError
from ..scoring._documents import open_text

Records: TypeAlias = "pd.DataFrame | Sequence[Mapping[str, Any]]"
"""QA records as the functions take them: a DataFrame, or one mapping per answer."""

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

# DocBench's own ``type`` labels, read case-insensitively (the release writes some as
# "Multimodal-t"); the split multimodal labels say whether the evidence is a figure or a
# table, which the paper reports together.
_DOCBENCH_TYPES = {
    "text-only": "text-only", "multimodal": "multimodal", "multimodal-f": "multimodal",
    "multimodal-t": "multimodal", "meta-data": "meta-data", "una": "unanswerable",
    "unanswerable": "unanswerable",
}

NOTEBOOK_TYPES = {
    "text-only": "text-only", "multimodal-f": "multimodal", "multimodal-t": "multimodal",
    "multimodal": "multimodal", "meta-data": "meta-data", "una": "unanswerable",
}
"""How the official aggregation notebook groups DocBench's ``type`` labels: exactly these
spellings (case matters there), and any other label -- "Multimodal-t" included -- in the
unanswerable group."""

# ---------------------------------------------------------------------------- records
def _where(i: int, labels: Sequence[str] | None) -> str:
    return labels[i] if labels is not None else f"index {i}"


def bad_values(name: str, column: str, rule: str, bad: Sequence[int], values: Sequence[Any],
         labels: Sequence[str] | None, hint: str = "") -> ValidationError:
    first = bad[0]
    noun = "value" if len(bad) == 1 else "values"
    return ValidationError(
        f"{name}: {column} must be {rule}; found {len(bad)} {noun} breaking it, first at "
        f"{_where(first, labels)} ({values[first]!r}){hint}")


def is_text(v: Any) -> bool:
    return isinstance(v, str) and not is_missing(v)


def _frame_of(frame: pd.DataFrame, name: str, required: Sequence[str]) -> pd.DataFrame:
    """A copy of a records DataFrame, with a fresh index, that has every required column."""
    frame = frame.reset_index(drop=True)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValidationError(
            f"{name} must have the columns {', '.join(required)}; found {len(missing)} "
            f"missing ({', '.join(missing)}) among {', '.join(map(str, frame.columns))}")
    return frame.copy()


def _frame_of_rows(rows: list[Any], name: str, labels: Sequence[str] | None,
                   required: Sequence[str]) -> pd.DataFrame:
    """Records given as dicts, each of which must have every required key."""
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


def _as_frame(records: Any, name: str, labels: Sequence[str] | None,
              required: Sequence[str]) -> pd.DataFrame:
    if isinstance(records, pd.DataFrame):
        return _frame_of(records, name, required)
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise ValidationError(
            f"{name} must be a DataFrame or a list of dicts; found {type(records).__name__}")
    return _frame_of_rows(list(records), name, labels, required)


def _is_doc_id(v: Any) -> bool:
    """A document id is a non-empty string or an integer (not a boolean)."""
    return is_text(v) or (isinstance(v, (int, np.integer))
                          and not isinstance(v, (bool, np.bool_)))


def _is_qtype(v: Any) -> bool:
    return isinstance(v, str) and v in QTYPES


def _is_text_or_missing(v: Any) -> bool:
    return is_missing(v) or isinstance(v, str)


def _is_confidence(v: Any) -> bool:
    return is_missing(v) or (is_real(v) and 0.0 <= float(v) <= 1.0)


def _check_column(frame: pd.DataFrame, name: str, labels: Sequence[str] | None, column: str,
                  ok: Callable[[Any], bool], rule: str, hint: str = "") -> list[Any]:
    """The column's values, every one of which must pass ``ok``; the error names ``rule``."""
    values = frame[column].tolist()
    bad = [i for i, v in enumerate(values) if not ok(v)]
    if bad:
        raise bad_values(name, column, rule, bad, values, labels, hint)
    return values


def _check_optional_columns(frame: pd.DataFrame, name: str,
                            labels: Sequence[str] | None) -> None:
    """Check the optional columns the records have; confidences become float64, NaN
    for null."""
    if "answer" in frame.columns:
        _check_column(frame, name, labels, "answer", _is_text_or_missing,
                      "a string (empty or null for no answer)")
    if "evidence" in frame.columns:
        _check_column(frame, name, labels, "evidence", _is_text_or_missing, "a string or null")
    if "system" in frame.columns:
        _check_column(frame, name, labels, "system", is_text, "a non-empty string")
    if "confidence" in frame.columns:
        values = _check_column(frame, name, labels, "confidence", _is_confidence,
                               "a number within [0, 1] or null")
        frame["confidence"] = np.array(
            [math.nan if is_missing(v) else float(v) for v in values], dtype=np.float64)


def validate_records(records: Any, *, name: str = "records",
                   labels: Sequence[str] | None = None,
                   require_answer: bool = True) -> pd.DataFrame:
    required = _REQUIRED if require_answer else tuple(c for c in _REQUIRED if c != "answer")
    frame = _as_frame(records, name, labels, required)
    n = len(frame)
    if n == 0:
        raise ValidationError(f"{name} must not be empty; found 0 records")
    if labels is not None and len(labels) != n:  # internal callers only
        raise AssertionError("one label per record")
    _check_column(frame, name, labels, "doc_id", _is_doc_id, "a non-empty string or an integer")
    for column in ("question", "reference", "domain"):
        _check_column(frame, name, labels, column, is_text, "a non-empty string")
    qtypes = ", ".join(repr(q) for q in QTYPES)
    _check_column(frame, name, labels, "qtype", _is_qtype, f"one of {qtypes}",
                  " (DocBench's own labels 'una', 'multimodal-f' and 'multimodal-t' are read "
                  "by load_docbench)")
    _check_optional_columns(frame, name, labels)
    order = [c for c in RECORD_COLUMNS if c in frame.columns]
    return frame[order + [c for c in frame.columns if c not in RECORD_COLUMNS]]


def check_records(records: Records, *, require_answer: bool = True) -> pd.DataFrame:
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
    confcal.exceptions.ValidationError: records: qtype must be one of 'text-only', 'multimodal',
    'meta-data', 'unanswerable'; found 1 value breaking it, first at index 0 ('una') (DocBench's own
    labels 'una', 'multimodal-f' and 'multimodal-t' are read by load_docbench)
    >>> rows[0]["qtype"] = "text-only"
    >>> check_records(rows).columns.tolist()
    ['doc_id', 'question', 'reference', 'answer', 'domain', 'qtype']
    """
    if not isinstance(require_answer, bool):
        raise ValidationError(f"require_answer must be True or False; found {require_answer!r}")
    return validate_records(records, require_answer=require_answer)


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines of a UTF-8 file, gunzipped for .gz.

    A UTF-8 byte order mark opening the file (what Windows editors write) is not text.
    """
    # io's reader decodes, gunzips and names the file and line of a bad byte or gzip
    for number, line in open_text(path):
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if line.strip():
            yield number, line


def _read_jsonl(path: Path, label: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    label = str(path) if label is None else label
    rows, labels = [], []
    for number, line in text_lines(path):
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

    See Also
    --------
    check_records : the checks a record passes.
    judge_records : judges them.

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
    confcal.exceptions.ValidationError: records: every record must have the keys doc_id, question,
    reference, answer, domain, qtype; found 1 records without some, first at .../r.jsonl, line 2 (no
    question, reference, answer, domain, qtype)
    """
    path = Path(path)
    if not path.is_file():
        raise ValidationError(f"path must be an existing JSONL file; found {str(path)!r}")
    rows, labels = _read_jsonl(path)
    if not rows:
        raise ValidationError(f"{path}: must hold at least one record; found none")
    return validate_records(rows, labels=labels)


def docbench_domain(folder: str, domains: Any) -> str:
    """The domain of a DocBench document folder: from its number, or from ``domains``."""
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
    if not is_text(given):
        raise ValidationError(
            f"domains must give a non-empty domain for every folder; found {given!r} for "
            f"folder {folder!r}")
    return str(given)


def check_domains(domains: Any) -> None:
    """``domains`` must be None, a mapping or a function from folder name to domain."""
    if domains is not None and not (isinstance(domains, Mapping) or callable(domains)):
        raise ValidationError(
            f"domains must be a mapping or a function from folder name to domain; found "
            f"{type(domains).__name__}")


def docbench_qtype(label: Any, where: str) -> str:
    """confcal's qtype of a DocBench ``type`` label (read case-insensitively)."""
    qtype = _DOCBENCH_TYPES.get(label.lower()) if isinstance(label, str) else None
    if qtype is None:
        raise ValidationError(
            f"{where}: type must be one of {', '.join(map(repr, _DOCBENCH_TYPES))} (any "
            f"case); found {label!r}")
    return qtype


# "1. ...", "1) ...", "**1.** ...", "**1**. ...": the number, its mark, the rest of the line
_NUMBERED_RE = re.compile(r"(\*\*)?(\d+)(\*\*)?([.)])(\*\*)?(.*)", re.DOTALL)


def _ambiguous(path: Path, number: int, text: str, m: re.Match[str] | None,
               answers: list[str], started: list[int]) -> ValidationError | None:
    """The error for a numbered line that cannot be told apart from an answer's text: the
    number of the answer in progress again, or the next number followed at once by a
    digit ("2.5 million")."""
    if m is None:
        return None
    if answers and int(m.group(2)) == len(answers):
        return ValidationError(
            f"{path}, line {number}: {text[:60]!r} is ambiguous: answer {len(answers)} "
            f"already started on line {started[-1]}, so one of the two lines is an item "
            f"of a numbered list inside an answer; number that list otherwise (a), b), "
            f"...) or join its items to the line before", source=path, line=number)
    due = int(m.group(2)) == len(answers) + 1
    if due and m.group(4) == "." and not (m.group(3) or m.group(5)) \
            and m.group(6)[:1].isdigit():
        previous = f"continue answer {len(answers)}" if answers else "be text before it"
        return ValidationError(
            f"{path}, line {number}: {text[:60]!r} is ambiguous: it may start answer "
            f"{len(answers) + 1} or {previous} (a decimal number); put a space after "
            f"the number's dot ({m.group(2)}. ...) or join the line to the one before",
            source=path, line=number)
    return None


def _numbered_answers(path: Path, expected: int) -> list[str]:
    """Answers of a DocBench ``<system>_results.txt``: "1. ...", "2. ...", one per question.

    Numbers are written ``1.``, ``1)``, ``**1.**`` or ``**1**.``. A line that does not start
    the next number continues the previous answer (DocBench's own reading). Text before
    the first answer is an error, not a preamble to drop, and so is a line that starts
    with the next number followed at once by a digit ("2.5 million" while answer 2 is
    due): it may be answer 2 ("5 million") or answer 1 going on, and no rule can tell. So
    is a line that starts with the number of the answer in progress ("2. ..." again while
    answer 2 is open): the answer before held a numbered list, and which of the two lines
    starts answer 2 cannot be told.
    """
    answers: list[str] = []
    started: list[int] = []  # the line each answer starts on
    for number, line in text_lines(path):
        text = line.strip()
        m = _NUMBERED_RE.match(text)
        error = _ambiguous(path, number, text, m, answers, started)
        if error is not None:
            raise error
        if m is not None and int(m.group(2)) == len(answers) + 1:
            answers.append(m.group(6).strip())
            started.append(number)
        elif answers:
            answers[-1] = f"{answers[-1]} {text}"
        else:
            raise ValidationError(
                f"{path}, line {number}: answers must be numbered 1., 2., ...; found text "
                f"before answer 1 ({text[:60]!r})", source=path, line=number)
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


def _document_folders(root: Path) -> tuple[list[Path], list[str]]:
    """The document folders in DocBench's order (numbers first, numerically) and the
    names of those skipped as DocBench's scripts skip them (``__pycache__``, ``.x``)."""
    entries = sorted(p for p in root.iterdir() if p.is_dir())
    skipped = [p.name for p in entries if p.name.startswith(("__", "."))]
    folders = sorted((p for p in entries if not p.name.startswith(("__", "."))),
                     key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit()
                                    else 0, p.name))
    if not folders:
        raise ValidationError(f"{root}: must hold one folder per document; found none")
    return folders, skipped


def _docbench_row(qa: dict[str, Any], doc_id: str, where: str, domain: str,
                  system: str | None, answer: Any) -> dict[str, Any]:
    """One question of ``<n>_qa.jsonl`` as a record (with the system's answer)."""
    absent = [key for key in ("question", "answer", "type") if key not in qa]
    if absent:
        raise ValidationError(
            f'{where}: must have the keys "question", "answer" and "type"; found '
            f"it without {', '.join(absent)}")
    qtype = docbench_qtype(qa["type"], where)
    row = {"doc_id": doc_id, "question": qa["question"], "reference": qa["answer"]}
    if system is not None:
        row["answer"] = answer
    row.update(domain=domain, qtype=qtype, evidence=qa.get("evidence"))
    if system is not None:
        row["system"] = system
    row["docbench_type"] = qa["type"]
    return row


def _folder_records(folder: Path, system: str | None, domains: Any
                    ) -> tuple[list[dict[str, Any]], list[str]]:
    """The records of one document folder and where each was read."""
    qa_file = folder / f"{folder.name}_qa.jsonl"
    if not qa_file.is_file():
        raise ValidationError(f"{folder}: must hold {qa_file.name}; found no such file")
    domain = docbench_domain(folder.name, domains)
    lines = list(text_lines(qa_file))
    answers: list[Any] = [None] * len(lines)
    if system is not None:
        answers, _ = _system_answers(folder, system, len(lines))
    rows, labels = [], []
    for (number, line), answer in zip(lines, answers, strict=True):
        where = f"{qa_file}, line {number}"
        qa = read_json_object(line, where=f"{where}:", what="a JSON object (one record)",
                              source=qa_file, line=number)
        rows.append(_docbench_row(qa, folder.name, where, domain, system, answer))
        labels.append(where)
    return rows, labels


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
        labels read in any case, ``una`` as ``unanswerable``, ``multimodal-f``/``-t`` as
        ``multimodal``), ``evidence`` and ``docbench_type`` (the label as written, which
        the DocBench aggregation groups by: :data:`NOTEBOOK_TYPES`), in folder order
        (numeric when the names are numbers), then line order. Folders whose names start
        with ``__`` or ``.`` (``__pycache__``) are skipped, as DocBench's own scripts skip
        them, and listed in ``frame.attrs["skipped_folders"]``.

    See Also
    --------
    load_records : records of your own system.
    judge_records : judges them.

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
    if system is not None and not is_text(system):
        raise ValidationError(f"system must be a non-empty string; found {system!r}")
    if system is not None and (any(c in system for c in "/\\\0") or system.startswith(".")):
        # it names files inside each document's folder: never a path that leads out
        raise ValidationError(f"system must be a file-name-safe name (no '/', '\\' or NUL, "
                              f"not starting with '.'); found {system!r}")
    check_domains(domains)
    folders, skipped = _document_folders(root)
    rows: list[dict[str, Any]] = []
    labels: list[str] = []
    for folder in folders:
        folder_rows, folder_labels = _folder_records(folder, system, domains)
        rows += folder_rows
        labels += folder_labels
    frame = validate_records(rows, labels=labels, require_answer=system is not None)
    frame.attrs["skipped_folders"] = skipped
    return frame


_SAMPLE_FILE = "docqa_sample.jsonl"


def load_sample() -> pd.DataFrame:
    """The bundled synthetic DocBench-style sample: 40 questions, 3 systems, 120 records.

    Ten invented documents (two per domain, none real) and eight questions per domain
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
    return validate_records(rows, labels=labels)
