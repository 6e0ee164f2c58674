"""Calibrators evaluated on entity tables: transfer between groups, group k-fold.

Re-exported by :mod:`confcal.calibration.calibrators`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    check_confidence,
    check_consistent_length,
    check_correct,
    check_groups,
    check_n_bins,
    check_option,
    check_positive_int,
    check_seed,
    first_bad,
)
from ..exceptions import ValidationError
from ..metrics._metrics import BINNINGS, brier, ece
from ._calibrators import CALIBRATORS

__all__ = ["cross_validate_calibrator", "evaluate_transfer"]


def _fitter(calibrator: Any) -> Callable[[np.ndarray, np.ndarray], Any]:
    if isinstance(calibrator, str):
        return CALIBRATORS[check_option(calibrator, "calibrator",  # type: ignore[no-any-return]
                                        tuple(CALIBRATORS))].fit
    fit = getattr(calibrator, "fit", None)
    if isinstance(calibrator, type) and callable(fit):
        return fit  # type: ignore[no-any-return]
    if callable(calibrator):
        return calibrator
    raise ValidationError(f"calibrator must be one of {', '.join(map(repr, CALIBRATORS))}, a "
                          "calibrator class, or a callable (correct, confidence) -> calibrator; "
                          f"found {calibrator!r}")


def _entity_arrays(entities: Any, group: str
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any], int]:
    """correct, confidence and group codes of the rows with a confidence; group labels in
    order of first appearance; how many rows had no confidence."""
    if not isinstance(entities, pd.DataFrame):
        raise ValidationError("entities must be a pandas DataFrame (the entity table); found "
                              f"{type(entities).__name__}")
    if not isinstance(group, str):
        raise ValidationError(f"by must be a column name (a string); found {group!r}")
    missing = [col for col in ("correct", "confidence", group) if col not in entities.columns]
    if missing:
        raise ValidationError(f"entities must have the columns 'correct', 'confidence' and "
                              f"{group!r}; found {missing} missing")
    n = len(entities)
    if n == 0:
        raise ValidationError("entities must not be empty; found 0 rows")
    y = check_correct(entities["correct"].to_numpy(), "entities['correct']")
    try:
        c = entities["confidence"].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise ValidationError("entities['confidence'] must be numbers within [0, 1] or missing "
                              f"(NaN); found dtype {entities['confidence'].dtype}") from None
    has = ~np.isnan(c)
    bad = has & ~((c >= 0.0) & (c <= 1.0))
    if bad.any():
        raise ValidationError("entities['confidence'] must be within [0, 1] or missing (NaN); "
                              f"{first_bad(bad, c)}")
    raw = entities[group].to_numpy()
    check_groups(raw, n, name=f"entities[{group!r}]")  # refuses missing ids, names the first
    codes, labels = pd.factorize(raw, sort=False)
    if not has.any():
        raise ValidationError(f"entities must have rows with a confidence; found all {n} "
                              "without one")
    return y[has], c[has], codes[has].astype(np.int64), list(labels), int(n - has.sum())


def _scores(y: np.ndarray, before: np.ndarray, after: np.ndarray, n_bins: int, binning: str
            ) -> dict[str, float]:
    return {
        "ece_before": ece(y, before, n_bins=n_bins, binning=binning),
        "ece_after": ece(y, after, n_bins=n_bins, binning=binning),
        "brier_before": brier(y, before),
        "brier_after": brier(y, after),
    }


def _predict(cal: Any, c: np.ndarray) -> np.ndarray:
    out = check_confidence(cal.predict(c), "calibrated confidence")
    check_consistent_length(confidence=c, calibrated_confidence=out)
    return out


def evaluate_transfer(entities: pd.DataFrame, *, by: str = "tier",
                      calibrator: str | Callable[..., Any] = "temperature", n_bins: int = 5,
                      binning: str = "quantile") -> pd.DataFrame:
    """Fit a calibrator on each group; score it on every other group, before and after.

    ConfBench leaves open whether a calibrator fitted on one degradation tier transfers to
    another. Each row here is one (fit group, evaluation group) pair with the evaluation
    group's ECE and Brier score before and after calibration.

    Parameters
    ----------
    entities : DataFrame
        An entity table with columns ``correct``, ``confidence`` and the ``by`` column.
        Rows without a confidence (NaN) are left out and counted in
        ``result.attrs["n_without_confidence"]``.
    by : str, default "tier"
        The column that names each row's group (no missing values): ``by=`` names
        grouping columns in every function on a DataFrame.
    calibrator : str, calibrator class or callable, default "temperature"
        A name from :data:`CALIBRATORS` (``"temperature"``, ``"platt"``, ``"isotonic"``,
        ``"histogram"``), a class with a ``fit`` classmethod, or a callable
        ``(correct, confidence) -> fitted`` (e.g. ``functools.partial(HistogramBinning.fit,
        n_bins=5)``) whose result has ``predict``.
    n_bins, binning : ECE's bins, as in :func:`confcal.ece`.

    Returns
    -------
    DataFrame
        Columns ``fit_group, eval_group, n_fit, n_eval, ece_before, ece_after,
        brier_before, brier_after``: one row per ordered pair of different groups, groups in
        order of first appearance. A group is never evaluated on itself (that is in-sample;
        see :func:`cross_validate_calibrator`).

    Raises
    ------
    ValidationError
        Missing columns, invalid correct/confidence values, missing group ids, fewer than
        two groups with a confidence; errors from fitting are prefixed with the fit group.

    See Also
    --------
    cross_validate_calibrator : held-out folds of one run.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({
    ...     "correct":    [1, 1, 1, 0] + [1, 1, 1, 0, 0],
    ...     "confidence": [0.9] * 9,
    ...     "tier": ["clean"] * 4 + ["noisy"] * 5})
    >>> out = evaluate_transfer(table, by="tier")
    >>> out[["fit_group", "eval_group", "n_fit", "n_eval"]].values.tolist()
    [['clean', 'noisy', 4, 5], ['noisy', 'clean', 5, 4]]
    >>> # fitted on clean (3/4 right at 0.9, so 0.9 -> 0.75), scored on noisy (3/5 right):
    >>> # before |0.6 - 0.9| = 0.3, after |0.6 - 0.75| = 0.15
    >>> [round(float(out.loc[0, m]), 9) for m in ("ece_before", "ece_after")]
    [0.3, 0.15]
    """
    group = by
    y, c, codes, labels, n_without = _entity_arrays(entities, group)
    fit = _fitter(calibrator)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    present = np.unique(codes).tolist()  # codes number groups in order of first appearance
    if len(present) < 2:
        raise ValidationError(f"entities[{group!r}] must hold at least 2 groups with a "
                              f"confidence to transfer between; found {len(present)}")
    rows = []
    for a in present:
        in_a = codes == a
        try:
            cal = fit(y[in_a], c[in_a])
        except ValidationError as exc:
            raise ValidationError(f"fitting on {group} {labels[a]!r}: {exc}") from None
        for b in present:
            if b == a:
                continue
            in_b = codes == b
            rows.append({"fit_group": labels[a], "eval_group": labels[b],
                         "n_fit": int(in_a.sum()), "n_eval": int(in_b.sum()),
                         **_scores(y[in_b], c[in_b], _predict(cal, c[in_b]), n_bins, binning)})
    out = pd.DataFrame(rows, columns=["fit_group", "eval_group", "n_fit", "n_eval",
                                      "ece_before", "ece_after", "brier_before", "brier_after"])
    out.attrs["n_without_confidence"] = n_without
    return out


def group_folds(n_groups: int, folds: int, seed: int | None) -> np.ndarray:
    """The fold of each group 0..n_groups-1: shuffled with ``seed``, dealt round-robin.

    The one rule of :func:`cross_validate_calibrator` and the ensemble's cross-fitting:
    ``numpy.random.default_rng(seed).permutation`` of the groups, the i-th of the
    permutation in fold ``i % folds``, so every fold holds ``n_groups // folds`` or one
    more groups.
    """
    fold_of_group = np.empty(n_groups, dtype=np.int64)
    fold_of_group[np.random.default_rng(seed).permutation(n_groups)] = (
        np.arange(n_groups) % folds)
    return fold_of_group


def cross_validate_calibrator(entities: pd.DataFrame, *, by: str = "doc_id",
                              folds: int = 5, calibrator: str | Callable[..., Any] = "temperature",
                              n_bins: int = 5, binning: str = "quantile",
                              seed: int | None = 0) -> pd.DataFrame:
    """Out-of-sample calibration by group k-fold: never fit and score on one document.

    The documents (values of the ``by`` column) are shuffled with ``seed`` and dealt
    round-robin into ``folds`` folds of equal document count (±1). For each fold the
    calibrator is fitted on the rows of the other folds and applied to the fold's rows, so
    every calibrated confidence comes from a calibrator that never saw its document: the
    entities of one document share its scan and layout, and splitting them between fit and
    evaluation would leak.

    Parameters
    ----------
    entities : DataFrame
        Entity table with ``correct``, ``confidence`` and the ``by`` column. Rows
        without a confidence are left out and counted in
        ``result.attrs["n_without_confidence"]``.
    by : str, default "doc_id"
        The column holding each row's document (or any unit kept whole): folds are dealt
        by its values (``groups=`` is the name confcal keeps for arrays of group labels, as
        in :func:`confcal.bootstrap_ci`).
    folds : int >= 2, default 5
        At most the number of documents with a confidence.
    calibrator : as in :func:`evaluate_transfer`
    n_bins, binning : ECE's bins, as in :func:`confcal.ece`.
    seed : int or None, default 0
        Seeds the shuffle of documents (``numpy.random.default_rng``).

    Returns
    -------
    DataFrame
        Columns ``fold, n_groups, n_fit, n_eval, ece_before, ece_after, brier_before,
        brier_after``: one row per fold (0, 1, ...), then a row ``fold="pooled"`` scoring all
        out-of-fold calibrated confidences together (each row calibrated once, by the
        calibrator of its fold; ``n_fit`` is NaN there).

    See Also
    --------
    evaluate_transfer : fit on one run, measure on another.
    TemperatureScaling : a calibrator to evaluate.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, size=400)
    >>> table = pd.DataFrame({"confidence": conf,
    ...                       "correct": rng.uniform(size=400) < conf - 0.2,  # overconfident
    ...                       "doc_id": np.repeat(np.arange(40), 10)})
    >>> cv = cross_validate_calibrator(table, folds=4)
    >>> cv["fold"].tolist()
    [0, 1, 2, 3, 'pooled']
    >>> bool(cv.iloc[-1]["ece_after"] < cv.iloc[-1]["ece_before"])
    True
    """
    groups = by
    y, c, codes, labels, n_without = _entity_arrays(entities, groups)
    fit = _fitter(calibrator)
    folds = check_positive_int(folds, "folds", 2)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    seed = check_seed(seed)
    docs = np.unique(codes)
    if folds > docs.shape[0]:
        raise ValidationError(f"folds must be at most the number of {groups} values with a "
                              f"confidence ({docs.shape[0]}); found {folds}")
    fold_of_doc = np.full(len(labels), -1, dtype=np.int64)
    fold_of_doc[docs] = group_folds(docs.shape[0], folds, seed)
    fold = fold_of_doc[codes]
    calibrated = np.empty_like(c)
    rows: list[dict[str, Any]] = []
    for f in range(folds):
        test = fold == f
        try:
            cal = fit(y[~test], c[~test])
        except ValidationError as exc:
            raise ValidationError(f"fitting fold {f}: {exc}") from None
        calibrated[test] = _predict(cal, c[test])
        rows.append({"fold": f, "n_groups": int(np.count_nonzero(fold_of_doc == f)),
                     "n_fit": int((~test).sum()), "n_eval": int(test.sum()),
                     **_scores(y[test], c[test], calibrated[test], n_bins, binning)})
    rows.append({"fold": "pooled", "n_groups": int(docs.shape[0]), "n_fit": math.nan,
                 "n_eval": int(c.shape[0]), **_scores(y, c, calibrated, n_bins, binning)})
    out = pd.DataFrame(rows, columns=["fold", "n_groups", "n_fit", "n_eval", "ece_before",
                                      "ece_after", "brier_before", "brier_after"])
    out.attrs["n_without_confidence"] = n_without
    return out
