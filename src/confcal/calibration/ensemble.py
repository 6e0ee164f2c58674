"""An ensemble of confidence signals: one score from what several strategies say.

Two strategies can score the *same* extraction: token log-probabilities of the values a
model wrote, and a verbalized probability for each of them (the model's own, or a second
call's). They fail to see different things. A misread digit shows in the token
probabilities while the model states it calmly; a value copied from the wrong box is read
fluently, token by token, and only a question about the value catches it. Logistic
stacking combines them:

    p = σ(b + Σ_j c_j · logit(p_j))

fitted by (ridge-penalized) maximum likelihood on labelled rows, with the combiner
**cross-fitted by document**: the documents are dealt into K folds, and each fold is scored
by a combiner fitted on the others, so no row's score comes from a fit that saw its
document (:func:`cross_fit_ensemble`). :func:`ensemble_report` puts the AUROC, ECE, Brier
and ECARB of each input (raw, and recalibrated alone on the same folds) beside the
ensemble's; :class:`ConfidenceEnsemble` is the fitted combiner, for new data.

Inputs are aligned arrays, or entity tables (or :class:`~confcal.scoring.ExtractionResult`
objects) from different strategies on the same extraction, joined on the entity key by
:func:`align_signals`: a key in one table and not another is an error naming it, never a
row dropped. :func:`complementary_signals` simulates two signals that each see a
different cause of error, where the ensemble's AUROC beats each input's.

>>> tables = complementary_signals(n_documents=60, seed=0)
>>> signals = align_signals(tables)
>>> rep = signals.report(folds=5)
>>> bool(rep.value("auroc", "ensemble") > max(rep.value("auroc", "logprob"),
...                                           rep.value("auroc", "verbalized")))
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    check_correct,
    check_groups,
    check_positive_int,
    check_sample_weight,
    check_seed,
    is_missing,
)
from ..exceptions import ValidationError
from ..scoring._result import ExtractionResult
from ._stacking import (
    DEFAULT_EPS,
    ENSEMBLE,
    ConfidenceEnsemble,
    CrossFittedEnsemble,
    EnsembleReport,
    cross_fit_ensemble,
    ensemble_report,
)

__all__ = [
    "DEFAULT_EPS",
    "ENSEMBLE",
    "ENTITY_KEY",
    "AlignedSignals",
    "ConfidenceEnsemble",
    "CrossFittedEnsemble",
    "EnsembleReport",
    "align_signals",
    "complementary_signals",
    "cross_fit_ensemble",
    "ensemble_report",
]

ENTITY_KEY: tuple[str, ...] = ("doc_id", "field", "truth_index", "pred_index")
"""The columns that name one entity of an entity table: the document, the field path, and
the truth and predicted item positions of a line-item sub-field (``<NA>`` for top-level
fields and on the side without an item)."""


# ---------------------------------------------------------------------------------------
# aligning entity tables
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class AlignedSignals:
    """The rows every strategy scored, with each strategy's confidence, side by side.

    Attributes
    ----------
    correct : numpy.ndarray of bool, shape (n,)
    confidences : Mapping[str, numpy.ndarray]
        Strategy name -> confidence of each row, in the order the tables were given.
    groups : numpy.ndarray, shape (n,)
        The document of each row (the ``by`` column).
    keys : DataFrame
        The key columns of the rows, in the order of the first table.
    sample_weight : numpy.ndarray or None
        The ``weight`` column's values, when one was named.
    n_joined : int
        Rows joined across all tables, before rows without a confidence were left out.
    n_without_confidence : Mapping[str, int]
        Per strategy, the joined rows where it gives no confidence (NaN).
    n_excluded : int
        Joined rows left out because at least one strategy gives no confidence there:
        ``n_joined == len(correct) + n_excluded``.
    """

    correct: np.ndarray = field(repr=False)
    confidences: Mapping[str, np.ndarray] = field(repr=False)
    groups: np.ndarray = field(repr=False)
    keys: pd.DataFrame = field(repr=False)
    sample_weight: np.ndarray | None = field(repr=False)
    n_joined: int
    n_without_confidence: Mapping[str, int]
    n_excluded: int

    def cross_fit(self, **options: Any) -> CrossFittedEnsemble:
        """:func:`cross_fit_ensemble` on these rows (options as there)."""
        return cross_fit_ensemble(self.correct, self.confidences, groups=self.groups,
                                  sample_weight=self.sample_weight, **options)

    def report(self, **options: Any) -> EnsembleReport:
        """:func:`ensemble_report` on these rows (options as there)."""
        return ensemble_report(self.correct, self.confidences, groups=self.groups,
                               sample_weight=self.sample_weight, **options)


def _table(name: str, table: Any, columns: Sequence[str]) -> pd.DataFrame:
    if isinstance(table, ExtractionResult):
        table = table.entities
    if not isinstance(table, pd.DataFrame):
        raise ValidationError(f"tables[{name!r}] must be an entity table (a DataFrame) or an "
                              f"ExtractionResult; found {type(table).__name__}")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValidationError(f"tables[{name!r}] must have the columns {list(columns)}; found "
                              f"{missing} missing")
    if table.empty:
        raise ValidationError(f"tables[{name!r}] must not be empty; found 0 rows")
    return table.reset_index(drop=True)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _describe(keys: pd.DataFrame, i: int) -> tuple[str, dict[str, Any]]:
    """'doc_id='d1', field='Agency', ...' for key row i, and its location attributes."""
    row = keys.iloc[i]
    text = ", ".join(f"{k}={'<NA>' if is_missing(v, blank=False) else repr(_plain(v))}"
                     for k, v in row.items())
    loc: dict[str, Any] = {}
    if "doc_id" in row.index and not is_missing(row["doc_id"], blank=False):
        loc["doc_id"] = _plain(row["doc_id"])
    if "field" in row.index and not is_missing(row["field"], blank=False):
        loc["field"] = str(row["field"])
    return text, loc


def _same(a: Any, b: Any) -> bool:
    if is_missing(a) and is_missing(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # an array-valued comparison: not one value
        return False


def align_signals(tables: Mapping[str, Any], *, key: Sequence[str] = ENTITY_KEY,
                  by: str = "doc_id", weight: str | None = None) -> AlignedSignals:
    """Join two or more entity tables of one extraction on the entity key.

    Each table is one strategy's scoring of the same extracted values (token
    log-probabilities, a verbalized score, a second model's score...): the same entities,
    the same ``correct``, different ``confidence``. Nothing is dropped silently.

    Parameters
    ----------
    tables : mapping of str to DataFrame or ExtractionResult
        Strategy name -> its entity table (columns ``correct``, ``confidence`` and the key
        columns; other columns are ignored).
    key : sequence of str, default :data:`ENTITY_KEY`
        The columns that identify an entity; unique within each table. ``<NA>`` in a key
        column matches ``<NA>`` (None, NaN and pandas.NA alike).
    by : str, default "doc_id"
        The column holding each row's document, the unit the cross-fit keeps whole.
    weight : str, optional
        A column of the first table to use as ``sample_weight`` (e.g. ``"weight"``).

    Returns
    -------
    AlignedSignals
        Rows in the order of the first table; rows where some strategy gives no
        confidence are left out and counted (``n_without_confidence``, ``n_excluded``).

    Raises
    ------
    ValidationError
        Fewer than two tables; a missing column; a key repeated within a table; keys that
        are not in every table (the message counts them per table and names the first,
        and the error's ``doc_id`` and ``field`` attributes hold its location); a key whose
        ``correct`` differs between tables, or whose ``prediction`` does when every table
        has that column (not the same extraction); a confidence outside [0, 1].

    See Also
    --------
    ConfidenceEnsemble : combines the aligned signals.
    complementary_signals : which signals add information.

    Examples
    --------
    >>> import pandas as pd
    >>> lp = pd.DataFrame({"doc_id": ["a", "a", "b"], "field": ["X", "Y", "X"],
    ...                    "correct": [True, False, True], "confidence": [0.9, 0.4, 0.8]})
    >>> vb = lp.assign(confidence=[0.7, None, 0.95]).iloc[::-1]   # any row order
    >>> s = align_signals({"logprob": lp, "verbalized": vb}, key=("doc_id", "field"))
    >>> s.confidences["verbalized"].tolist(), s.n_excluded, dict(s.n_without_confidence)
    ([0.7, 0.95], 1, {'logprob': 0, 'verbalized': 1})
    >>> align_signals({"logprob": lp, "verbalized": vb.iloc[1:]},
    ...               key=("doc_id", "field"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: tables must hold the same entities ...; 1 of 3 keys
    could not be joined: 'logprob' lacks 0, 'verbalized' lacks 1; first doc_id='b',
    field='X', in ['logprob'] only
    """
    names, key = _check_align_arguments(tables, key, by)
    first_cols = [*key, "correct", "confidence", *([by] if by not in key else [])]
    frames = {n: _table(n, t, first_cols) for n, t in tables.items()}
    if weight is not None and weight not in frames[names[0]].columns:
        raise ValidationError(f"tables[{names[0]!r}] must have the weight column {weight!r}; "
                              "found it missing")
    ids, where = _join_keys(frames, key)

    ref = names[0]
    rows = {n: where[t, ids[:len(frames[ref])]] for t, n in enumerate(names)}
    keys = frames[ref][key]
    correct = _same_correct(frames, rows, keys)
    _check_same_prediction(frames, rows, keys)
    conf = {n: _confidence(n, frames[n]["confidence"], rows[n], keys) for n in names}
    without = {n: int(np.isnan(c).sum()) for n, c in conf.items()}
    keep = np.ones(keys.shape[0], dtype=bool)
    for c in conf.values():
        keep &= ~np.isnan(c)
    if not keep.any():
        raise ValidationError(f"tables must share rows where every strategy gives a "
                              f"confidence; found none of {keys.shape[0]} joined rows")
    n_kept = int(keep.sum())
    groups = frames[ref][by].to_numpy()[keep]
    check_groups(groups, n_kept, name=f"tables[{ref!r}][{by!r}]")  # no missing documents
    sample_weight = (None if weight is None
                     else _sample_weight(f"tables[{ref!r}][{weight!r}]", frames[ref][weight],
                                         keep))
    return AlignedSignals(
        correct=correct[ref][keep],
        confidences=MappingProxyType({n: c[keep] for n, c in conf.items()}),
        groups=groups, keys=keys[keep].reset_index(drop=True),
        sample_weight=sample_weight, n_joined=int(keys.shape[0]),
        n_without_confidence=MappingProxyType(without), n_excluded=int((~keep).sum()))


def _check_align_arguments(tables: Any, key: Any, by: Any) -> tuple[list[str], list[str]]:
    """The strategy names and key columns of :func:`align_signals`, once both are valid."""
    if not isinstance(tables, Mapping):
        raise ValidationError("tables must be a mapping of strategy name -> entity table "
                              f"(e.g. {{'logprob': t1, 'verbalized': t2}}); found "
                              f"{type(tables).__name__}")
    if len(tables) < 2:
        raise ValidationError(f"tables must hold at least 2 entity tables; found {len(tables)}")
    if isinstance(key, str) or not isinstance(key, Sequence) or not key or not all(
            isinstance(k, str) for k in key):
        raise ValidationError(f"key must be a non-empty sequence of column names; found {key!r}")
    if not isinstance(by, str):
        raise ValidationError(f"by must be a column name (a string); found {by!r}")
    names = list(tables)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValidationError(f"tables must be keyed by non-empty strings; found {name!r}")
        if name == ENSEMBLE:
            raise ValidationError(f"tables must not name a strategy {ENSEMBLE!r}, the name of "
                                  "the combined score in the report; rename it")
    return names, list(key)


def _join_keys(frames: Mapping[str, pd.DataFrame],
               key: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One id per distinct key across all tables, and where each table holds each id.

    Returns the id of every row of the tables stacked in order, and ``where[t, id]``, the
    row of table ``t`` holding that key. Raises when a table repeats a key or lacks one.
    """
    names = list(frames)
    union = pd.concat([_key_values(frames[n], key) for n in names], ignore_index=True)
    ids = union.groupby(key, dropna=False, sort=False).ngroup().to_numpy()
    n_keys = int(ids.max()) + 1
    where = np.full((len(names), n_keys), -1, dtype=np.int64)
    offset = 0
    for t, n in enumerate(names):
        mine = ids[offset:offset + len(frames[n])]
        _check_one_row_per_key(n, frames[n][key], key, mine, n_keys)
        where[t, mine] = np.arange(mine.shape[0])
        offset += len(frames[n])
    _check_same_keys(names, union, key, ids, where)
    return ids, where


def _key_values(frame: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """The key columns of one table, categoricals as objects so that they compare by value."""
    part = frame[key].copy()
    for col in key:
        if isinstance(part[col].dtype, pd.CategoricalDtype):
            part[col] = part[col].astype(object)
    return part


def _check_one_row_per_key(name: str, keys: pd.DataFrame, key: list[str], mine: np.ndarray,
                           n_keys: int) -> None:
    """Each key at most once in one table (``mine``: the key id of each of its rows)."""
    counts = np.bincount(mine, minlength=n_keys)
    if (counts > 1).any():
        dup = int(np.flatnonzero(counts[mine] > 1)[0])
        text, loc = _describe(keys, dup)
        raise ValidationError(f"tables[{name!r}] must hold one row per key {tuple(key)}; "
                              f"found {int((counts > 1).sum())} keys repeated, first "
                              f"{text} ({int(counts[mine[dup]])} rows)", **loc)


def _check_same_keys(names: list[str], union: pd.DataFrame, key: list[str], ids: np.ndarray,
                     where: np.ndarray) -> None:
    """Every key in every table; else count the keys each lacks and name the first."""
    absent = where < 0
    if not absent.any():
        return
    first_row = np.full(where.shape[1], -1, dtype=np.int64)
    first_row[ids[::-1]] = np.arange(ids.shape[0])[::-1]  # the first row holding each key
    first = int(np.flatnonzero(absent.any(axis=0))[0])
    text, loc = _describe(union, int(first_row[first]))
    lacks = [f"{n!r} lacks {int(absent[t].sum())}" for t, n in enumerate(names)]
    has = [n for t, n in enumerate(names) if not absent[t, first]]
    raise ValidationError(
        f"tables must hold the same entities (one row per key {tuple(key)}); "
        f"{int(absent.any(axis=0).sum())} of {where.shape[1]} keys could not be joined: "
        f"{', '.join(lacks)}; first {text}, in {has} only", **loc)


def _same_correct(frames: Mapping[str, pd.DataFrame], rows: Mapping[str, np.ndarray],
                  keys: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each table's ``correct`` in the first table's row order, the same in every table."""
    names = list(frames)
    ref = names[0]
    correct = {n: check_correct(frames[n]["correct"].to_numpy()[rows[n]],
                                f"tables[{n!r}]['correct']") for n in names}
    for n in names[1:]:
        differ = correct[n] != correct[ref]
        if differ.any():
            i = int(np.flatnonzero(differ)[0])
            text, loc = _describe(keys, i)
            raise ValidationError(
                f"tables must score the same extraction; 'correct' differs between {ref!r} "
                f"and {n!r} on {int(differ.sum())} keys, first {text} ({bool(correct[ref][i])} "
                f"and {bool(correct[n][i])})", **loc)
    return correct


def _check_same_prediction(frames: Mapping[str, pd.DataFrame], rows: Mapping[str, np.ndarray],
                           keys: pd.DataFrame) -> None:
    """The same ``prediction`` on every key, when every table has that column."""
    names = list(frames)
    if not all("prediction" in frames[n].columns for n in names):
        return
    ref = names[0]
    base = frames[ref]["prediction"].to_numpy(dtype=object)
    for n in names[1:]:
        other = frames[n]["prediction"].to_numpy(dtype=object)[rows[n]]
        differ = np.fromiter((not _same(a, b) for a, b in zip(base, other, strict=True)),
                             dtype=bool, count=base.shape[0])
        if differ.any():
            i = int(np.flatnonzero(differ)[0])
            text, loc = _describe(keys, i)
            raise ValidationError(
                f"tables must score the same extraction; 'prediction' differs between "
                f"{ref!r} and {n!r} on {int(differ.sum())} keys, first {text} "
                f"({base[i]!r} and {other[i]!r})", **loc)


def _confidence(name: str, column: pd.Series, rows: np.ndarray,
                keys: pd.DataFrame) -> np.ndarray:
    """One table's confidences in the joined row order: within [0, 1], or NaN for none."""
    try:
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)[rows]
    except (TypeError, ValueError):
        raise ValidationError(f"tables[{name!r}]['confidence'] must be numbers within [0, 1] "
                              f"or missing (NaN); found dtype {column.dtype}") from None
    bad = ~np.isnan(values) & ~((values >= 0.0) & (values <= 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        text, loc = _describe(keys, i)
        raise ValidationError(f"tables[{name!r}]['confidence'] must be within [0, 1] or "
                              f"missing (NaN); found {int(bad.sum())} values outside, "
                              f"first {float(values[i])!r} at {text}", **loc)
    return values


def _sample_weight(name: str, column: pd.Series, keep: np.ndarray) -> np.ndarray:
    """The weight column of the kept rows: non-negative numbers (booleans are not weights)."""
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
            column.dtype):
        raise ValidationError(f"{name} must be non-negative numbers; found dtype {column.dtype}")
    return check_sample_weight(column.to_numpy(dtype=np.float64, na_value=np.nan)[keep],
                               int(keep.sum()), name=name)


# ---------------------------------------------------------------------------------------
# a generator where the signals are complementary
# ---------------------------------------------------------------------------------------
_HEADER = ("Agency", "Advertiser", "GrossTotal", "AgencyCommission", "NetAmountDue",
           "PaymentTerms")
_ITEM = ("LineItems.Description", "LineItems.Rate")


def complementary_signals(*, n_documents: int = 200, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Two strategies' entity tables on one simulated extraction, each blind to one error.

    Every entity can go wrong in two ways. A **reading** error (a misread digit or
    letter) grows with the document's scan noise and the cell's own difficulty; the
    **logprob** signal sees that difficulty (a noisy, monotone function of it) and
    nothing else. A **meaning** error (a value read well from the wrong box) grows with
    the document's layout confusion and the cell's; the **verbalized** signal (a second
    look at each value, reported in steps of 0.05, so some are exactly 1.0) sees that
    and nothing else. An entity is correct when neither happens, so each signal alone
    misses about half the errors and the two together separate right from wrong better
    than either.

    Parameters
    ----------
    n_documents : int >= 2, default 200
        Documents of 6 header fields and 2-8 line items of 2 sub-fields each (22 rows on
        average).
    seed : int >= 0, default 0
        ``numpy.random.default_rng(seed)``: the same seed gives the same tables.

    Returns
    -------
    dict of str to DataFrame
        ``{"logprob": ..., "verbalized": ...}``, entity tables with columns ``doc_id,
        field, truth_index, pred_index, prediction, correct, confidence, cause`` (``cause``
        is ``"none"``, ``"reading"``, ``"meaning"`` or ``"both"``), equal but for
        ``confidence``.

    See Also
    --------
    align_signals : the signals lined up per entity.
    ensemble_report : the combined signal's metrics.

    Examples
    --------
    >>> t = complementary_signals(n_documents=3, seed=1)
    >>> list(t), list(t["logprob"].columns)[:4]
    (['logprob', 'verbalized'], ['doc_id', 'field', 'truth_index', 'pred_index'])
    >>> bool((t["logprob"]["correct"] == t["verbalized"]["correct"]).all())
    True
    """
    n_documents = check_positive_int(n_documents, "n_documents", 2)
    rng = np.random.default_rng(check_seed(seed, optional=False))
    docs, fields, index = [], [], []
    for d in range(n_documents):
        n_items = int(rng.integers(2, 9))
        docs += [d] * (len(_HEADER) + 2 * n_items)
        fields += [*_HEADER, *(_ITEM * n_items)]
        index += [-1] * len(_HEADER) + [i for i in range(n_items) for _ in _ITEM]
    doc = np.asarray(docs)
    n = doc.shape[0]
    scan = rng.normal(size=n_documents)[doc]      # document effects: scan noise, layout
    layout = rng.normal(size=n_documents)[doc]
    read_risk = 0.8 * scan + rng.normal(size=n)
    mix_risk = 0.8 * layout + rng.normal(size=n)
    reading = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(2.0 * read_risk - 3.0)))
    meaning = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(2.0 * mix_risk - 3.0)))
    correct = ~(reading | meaning)
    logprob = 1.0 / (1.0 + np.exp(-(4.0 - 1.6 * read_risk + rng.normal(0.0, 0.5, size=n))))
    verbal = 1.0 / (1.0 + np.exp(-(2.5 - 1.3 * mix_risk + rng.normal(0.0, 0.5, size=n))))
    verbal = np.round(verbal * 20.0) / 20.0
    cause = np.where(reading & meaning, "both",
                     np.where(reading, "reading", np.where(meaning, "meaning", "none")))
    idx = pd.array([None if i < 0 else i for i in index], dtype="Int64")
    base = pd.DataFrame({
        "doc_id": [f"doc-{d:04d}" for d in docs],
        "field": pd.Categorical(fields, categories=[*_HEADER, *_ITEM]),
        "truth_index": idx, "pred_index": idx.copy(),
        "prediction": [f"value-{k}" for k in range(n)],
        "correct": correct, "confidence": logprob, "cause": cause})
    return {"logprob": base, "verbalized": base.assign(confidence=verbal)}


# ---------------------------------------------------------------------------------------
# the documented figures: python -m confcal.calibration.ensemble
# ---------------------------------------------------------------------------------------
def _markdown_table(report: EnsembleReport) -> str:
    """The report's metrics as a Markdown table (3 decimals), as docs/calibration.md shows
    them."""
    metrics = ["auroc", "ece", "brier", *(f"ecarb@{b:g}" for b in report.budgets)]
    head = ["signal", "method", *metrics, "n_clipped"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for _, r in report.table.iterrows():
        cells = [r["signal"], r["method"], *(f"{r[m]:.3f}" for m in metrics),
                 str(r["n_clipped"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _main(argv: Sequence[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m confcal.calibration.ensemble",
        description="The ensemble report on complementary_signals(), as in "
                    "docs/calibration.md: at the default eps, then with the verbalized "
                    "signal clipped at 0.01.")
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    signals = align_signals(complementary_signals(n_documents=args.documents, seed=args.seed))
    print(f"{len(signals.correct)} rows, {int((~signals.correct).sum())} errors, "
          f"{len(set(signals.groups.tolist()))} documents, {args.folds} folds\n")
    for label, eps in (("default eps", DEFAULT_EPS),
                       ("eps={'verbalized': 0.01}", {"verbalized": 0.01})):
        report = signals.report(folds=args.folds, seed=args.seed, eps=eps)
        print(f"<!-- {label} -->\n{_markdown_table(report)}\n")
        print(f"coefficients {dict(report.fit.final.coefficients)}, intercept "
              f"{report.fit.final.intercept:.3f}; AUROC gain over the best input "
              f"{report.auroc_gain:+.3f}\n")


if __name__ == "__main__":
    _main()
