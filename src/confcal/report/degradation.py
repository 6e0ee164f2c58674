"""How degradation hurts extraction: catastrophic failures and severity tiers.

Both functions read the entity table of :func:`confcal.scoring.score_documents`, scored on
pages degraded by :mod:`confcal.extras.augment` (or any other way) with the degradation
passed as metadata, so that each row carries a ``pipeline`` column::

    result = score_documents(schema, truths, predictions,
                             metadata={doc: {"pipeline": name} for doc, name in ...})

Doc ids are unique within one ``score_documents`` call, so the variants of one source page
are scored either one pipeline per call (concatenate the entity tables; ``doc_id`` stays
the source page's id), or in one call under variant ids with the source id as another
metadata column, named with ``doc="source"`` below.

* :func:`catastrophic_failures` flags extractions where the model returned (almost)
  nothing: more than ``null_fraction`` of the entity types that the truth fills are
  predicted null.
* :func:`degradation_tiers` measures each pipeline's accuracy drop against the undegraded
  baseline, on the documents both have, and sorts it into a tier: mild (< 5 points),
  moderate (5 to 10) or high (> 10).

The baseline must be the input pages themselves. With :mod:`confcal.extras.augment` it is:
``degrade_corpus`` writes the page as its baseline, an empty pipeline returns the page bit
for bit, and the ink is printed with a ``"min"`` blend that leaves a page on white paper
unchanged, so a measured drop holds nothing but the pipeline's own effect (Augraphy's
default blend alone changed 22% of a rendered invoice's pixels and cost OCR 6 points).

Neither needs Augraphy.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_probability
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..scoring._result import ENTITY_COLUMNS, OUTCOMES
from ..scoring._totals import outcome_codes

__all__ = ["TIERS", "catastrophic_failures", "degradation_tiers"]

TIERS: tuple[str, ...] = ("mild", "moderate", "high")
"""Degradation tiers by accuracy drop: < 0.05, 0.05 to 0.10 (both inclusive), > 0.10."""

_MILD_BELOW = 0.05
_HIGH_ABOVE = 0.10
# A drop is a difference of two means: 0.85 - 0.80 is 0.04999999999999993 in floating
# point, and must read as the 5 points it is, not as "below 5".
_DROP_DIGITS = 12


def _check_frame(entities: Any, required: Sequence[str], purpose: str) -> pd.DataFrame:
    if not isinstance(entities, pd.DataFrame):
        raise ValidationError(f"entities must be a pandas DataFrame (the entity table of "
                              f"score_documents); found {type(entities).__name__}")
    missing = [c for c in required if c not in entities.columns]
    if missing:
        raise ValidationError(f"entities must have the columns {list(required)} {purpose}; "
                              f"found {list(map(str, entities.columns))}, without {missing}")
    if len(entities) == 0:
        raise ValidationError("entities must not be empty; found 0 rows")
    return entities


def _check_no_missing(entities: pd.DataFrame, columns: Sequence[str]) -> None:
    for column in columns:
        missing = entities[column].isna().to_numpy()
        if missing.any():
            first = int(np.flatnonzero(missing)[0])
            raise ValidationError(f"{column} must not be missing; found {int(missing.sum())} "
                                  f"rows without one, first at row {first}")


def _check_columns(by: Any, entities: pd.DataFrame, name: str, exclude: Sequence[str]
                   ) -> list[str]:
    if isinstance(by, str):
        by = [by]
    if not isinstance(by, Sequence) or not all(isinstance(c, str) for c in by):
        raise ValidationError(f"{name} must be a sequence of column names; found {by!r}")
    missing = [c for c in by if c not in entities.columns]
    if missing:
        raise ValidationError(f"{name} must name columns of entities; found {missing} absent "
                              f"from {list(map(str, entities.columns))}")
    clash = [c for c in by if c in exclude]
    if clash:
        raise ValidationError(f"{name} must not include {clash}: they are used already")
    if len(set(by)) != len(by):
        raise ValidationError(f"{name} must not repeat a column; found {list(by)}")
    return list(by)


def catastrophic_failures(entities: pd.DataFrame, *, null_fraction: float = 0.8,
                          by: Sequence[str] | None = None, doc: str = "doc_id"
                          ) -> pd.DataFrame:
    """Flag extractions where most entity types the truth fills were predicted null.

    Parameters
    ----------
    entities : pandas.DataFrame
        An entity table: the columns ``field`` and ``outcome`` and the document column.
    null_fraction : float in [0, 1], default 0.8
        An extraction is catastrophic when the fraction of its entity types predicted null
        is *more than* this (the ConfBench rule: more than 80%).
    by : sequence of str, optional
        Columns that, with the document, identify one extraction (``model``,
        ``modality``, ``pipeline``, ...). Default: every column that is not an
        entity-table column (:data:`~confcal.scoring.ENTITY_COLUMNS`), i.e. the metadata.
    doc : str, default "doc_id"
        The column that names the document.

    Returns
    -------
    pandas.DataFrame
        One row per extraction, in order of first appearance: the document column, the
        ``by`` columns, then ``n_types`` (entity types with a truth value),
        ``n_null`` (of those, types predicted null), ``null_fraction``
        (``n_null / n_types``; NaN when ``n_types`` is 0) and ``catastrophic`` (bool;
        False when ``n_types`` is 0: nothing was there to miss).

    See Also
    --------
    degradation_tiers : accuracy drop per pipeline.

    Notes
    -----
    An entity type is a ``field`` value (``"Agency"``, ``"LineItems.Rate"``). A type
    "has truth" in an extraction when one of its rows is TP, FD or FN; it is "predicted
    null" when every such row is FN (no line item of the type got a value where the truth
    has one). FA and TN rows have no truth and do not count. Missing values in the
    grouping columns form their own group.

    Examples
    --------
    >>> import pandas as pd
    >>> entities = pd.DataFrame({
    ...     "doc_id": ["a"] * 5 + ["b"] * 5,
    ...     "field": ["F1", "F2", "F3", "F4", "F5"] * 2,
    ...     "outcome": ["FN", "FN", "FN", "FN", "TP",      # a: 4 of 5 null = 0.8, not > 0.8
    ...                 "FN", "FN", "FN", "FN", "FN"]})    # b: 5 of 5 null = 1.0
    >>> catastrophic_failures(entities)
      doc_id  n_types  n_null  null_fraction  catastrophic
    0      a        5       4            0.8         False
    1      b        5       5            1.0          True
    """
    entities = _check_frame(entities, [doc, "field", "outcome"],
                            "(a document column, the entity type and the outcome)")
    null_fraction = check_probability(null_fraction, "null_fraction", open_low=False,
                                      open_high=False)
    if by is None:
        by = [c for c in entities.columns if c not in ENTITY_COLUMNS and c != doc]
    else:
        by = _check_columns(by, entities, "by", [doc, "field", "outcome"])
    _check_no_missing(entities, [doc, "field"])
    codes = outcome_codes(entities["outcome"])
    truth = np.isin(codes, [OUTCOMES.index("TP"), OUTCOMES.index("FD"), OUTCOMES.index("FN")])
    predicted = np.isin(codes, [OUTCOMES.index("TP"), OUTCOMES.index("FD")])
    keys = [doc, *by]
    frame = entities[[*keys, "field"]].copy()
    frame["_truth"] = truth
    frame["_predicted_on_truth"] = predicted
    per_type = frame.groupby([*keys, "field"], sort=False, dropna=False, observed=True).agg(
        has_truth=("_truth", "any"), predicted=("_predicted_on_truth", "any"))
    per_type["null"] = per_type["has_truth"] & ~per_type["predicted"]
    out = per_type.groupby(level=list(range(len(keys))), sort=False, dropna=False).agg(
        n_types=("has_truth", "sum"), n_null=("null", "sum")).reset_index()
    out["n_types"] = out["n_types"].astype(np.int64)
    out["n_null"] = out["n_null"].astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = out["n_null"].to_numpy(np.float64) / out["n_types"].to_numpy(np.float64)
    out["null_fraction"] = fraction
    # NaN > x is False: an extraction with nothing to find is not a failure
    out["catastrophic"] = fraction > null_fraction
    return out


def _tier(drop: float) -> str:
    d = round(drop, _DROP_DIGITS)
    if d < _MILD_BELOW:
        return "mild"
    if d <= _HIGH_ABOVE:
        return "moderate"
    return "high"


def degradation_tiers(entities: pd.DataFrame, *, baseline: str = "original",
                      by: Sequence[str] = (), doc: str = "doc_id") -> pd.DataFrame:
    """Each pipeline's accuracy drop against the baseline, and its tier.

    Parameters
    ----------
    entities : pandas.DataFrame
        An entity table with a ``pipeline`` column (the degradation of each document's
        page, passed to ``score_documents`` as metadata) and the columns ``field,
        truth_index, pred_index, outcome, similarity, weight`` and the document column.
    baseline : str, default "original"
        The ``pipeline`` value of the undegraded pages.
    by : sequence of str, default ()
        Columns that separate runs compared on their own (``model``, ``modality``,
        ``strategy``): each combination has its own baseline.
    doc : str, default "doc_id"
        The column that names the source document (the same in the baseline and in
        every degraded variant of it).

    Returns
    -------
    pandas.DataFrame
        One row per (``by`` combination, pipeline other than the baseline), in order of
        first appearance: the ``by`` columns, ``pipeline``, ``n_documents`` (documents in
        both the pipeline and the baseline: the ones compared), ``n_only_pipeline``
        (documents of the pipeline without a baseline, excluded), ``n_only_baseline``
        (baseline documents the pipeline lacks, excluded), ``baseline_accuracy`` and
        ``accuracy`` (WOA on the compared documents), ``drop`` (baseline_accuracy -
        accuracy, in accuracy units: 0.05 is 5 points) and ``tier`` (one of
        :data:`TIERS`; None when the drop is undefined).

    Raises
    ------
    ValidationError
        A missing column or missing values in it, an unknown outcome, a ``by`` group
        without baseline rows, or a document scored twice within one (``by``, pipeline)
        group (pass the columns that separate the runs as ``by``).

    Warns
    -----
    UndefinedMetricWarning
        For a pipeline with no compared document or no evaluated entity (only TN rows):
        its accuracy, drop and tier are missing.

    See Also
    --------
    catastrophic_failures : documents a degradation breaks.

    Notes
    -----
    Accuracy is WOA, the ``weight``-weighted mean ``similarity`` over TP, FD, FA and FN
    rows (TN rows count in neither), pooled over the compared documents, so baseline and
    pipeline are measured on exactly the same pages. The drop is rounded to 12 decimals
    before the tier is read, so that 0.85 - 0.80 is the 5 points it is. A negative drop
    (the degraded pages scored better) is mild.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = []
    >>> def add(pipeline, doc, similarities):
    ...     for i, s in enumerate(similarities):
    ...         rows.append({"doc_id": doc, "field": f"F{i}", "truth_index": pd.NA,
    ...                      "pred_index": pd.NA, "outcome": "TP" if s == 1 else "FD",
    ...                      "similarity": s, "weight": 1.0, "pipeline": pipeline})
    >>> add("original", "a", [1, 1, 1, 1]); add("original", "b", [1, 1, 1, 1])
    >>> add("blur", "a", [1, 1, 1, 0.6])        # WOA 0.9: a drop of 0.1, moderate
    >>> add("blur", "c", [0, 0, 0, 0])          # no baseline for c: excluded, counted
    >>> table = degradation_tiers(pd.DataFrame(rows))
    >>> table[["pipeline", "n_documents", "n_only_pipeline", "n_only_baseline"]]
      pipeline  n_documents  n_only_pipeline  n_only_baseline
    0     blur            1                1                1
    >>> table[["baseline_accuracy", "accuracy", "drop", "tier"]]
       baseline_accuracy  accuracy  drop      tier
    0                1.0       0.9   0.1  moderate
    """
    needed = [doc, "field", "truth_index", "pred_index", "outcome", "similarity", "weight",
              "pipeline"]
    entities = _check_frame(entities, needed, "(pass the degradation pipeline of each "
                            "document to score_documents as metadata={doc_id: "
                            "{'pipeline': name}})")
    if not isinstance(baseline, str) or not baseline:
        raise ValidationError(f"baseline must be a non-empty string (a pipeline name); "
                              f"found {baseline!r}")
    by = _check_columns(by, entities, "by", needed)
    _check_no_missing(entities, [doc, "pipeline", "field", *by])
    evaluated = outcome_codes(entities["outcome"]) != OUTCOMES.index("TN")
    similarity = entities["similarity"].to_numpy(dtype=np.float64)
    weight = entities["weight"].to_numpy(dtype=np.float64)
    _check_evaluated_values(evaluated, similarity, weight)
    keys = [*by, "pipeline", doc]
    _check_scored_once(entities, keys, by, doc)

    frame = pd.DataFrame({"_w": np.where(evaluated, weight, 0.0),
                          "_ws": np.where(evaluated, weight * np.nan_to_num(similarity), 0.0)})
    for column in keys:
        frame[column] = entities[column].to_numpy()
    per_doc = frame.groupby(keys, sort=False, dropna=False).agg(w=("_w", "sum"),
                                                                ws=("_ws", "sum"))
    rows: list[dict[str, Any]] = []
    groups = (per_doc.groupby(level=list(range(len(by))), sort=False) if by
              else [((), per_doc)])
    for group_key, group in groups:
        label = dict(zip(by, group_key if isinstance(group_key, tuple) else (group_key,),
                         strict=True))
        docs = group.droplevel(list(range(len(by)))) if by else group
        pipelines = _pipelines_with_baseline(docs, baseline, label)
        base = docs.xs(baseline, level="pipeline")
        for name in pipelines:
            if name != baseline:
                rows.append(_pipeline_drop(label, name, docs.xs(name, level="pipeline"), base))
    columns = [*by, "pipeline", "n_documents", "n_only_pipeline", "n_only_baseline",
               "baseline_accuracy", "accuracy", "drop", "tier"]
    out = pd.DataFrame(rows, columns=columns)
    for column in ("n_documents", "n_only_pipeline", "n_only_baseline"):
        out[column] = out[column].astype(np.int64)
    out["tier"] = out["tier"].astype(object)
    return out


def _check_evaluated_values(evaluated: np.ndarray, similarity: np.ndarray,
                            weight: np.ndarray) -> None:
    """Similarity and weight finite, weight >= 0, on every evaluated (not TN) row."""
    bad = evaluated & ~(np.isfinite(similarity) & np.isfinite(weight) & (weight >= 0))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValidationError(
            f"similarity and weight must be finite (weight >= 0) on evaluated rows; found "
            f"{int(bad.sum())} rows breaking it, first at row {first} "
            f"(similarity {similarity[first]!r}, weight {weight[first]!r})")


def _check_scored_once(entities: pd.DataFrame, keys: list[str], by: Sequence[str],
                       doc: str) -> None:
    """Each document scored once per (by, pipeline) group.

    A document scored twice in one group (two models mixed without ``by``) would be
    silently pooled: a top-level field appears once per scoring of a document.
    """
    top = (entities["truth_index"].isna() & entities["pred_index"].isna()).to_numpy()
    if not top.any():
        return
    repeats = entities.loc[top].groupby([*keys, "field"], sort=False, dropna=False,
                                        observed=True).size()
    repeated = repeats[repeats > 1]
    if len(repeated):
        key = repeated.index[0]
        others = [c for c in entities.columns if c not in ENTITY_COLUMNS
                  and c not in keys and c != doc]
        raise ValidationError(
            f"entities must score each document once per (by, pipeline) group; found "
            f"{doc} {key[len(by) + 1]!r} in pipeline {key[len(by)]!r} with "
            f"{int(repeated.iloc[0])} rows for field {key[-1]!r} (pass by=[...] naming "
            f"the columns that separate the runs; metadata columns here: {others})")


def _pipelines_with_baseline(docs: pd.DataFrame, baseline: str,
                             label: dict[str, Any]) -> list[Any]:
    """The pipelines of one ``by`` group in order of first appearance; the baseline among them."""
    pipelines = list(dict.fromkeys(docs.index.get_level_values("pipeline")))
    if baseline not in pipelines:
        where = f" for {label}" if label else ""
        raise ValidationError(f"baseline must be a pipeline of entities{where}; found "
                              f"{baseline!r} absent from the pipelines {pipelines}")
    return pipelines


def _pipeline_drop(label: dict[str, Any], name: Any, variant: pd.DataFrame,
                   base: pd.DataFrame) -> dict[str, Any]:
    """One pipeline's row: documents compared and excluded, both accuracies, drop and tier.

    ``variant`` and ``base`` hold per document the evaluated weight ``w`` and weighted
    similarity ``ws``; only the documents in both are compared. An undefined drop warns
    (stacklevel: the caller of :func:`degradation_tiers`).
    """
    common = variant.index.intersection(base.index, sort=False)
    row = {**label, "pipeline": name, "n_documents": len(common),
           "n_only_pipeline": len(variant.index.difference(base.index, sort=False)),
           "n_only_baseline": len(base.index.difference(variant.index, sort=False))}
    b, v = base.loc[common], variant.loc[common]
    if len(common) == 0 or not (b["w"].sum() > 0 and v["w"].sum() > 0):
        reason = ("no document in both it and the baseline" if len(common) == 0
                  else "no evaluated entity (only TN rows)")
        warnings.warn(f"degradation_tiers: the drop of pipeline {name!r}"
                      f"{' for ' + str(label) if label else ''} is undefined: {reason}; "
                      "its accuracy, drop and tier are missing",
                      UndefinedMetricWarning, stacklevel=3)
        row.update(baseline_accuracy=np.nan, accuracy=np.nan, drop=np.nan, tier=None)
    else:
        base_acc = float(b["ws"].sum() / b["w"].sum())
        acc = float(v["ws"].sum() / v["w"].sum())
        row.update(baseline_accuracy=base_acc, accuracy=acc, drop=base_acc - acc,
                   tier=_tier(base_acc - acc))
    return row
