"""Comparing runs: the ConfBench Table 3, and a self-contained report to read it in.

:func:`compare_runs` turns an entity table (one or many runs, told apart by metadata
columns such as ``model`` and ``tier``) into one row per run: how many entities and
documents, how many carry no confidence, extraction quality (WOA, F1) and calibration
(AUROC, ECE, Brier, ECARB), with bootstrap intervals that resample documents.

:func:`write_report` writes a folder a person can open: ``report.html`` (one file, images
embedded as base64 PNG, no script, no external resource), ``report.md``, ``metrics.csv`` and
the PNG figures. Every value that comes from a document or a metadata column is escaped:
extracted text is untrusted input. The folder is written under a temporary name and renamed
into place, so a failure never leaves a half-written report.
"""

from __future__ import annotations

import base64
import html
import math
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._files import check_destination, staged_folder
from .._deprecation import renamed_keywords
from .._signature import table_signature
from .._validation import (
    check_budgets,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    check_seed,
    is_missing,
)
from ..metrics.bootstrap import bootstrap_ci
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..scoring.io import check_entities
from ..metrics._metrics import BINNINGS, DEFAULT_BUDGETS, CalibrationReport, calibration_report
from ..scoring._result import ENTITY_COLUMNS
from ..scoring._totals import (
    UNDEFINED,
    ExtractionTotals,
    f1_from_counts,
    group_totals,
    outcome_codes,
    woa_from_sums,
)
from ..metrics.sketch import CalibrationSketch

__all__ = ["RunSummary", "WrittenReport", "compare_runs", "compare_runs_sketched",
           "format_runs", "merge_summaries", "runs_table", "summarize_runs", "to_html",
           "to_markdown", "write_report"]

_REPORT_FILES = ("report.html", "report.md", "metrics.csv", "reliability.png",
                 "auroc_vs_woa.png", "ecarb_curve.png")
_MAX_PANELS = 24  # reliability panels in one figure; more groups are named, not drawn
_MAX_CURVES = 10  # ECARB curves per panel (tab10 colours stay distinguishable)


# --------------------------------------------------------------------------- the table
def _check_by(by: Any, frame: pd.DataFrame) -> tuple[str, ...]:
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


def _group_label(by: Sequence[str], key: Sequence[Any]) -> str:
    if not by:
        return "all entities"
    return ", ".join(f"{c}={v!r}" for c, v in zip(by, key))


def _warn(label: str, message: str) -> None:
    warnings.warn(f"compare_runs, {label}: {message}", UndefinedMetricWarning, stacklevel=4)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)


class _ExtractionSums:
    """Per-document sums from which WOA and F1 of any document resample follow."""

    def __init__(self, group: pd.DataFrame) -> None:
        codes, _ = pd.factorize(group["doc_id"], sort=False)
        self.n_documents = g = int(codes.max()) + 1
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
              budgets: tuple[float, ...]) -> dict[str, Any]:
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
    for b in budgets:
        row[f"ecarb@{b:g}"] = ecarbs[b]
        row[f"ecarb_ceiling@{b:g}"] = ceilings[b]
    return row


def _run_metrics(group: pd.DataFrame, label: str, *, budgets: tuple[float, ...],
                 n_resamples: int, n_bins: int, binning: str, level: float,
                 seed: int | None) -> dict[str, Any]:
    sums = _ExtractionSums(group)
    woa, f1 = (float(v) for v in sums.woa_f1(np.ones(sums.n_documents)))
    confidence = group["confidence"].to_numpy(dtype=np.float64)
    has = ~np.isnan(confidence)
    correct = group["correct"].to_numpy(dtype=bool)[has]
    conf = confidence[has]
    row = _runs_row(
        label, n_documents=sums.n_documents, n_entities=len(group),
        n_without_confidence=int((~has).sum()), totals_woa=woa, totals_f1=f1,
        report=(lambda: calibration_report(correct, conf, budgets=budgets, n_bins=n_bins,
                                           binning=binning)) if has.any() else None,
        budgets=budgets)
    if not n_resamples:
        return row
    nan = math.nan
    intervals: dict[str, tuple[float, float]] = {}
    if has.any():
        docs = group["doc_id"].to_numpy(dtype=object)[has]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedMetricWarning)
            for i, b in enumerate(budgets):
                metrics = ("auroc", "ece", "brier", "ecarb") if i == 0 else ("ecarb",)
                # the same seed draws the same documents for every budget
                ci = bootstrap_ci(correct, conf, groups=docs, metrics=metrics, budget=b,
                                  n_bins=n_bins, binning=binning, n_resamples=n_resamples,
                                  confidence_level=level, seed=seed).set_index("metric")
                for m in metrics:
                    name = f"ecarb@{b:g}" if m == "ecarb" else m
                    intervals[name] = (float(ci.at[m, "low"]), float(ci.at[m, "high"]))
        _relabelled(label, caught)
    intervals.update(sums.intervals(n_resamples, level, seed))
    ordered: dict[str, Any] = {}
    for name, value in row.items():
        ordered[name] = value
        if name in ("woa", "f1", "auroc", "ece", "brier") or (
                name.startswith("ecarb@")):
            ordered[f"{name}_low"], ordered[f"{name}_high"] = intervals.get(name, (nan, nan))
    return ordered


@renamed_keywords(bootstrap="n_resamples")
def compare_runs(entities: pd.DataFrame, *, by: str | Sequence[str] | None = None,
                 budgets: Sequence[float] = DEFAULT_BUDGETS, n_resamples: int = 0,
                 n_bins: int = 5,
                 binning: str = "quantile", confidence_level: float = 0.95,
                 seed: int | None = 0) -> pd.DataFrame:
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
        (Named ``bootstrap`` before; that name works for one more release, with a
        :class:`DeprecationWarning`.)
    n_bins, binning : as in :func:`confcal.ece` (default: the paper's 5 adaptive bins).
    confidence_level : float in (0, 1), default 0.95
    seed : int or None, default 0
        Seeds the resampling; the same seed gives the same intervals.

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
        ``seed``).

    Notes
    -----
    Intervals resample **documents** of the group with replacement (all rows of a document
    move together, :func:`confcal.bootstrap_ci` with ``groups=doc_id``): when ``by`` pools
    runs that share doc ids (one model over several tiers), a document's rows from every
    pooled run move together, since they are the same invoice. WOA and F1 intervals use the
    same scheme from per-document sums. A metric undefined for a group (one class, no
    confidence, no evaluated rows) is NaN with an :class:`UndefinedMetricWarning` naming
    the group.

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
    by = _check_by(by, frame)
    budgets = check_budgets(budgets)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 0)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    level = check_probability(confidence_level, "confidence_level")
    seed = check_seed(seed)
    if by:
        groups = [((k if isinstance(k, tuple) else (k,)), g) for k, g in
                  frame.groupby(list(by), sort=False, dropna=False, observed=True)]
    else:
        groups = [((), frame)]
    rows = []
    for key, group in groups:
        row = dict(zip(by, key))
        row.update(_run_metrics(group, _group_label(by, key), budgets=budgets,
                                n_resamples=n_resamples, n_bins=n_bins, binning=binning,
                                level=level, seed=seed))
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update({"by": list(by), "budgets": list(budgets), "n_resamples": n_resamples,
                      "confidence_level": level, "n_bins": n_bins, "binning": binning,
                      "seed": seed})
    return out


# ------------------------------------------------------------------ sketched (streamed)
@dataclass(frozen=True, eq=False)
class RunSummary:
    """What :func:`compare_runs` needs of one run, without its rows; mergeable.

    Built from entity rows with :meth:`from_entities` and combined with :meth:`merge`
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
    def from_entities(cls, entities: pd.DataFrame) -> RunSummary:
        """Summarise rows of one run; they are checked with :func:`~confcal.scoring.io.check_entities`."""
        return cls._from_checked(check_entities(entities))

    @classmethod
    def _from_checked(cls, frame: pd.DataFrame) -> RunSummary:
        confidence = frame["confidence"].to_numpy(dtype=np.float64)
        has = ~np.isnan(confidence)
        totals = ExtractionTotals.from_codes(outcome_codes(frame["outcome"]),
                                             frame["weight"].to_numpy(dtype=np.float64),
                                             frame["similarity"].to_numpy(dtype=np.float64))
        return cls(
            doc_ids=frozenset(frame["doc_id"].tolist()), n_entities=len(frame),
            n_without_confidence=int((~has).sum()), totals=totals,
            sketch=(CalibrationSketch.from_arrays(frame["correct"].to_numpy(dtype=bool)[has],
                                                  confidence[has])
                    if has.any() else CalibrationSketch.empty()))

    def merge(self, other: RunSummary) -> RunSummary:
        """The summary of both parts."""
        if not isinstance(other, RunSummary):
            raise ValidationError(f"other must be a RunSummary; found {type(other).__name__}")
        return RunSummary(
            self.doc_ids | other.doc_ids, self.n_entities + other.n_entities,
            self.n_without_confidence + other.n_without_confidence,
            self.totals + other.totals, self.sketch.merge(other.sketch))

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


def summarize_runs(entities: pd.DataFrame, by: Sequence[str]) -> dict[tuple[Any, ...], RunSummary]:
    """One :class:`RunSummary` per group of ``by`` values (missing values: key None).

    Summaries of different tables merge with :func:`merge_summaries`; :func:`runs_table`
    turns them into the :func:`compare_runs` table.
    """
    frame = check_entities(entities)
    by = _check_by(list(by), frame)
    if not by:
        return {(): RunSummary._from_checked(frame)}
    out: dict[tuple[Any, ...], RunSummary] = {}
    for key, group in frame.groupby(list(by), sort=False, dropna=False, observed=True):
        key = tuple(_key_part(k) for k in (key if isinstance(key, tuple) else (key,)))
        summary = RunSummary._from_checked(group)
        out[key] = out[key].merge(summary) if key in out else summary
    return out


def merge_summaries(*parts: dict[tuple[Any, ...], RunSummary]
                    ) -> dict[tuple[Any, ...], RunSummary]:
    """Merge per-group summaries; groups keep the order of first appearance."""
    out: dict[tuple[Any, ...], RunSummary] = {}
    for part in parts:
        for key, summary in part.items():
            out[key] = out[key].merge(summary) if key in out else summary
    return out


def runs_table(summaries: dict[tuple[Any, ...], RunSummary], by: Sequence[str], *,
               budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
               binning: str = "quantile") -> pd.DataFrame:
    """The :func:`compare_runs` table (``n_resamples=0``) from merged summaries."""
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    if not summaries:
        raise ValidationError("summaries must hold at least one group; found 0")
    rows = []
    for key, summary in summaries.items():
        row = dict(zip(by, key))
        row.update(summary.metrics(_group_label(by, key), budgets=budgets, n_bins=n_bins,
                                   binning=binning))
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update({"by": list(by), "budgets": list(budgets), "n_resamples": 0,
                      "n_bins": n_bins, "binning": binning, "sketched": True})
    return out


def compare_runs_sketched(tables: Iterable[pd.DataFrame], *, by: str | Sequence[str] | None = None,
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
    by, budgets, n_bins, binning
        As in :func:`compare_runs`.

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
    summaries: dict[tuple[Any, ...], RunSummary] = {}
    columns: tuple[str, ...] | None = None
    for table in tables:
        if columns is None:
            columns = _check_by(by, check_entities(table))
        summaries = merge_summaries(summaries, summarize_runs(table, columns))
    if columns is None:
        raise ValidationError("tables must hold at least one entity table; found 0")
    return runs_table(summaries, columns, budgets=budgets, n_bins=n_bins, binning=binning)


# ------------------------------------------------------------------------- formatting
_HEADERS = {"n_documents": "docs", "n_entities": "entities",
            "n_without_confidence": "no confidence", "woa": "WOA", "f1": "F1",
            "auroc": "AUROC", "ece": "ECE", "brier": "Brier"}


def _number(value: Any, digits: int) -> str:
    if is_missing(value, blank=False):
        return "n/a"
    return f"{value:.{digits}f}"


def format_runs(runs: pd.DataFrame, *, digits: int = 3) -> pd.DataFrame:
    """The table of :func:`compare_runs` as text, intervals beside their estimates.

    Counts get thousands separators, metrics ``digits`` decimals, and a metric with an
    interval reads ``0.812 [0.790, 0.833]``; NaN reads ``n/a``. Headers become short names
    (``WOA``, ``ECARB@0.3``, ``max@0.3`` for the ECARB ceiling).

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"model": ["a"], "n_entities": [1200], "auroc": [0.8123],
    ...                      "auroc_low": [0.79], "auroc_high": [0.8331]})
    >>> format_runs(runs).to_dict("records")
    [{'model': 'a', 'entities': '1,200', 'AUROC': '0.812 [0.790, 0.833]'}]
    """
    digits = check_positive_int(digits, "digits", 0)
    if not isinstance(runs, pd.DataFrame):
        raise ValidationError(f"runs must be a DataFrame from compare_runs; found "
                              f"{type(runs).__name__}")
    columns = [c for c in runs.columns
               if not (str(c).endswith(("_low", "_high")) and str(c)[: str(c).rfind("_")]
                       in runs.columns)]
    out = {}
    for c in columns:
        name = str(c)
        values = runs[c]
        if name in ("n_documents", "n_entities", "n_without_confidence"):
            text = [f"{int(v):,}" for v in values]
        elif name in _HEADERS or name.startswith(("ecarb@", "ecarb_ceiling@")):
            text = [_number(v, digits) for v in values]
            if f"{name}_low" in runs.columns:
                text = [f"{t} [{_number(lo, digits)}, {_number(hi, digits)}]"
                        if t != "n/a" else t
                        for t, lo, hi in zip(text, runs[f"{name}_low"], runs[f"{name}_high"])]
        else:
            text = ["n/a" if is_missing(v, blank=False) else str(v) for v in values]
        header = _HEADERS.get(name, name)
        if name.startswith("ecarb@"):
            header = f"ECARB@{name[6:]}"
        elif name.startswith("ecarb_ceiling@"):
            header = f"max@{name[14:]}"
        out[header] = text
    return pd.DataFrame(out, index=runs.index)


def _md_cell(value: Any) -> str:
    # escaped for HTML too: most Markdown renderers pass raw HTML through
    return html.escape(" ".join(str(value).split()), quote=True).replace("|", "\\|")


def to_markdown(table: pd.DataFrame) -> str:
    """A DataFrame as a Markdown pipe table; every cell escaped.

    Cells are HTML-escaped (Markdown renderers pass raw HTML through), ``|`` is escaped and
    line breaks become spaces, so a value from a document can neither break the table nor
    inject markup.

    Examples
    --------
    >>> import pandas as pd
    >>> print(to_markdown(pd.DataFrame({"field": ["Agency"], "prediction": ["<b>A|B</b>"]})))
    | field | prediction |
    |---|---|
    | Agency | &lt;b&gt;A\\|B&lt;/b&gt; |
    """
    header = "| " + " | ".join(_md_cell(c) for c in table.columns) + " |"
    rule = "|" + "---|" * len(table.columns)
    rows = ["| " + " | ".join(_md_cell(v) for v in row) + " |"
            for row in table.itertuples(index=False, name=None)]
    return "\n".join([header, rule, *rows])


def to_html(table: pd.DataFrame, *, css_class: str = "runs") -> str:
    """A DataFrame as an HTML ``<table>``; every header and cell escaped.

    An interval written by :func:`format_runs` (``0.812 [0.790, 0.833]``) is set on a
    second, smaller line.

    Examples
    --------
    >>> import pandas as pd
    >>> print(to_html(pd.DataFrame({"prediction": ["<script>alert(1)</script>"]})))
    <table class="runs">
    <thead><tr><th>prediction</th></tr></thead>
    <tbody>
    <tr><td>&lt;script&gt;alert(1)&lt;/script&gt;</td></tr>
    </tbody>
    </table>
    """
    def cell(value: Any) -> str:
        text = str(value)
        if text.endswith("]") and " [" in text:
            estimate, interval = text.split(" [", 1)
            return (f'{html.escape(estimate)}<br><span class="ci">'
                    f"[{html.escape(interval)}</span>")
        return html.escape(text)

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "\n".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
                     for row in table.itertuples(index=False, name=None))
    return (f'<table class="{html.escape(css_class)}">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>")


# ---------------------------------------------------------------------------- figures
def _calibration_rows(group: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    conf = group["confidence"].to_numpy(dtype=np.float64)
    has = ~np.isnan(conf)
    return group["correct"].to_numpy(dtype=bool)[has], conf[has]


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    if not by:
        return [((), frame)]
    return [((k if isinstance(k, tuple) else (k,)), g) for k, g in
            frame.groupby(list(by), sort=False, dropna=False, observed=True)]


def _short(key: Sequence[Any]) -> str:
    return " / ".join(map(str, key)) if key else "all entities"


def _reliability_figure(frame: pd.DataFrame, by: Sequence[str]) -> tuple[bytes, str]:
    from .plots import _grid, _png, reliability_diagram

    groups = _groups(frame, by)
    shown = groups[:_MAX_PANELS]
    fig, axes = _grid(len(shown))
    for i, ((key, group), ax) in enumerate(zip(shown, axes)):
        correct, conf = _calibration_rows(group)
        if conf.size == 0:
            ax.set_axis_off()
            ax.text(0.5, 0.5, f"{_short(key)}\nno predictions with a confidence",
                    ha="center", va="center", fontsize=8, transform=ax.transAxes)
            continue
        # the diagram's 10 uniform bins, named here: the caption says so (the table's ECE
        # uses the equal-mass bins of compare_runs)
        reliability_diagram(correct, conf, n_bins=10, binning="uniform", min_count=30, ax=ax,
                            title=_short(key), legend=i == 0)
    note = (f"Showing the first {len(shown)} of {len(groups)} groups; metrics.csv has all."
            if len(groups) > len(shown) else "")
    return _png(fig), note


def _ecarb_figure(frame: pd.DataFrame, by: Sequence[str]) -> tuple[bytes, str]:
    from .plots import _grid, _png, ecarb_curve

    # one panel per value of the first `by` column, a curve per value of the others
    panel_by, curve_by = (by[:1], by[1:]) if len(by) > 1 else ((), by)
    panels = _groups(frame, panel_by)[:_MAX_PANELS]
    fig, axes = _grid(len(panels), ncols=2, size=4.2)
    dropped = 0
    for (panel_key, panel), ax in zip(panels, axes):
        curves = _groups(panel, curve_by)
        dropped += max(0, len(curves) - _MAX_CURVES)
        drawn = False
        for key, group in curves[:_MAX_CURVES]:
            correct, conf = _calibration_rows(group)
            if conf.size and not correct.all():  # ECARB needs an error to catch
                ecarb_curve(correct, conf, label=_short(key), ax=ax, show_ceiling=False,
                            title=_short(panel_key))
                drawn = True
        if not drawn:
            ax.set_axis_off()
            ax.text(0.5, 0.5, f"{_short(panel_key)}\nno errors with a confidence to catch",
                    ha="center", va="center", fontsize=8, transform=ax.transAxes)
    notes = []
    if len(_groups(frame, panel_by)) > len(panels):
        notes.append(f"Showing the first {len(panels)} panels; metrics.csv has every group.")
    if dropped:
        notes.append(f"{dropped} curves beyond {_MAX_CURVES} per panel are not drawn; "
                     "metrics.csv has them.")
    return _png(fig), " ".join(notes)


def _auroc_figure(runs: pd.DataFrame) -> bytes:
    from .plots import _png, auroc_vs_woa

    return _png(auroc_vs_woa(runs))


# ----------------------------------------------------------------------------- report
@dataclass(frozen=True)
class WrittenReport:
    """What :func:`write_report` wrote.

    Attributes
    ----------
    directory : pathlib.Path
    html, markdown, metrics : pathlib.Path
        ``report.html``, ``report.md``, ``metrics.csv``.
    figures : tuple of pathlib.Path
        The PNG files.
    runs : pandas.DataFrame
        The table of :func:`compare_runs` (what ``metrics.csv`` holds).
    signature : str
        The settings behind every number in the report (shown in its footer): the entity
        table's extraction signature (``schema:unknown`` if it carries none) and the ECE
        binning and ECARB tie rule; see :mod:`confcal._signature`.
    """

    directory: Path
    html: Path
    markdown: Path
    metrics: Path
    figures: tuple[Path, ...]
    runs: pd.DataFrame
    signature: str = ""


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:78rem;
padding:0 1rem;color:#1d2430;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;
border-bottom:1px solid #d8dde6;padding-bottom:.2rem}
table{border-collapse:collapse;font-size:.82rem;margin:.6rem 0;display:block;overflow-x:auto}
th,td{border:1px solid #d8dde6;padding:.25rem .5rem;text-align:right;vertical-align:top}
th{background:#eef1f6}td:first-child,th:first-child{text-align:left}
.ci{color:#6b7485;font-size:.72rem}.note{color:#4a5568;font-size:.9rem}
.banner{background:#fff7e0;border:1px solid #f0d48a;padding:.5rem .8rem;border-radius:4px}
figure{margin:1rem 0}figure img{max-width:100%;height:auto;border:1px solid #e3e7ee}
figcaption{font-size:.85rem;color:#4a5568}dt{font-weight:600}dd{margin:0 0 .4rem 1.2rem}
table.errors td,table.errors th{text-align:left}
"""

# No script may run and nothing may load: the page is data and inline pictures, so even a
# value that escaped escaping could not execute.
_CSP = ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "img-src data:; style-src 'unsafe-inline'\">")

_GLOSSARY = [
    ("docs, entities",
     "distinct documents and entity rows (one per scored leaf, every outcome) in the group."),
    ("no confidence",
     ("rows whose prediction carries no confidence: counted here and left out of AUROC, "
      "ECE, Brier and ECARB (never dropped silently).")),
    ("WOA",
     ("weighted overall accuracy: mean similarity of truth and prediction over TP, FD, FA "
      "and FN rows (partial credit for near misses).")),
    ("F1", "2 TP / (2 TP + 2 FD + FA + FN): a value is right or wrong, no partial credit."),
    ("AUROC",
     ("probability that a right prediction is more confident than a wrong one (ties 1/2; "
      "0.5 = chance). Ranking only.")),
    ("ECE",
     ("expected calibration error over equal-mass bins: does 0.8 mean right 80% of the "
      "time? 0 is perfect.")),
    ("Brier", "mean squared difference of confidence and correctness; lower is better."),
    ("ECARB@b",
     ("errors caught by reviewing the least confident share b of predictions, relative to "
      "a random review of the same size (1 = no better than random).")),
    ("max@b",
     ("the best ECARB possible at that budget (every error less confident than every right "
      "prediction).")),
]


def _entity_path(field: Any, truth_index: Any, pred_index: Any) -> str:
    """``LineItems[3].Rate`` (truth item 3), ``LineItems[pred 5].Rate`` for an invented item."""
    name = str(field)
    if "." not in name:
        return name
    items, sub = name.split(".", 1)
    if not is_missing(truth_index, blank=False):
        return f"{items}[{int(truth_index)}].{sub}"
    if not is_missing(pred_index, blank=False):
        return f"{items}[pred {int(pred_index)}].{sub}"
    return name


def _confident_errors(frame: pd.DataFrame, by: Sequence[str], limit: int) -> pd.DataFrame:
    conf = frame["confidence"]
    wrong = frame[conf.notna() & ~frame["correct"].astype(bool)]
    # confidence first, then a fixed order, so ties never depend on row order
    ordered = wrong.assign(_d=wrong["doc_id"].astype(str), _f=wrong["field"].astype(str)
                           ).sort_values(["confidence", "_d", "_f"],
                                         ascending=[False, True, True], kind="stable")
    top = ordered.head(limit)
    missing = pd.Series(pd.NA, index=top.index)
    out = top[list(dict.fromkeys([*by, "doc_id"]))].copy()
    out["field"] = [_entity_path(f, t, p) for f, t, p in zip(
        top["field"], top.get("truth_index", missing), top.get("pred_index", missing))]
    for c in ("truth", "prediction"):
        if c in top:
            out[c] = ["(missing)" if is_missing(v) else v for v in top[c]]
    out["outcome"] = top["outcome"].astype(str)
    out["confidence"] = [f"{v:.4f}" for v in top["confidence"]]
    return out


def _html_page(title: str, notes: Sequence[str], summary: str, tables: list[tuple[str, str]],
               figures: list[tuple[str, str, bytes, str]], errors: pd.DataFrame,
               n_errors: int, footer: str) -> str:
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        _CSP,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    parts += [f'<p class="banner">{html.escape(n)}</p>' for n in notes]
    parts.append(f'<p class="note">{html.escape(summary)}</p>')
    for heading, table in tables:
        parts += [f"<h2>{html.escape(heading)}</h2>", table]
    parts.append("<h2>What the columns mean</h2><dl>")
    parts += [f"<dt>{html.escape(t)}</dt><dd>{html.escape(d)}</dd>" for t, d in _GLOSSARY]
    parts.append("</dl>")
    for heading, name, png, caption in figures:
        data = base64.b64encode(png).decode("ascii")
        parts += [f"<h2>{html.escape(heading)}</h2>", "<figure>",
                  f'<img alt="{html.escape(heading)}" src="data:image/png;base64,{data}">',
                  f"<figcaption>{html.escape(caption)} ({html.escape(name)})</figcaption>",
                  "</figure>"]
    parts.append(f"<h2>Most confident errors (top {n_errors})</h2>")
    parts.append('<p class="note">Wrong predictions with the highest confidence: what a '
                 "threshold on confidence would let through. Values are shown as extracted."
                 "</p>")
    parts.append(to_html(errors, css_class="errors") if len(errors) else
                 '<p class="note">No wrong prediction carries a confidence.</p>')
    parts += [f'<p class="note">{html.escape(footer)}</p>', "</body>", "</html>", ""]
    return "\n".join(parts)


def _markdown_page(title: str, notes: Sequence[str], summary: str,
                   tables: list[tuple[str, str]], figures: list[tuple[str, str, bytes, str]],
                   errors: pd.DataFrame, n_errors: int, footer: str) -> str:
    parts = [f"# {_md_cell(title)}", ""]
    parts += [f"> {_md_cell(n)}\n" for n in notes]
    parts += [_md_cell(summary), ""]
    for heading, table in tables:
        parts += [f"## {_md_cell(heading)}", "", table, ""]
    parts += ["## What the columns mean", ""]
    parts += [f"- **{_md_cell(t)}**: {_md_cell(d)}" for t, d in _GLOSSARY]
    parts.append("")
    for heading, name, _, caption in figures:
        parts += [f"## {_md_cell(heading)}", "", f"![{_md_cell(heading)}]({name})", "",
                  _md_cell(caption), ""]
    parts += [f"## Most confident errors (top {n_errors})", ""]
    parts.append(to_markdown(errors) if len(errors) else
                 "No wrong prediction carries a confidence.")
    parts += ["", _md_cell(footer), ""]
    return "\n".join(parts)


def _check_destination(out: Path) -> None:
    """A report may go to a new folder, an empty one, or replace a previous report."""
    check_destination(out, _REPORT_FILES, "report")


def _staged_report(out: Path) -> AbstractContextManager[Path]:
    """A staging folder for a report, moved onto ``out`` (replacing only a previous
    report) when the block succeeds and removed when it fails."""
    return staged_folder(out, _REPORT_FILES, "report")


@renamed_keywords(bootstrap="n_resamples")
def write_report(entities: pd.DataFrame, out_dir: str | os.PathLike[str], *,
                 by: str | Sequence[str] | None = None,
                 budgets: Sequence[float] = DEFAULT_BUDGETS,
                 n_bins: int = 5, n_resamples: int = 1000, confidence_level: float = 0.95,
                 seed: int | None = 0, title: str = "confcal report",
                 notes: Sequence[str] = (), n_errors: int = 20,
                 status: Callable[[str], None] | None = None) -> WrittenReport:
    """Write the comparison report of an entity table into a folder.

    Parameters
    ----------
    entities : pandas.DataFrame
        An entity table; several runs told apart by metadata columns.
    out_dir : path-like
        The report folder. It is written under a temporary name beside it and renamed into
        place at the end; an existing folder is replaced only if it is empty or holds
        nothing but a previous report's files.
    by, budgets, n_bins, n_resamples, confidence_level, seed
        As in :func:`compare_runs` (here ``n_resamples`` defaults to 1000 bootstrap
        resamples; ``bootstrap``, its name before, works for one more release with a
        :class:`DeprecationWarning`).
    title : str
    notes : sequence of str
        Shown at the top of the report (e.g. "the data are synthetic").
    n_errors : int, default 20
        How many of the most confident wrong predictions to list.
    status : callable, optional
        Called with a short message before each slow step (the CLI prints them).

    Returns
    -------
    WrittenReport

    Notes
    -----
    The folder holds ``report.html`` (self-contained: figures embedded as base64 PNG, a
    Content-Security-Policy that forbids scripts and external loads), ``report.md``
    (figures by relative path), ``metrics.csv`` (the :func:`compare_runs` table, full
    precision) and ``reliability.png``, ``auroc_vs_woa.png``, ``ecarb_curve.png``. The
    reliability panels use 10 uniform bins and hide bins with fewer than 30 predictions;
    the table's ECE uses ``n_bins`` equal-mass bins. When ``by`` has several columns a
    second table pools the runs by the first one. Every value from the entity table is
    escaped. Needs matplotlib (the ``plot`` or ``cli`` extra).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(tiers=["clean"]).entities
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     written = write_report(entities, pathlib.Path(tmp) / "report", by="model",
    ...                            n_resamples=0)
    ...     sorted(p.name for p in written.directory.iterdir())
    ['auroc_vs_woa.png', 'ecarb_curve.png', 'metrics.csv', 'reliability.png', 'report.html', 'report.md']
    """
    say = status or (lambda message: None)
    frame = check_entities(entities)
    by = _check_by(by, frame)
    budgets = check_budgets(budgets)
    n_errors = check_positive_int(n_errors, "n_errors", 0)
    if not isinstance(title, str):
        raise ValidationError(f"title must be a string; found {title!r}")
    if isinstance(notes, str) or not all(isinstance(n, str) for n in notes):
        raise ValidationError(f"notes must be a sequence of strings; found {notes!r}")
    out = Path(out_dir)
    _check_destination(out)  # before any work, not after minutes of bootstrap
    try:
        import matplotlib  # noqa: F401  (fail before any work, with the extra to install)
    except ImportError:
        raise ValidationError("write_report needs matplotlib; found it not installed (pip "
                              "install 'confcal[cli]' or 'confcal[plot]')") from None

    def table(columns: Sequence[str]) -> pd.DataFrame:
        return compare_runs(frame, by=columns, budgets=budgets, n_bins=n_bins,
                            n_resamples=n_resamples, confidence_level=confidence_level,
                            seed=seed)

    say(f"computing metrics for {len(frame):,} entities"
        + (f" with {n_resamples} bootstrap resamples" if n_resamples else ""))
    runs = table(by)
    tables = [("Runs" if by else "All entities", to_html(format_runs(runs)))]
    md_tables = [(tables[0][0], to_markdown(format_runs(runs)))]
    if len(by) > 1:
        pooled = table(by[:1])
        heading = f"Pooled by {by[0]}"
        tables.append((heading, to_html(format_runs(pooled))))
        md_tables.append((heading, to_markdown(format_runs(pooled))))

    say("drawing figures")
    with warnings.catch_warnings():
        # compare_runs has already warned about every undefined metric, naming its group
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        reliability, reliability_note = _reliability_figure(frame, by)
        curves, curves_note = _ecarb_figure(frame, by)
        scatter = _auroc_figure(runs)
    figures = [
        ("Reliability diagrams", "reliability.png", reliability,
         "Accuracy against confidence, 10 uniform bins; the number above each bar is how "
         "many predictions it holds; bins with fewer than 30 are hidden (their count is "
         "noted). " + reliability_note),
        ("AUROC vs. WOA", "auroc_vs_woa.png", scatter,
         "Extraction quality across, confidence ranking up; one point per run"
         + (", bars are bootstrap intervals." if n_resamples else ".")),
        ("ECARB vs. review budget", "ecarb_curve.png", curves,
         "How many times more errors a review of the least confident predictions catches "
         "than a random review of the same size; 1 (dotted) is random. " + curves_note),
    ]
    level = f"{confidence_level:.0%}"
    summary = (f"{len(frame):,} entities from {frame['doc_id'].nunique():,} documents in "
               f"{len(runs)} group{'s' if len(runs) != 1 else ''}"
               + (f" (by {', '.join(by)})" if by else "") + "; "
               f"{int(frame['confidence'].isna().sum()):,} rows carry no confidence. "
               + (f"Brackets are {level} intervals from {n_resamples} bootstrap resamples of "
                  "documents." if n_resamples else "No bootstrap intervals (n_resamples=0)."))
    signature = table_signature(entities, binning="quantile", n_bins=n_bins, ties="expected")
    footer = (f"confcal {_version()}; ECE with {n_bins} equal-mass bins; budgets "
              f"{', '.join(f'{b:g}' for b in budgets)}; seed {seed}. Signature: {signature}")
    errors = _confident_errors(frame, by, n_errors)

    with _staged_report(out) as staging:
        (staging / "report.html").write_text(
            _html_page(title, notes, summary, tables, figures, errors, n_errors, footer),
            encoding="utf-8")
        (staging / "report.md").write_text(
            _markdown_page(title, notes, summary, md_tables, figures, errors, n_errors,
                           footer), encoding="utf-8")
        runs.to_csv(staging / "metrics.csv", index=False)
        for _, name, png, _ in figures:
            (staging / name).write_bytes(png)
    return WrittenReport(directory=out, html=out / "report.html", markdown=out / "report.md",
                         metrics=out / "metrics.csv",
                         figures=tuple(out / name for _, name, _, _ in figures), runs=runs,
                         signature=signature)


def _version() -> str:
    from .._version import __version__

    return __version__
