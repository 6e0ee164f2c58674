"""Is system A better than system B? Paired comparisons on the same documents.

:func:`compare_systems` takes one table per system (an entity table, or any frame with
``doc_id``, ``correct`` and ``confidence``), lines them up on their documents and runs one
document bootstrap for all of them: every resample draws the same documents, with the same
multiplicities, for every system (the paired bootstrap of MT evaluation). The difference
of each metric from a baseline system then gets an interval and a p-value that account for
the two systems being measured on the same documents, which two separate intervals cannot.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    check_budgets,
    check_confidence,
    check_correct,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    check_sample_weight,
    check_seed,
    is_missing,
)
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..metrics._metrics import BINNINGS, DEFAULT_BUDGETS
from ..metrics.bootstrap import SystemMetrics, paired_resamples
from ..scoring._tables import check_doc_ids
from ..scoring.io import REQUIRED_ENTITY_COLUMNS, check_entities
from ._runs import MIN_INTERVAL_DOCUMENTS, ExtractionSums, SmallSampleWarning

__all__ = ["COMPARE_METRICS", "DIFFERENCE_SUFFIXES", "DocumentsDroppedWarning",
           "baseline_differences", "check_baseline", "compare_systems"]

COMPARE_METRICS = ("woa", "f1", "auroc", "ece", "debiased_ece", "smooth_ece", "brier", "ecarb")
"""What :func:`compare_systems` compares; ``"ecarb"`` is one row per budget, and ``"woa"``
and ``"f1"`` need entity tables (``outcome``, ``similarity``, ``weight``)."""

_CALIBRATION = ("auroc", "ece", "debiased_ece", "smooth_ece", "brier", "ecarb")
ON_CHOICES = ("error", "intersection")
_TIE_TOLERANCE = 1e-12


class DocumentsDroppedWarning(UserWarning):
    """``compare_systems(on="intersection")`` left out documents that not every system has;
    the message counts them per system (as does the result's ``attrs["dropped"]``)."""


@dataclass(frozen=True)
class _System:
    """One system's rows: document ids of every row, and the calibration rows."""

    name: Hashable
    doc_id: np.ndarray  # every row
    entities: pd.DataFrame | None  # the checked entity table (WOA and F1), or None
    has_confidence: np.ndarray  # rows that enter calibration
    correct: np.ndarray
    confidence: np.ndarray
    sample_weight: np.ndarray | None


def _label(name: Hashable) -> str:
    return f"tables[{name!r}]"


def _read(name: Hashable, table: Any) -> _System:
    label = _label(name)
    if not isinstance(table, pd.DataFrame):
        raise ValidationError(f"{label} must be a pandas DataFrame (an entity table, or one "
                              f"with doc_id, correct and confidence); found "
                              f"{type(table).__name__}")
    entities = None
    try:
        if all(c in table.columns for c in REQUIRED_ENTITY_COLUMNS):
            entities = check_entities(table, name=label)
            frame = entities
            confidence = frame["confidence"].to_numpy(dtype=np.float64)
            has = ~np.isnan(confidence)  # rows without a confidence: WOA and F1 only
        else:
            missing = [c for c in ("doc_id", "correct", "confidence") if c not in table.columns]
            if missing:
                raise ValidationError(
                    f"{label} must have the columns doc_id, correct and confidence (or be an "
                    f"entity table); found {missing} missing (columns: {list(table.columns)})")
            if len(table) == 0:
                raise ValidationError(f"{label} must have at least one row; found 0")
            frame = table.reset_index(drop=True)
            check_doc_ids(frame["doc_id"], label)
            confidence = check_confidence(frame["confidence"].to_numpy(), "confidence")
            has = np.ones(len(frame), dtype=bool)
        correct = check_correct(frame["correct"].to_numpy()[has], "correct")
        weight = None
        if "sample_weight" in frame.columns:
            weight = check_sample_weight(frame["sample_weight"].to_numpy()[has], int(has.sum()))
    except ValidationError as exc:
        if str(exc).startswith(label):
            raise
        raise ValidationError(f"{label}: {exc}") from None
    return _System(name=name, doc_id=frame["doc_id"].to_numpy(dtype=object), entities=entities,
                   has_confidence=has, correct=correct, confidence=confidence[has],
                   sample_weight=weight)


def _shared_documents(systems: Sequence[_System], on: str) -> tuple[pd.Index, dict[Hashable,
                                                                                  dict[str, int]]]:
    """The documents every system is compared on, and what each system lost to ``on``."""
    docs = {s.name: pd.Index(pd.unique(s.doc_id)) for s in systems}
    shared = docs[systems[0].name]
    for s in systems[1:]:
        shared = shared.intersection(docs[s.name], sort=False)
    if on == "error":
        for s in systems:
            for other in systems:
                absent = docs[other.name].difference(docs[s.name], sort=False)
                if len(absent):
                    raise ValidationError(
                        f"{_label(s.name)} has no rows for {len(absent)} document"
                        f"{'s' if len(absent) != 1 else ''} that {_label(other.name)} has, "
                        f"first {absent[0]!r}: systems are compared on the same documents "
                        "(pass on='intersection' to compare on those every system has, "
                        "counting what is left out)", doc_id=absent[0])
    if len(shared) == 0:
        raise ValidationError("tables must share at least one document; found none that every "
                              "system has")
    # Documents are drawn by their number, so number them by what they are (their type and
    # repr: deterministic for ids of any type), not by where they first appear: reordering
    # a table's rows then changes no resample.
    shared = pd.Index(sorted(shared, key=lambda d: (type(d).__qualname__, repr(d))),
                      dtype=object)
    dropped = {}
    for s in systems:
        out = ~pd.Index(s.doc_id).isin(shared)
        dropped[s.name] = {"documents": int(len(docs[s.name]) - len(shared)),
                           "rows": int(out.sum())}
    return shared, dropped


def _paired_difference(estimate: float, base: float, values: np.ndarray, base_values: np.ndarray,
                       level: float) -> tuple[float, float, float, float, int]:
    """(difference, low, high, p-value, resamples used): the centred paired bootstrap.

    D_b = |Δ*_b - Δ̂| over the resamples where both systems' metric is defined;
    p = (1 + #{D_b >= |Δ̂|}) / (1 + B); the interval Δ̂ ± h with h the ⌈(1 + B)·level⌉-th
    smallest D_b (infinite when B is too small for the level). A D_b within the tie
    tolerance below |Δ̂| counts as a tie in p, so an h that close to |Δ̂| is raised to it
    (0 then lies on the interval's edge). So 0 lies outside the interval exactly when
    p <= 1 - level.
    """
    nan = math.nan
    difference = estimate - base
    d_star = values - base_values
    valid = d_star[~np.isnan(d_star)]
    b = int(valid.size)
    if math.isnan(difference) or b == 0:
        return difference, nan, nan, nan, b
    spread = np.sort(np.abs(valid - difference))
    size = abs(difference)
    p = (1 + int(np.count_nonzero(spread >= size * (1 - _TIE_TOLERANCE)))) / (1 + b)
    k = math.ceil((1 + b) * level - 1e-9)  # the 1e-9: (1 + 999) * 0.95 is 950, not 950.0001
    h = float(spread[k - 1]) if k <= b else math.inf
    if size * (1 - _TIE_TOLERANCE) <= h < size:  # a tie in p is a tie in the interval
        h = size
    return difference, difference - h, difference + h, float(p), b


def compare_systems(tables: Mapping[Hashable, pd.DataFrame], *, baseline: Hashable,
                    metrics: Sequence[str] | None = None,
                    budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                    binning: str = "quantile", n_resamples: int = 1000,
                    confidence_level: float = 0.95, seed: int | None = 0,
                    on: str = "error") -> pd.DataFrame:
    """Paired comparison of systems scored on the same documents, against a baseline.

    Parameters
    ----------
    tables : mapping of system name to pandas.DataFrame
        One table per system: an entity table (:func:`confcal.score_documents`; its rows
        with a confidence enter calibration, every row WOA and F1) or any frame with
        ``doc_id``, ``correct`` and ``confidence``. A ``sample_weight`` column, when present,
        weights the calibration metrics (frequency weights). At least two systems.
    baseline : hashable
        The name of the system the others are compared with.
    metrics : sequence of str, optional
        From :data:`COMPARE_METRICS`: ``"woa", "f1", "auroc", "ece", "debiased_ece",
        "smooth_ece", "brier", "ecarb"`` (one per budget). Default: all of them, WOA and F1
        only when every table is an entity table.
    budgets : sequence of float in (0, 1], default (0.1, 0.3)
        ECARB's budgets (:data:`confcal.metrics.DEFAULT_BUDGETS`).
    n_bins, binning : the bins of the ECE and the debiased ECE (as in :func:`confcal.ece`).
    n_resamples : int, default 1000
    confidence_level : float in (0, 1), default 0.95
    seed : int or None, default 0
    on : {"error", "intersection"}, default "error"
        ``"error"``: a document that one system has and another has not is an error
        naming both. ``"intersection"``: systems are compared on the documents all of them
        have; what each system loses is counted in ``attrs["dropped"]`` and a
        :class:`DocumentsDroppedWarning`.

    Returns
    -------
    pandas.DataFrame
        One row per (system, metric), systems in the order of ``tables``: ``system``,
        ``metric`` (``ecarb@0.3`` per budget), ``estimate`` (on the shared documents),
        ``difference`` (estimate minus the baseline's), ``low`` and ``high`` (the interval
        of the difference), ``p_value`` (two-sided, of no difference) and ``n_valid`` (the
        resamples where both systems' metric is defined). The baseline's rows carry its
        estimates and NaN for the rest. ``attrs`` holds ``baseline``, ``n_documents``,
        ``on``, ``dropped`` (per system: documents and rows left out), ``n_resamples``,
        ``confidence_level``, ``seed``, ``budgets``, ``n_bins``, ``binning``.

    See Also
    --------
    compare_runs : each run's own metrics and intervals.
    delong_test : an analytic test of two AUROCs on the same rows.
    bootstrap_ci : one system's intervals.

    Notes
    -----
    **Paired resamples.** Each resample draws the G shared documents with replacement
    once, and every system's metrics are computed on those draws (a document drawn twice
    weighs twice in every system), by reweighting each system's fixed sort as
    :func:`confcal.bootstrap_ci` does. The difference Δ* of every resample is thus a
    difference on the same documents: what document difficulty adds to both cancels.

    **p-value and interval (the centred, symmetric bootstrap).** The null "no difference"
    is imposed by centring: the spread of Δ* about the estimate Δ̂ stands for the spread of
    Δ̂ about the truth, so p = (1 + #{|Δ*_b - Δ̂| >= |Δ̂|}) / (1 + B), with B the resamples
    where both metrics are defined (a resample of one class has no AUROC). The interval
    is Δ̂ ± h, h the ⌈(1 + B)·level⌉-th smallest |Δ*_b - Δ̂|: 0 lies outside it exactly when
    p <= 1 - level, so the interval and the p-value never disagree. It is symmetric, unlike
    the percentile intervals of :func:`confcal.report.compare_runs`, for that duality.
    Differences of metrics that sampling noise biases (ECE: every system's binned ECE is
    pushed up, more for smaller bins) are less biased than the metrics themselves; the
    debiased and smooth ECE are the ones to test calibration differences with.

    The simulation studies (two equally good systems; two systems 0.03 AUROC apart) are
    in docs/metrics.md.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> docs = np.repeat(np.arange(100), 20)
    >>> correct = rng.uniform(size=2000) < 0.7
    >>> sharp = np.clip(0.7 + 0.25 * (correct - 0.5) + rng.normal(0, 0.2, 2000), 0, 1)
    >>> blunt = np.clip(0.7 + 0.05 * (correct - 0.5) + rng.normal(0, 0.2, 2000), 0, 1)
    >>> tables = {name: pd.DataFrame({"doc_id": docs, "correct": correct, "confidence": c})
    ...           for name, c in (("blunt", blunt), ("sharp", sharp))}
    >>> result = compare_systems(tables, baseline="blunt", metrics=["auroc"], n_resamples=200)
    >>> result[["system", "metric", "estimate", "difference", "p_value"]].round(3)
      system metric  estimate  difference  p_value
    0  blunt  auroc     0.544         NaN      NaN
    1  sharp  auroc     0.814        0.27    0.005
    """
    names = _check_tables(tables, baseline)
    on = check_option(on, "on", ON_CHOICES)
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 1)
    level = check_probability(confidence_level, "confidence_level")
    seed = check_seed(seed)
    systems = [_read(name, tables[name]) for name in names]
    chosen = _chosen_metrics(metrics, systems)
    shared, dropped = _shared_documents(systems, on)
    g = len(shared)
    if on == "intersection" and any(d["documents"] for d in dropped.values()):
        counts = ", ".join(f"{d['documents']} documents ({d['rows']} rows) of {name!r}"
                           for name, d in dropped.items())
        warnings.warn(f"compare_systems: on='intersection' compares the {g} documents every "
                      f"system has; left out {counts}", DocumentsDroppedWarning, stacklevel=2)
    functions, labels = _system_functions(systems, shared, chosen, budgets=budgets,
                                          n_bins=n_bins, binning=binning)
    estimates, values = paired_resamples(functions, g, n_resamples=n_resamples, seed=seed)
    base = names.index(baseline)
    rows = []
    for i, s in enumerate(systems):
        for j, metric_name in enumerate(labels[base]):  # the same order for every system
            estimate = float(estimates[i][j])
            if math.isnan(estimate):
                warnings.warn(f"compare_systems, system {s.name!r}: {metric_name} is undefined "
                              "on the shared documents; returning NaN",
                              UndefinedMetricWarning, stacklevel=2)
            if i == base:
                rows.append((s.name, metric_name, estimate, math.nan, math.nan, math.nan,
                             math.nan, n_resamples))
                continue
            diff, low, high, p, used = _paired_difference(
                estimate, float(estimates[base][j]), values[i][:, j], values[base][:, j], level)
            rows.append((s.name, metric_name, estimate, diff, low, high, p, used))
    if g < MIN_INTERVAL_DOCUMENTS:
        warnings.warn(f"compare_systems: intervals and p-values from {g} documents (fewer "
                      f"than {MIN_INTERVAL_DOCUMENTS}) are too rough to trust",
                      SmallSampleWarning, stacklevel=2)
    out = pd.DataFrame(rows, columns=["system", "metric", "estimate", "difference", "low",
                                      "high", "p_value", "n_valid"])
    out.attrs.update({"baseline": baseline, "n_documents": g, "on": on, "dropped": dropped,
                      "n_resamples": n_resamples, "confidence_level": level, "seed": seed,
                      "budgets": list(budgets), "n_bins": n_bins, "binning": binning})
    return out


def _check_tables(tables: Any, baseline: Hashable) -> list[Hashable]:
    """The system names of ``tables`` (at least two, the baseline among them)."""
    if not isinstance(tables, Mapping) or len(tables) < 2:
        found = len(tables) if isinstance(tables, Mapping) else type(tables).__name__
        raise ValidationError(f"tables must map at least two system names to tables; found "
                              f"{found}")
    names = list(tables)
    if baseline not in tables:
        raise ValidationError(f"baseline must be one of the systems {names}; found {baseline!r}")
    return names


def _chosen_metrics(metrics: Sequence[str] | None, systems: Sequence[_System]
                    ) -> tuple[str, ...]:
    """The metrics to compare: those asked for (checked), or every one the tables allow
    (WOA and F1 only when every table is an entity table)."""
    lacking = [s.name for s in systems if s.entities is None]
    if metrics is None:
        return tuple(m for m in COMPARE_METRICS if not lacking or m not in ("woa", "f1"))
    if isinstance(metrics, str):
        metrics = (metrics,)
    chosen = tuple(check_option(m, f"metrics[{i}]", COMPARE_METRICS)
                   for i, m in enumerate(metrics))
    if not chosen or len(set(chosen)) != len(chosen):
        raise ValidationError(f"metrics must be a non-empty sequence of distinct names "
                              f"from {COMPARE_METRICS}; found {list(metrics)}")
    for m in ("woa", "f1"):
        if m in chosen and lacking:
            raise ValidationError(
                f"metrics asks for {m}, which needs entity tables (outcome, similarity, "
                f"weight); found {_label(lacking[0])} without them")
    return chosen


def _system_functions(systems: Sequence[_System], shared: pd.Index, chosen: Sequence[str],
                      **options: Any) -> tuple[list[Any], list[tuple[str, ...]]]:
    """Per system, the function of the shared documents' draw counts that gives its
    metrics, and the metrics' labels in the order it returns them."""
    g = len(shared)
    calibration = [m for m in chosen if m in _CALIBRATION]
    extraction = [m for m in chosen if m in ("woa", "f1")]
    functions, labels = [], []
    for s in systems:
        codes = shared.get_indexer(s.doc_id)  # -1: a document left out by on="intersection"
        calib_codes = codes[s.has_confidence]
        keep = calib_codes >= 0
        metric = SystemMetrics(
            s.correct[keep], s.confidence[keep], calib_codes[keep], g, calibration,
            sample_weight=None if s.sample_weight is None else s.sample_weight[keep],
            **options)
        sums = None
        if extraction:
            assert s.entities is not None
            rows = codes >= 0
            sums = ExtractionSums(s.entities[rows], codes=codes[rows], n_documents=g)
        functions.append(_combined(metric, sums, extraction))
        labels.append(tuple(extraction) + metric.names)
    return functions, labels


def _combined(metric: SystemMetrics, sums: ExtractionSums | None, extraction: Sequence[str]
              ) -> Any:
    """One function of the draw counts: WOA and F1 (from per-document sums), then the
    calibration metrics."""
    def values(counts: np.ndarray) -> np.ndarray:
        out = metric(counts)
        if sums is None or not extraction:
            return out
        woa, f1 = sums.woa_f1(counts)
        picked = {"woa": float(woa), "f1": float(f1)}
        return np.concatenate([[picked[m] for m in extraction], out])

    return values


# ----------------------------------------------------------- the report's differences
DIFFERENCE_SUFFIXES = ("_diff", "_diff_low", "_diff_high", "_diff_p")
"""The columns :func:`baseline_differences` adds per metric: difference, interval, p-value."""


def _key(values: Sequence[Any]) -> tuple[Any, ...]:
    # missing values of a run key are one key (None), as groupby(dropna=False) makes them
    return tuple(None if is_missing(v, blank=False) else v for v in values)


def check_baseline(entities: pd.DataFrame, by: Sequence[str], baseline: Any) -> None:
    """``baseline`` is a value (as text) of the first ``by`` column of ``entities``."""
    if not isinstance(baseline, str):
        raise ValidationError(f"baseline must be a string (a value of the first by column); "
                              f"found {baseline!r}")
    if not by:
        raise ValidationError("baseline needs runs to compare: by must name at least one "
                              "column; found none")
    shown = {("n/a" if is_missing(v, blank=False) else str(v)) for v in entities[by[0]]}
    if baseline not in shown:
        raise ValidationError(f"baseline must be a value of the column {by[0]!r} (one of "
                              f"{sorted(shown)}); found {baseline!r}")


def _compare_relabelled(label: str, systems: Mapping[Hashable, pd.DataFrame],
                        baseline: Hashable, **options: Any) -> pd.DataFrame:
    """:func:`compare_systems` whose warnings are given again naming the group compared."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compare_systems(systems, baseline=baseline, **options)
    for w in caught:
        warnings.warn(f"{label}: {w.message}" if label else str(w.message), w.category,
                      stacklevel=3)
    return result


def _difference_values(rows: pd.DataFrame) -> dict[str, float]:
    """One system's rows of :func:`compare_systems` as ``{<metric>_diff, _diff_low,
    _diff_high, _diff_p}``."""
    values: dict[str, float] = {}
    for row in rows.itertuples(index=False):
        for suffix, value in zip(DIFFERENCE_SUFFIXES, (row.difference, row.low, row.high,
                                                       row.p_value), strict=True):
            values[f"{row.metric}{suffix}"] = float(value)
    return values


def baseline_differences(entities: pd.DataFrame, by: Sequence[str], baseline: str, *,
                         budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                         n_resamples: int = 1000, confidence_level: float = 0.95,
                         seed: int | None = 0, on: str = "error"
                         ) -> tuple[dict[tuple[Any, ...], dict[str, float]], list[str]]:
    """Every run's paired differences from the baseline run, for the runs table.

    The runs are the groups of ``by``. ``baseline`` names a value of the first ``by``
    column (shown as text: ``sim-calibrated``, ``n/a`` for a missing value); each run is
    compared with the run that has that value and the same values in the other ``by``
    columns, on their shared documents (:func:`compare_systems`, all of whose metrics are
    used). Returns, per run key (missing values as None), ``{<metric>_diff, _diff_low,
    _diff_high, _diff_p}``, and the notes to show (a group of the other columns without
    the baseline, whose runs are left without differences).
    """
    check_baseline(entities, by, baseline)
    first, rest = by[0], list(by[1:])
    strata = ([((), entities)] if not rest else
              [((k if isinstance(k, tuple) else (k,)), g) for k, g in
               entities.groupby(rest, sort=False, dropna=False, observed=True)])
    out: dict[tuple[Any, ...], dict[str, float]] = {}
    notes = []
    for stratum, group in strata:
        systems = {_key((k,))[0]: g for k, g in
                   group.groupby(first, sort=False, dropna=False, observed=True)}
        names = [k for k in systems if ("n/a" if k is None else str(k)) == baseline]
        label = ", ".join(f"{c}={'n/a' if v is None else v}"
                          for c, v in zip(rest, _key(stratum), strict=True))
        if not names or len(systems) < 2:
            if rest:
                notes.append(f"{label}: no run {'to compare with' if names else 'with'} "
                             f"{first}={baseline}; its runs have no differences.")
            continue
        result = _compare_relabelled(label, systems, names[0], budgets=budgets,
                                     n_bins=n_bins, n_resamples=n_resamples,
                                     confidence_level=confidence_level, seed=seed, on=on)
        for system, rows in result.groupby("system", sort=False):
            if system != names[0]:
                out[_key((system, *stratum))] = _difference_values(rows)
    return out, notes
