"""Tables over judged records: accuracy, judge agreement and calibration on answers.

Private module of :mod:`confcal.qa.docqa`, which re-exports its public names. It owns how
verdicts are read (Verdicts, 1/0/None or a records column with its status column), the
Wilson interval (:func:`wilson_interval`), :func:`accuracy_table` (overall and by group,
strictly or as the official DocBench notebook aggregates), :func:`cascade_table` (who
decided what), :func:`judge_agreement` (agreement and Cohen's kappa) and
:func:`calibration_table` (the
verdicts through :func:`confcal.calibration_report`; its per-system parts,
:func:`calibration_parts`, are shared with ``confcal qa``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    check_budgets,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    is_missing,
    is_real,
)
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..metrics._metrics import BINNINGS, DEFAULT_BUDGETS, TIES
from ..metrics._report import calibration_report
from ._judges import MODEL_RULES, docbench_digits
from ._records import DOMAINS, NOTEBOOK_TYPES, QTYPES, Records, bad_values, validate_records
from ._verdicts import CONVENTIONS, STATUSES, Verdict, Verdicts


def _consistent(status: Any, score: float) -> bool:
    if status == "correct":
        return score == 1.0
    if status == "wrong":
        return score == 0.0
    return status in ("undecided", "unparseable", "failed") and math.isnan(score)


def _as_list(values: Any, name: str) -> list[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValidationError(
            f"{name} must be a sequence of Verdicts or of 1/0/None; found "
            f"{type(values).__name__}")
    return list(values.tolist() if hasattr(values, "tolist") else values)


def _verdict_values(verdicts: Any, name: str, frame: pd.DataFrame | None
                    ) -> tuple[list[Any], list[Any] | None, str]:
    """The verdicts as given, and the stored statuses (with their column's name) when
    they are a records column that has its ``<name>_status`` column."""
    if not isinstance(verdicts, str):
        return _as_list(verdicts, name), None, ""
    if frame is None or verdicts not in frame.columns:
        found = "" if frame is None else f" among {', '.join(map(str, frame.columns))}"
        raise ValidationError(
            f"{name} must be a column of the records when given by name; found no "
            f"column {verdicts!r}{found}")
    status_column = f"{verdicts}_status"
    statuses = frame[status_column].tolist() if status_column in frame.columns else None
    return frame[verdicts].tolist(), statuses, status_column


def _read_verdict(v: Any) -> tuple[float, str] | None:
    """(score as 1.0, 0.0 or NaN, status) of a Verdict or 1/0/None; None for neither."""
    if isinstance(v, Verdict):
        return (math.nan if v.score is None else float(v.score)), v.status
    if is_missing(v):
        return math.nan, "undecided"
    if (isinstance(v, (bool, np.bool_)) or is_real(v)) and v in (0, 1):
        return float(v), "correct" if v == 1 else "wrong"
    return None


def _verdict_arrays(verdicts: Any, n: int, name: str, frame: pd.DataFrame | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(scores as float 1/0/NaN, statuses) from Verdicts, scores or a column name."""
    values, statuses, status_column = _verdict_values(verdicts, name, frame)
    if len(values) != n:
        raise ValidationError(f"{name} must have one verdict per record ({n}); found "
                              f"{len(values)}")
    read = [_read_verdict(v) for v in values]
    bad = [i for i, r in enumerate(read) if r is None]
    if bad:
        raise bad_values("verdicts", name, "a Verdict, 1, 0 or None", bad, values, None)
    scores = np.array([r[0] for r in read if r is not None], dtype=np.float64)
    status = np.array([r[1] for r in read if r is not None], dtype=object)
    if statuses is not None:
        # A stored status column says which missing scores were unparseable replies.
        wrong = [i for i, (s, x) in enumerate(zip(statuses, scores, strict=True))
                 if not _consistent(s, float(x))]
        if wrong:
            raise bad_values("verdicts", status_column,
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
    for column, label in zip(columns, key, strict=True):
        order = _KNOWN_ORDER.get(column, ())
        out.append((order.index(label) if label in order else len(order), label))
    return tuple(out)


_COUNT_COLUMNS = ("n", "correct", "wrong", "undecided", "unparseable", "failed", "judged")


def _counts(status: np.ndarray) -> dict[str, int]:
    counts = {s: int(np.count_nonzero(status == s)) for s in STATUSES}
    return {"n": int(status.size), **counts, "judged": counts["correct"] + counts["wrong"]}


def _replies(verdicts: Any, n: int, frame: pd.DataFrame) -> list[str | None]:
    """Each verdict's model reply (None where there is none), for the DocBench reading."""
    if isinstance(verdicts, str):
        column = f"{verdicts}_reply"
        if column not in frame.columns:
            return [None] * n
        return [v if isinstance(v, str) else None for v in frame[column].tolist()]
    return [v.reply if isinstance(v, Verdict) else None for v in _as_list(verdicts, "verdicts")]


def _docbench_reads(scores: np.ndarray, replies: Sequence[str | None]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per verdict: is a "1" in its reply's first 20 characters, is a "0"?

    A verdict without a reply (a rule judge's, an empty answer scored without asking, a
    failed call, a plain 1/0/None) reads as the reply "1", "0" or one without a digit.
    """
    one = scores == 1.0
    zero = scores == 0.0
    for i, reply in enumerate(replies):
        if reply is not None:
            one[i], zero[i] = docbench_digits(reply)
    return one, zero


def _type_labels(frame: pd.DataFrame) -> list[tuple[str]]:
    """The notebook's type group of each record (from ``docbench_type`` when present)."""
    raw = (frame["docbench_type"].tolist() if "docbench_type" in frame.columns
           else [None] * len(frame))
    return [(NOTEBOOK_TYPES.get(r, "unanswerable") if isinstance(r, str) else str(q),)
            for r, q in zip(raw, frame["qtype"].tolist(), strict=True)]


@dataclass(frozen=True)
class _Tally:
    """Counts the verdicts of any group of records, strictly or, with ``reads`` (is a "1"
    in each reply's first 20 characters, is a "0"), as the DocBench notebook does."""

    scores: np.ndarray
    status: np.ndarray
    reads: tuple[np.ndarray, np.ndarray] | None = None

    def row(self, head: dict[str, Any], by: str, group: str, mask: np.ndarray,
            type_rule: bool = False) -> dict[str, Any]:
        counts = _counts(self.status[mask])
        if self.reads is not None:
            one, zero = self.reads
            # by type the notebook counts what is not a "0" as right; elsewhere a "1"
            right = ~zero[mask] if type_rule else one[mask]
            strict = self.scores[mask]
            counts["correct"] = int(np.count_nonzero(right))
            counts["wrong"] = counts["n"] - counts["correct"]
            counts["judged"] = counts["n"]
            counts["counted_differently"] = int(np.count_nonzero(
                np.isnan(strict) | (strict != right.astype(np.float64))))
        return {**head, "by": by, "group": group, **counts}


def _group_codes(frame: pd.DataFrame, columns: tuple[str, ...],
                 type_labels: list[tuple[str]] | None
                 ) -> tuple[list[tuple[str, ...]], dict[tuple[str, ...], int], np.ndarray]:
    """Each record's group key under a breakdown, the code of each key and each record's
    code. Groups are told apart by their labels, so that missing values (None, NaN) form
    one "(missing)" group instead of being dropped as pandas' groupby would;
    ``type_labels`` are the keys of the DocBench type breakdown."""
    keys: list[tuple[str, ...]] = (
        list(type_labels) if type_labels is not None else
        [tuple(_label(v) for v in values)
         for values in zip(*(frame[c].tolist() for c in columns), strict=True)])
    index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    return keys, index, np.array([index[key] for key in keys])


def _with_accuracy(table: pd.DataFrame, z: float, docbench: bool) -> pd.DataFrame:
    """The table with ``accuracy`` = correct / judged and its Wilson interval."""
    judged = table["judged"].to_numpy()
    correct = table["correct"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        table["accuracy"] = np.where(judged > 0, correct / np.maximum(judged, 1), math.nan)
    bounds = [_wilson(int(k), int(m), z) if m > 0 else (math.nan, math.nan)
              for k, m in zip(correct, judged, strict=True)]
    table["ci_low"] = [b[0] for b in bounds]
    table["ci_high"] = [b[1] for b in bounds]
    if docbench:  # the last column: what a reader compares the two tables by
        table["counted_differently"] = table.pop("counted_differently")
    return table


def accuracy_table(records: Records, verdicts: Verdicts, *,
                   by: Sequence[str | Sequence[str]] = ("domain", "qtype"),
                   confidence_level: float = 0.95, convention: str = "strict") -> pd.DataFrame:
    """Accuracy overall and by group, with Wilson intervals, strictly or as DocBench did.

    Parameters
    ----------
    records : DataFrame or list of dicts
        QA records (see :func:`check_records`; the ``answer`` column is not needed).
    verdicts : sequence of Verdict or of 1/0/None, or str
        One per record, in order; or the name of a records column holding them (as
        :func:`judge_records` writes it; its ``<name>_status`` column then tells
        unparseable and failed from undecided, and its ``<name>_reply`` column holds the
        model's replies for the DocBench aggregation).
    by : sequence of str or of tuples of str, default ("domain", "qtype")
        Each entry is one breakdown: a column gives a row per value (by domain, by
        qtype), a tuple of columns a row per combination.
    confidence_level : float, default 0.95
        Of the Wilson intervals.
    convention : {"strict", "docbench"}, default "strict"
        ``"strict"``: accuracy over decided verdicts, the rest counted apart.
        ``"docbench"``: the official DocBench notebook's aggregation, exactly (see Notes).

    Returns
    -------
    DataFrame
        ``system`` (when the records have one: systems are never pooled), ``by``
        ("overall" or the breakdown, e.g. "domain" or "domain+qtype"), ``group`` ("all" or
        the value(s), joined by ", "), ``n`` (records), ``correct``, ``wrong``,
        ``undecided``, ``unparseable``, ``failed``, ``judged``, ``accuracy`` (= correct /
        judged) and ``ci_low``, ``ci_high``; with ``convention="docbench"`` also
        ``counted_differently``.

    See Also
    --------
    judge_records : the verdicts it counts.
    wilson_interval : the intervals of each share.

    Notes
    -----
    Strict: ``judged`` = correct + wrong. Undecided, unparseable and failed verdicts are
    neither right nor wrong, and their counts are in the table so that a reader can see
    how much was left out. A group with no decided verdict has accuracy NaN (one
    :class:`UndefinedMetricWarning` for the table).

    DocBench: every record counts (``judged`` = ``n``), read from the judge's reply as the
    official notebook reads it, by its first 20 characters. Overall, by domain and by any
    breakdown other than ``qtype`` alone, an answer is right when a "1" is there; by
    ``qtype`` it is wrong when a "0" is there and right otherwise. So a reply with no
    digit is wrong by domain but right by type, and one with both digits right by domain
    but wrong by type. The type groups are the notebook's: from ``docbench_type`` (the
    label as written, :data:`NOTEBOOK_TYPES`; an unknown spelling such as "Multimodal-t"
    counts as unanswerable there) when the records have it, else ``qtype``. A verdict
    without a reply reads as the reply "1", "0" or one without a digit (an undecided or
    failed verdict). ``undecided``, ``unparseable`` and ``failed`` still count the
    verdicts the strict reading leaves out, and ``counted_differently`` how many records
    of the group this table counts otherwise than the strict one does (left out there, or
    the other way).

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
    >>> # the undecided news answer: no reply, no digit -> wrong overall and by domain,
    >>> # right by type: overall 2/4, text-only 1 - 1/4 (one "0")
    >>> paper = accuracy_table(rows, [1, 0, None, 1], convention="docbench")
    >>> paper[["by", "group", "n", "correct", "accuracy", "counted_differently"]]
            by      group  n  correct  accuracy  counted_differently
    0  overall        all  4        2      0.50                    1
    1   domain       laws  1        1      1.00                    0
    2   domain       news  3        1      0.33                    1
    3    qtype  text-only  4        3      0.75                    1
    """
    frame = validate_records(records, require_answer=False)
    groupings = _groupings(by, frame)
    level = check_probability(confidence_level, "confidence_level")
    convention = check_option(convention, "convention", CONVENTIONS)
    scores, status = _verdict_arrays(verdicts, len(frame), "verdicts", frame)
    docbench = convention == "docbench"
    tally = _Tally(scores, status, _docbench_reads(
        scores, _replies(verdicts, len(frame), frame)) if docbench else None)
    breakdowns = []
    for columns in groupings:
        type_rule = docbench and columns == ("qtype",)
        coded = _group_codes(frame, columns, _type_labels(frame) if type_rule else None)
        breakdowns.append((columns, type_rule, coded))
    systems: list[Any] = ([None] if "system" not in frame.columns
                          else sorted(frame["system"].unique(), key=str))
    rows: list[dict[str, Any]] = []
    for system in systems:
        part = (np.ones(len(frame), dtype=bool) if system is None
                else (frame["system"] == system).to_numpy())
        head = {} if system is None else {"system": system}
        rows.append(tally.row(head, "overall", "all", part))
        for columns, type_rule, (keys, index, codes) in breakdowns:
            present = {keys[i] for i in np.flatnonzero(part)}
            for key in sorted(present, key=partial(_sort_key, columns)):
                rows.append(tally.row(head, "+".join(columns), ", ".join(key),
                                      part & (codes == index[key]), type_rule))
    table = _with_accuracy(pd.DataFrame(rows), NormalDist().inv_cdf(0.5 + level / 2),
                           docbench)
    empty = np.flatnonzero(table["judged"].to_numpy() == 0)
    if empty.size:
        first = table.iloc[int(empty[0])]
        where = ", ".join(f"{c} {first[c]}" for c in ("system", "by", "group") if c in table)
        warnings.warn(
            f"accuracy is undefined for {empty.size} group(s) with no decided verdict "
            f"(first: {where}); returning NaN", UndefinedMetricWarning, stacklevel=2)
    return table


def cascade_table(records: Any, verdicts: Any) -> pd.DataFrame:
    """Who decided what: verdicts counted by the judge that gave them.

    A verdict whose rule is a model judge's (``llm``, ``unparseable``, ``model-error``)
    came from the model judge; any other from the rule judge. For a
    :class:`CascadeJudge`, the rule judge's rows are what it decided and the model
    judge's what it was sent.

    Parameters
    ----------
    records : DataFrame or list of dicts
        QA records.
    verdicts : sequence of Verdict, or str
        One per record; or the name of a records column with its ``<name>_rule`` and
        ``<name>_status`` columns (as :func:`judge_records` writes them).

    Returns
    -------
    DataFrame
        ``system`` (when the records have one), ``judge`` ("rule" or "model"), ``n``,
        ``correct``, ``wrong``, ``undecided``, ``unparseable``, ``failed``; a judge
        that gave no verdict has a row of zeros.

    Examples
    --------
    >>> rows = [{"doc_id": i, "question": "Q?", "reference": "R", "answer": "A",
    ...          "domain": "news", "qtype": "text-only"} for i in range(3)]
    >>> verdicts = [Verdict(1, "exact-match"), Verdict(0, "llm"), Verdict(None, "unparseable")]
    >>> cascade_table(rows, verdicts)
       judge  n  correct  wrong  undecided  unparseable  failed
    0   rule  1        1      0          0            0       0
    1  model  2        0      1          0            1       0
    """
    frame = validate_records(records, require_answer=False)
    _, status = _verdict_arrays(verdicts, len(frame), "verdicts", frame)
    if isinstance(verdicts, str):
        column = f"{verdicts}_rule"
        if column not in frame.columns:
            raise ValidationError(
                f"verdicts must come with their rules to tell who decided; found no column "
                f"{column!r} among {', '.join(map(str, frame.columns))}")
        rules = frame[column].tolist()
    else:
        listed = _as_list(verdicts, "verdicts")
        plain = [i for i, v in enumerate(listed) if not isinstance(v, Verdict)]
        if plain:
            raise bad_values("verdicts", "verdicts", "Verdicts (their rules tell who decided)",
                             plain, listed, None)
        rules = [v.rule for v in listed]
    model = np.array([r in MODEL_RULES for r in rules], dtype=bool)
    systems: list[Any] = ([None] if "system" not in frame.columns
                          else sorted(frame["system"].unique(), key=str))
    rows = []
    for system in systems:
        part = (np.ones(len(frame), dtype=bool) if system is None
                else (frame["system"] == system).to_numpy())
        for judge, mask in (("rule", part & ~model), ("model", part & model)):
            counts = _counts(status[mask])
            del counts["judged"]
            rows.append({**({} if system is None else {"system": system}), "judge": judge,
                         **counts})
    return pd.DataFrame(rows)


def judge_agreement(a: Verdicts, b: Verdicts) -> dict[str, Any]:
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

    See Also
    --------
    accuracy_table : one judge's accuracy.

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


def calibration_parts(frame: pd.DataFrame, status: np.ndarray, *, budgets: Sequence[float],
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


def calibration_table(records: Records, verdicts: Verdicts, *,
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

    See Also
    --------
    calibration_report : the metrics it reports.

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
    frame = validate_records(records, require_answer=False)
    if "confidence" not in frame.columns:
        raise ValidationError(
            f"records must have a confidence column to measure calibration; found the "
            f"columns {', '.join(map(str, frame.columns))}")
    _, status = _verdict_arrays(verdicts, len(frame), "verdicts", frame)
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    ties = check_option(ties, "ties", TIES)
    parts = calibration_parts(frame, status, budgets=budgets, n_bins=n_bins, binning=binning,
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
