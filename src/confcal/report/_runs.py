"""Comparing runs: the ConfBench Table 3, computed.

:func:`compare_runs` turns an entity table (one or many runs, told apart by metadata
columns such as ``model`` and ``tier``) into one row per run: how many entities and
documents, how many carry no confidence, extraction quality (WOA, F1) and calibration
(AUROC, ECE, Brier, ECARB), with bootstrap intervals that resample documents.
:class:`RunSummary` and :func:`compare_runs_sketched` compute the same table (without
intervals) from mergeable summaries. Nothing here draws or renders: that is
:mod:`confcal.report._render`.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    check_budgets,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    check_seed,
    is_missing,
)
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..metrics._metrics import BINNINGS, DEFAULT_BUDGETS
from ..metrics._report import CalibrationReport, calibration_report, check_extra
from ..metrics._work import MAX_WORK, check_work
from ..metrics.bootstrap import bootstrap_ci
from ..metrics.sketch import CalibrationSketch
from ..scoring._result import ENTITY_COLUMNS
from ..scoring._totals import (
    UNDEFINED,
    ExtractionTotals,
    f1_from_counts,
    group_totals,
    outcome_codes,
    woa_from_sums,
)
from ..scoring.io import check_entities

__all__ = ["MAX_WORK", "MIN_INTERVAL_DOCUMENTS", "RunSummary", "SmallSampleWarning",
           "compare_runs", "compare_runs_sketched", "merge_summaries", "runs_table",
           "summarize_runs"]

MIN_INTERVAL_DOCUMENTS = 30
"""Below this many documents a group's bootstrap intervals come with a SmallSampleWarning."""


class SmallSampleWarning(UserWarning):
    """Bootstrap intervals of a group with fewer than :data:`MIN_INTERVAL_DOCUMENTS` documents.

    The percentile bootstrap resamples documents; with a handful of them the resamples take
    few distinct values and the intervals are too narrow (they under-cover). The numbers
    are still reported, with this warning naming the group.
    """


# ------------------------------------------------------------------ one row per entity
_ITEM_KEY = ("truth_index", "pred_index")


def _key_text(frame: pd.DataFrame, columns: Sequence[str], row: int) -> str:
    values = frame.iloc[row]
    return ", ".join(f"{c}=" + ("<NA>" if is_missing(values[c], blank=False)
                                else repr(values[c])) for c in columns)


def _key_codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """One int64 per row, equal exactly when the rows agree on every column (missing
    values equal to each other): each column factorized, the codes combined column by
    column and factorized again whenever the product could leave int64."""
    codes = np.zeros(len(frame), dtype=np.int64)
    size = 1
    for column in columns:
        col, uniques = pd.factorize(frame[column], use_na_sentinel=False)
        width = max(len(uniques), 1)
        if size * width >= 2**62:
            codes, seen = pd.factorize(codes)
            size = max(len(seen), 1)
        codes = codes * width + col.astype(np.int64)
        size *= width
    return codes


def check_unique_entities(frame: pd.DataFrame, *, name: str = "entities",
                          sources: Sequence[tuple[str, int]] = ()) -> None:
    """Refuse an entity table that holds one entity twice.

    An entity is a run (the values of every metadata column, those that are not
    entity-table columns), a ``doc_id``, a ``field`` and, for line items, the
    ``truth_index`` and ``pred_index``: a scorer writes one row for each. The same key
    twice means rows counted twice (the same table given twice, or tables of different
    runs without metadata to tell them apart), which would merge into one run with every
    row doubled. A table without the item-index columns cannot be checked (its line-item
    rows share doc and field) and passes.

    ``sources``, (name, number of rows) of the stacked tables in order, lets the message
    name the tables the two rows came from.

    Raises
    ------
    ValidationError
        Naming the first repeated key, the two rows and, with ``sources``, their tables;
        its ``index`` is the second row.
    """
    if not set(_ITEM_KEY) <= set(frame.columns) or len(frame) < 2:
        return
    runs = [c for c in frame.columns if c not in ENTITY_COLUMNS]
    key = [*runs, "doc_id", "field", *_ITEM_KEY]
    codes = _key_codes(frame, key)
    repeat = pd.Series(codes).duplicated(keep="first").to_numpy()  # hashed: no sort
    if not repeat.any():
        return
    second = int(np.argmax(repeat))
    earlier = int(np.argmax(codes == codes[second]))
    repeated = int(repeat.sum())
    where = f"rows {earlier} and {second}"
    if sources:
        ends = np.cumsum([n for _, n in sources])
        a, b = (int(np.searchsorted(ends, r, side="right")) for r in (earlier, second))
        starts = np.concatenate([[0], ends[:-1]])
        where = (f"row {earlier - starts[a]} of {sources[a][0]} and row "
                 f"{second - starts[b]} of {sources[b][0]}")
    hint = ("" if runs else "; tables of different runs need a metadata column to tell them "
            "apart (score_documents(metadata=...), --meta run=NAME on the command line)")
    raise ValidationError(
        f"{name} must hold each entity (run, doc_id, field, item indices) once; found "
        f"{repeated:,} repeated rows, first {_key_text(frame, key, second)} at {where}{hint}",
        index=second)


# --------------------------------------------------------------------------- the table
def check_by(by: Any, frame: pd.DataFrame) -> tuple[str, ...]:
    if by is None:  # every metadata column: what tells one run from another
        return tuple(c for c in frame.columns if c not in ENTITY_COLUMNS)
    columns = (by,) if isinstance(by, str) else by
    if not isinstance(columns, (Sequence, pd.Index)) or not all(
            isinstance(c, str) for c in columns):
        raise ValidationError(f"by must be a column name or a sequence of column names; "
                              f"found {by!r}")
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ValidationError(f"by must name columns of entities; found {absent} absent "
                              f"(columns: {list(frame.columns)})")
    if len(set(columns)) != len(columns):
        raise ValidationError(f"by must not repeat a column; found {list(columns)}")
    return tuple(columns)


_EXTRA_INTERVALS = ("debiased_ece", "smooth_ece")  # extras bootstrap_ci also resamples


def _group_label(by: Sequence[str], key: Sequence[Any]) -> str:
    if not by:
        return "all entities"
    # a missing run value reads n/a, as in the tables and figures (not nan or None)
    return ", ".join(f"{c}={'n/a' if is_missing(v, blank=False) else repr(v)}"
                     for c, v in zip(by, key, strict=True))


def _warn(label: str, message: str) -> None:
    warnings.warn(f"compare_runs, {label}: {message}", UndefinedMetricWarning, stacklevel=4)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)


class ExtractionSums:
    """Per-document sums from which WOA and F1 of any document resample follow."""

    def __init__(self, group: pd.DataFrame, codes: np.ndarray | None = None,
                 n_documents: int | None = None) -> None:
        # codes, n_documents: the documents numbered from outside (systems compared on
        # shared documents), some of them perhaps without a row here
        if codes is None:
            codes, _ = pd.factorize(group["doc_id"], sort=False)
        self.n_documents = g = int(codes.max()) + 1 if n_documents is None else n_documents
        self.sums = group_totals(codes, g, outcome_codes(group["outcome"]),
                                 group["weight"].to_numpy(dtype=np.float64),
                                 group["similarity"].to_numpy(dtype=np.float64))

    def woa_f1(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """WOA and F1 with document d counted counts[..., d] times."""
        sums = {name: counts @ values for name, values in self.sums.items()}
        return (woa_from_sums(sums["weighted_similarity"], sums["weight"]),
                f1_from_counts(sums["TP"], sums["FD"], sums["FA"], sums["FN"]))

    def intervals(self, n_resamples: int, level: float, seed: int | None
                  ) -> dict[str, tuple[float, float]]:
        """Percentile intervals of WOA and F1 over document resamples."""
        rng = np.random.default_rng(seed)
        g = self.n_documents
        woas, f1s = [], []
        # resamples in blocks: the draws and counts of a block stay under ~80 MB however
        # many documents there are
        block = max(1, min(n_resamples, 5_000_000 // g))
        for start in range(0, n_resamples, block):
            b = min(block, n_resamples - start)
            draws = rng.integers(0, g, size=(b, g))
            counts = np.bincount((draws + g * np.arange(b)[:, None]).ravel(),
                                 minlength=b * g).reshape(b, g).astype(np.float64)
            woa, f1 = self.woa_f1(counts)
            woas.append(woa)
            f1s.append(f1)
        alpha = (1.0 - level) / 2.0
        out = {}
        for name, values in (("woa", np.concatenate(woas)), ("f1", np.concatenate(f1s))):
            valid = values[~np.isnan(values)]
            out[name] = ((math.nan, math.nan) if valid.size == 0 else
                         tuple(float(v) for v in np.quantile(valid, [alpha, 1.0 - alpha])))
        return out  # type: ignore[return-value]


def _warn_undefined_extraction(label: str, **values: float) -> None:
    for name, value in values.items():
        if math.isnan(value):
            _warn(label, f"{name} is undefined: {UNDEFINED[name]}; returning NaN")


def _relabelled(label: str, caught: Sequence[warnings.WarningMessage]) -> None:
    """Emit each distinct UndefinedMetricWarning again, naming the group."""
    for message in dict.fromkeys(str(w.message) for w in caught
                                 if issubclass(w.category, UndefinedMetricWarning)):
        _warn(label, message)


def _runs_row(label: str, *, n_documents: int, n_entities: int, n_without_confidence: int,
              totals_woa: float, totals_f1: float,
              report: Callable[[], CalibrationReport] | None,
              budgets: tuple[float, ...], extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """One row of the runs table: the one builder behind :func:`compare_runs` and
    :func:`runs_table`. ``report`` computes the calibration report of the rows that carry a
    confidence (None when no row does); its warnings are re-emitted naming ``label``."""
    _warn_undefined_extraction(label, woa=totals_woa, f1=totals_f1)
    nan = math.nan
    row: dict[str, Any] = {
        "n_documents": n_documents, "n_entities": n_entities,
        "n_without_confidence": n_without_confidence, "woa": totals_woa, "f1": totals_f1,
        "auroc": nan, "ece": nan, "brier": nan}
    ecarbs = ceilings = {b: nan for b in budgets}
    extras = {name: nan for name in extra}
    if report is None:
        _warn(label, f"no entity carries a confidence (all {n_entities} rows); calibration "
                     "metrics are NaN")
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedMetricWarning)
            rep = report()
        _relabelled(label, caught)
        row.update(auroc=rep.auroc, ece=rep.ece, brier=rep.brier)
        ecarbs, ceilings = dict(rep.ecarb), dict(rep.ecarb_ceiling)
        extras.update(rep.extra)
    for b in budgets:
        row[f"ecarb@{b:g}"] = ecarbs[b]
        row[f"ecarb_ceiling@{b:g}"] = ceilings[b]
    row.update(extras)
    return row


def _run_metrics(group: pd.DataFrame, label: str, *, budgets: tuple[float, ...],
                 n_resamples: int, n_bins: int, binning: str, level: float,
                 seed: int | None, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    sums = ExtractionSums(group)
    woa, f1 = (float(v) for v in sums.woa_f1(np.ones(sums.n_documents)))
    confidence = group["confidence"].to_numpy(dtype=np.float64)
    has = ~np.isnan(confidence)
    correct = group["correct"].to_numpy(dtype=bool)[has]
    conf = confidence[has]
    docs = group["doc_id"].to_numpy(dtype=object)[has]
    # the consistency test's redraws are the run's resamples, with a document effect
    row = _runs_row(
        label, n_documents=sums.n_documents, n_entities=len(group),
        n_without_confidence=int((~has).sum()), totals_woa=woa, totals_f1=f1,
        report=(lambda: calibration_report(
            correct, conf, budgets=budgets, n_bins=n_bins, binning=binning, extra=extra,
            n_resamples=max(n_resamples, 1), seed=seed, groups=docs)) if has.any() else None,
        budgets=budgets, extra=extra)
    if not n_resamples:
        return row
    nan = math.nan
    intervals: dict[str, tuple[float, float]] = {}
    with_interval = ("auroc", "ece", "brier", *(m for m in extra if m in _EXTRA_INTERVALS))
    if has.any():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedMetricWarning)
            for i, b in enumerate(budgets):
                metrics = (*with_interval, "ecarb") if i == 0 else ("ecarb",)
                # the same seed draws the same documents for every budget
                ci = bootstrap_ci(correct, conf, groups=docs, metrics=metrics, budget=b,
                                  n_bins=n_bins, binning=binning, n_resamples=n_resamples,
                                  confidence_level=level, seed=seed,
                                  # the caller bounded the work of every run together
                                  max_work=sys.float_info.max).set_index("metric")
                for m in metrics:
                    name = f"ecarb@{b:g}" if m == "ecarb" else m
                    intervals[name] = (float(ci.at[name, "low"]), float(ci.at[name, "high"]))
        _relabelled(label, caught)
    intervals.update(sums.intervals(n_resamples, level, seed))
    ordered: dict[str, Any] = {}
    for name, value in row.items():
        ordered[name] = value
        if name in ("woa", "f1", *with_interval) or name.startswith("ecarb@"):
            ordered[f"{name}_low"], ordered[f"{name}_high"] = intervals.get(name, (nan, nan))
    return ordered


def compare_runs(entities: pd.DataFrame, *, by: str | Sequence[str] | None = None,
                 budgets: Sequence[float] = DEFAULT_BUDGETS, n_resamples: int = 0,
                 n_bins: int = 5,
                 binning: str = "quantile", confidence_level: float = 0.95,
                 seed: int | None = 0, progress: Callable[[int], Any] | None = None,
                 extra: Sequence[str] = (), max_work: float = MAX_WORK) -> pd.DataFrame:
    """The ConfBench Table 3: extraction quality and calibration, one row per run.

    Parameters
    ----------
    entities : pandas.DataFrame
        An entity table (:attr:`confcal.scoring.ExtractionResult.entities`, or one read with
        :func:`confcal.scoring.io.read_entities`), possibly several runs stacked.
    by : str or sequence of str, optional
        The columns that tell runs apart (``("model", "tier")``). Default: every column that
        is not an entity-table column (the metadata given to ``score_documents``); with
        none, one row for the whole table. Missing values form their own group.
    budgets : sequence of float in (0, 1], default (0.1, 0.3)
        Review budgets of the ECARB columns (:data:`confcal.metrics.DEFAULT_BUDGETS`).
    n_resamples : int, default 0
        Number of document resamples for percentile bootstrap intervals; 0 for none.
    n_bins, binning : as in :func:`confcal.ece` (default: the paper's 5 adaptive bins).
    confidence_level : float in (0, 1), default 0.95
    seed : int or None, default 0
        Seeds the resampling; the same seed gives the same intervals.
    progress : callable, optional
        Called with 1 after each group is done (a tqdm bar's ``update``): with intervals
        this is the slow step.
    extra : sequence of str, default ()
        Estimators of :data:`confcal.metrics.EXTRA_METRICS` to add as columns after the
        ECARB ones, as ``calibration_report(extra=...)`` computes them on each run's rows
        with a confidence. ``debiased_ece`` and ``smooth_ece`` get bootstrap intervals
        like the other metrics; ``calibration_p`` is the consistency test with the run's
        documents as the grouping (a document effect) and ``n_resamples`` redraws, so it
        needs ``n_resamples >= 1``.
    max_work : float, default MAX_WORK (2e10, about four minutes)
        The most work to take on, in rows times resamples (:data:`MAX_WORK` gives the
        formula, bins and budgets included); a request beyond it is a ValidationError
        before any of it is done.

    Returns
    -------
    pandas.DataFrame
        One row per group, in order of first appearance: the ``by`` columns, then

        - ``n_documents`` (distinct doc ids), ``n_entities`` (rows, every outcome),
          ``n_without_confidence`` (rows without a confidence, left out of calibration:
          counted, never dropped silently);
        - ``woa`` and ``f1`` over all rows (TN rows count in neither);
        - ``auroc``, ``ece``, ``brier``, and ``ecarb@<b>`` with ``ecarb_ceiling@<b>`` (its
          best possible value) per budget, over the rows that carry a confidence (any
          outcome; correct = TP or TN).

        With ``n_resamples > 0`` every metric except the ceiling is followed by
        ``<metric>_low`` and ``<metric>_high``. ``attrs`` records the options (``by``,
        ``budgets``, ``n_resamples``, ``confidence_level``, ``n_bins``, ``binning``,
        ``seed``, ``extra``).

    See Also
    --------
    compare_systems : paired differences between runs on the same documents.
    compare_runs_sketched : the same table from streamed files.
    write_report : the table with figures, in a folder.
    calibration_report : the metrics of one run.

    Notes
    -----
    Intervals resample **documents** of the group with replacement (all rows of a document
    move together, :func:`confcal.bootstrap_ci` with ``groups=doc_id``): when ``by`` pools
    runs that share doc ids (one model over several tiers), a document's rows from every
    pooled run move together, since they are the same invoice. WOA and F1 intervals use the
    same scheme from per-document sums. A metric undefined for a group (one class, no
    confidence, no evaluated rows) is NaN with an :class:`UndefinedMetricWarning` naming
    the group. Intervals of a group with fewer than :data:`MIN_INTERVAL_DOCUMENTS` (30)
    documents come with a :class:`SmallSampleWarning` naming it. An entity (metadata
    values, ``doc_id``, ``field``, ``truth_index``, ``pred_index``) twice is an error
    (tables stacked twice would merge into one run with every row doubled).

    Examples
    --------
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(tiers=["high"]).entities
    >>> table = compare_runs(entities, by="model", budgets=(0.1, 0.3))
    >>> table[["model", "woa", "auroc", "ece", "ecarb@0.3"]].round(2)
                   model   woa  auroc   ece  ecarb@0.3
    0     sim-calibrated  0.75   0.66  0.01       1.49
    1  sim-overconfident  0.68   0.58  0.33       1.26
    2     sim-verbalized  0.69   0.69  0.22       1.44
    3        sim-logprob  0.77   0.85  0.17       2.40
    """
    frame = check_entities(entities)
    by = check_by(by, frame)
    check_unique_entities(frame)
    budgets = check_budgets(budgets)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 0)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    level = check_probability(confidence_level, "confidence_level")
    seed = check_seed(seed)
    extra = check_extra(extra)
    if "calibration_p" in extra and not n_resamples:
        raise ValidationError("extra 'calibration_p' needs n_resamples >= 1 (the consistency "
                              "test redraws the outcomes n_resamples times); found 0")
    if by:
        groups = [((k if isinstance(k, tuple) else (k,)), g) for k, g in
                  frame.groupby(list(by), sort=False, dropna=False, observed=True)]
    else:
        groups = [((), frame)]
    check_work(len(frame), len(groups), n_resamples=n_resamples, n_bins=n_bins,
               n_budgets=len(budgets), max_work=max_work)
    rows = []
    for key, group in groups:
        row = dict(zip(by, key, strict=True))
        label = _group_label(by, key)
        row.update(_run_metrics(group, label, budgets=budgets,
                                n_resamples=n_resamples, n_bins=n_bins, binning=binning,
                                level=level, seed=seed, extra=extra))
        if n_resamples and row["n_documents"] < MIN_INTERVAL_DOCUMENTS:
            warnings.warn(
                f"compare_runs, {label}: intervals from {row['n_documents']} documents "
                f"(fewer than {MIN_INTERVAL_DOCUMENTS}) are too narrow to trust; read them "
                "as rough", SmallSampleWarning, stacklevel=3)
        rows.append(row)
        if progress is not None:
            progress(1)
    out = pd.DataFrame(rows)
    out.attrs.update({"by": list(by), "budgets": list(budgets), "n_resamples": n_resamples,
                      "confidence_level": level, "n_bins": n_bins, "binning": binning,
                      "seed": seed, "extra": list(extra)})
    return out


# ------------------------------------------------------------------ sketched (streamed)
@dataclass(frozen=True, eq=False)
class RunSummary:
    """What :func:`compare_runs` needs of one run, without its rows; mergeable.

    Built from entity rows by :func:`summarize_runs` and combined with :meth:`merge`
    (associative and commutative), so a run spread over files, row groups or Dask
    partitions is summarised piece by piece. The calibration part is a
    :class:`~confcal.metrics.sketch.CalibrationSketch` (exact); WOA and F1 are sums.

    Attributes
    ----------
    doc_ids : frozenset
        Distinct doc ids (for ``n_documents``): the one part that grows with the data,
        ~100 bytes per document.
    n_entities, n_without_confidence : int
    totals : ExtractionTotals
        The sums behind WOA and F1 (:class:`~confcal.scoring.ExtractionTotals`).
    sketch : CalibrationSketch
        Of the rows that carry a confidence (correct = TP or TN).
    """

    doc_ids: frozenset[Any]
    n_entities: int
    n_without_confidence: int
    totals: ExtractionTotals
    sketch: CalibrationSketch

    @classmethod
    def _from_checked(cls, frame: pd.DataFrame, sample_weight: str | None = None
                      ) -> RunSummary:
        confidence = frame["confidence"].to_numpy(dtype=np.float64)
        has = ~np.isnan(confidence)
        w = None
        if sample_weight is not None:  # checked by from_arrays (names the column)
            w = frame[sample_weight].to_numpy()[has]
        totals = ExtractionTotals.from_codes(outcome_codes(frame["outcome"]),
                                             frame["weight"].to_numpy(dtype=np.float64),
                                             frame["similarity"].to_numpy(dtype=np.float64))
        return cls(
            doc_ids=frozenset(frame["doc_id"].tolist()), n_entities=len(frame),
            n_without_confidence=int((~has).sum()), totals=totals,
            sketch=_run_sketch(frame["correct"].to_numpy(dtype=bool)[has], confidence[has],
                               w, sample_weight))

    def merge(self, other: RunSummary) -> RunSummary:
        """The summary of both parts."""
        if not isinstance(other, RunSummary):
            raise ValidationError(f"other must be a RunSummary; found {type(other).__name__}")
        return RunSummary.merge_all([self, other])

    @classmethod
    def merge_all(cls, parts: Sequence[RunSummary]) -> RunSummary:
        """The summary of every part at once: one union of the doc ids and one k-way merge
        of the sketches (:meth:`CalibrationSketch.merge_all`), not a fold of pairs."""
        if not parts:
            raise ValidationError("parts must hold at least one RunSummary; found 0")
        for i, p in enumerate(parts):
            if not isinstance(p, RunSummary):
                raise ValidationError(f"parts must be RunSummary objects; found "
                                      f"{type(p).__name__} at index {i}")
        if len(parts) == 1:
            return parts[0]
        totals = parts[0].totals
        for p in parts[1:]:
            totals = totals + p.totals
        return cls(frozenset().union(*(p.doc_ids for p in parts)),
                   sum(p.n_entities for p in parts),
                   sum(p.n_without_confidence for p in parts), totals,
                   CalibrationSketch.merge_all([p.sketch for p in parts]))

    def metrics(self, label: str, *, budgets: tuple[float, ...], n_bins: int,
                binning: str) -> dict[str, Any]:
        """The row of :func:`compare_runs` (without intervals); warnings name ``label``."""
        return _runs_row(
            label, n_documents=len(self.doc_ids), n_entities=self.n_entities,
            n_without_confidence=self.n_without_confidence, totals_woa=self.totals.woa,
            totals_f1=self.totals.f1,
            report=(lambda: self.sketch.report(budgets=budgets, n_bins=n_bins,
                                               binning=binning)) if self.sketch.n else None,
            budgets=budgets)


def _key_part(value: Any) -> Any:
    # NaN != NaN: missing values of a group key are made one key, as groupby(dropna=False)
    # does; a blank label ("") is a group of its own there, so it stays a value here
    return None if is_missing(value, blank=False) else value


def _run_sketch(correct: np.ndarray, confidence: np.ndarray, w: np.ndarray | None,
                column: str | None) -> CalibrationSketch:
    """The sketch of a run's rows with a confidence; weights checked under their column."""
    if w is None:
        return CalibrationSketch.from_arrays(correct, confidence) if confidence.size else (
            CalibrationSketch.empty())
    if not confidence.size:
        return CalibrationSketch.empty(weighted=True)
    try:
        return CalibrationSketch.from_arrays(correct, confidence, sample_weight=w)
    except ValidationError as exc:
        raise ValidationError(str(exc).replace("sample_weight", f"sample_weight column "
                                               f"{column!r}", 1)) from None


def _check_weight_column(sample_weight: Any, frame: pd.DataFrame) -> str | None:
    if sample_weight is None:
        return None
    if not isinstance(sample_weight, str) or sample_weight not in frame.columns:
        raise ValidationError(f"sample_weight must be None or the name of a column of the "
                              f"entity table; found {sample_weight!r}")
    return sample_weight


def summarize_runs(entities: pd.DataFrame, by: Sequence[str], *,
                   sample_weight: str | None = None) -> dict[tuple[Any, ...], RunSummary]:
    """One :class:`RunSummary` per group of ``by`` values (missing values: key None).

    Summaries of different tables merge with :func:`merge_summaries`; :func:`runs_table`
    turns them into the :func:`compare_runs` table. ``sample_weight`` names a column of
    per-row weights for the calibration metrics (finite, >= 0; the sketch is weighted).

    See Also
    --------
    merge_summaries : combines summaries of several tables.
    runs_table : turns them into the runs table.
    """
    frame = check_entities(entities)
    by = check_by(list(by), frame)
    check_unique_entities(frame)
    weight = _check_weight_column(sample_weight, frame)
    if not by:
        return {(): RunSummary._from_checked(frame, weight)}
    found: dict[tuple[Any, ...], list[RunSummary]] = {}
    for key, group in frame.groupby(list(by), sort=False, dropna=False, observed=True):
        key = tuple(_key_part(k) for k in (key if isinstance(key, tuple) else (key,)))
        found.setdefault(key, []).append(RunSummary._from_checked(group, weight))
    return {key: RunSummary.merge_all(parts) for key, parts in found.items()}


def merge_summaries(*parts: dict[tuple[Any, ...], RunSummary], disjoint: bool = False,
                    names: Sequence[str] | None = None) -> dict[tuple[Any, ...], RunSummary]:
    """Merge per-group summaries; groups keep the order of first appearance.

    With ``disjoint=True`` the parts are whole tables (files) and no document of a group
    may be in two of them: a group's document in two tables means its rows were given
    twice, and merging would count them twice. ``names`` names the parts in that error
    (default ``part 0``, ``part 1``, ...).

    Raises
    ------
    ValidationError
        With ``disjoint``, naming the two parts, the group and the first shared doc id.

    See Also
    --------
    summarize_runs : builds the summaries.
    """
    if not isinstance(disjoint, bool):
        raise ValidationError(f"disjoint must be True or False; found {disjoint!r}")
    labels = list(names) if names is not None else [f"part {i}" for i in range(len(parts))]
    if len(labels) != len(parts):
        raise ValidationError(f"names must name every part; found {len(labels)} names for "
                              f"{len(parts)} parts")
    found: dict[tuple[Any, ...], list[RunSummary]] = {}
    seen_in: dict[tuple[Any, ...], list[tuple[int, frozenset[Any]]]] = {}
    for i, part in enumerate(parts):
        for key, summary in part.items():
            if disjoint:
                for j, docs in seen_in.get(key, ()):
                    shared = docs & summary.doc_ids
                    if shared:
                        first = next(iter(sorted(shared, key=str)))
                        run = f"run {key!r}" if key else "the one run (no metadata columns)"
                        raise ValidationError(
                            f"parts must not repeat a document of a run; found {len(shared):,} "
                            f"documents of {run} in both {labels[j]} and {labels[i]}, first "
                            f"{first!r} (the same table given twice, or tables of different "
                            "runs without metadata to tell them apart: score_documents("
                            "metadata=...), --meta run=NAME on the command line)")
                seen_in.setdefault(key, []).append((i, summary.doc_ids))
            found.setdefault(key, []).append(summary)
    # one k-way merge per group (RunSummary.merge_all), never a fold over the parts
    return {key: RunSummary.merge_all(group) for key, group in found.items()}


class SummaryStack:
    """Summaries of a stream of tables, merged as a balanced tree while they arrive.

    Level i holds the merged summaries of 2**i tables (or nothing); a new table's summaries
    enter at level 0 and carry upwards like a binary counter, so every summary takes part
    in O(log k) merges of k tables (not k, as a running fold would) and at most
    log2(k) + 1 merged summaries are held at once. Groups keep their order of first
    appearance.
    """

    def __init__(self) -> None:
        self._levels: list[dict[tuple[Any, ...], RunSummary] | None] = []

    def push(self, summaries: dict[tuple[Any, ...], RunSummary]) -> None:
        carry, i = summaries, 0
        while i < len(self._levels) and self._levels[i] is not None:
            older = self._levels[i]
            assert older is not None
            carry = merge_summaries(older, carry)
            self._levels[i] = None
            i += 1
        if i == len(self._levels):
            self._levels.append(None)
        self._levels[i] = carry

    def result(self) -> dict[tuple[Any, ...], RunSummary]:
        """Every table's summaries merged (the oldest tables' groups first)."""
        return merge_summaries(*(lv for lv in reversed(self._levels) if lv is not None))


def runs_table(summaries: dict[tuple[Any, ...], RunSummary], by: Sequence[str], *,
               budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
               binning: str = "quantile") -> pd.DataFrame:
    """The :func:`compare_runs` table (``n_resamples=0``) from merged summaries.

    See Also
    --------
    summarize_runs : the summaries it reads.
    compare_runs : the same table from the rows.
    """
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    if not summaries:
        raise ValidationError("summaries must hold at least one group; found 0")
    rows = []
    for key, summary in summaries.items():
        row = dict(zip(by, key, strict=True))
        row.update(summary.metrics(_group_label(by, key), budgets=budgets, n_bins=n_bins,
                                   binning=binning))
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update({"by": list(by), "budgets": list(budgets), "n_resamples": 0,
                      "n_bins": n_bins, "binning": binning, "sketched": True})
    return out


def compare_runs_sketched(tables: Iterable[pd.DataFrame], *, by: str | Sequence[str] | None = None,
                          sample_weight: str | None = None,
                          budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                          binning: str = "quantile") -> pd.DataFrame:
    """:func:`compare_runs` over a stream of entity tables, holding one at a time.

    Each table (a chunk: a Parquet row group, a CSV chunk, a partition) is summarised per
    group into a :class:`RunSummary` (calibration as a
    :class:`~confcal.metrics.sketch.CalibrationSketch`), the summaries are merged, and the table is
    computed from them. The result equals ``compare_runs(pd.concat(tables), by=by,
    n_resamples=0)``: counts, AUROC and ECARB exactly, WOA, F1, ECE and Brier up to
    floating-point summation order. Memory: the sketches (O(distinct confidences)) and the
    doc ids of each group. Bootstrap intervals need the rows and are not available here.

    Parameters
    ----------
    tables : iterable of pandas.DataFrame
        Entity tables; ``by`` (default: the metadata columns of the first table) must be
        columns of every one.
    sample_weight : str, optional
        A column of per-row weights for the calibration metrics (AUROC, ECE, MCE, Brier,
        ECARB): each run's are then those of :func:`confcal.calibration_report` with
        ``sample_weight=``. WOA and F1 keep the ``weight`` column of the scoring.
    by, budgets, n_bins, binning
        As in :func:`compare_runs`.

    See Also
    --------
    compare_runs : the table with intervals, from the rows.

    Examples
    --------
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(tiers=["high"]).entities
    >>> chunks = (entities.iloc[i:i + 5000] for i in range(0, len(entities), 5000))
    >>> sketched = compare_runs_sketched(chunks, by="model", budgets=(0.3,))
    >>> exact = compare_runs(entities, by="model", budgets=(0.3,))
    >>> bool(((sketched["auroc"] - exact["auroc"]).abs() < 1e-12).all())
    True
    """
    if isinstance(tables, pd.DataFrame):
        tables = [tables]
    stack = SummaryStack()
    columns: tuple[str, ...] | None = None
    for table in tables:
        if columns is None:
            columns = check_by(by, check_entities(table))
        stack.push(summarize_runs(table, columns, sample_weight=sample_weight))
    if columns is None:
        raise ValidationError("tables must hold at least one entity table; found 0")
    return runs_table(stack.result(), columns, budgets=budgets, n_bins=n_bins,
                      binning=binning)
