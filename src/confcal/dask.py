"""Scoring and calibration on Dask: documents and entities spread over partitions and workers.

Needs the ``dask`` extra (``pip install -e '.[dask]'``: ``dask[dataframe]`` and
``distributed``); dask is imported inside the functions, so ``import confcal.dask`` works
without it and fails only when a function is called.

- :func:`score` pairs truth and predicted documents (dask bags of JSON lines or dicts, or
  dask DataFrames) by doc id and scores each partition with
  :func:`confcal.scoring.score_documents`, giving a dask DataFrame entity table.
- :func:`dask_calibration_reports` builds one :class:`~confcal.metrics.sketch.CalibrationSketch`
  per partition and group, merges them in a tree reduction, and reports from the merged
  sketches (a dict of reports, keyed by group): the same numbers as
  :func:`confcal.calibration_report` on the collected arrays (AUROC and ECARB exactly, ECE
  and Brier up to summation order), without collecting rows. :func:`dask_calibration_report`
  is the one report of the whole table.
- :func:`dask_compare_runs` does the same for the whole :func:`confcal.report.compare_runs`
  table (no bootstrap intervals).

Every step is a pure function of its partition, so a task lost with a worker is recomputed
by Dask elsewhere with the same result.

An in-memory entity table given to ``dask.dataframe.from_pandas`` loses the types of its
``truth`` and ``prediction`` values under Dask's default ``dataframe.convert-string``
setting, which turns object columns into text (``100`` becomes ``"100"``, None ``<NA>``);
the reports here never read those columns. To keep the values, create the frame with
``dask.config.set({"dataframe.convert-string": False})``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._files import read_json_object
from ._validation import (
    check_budgets,
    check_confidence,
    check_correct,
    check_n_bins,
    check_option,
    check_sample_weight,
    is_missing,
)
from .exceptions import ValidationError
from .metrics._metrics import BINNINGS, DEFAULT_BUDGETS
from .metrics._report import CalibrationReport
from .metrics.sketch import CalibrationSketch
from .report._runs import RunSummary, check_by, merge_summaries, runs_table, summarize_runs
from .scoring._inputs import no_predictions_error
from .scoring._scoring import score_documents
from .scoring._tables import as_written
from .scoring.schema import Schema

__all__ = ["dask_calibration_report", "dask_calibration_reports", "dask_compare_runs", "score"]

_SPLIT_EVERY = 8  # partitions merged per task of the tree reduction


def _dask() -> Any:
    try:
        import dask
        import dask.dataframe
    except ImportError:
        raise ImportError("confcal.dask needs dask: pip install -e '.[dask]' "
                          "(dask[dataframe] and distributed)") from None
    return dask


# ----------------------------------------------------------------------------- inputs
def _record(item: Any, name: str) -> dict[str, str]:
    """One bag item -> {"doc_id": text, "document": JSON text}."""
    if isinstance(item, (str, bytes)):
        item = read_json_object(item, where=f"{name} lines", hint=f" in {item!r:.80}",
                                what='an object with exactly the keys "doc_id" and "document"')
    if not isinstance(item, dict) or item.keys() != {"doc_id", "document"}:
        raise ValidationError(
            f'{name} items must be objects with exactly the keys "doc_id" and "document"; '
            f"found {item!r:.80}")
    return {"doc_id": _doc_id(item["doc_id"], name), "document": _document(item["document"], name)}


def _doc_id(value: Any, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or is_missing(value):
        raise ValidationError(f"{name} doc_id must be a non-empty string or an integer; "
                              f"found {value!r}")
    # ids travel as text (as in written entity tables): a shuffle needs one type per column
    return str(value)


def _document(value: Any, name: str) -> str:
    if isinstance(value, str):
        value = read_json_object(value, where=f"{name} document",
                                 what="a JSON object of field names to values")
    if not isinstance(value, dict):
        raise ValidationError(f"{name} document must be a JSON object of field names to "
                              f"values; found {type(value).__name__}")
    return json.dumps(value)


def _as_frame(docs: Any, name: str) -> Any:
    """A dask DataFrame (doc_id: str, document: JSON str) from a bag or a DataFrame."""
    _dask()
    import dask.bag as db
    import dask.dataframe as dd

    meta = pd.DataFrame({"doc_id": pd.Series(dtype=object), "document": pd.Series(dtype=object)})
    if isinstance(docs, db.Bag):
        return docs.map(_record, name).to_dataframe(meta=meta)
    if isinstance(docs, dd.DataFrame):
        missing = [c for c in ("doc_id", "document") if c not in docs.columns]
        if missing:
            raise ValidationError(f"{name} must have the columns doc_id and document; found "
                                  f"{list(docs.columns)}")

        def convert(part: pd.DataFrame) -> pd.DataFrame:
            return pd.DataFrame({
                "doc_id": pd.Series([_doc_id(v, name) for v in part["doc_id"]], dtype=object),
                "document": pd.Series([_document(v, name) for v in part["document"]],
                                      dtype=object)})

        return docs[["doc_id", "document"]].map_partitions(convert, meta=meta)
    raise ValidationError(f"{name} must be a dask Bag (of JSON lines or dicts) or a dask "
                          f"DataFrame with columns doc_id and document; found "
                          f"{type(docs).__name__}")


# ---------------------------------------------------------------------------- scoring
def _empty_entities(schema: Schema) -> pd.DataFrame:
    # The column types of a scored table: score one empty document, keep no rows.
    frame = score_documents(schema, {"_": {}}, {}, allow_empty=True).entities.iloc[:0]
    return as_written(frame).reset_index(drop=True)


def _score_partition(part: pd.DataFrame, schema: Schema, strict: bool) -> pd.DataFrame:
    if len(part) == 0:
        return _empty_entities(schema)
    truths = [(d, json.loads(t)) for d, t in zip(part["doc_id"], part["truth"], strict=True)]
    preds = [(d, json.loads(p)) for d, p in zip(part["doc_id"], part["prediction"], strict=True)
             if isinstance(p, str)]  # NaN: no prediction for this truth document
    # the whole collection's emptiness is checked eagerly by score(); a partition may
    # hold only truth documents without a prediction
    result = score_documents(schema, truths, preds, strict=strict, allow_empty=True)
    return as_written(result.entities).reset_index(drop=True)


def score(schema: Schema, truths: Any, predictions: Any, *, strict: bool = False,
          allow_empty: bool = False) -> Any:
    """Score documents held by Dask; returns the entity table as a dask DataFrame.

    Parameters
    ----------
    schema : Schema
    truths, predictions : dask.bag.Bag or dask.dataframe.DataFrame
        A bag of JSON lines ``{"doc_id": ..., "document": {...}}`` (``db.read_text``) or
        of such dicts, or a DataFrame with columns ``doc_id`` and ``document`` (a dict or
        its JSON text).
    strict : bool, default False
        As in :func:`confcal.scoring.score_documents`: raise (at compute time) on a truth
        document without prediction or a predicted field outside the schema.
    allow_empty : bool, default False
        As in :func:`confcal.scoring.score_documents`: score ``predictions`` with no
        document, every truth document as all-missing; by default that is an error.

    Returns
    -------
    dask.dataframe.DataFrame
        The entity table (:data:`confcal.scoring.ENTITY_COLUMNS`), with ``doc_id``,
        ``truth`` and ``prediction`` as text, as :func:`confcal.scoring.io.write_entities` writes
        them. Rows of a document are together and in :func:`score_documents` order;
        documents are in partition order after the join on doc id.

    Raises
    ------
    ValidationError
        Eagerly (one pass over the doc ids): a doc id repeated in truths or in predictions,
        a predicted doc id absent from truths, no truth documents, no predicted documents
        (unless ``allow_empty``: an empty collection is most often a wrong path or
        filter). At compute time: what
        :func:`score_documents` raises for a document.

    Notes
    -----
    With ``strict=False`` a truth document without a prediction is scored as all-missing
    (its FN/TN rows are in the table), and keys outside the schema are ignored, as in
    :func:`score_documents`; the per-call ``counts`` of those cases are not carried by a
    DataFrame — use ``strict=True`` to have them raise.

    Examples
    --------
    >>> import json, dask.bag as db
    >>> from confcal.scoring.presets import FCC_INVOICE
    >>> truths = db.from_sequence([json.dumps({"doc_id": "a", "document": {"Agency": "ACME"}})])
    >>> preds = db.from_sequence([{"doc_id": "a", "document":
    ...                            {"Agency": {"value": "ACME", "confidence": 0.9}}}])
    >>> table = score(FCC_INVOICE, truths, preds).compute(scheduler="sync")
    >>> table.loc[table["field"] == "Agency", ["doc_id", "outcome", "confidence"]]
      doc_id outcome  confidence
    0      a      TP         0.9
    """
    dask = _dask()
    if not isinstance(schema, Schema):
        raise ValidationError(f"schema must be a confcal Schema; found {type(schema).__name__}")
    if not isinstance(strict, bool):
        raise ValidationError(f"strict must be True or False; found {strict!r}")
    if not isinstance(allow_empty, bool):
        raise ValidationError(f"allow_empty must be True or False; found {allow_empty!r}")
    t = _as_frame(truths, "truths").rename(columns={"document": "truth"})
    p = _as_frame(predictions, "predictions").rename(columns={"document": "prediction"})
    t_counts = t["doc_id"].value_counts()
    p_counts = p["doc_id"].value_counts()
    stray = p[["doc_id"]].merge(t[["doc_id"]].assign(_in_truth=True), on="doc_id", how="left")
    stray = stray[stray["_in_truth"].isna()]["doc_id"]
    n_truth, n_pred, t_rep, p_rep, strays = dask.compute(
        t_counts.sum(), p_counts.sum(), t_counts[t_counts > 1], p_counts[p_counts > 1], stray)
    if n_truth == 0:
        raise ValidationError("truths must contain at least one document; found 0")
    if n_pred == 0 and not allow_empty:
        raise no_predictions_error(int(n_truth))
    for name, repeated in (("truths", t_rep), ("predictions", p_rep)):
        if len(repeated):
            first = min(repeated.index)
            raise ValidationError(
                f"{name} must not repeat a doc id; found {len(repeated)} repeated, first "
                f"{first!r} ({int(repeated[first])} times)")
    if len(strays):
        raise ValidationError(
            f"predictions doc ids must be doc ids of truths; found {len(strays)} absent from "
            f"truths, first {min(strays)!r}")
    joined = t.merge(p, on="doc_id", how="left")
    return joined.map_partitions(_score_partition, schema, strict, meta=_empty_entities(schema))


# ------------------------------------------------------------------------ reductions
@dataclass(frozen=True)
class _Failure:
    """A partition's ValidationError, carried up the tree so that the error raised is the
    one of the first bad partition, whichever task failed first."""

    number: int
    message: str


def _tree_reduce(ddf: Any, summarize: Callable[[pd.DataFrame, int], Any],
                 merge: Callable[[list[Any]], Any], split_every: int,
                 finish: Callable[[Any], Any] = lambda result: result, *,
                 root_unmerged: bool = False, weights: Any = None) -> Any:
    """summarize each partition (given its number), then merge ``split_every`` results per
    task until one: a balanced tree of depth log_split_every(partitions). ``finish`` runs
    in the root task on the merge of its parts, so only its (small) result reaches the
    client; with ``root_unmerged`` the root hands ``finish`` its parts unmerged. A dask
    Series ``weights`` is paired with ``ddf`` partition by partition (its values join each
    partition as the column ``_WEIGHT``; see :func:`_join_weights`)."""
    dask = _dask()

    def last(results: list[Any]) -> Any:
        result = root(results)
        if isinstance(result, _Failure):
            return result
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = finish(result)
        except ValidationError as exc:
            return _Failure(-1, str(exc))
        # warnings raised on a worker stay there: they travel back with the result
        return out, [(w.category, str(w.message)) for w in caught]

    def leaf(part: pd.DataFrame, number: int, weight: pd.Series | None = None) -> Any:
        try:
            if weights is not None:
                part = _join_weights(part, weight, number)
            return summarize(part, number)
        except ValidationError as exc:
            return _Failure(number, str(exc))

    def node(parts: list[Any]) -> Any:
        failures = [p for p in parts if isinstance(p, _Failure)]
        return min(failures, key=lambda f: f.number) if failures else merge(parts)

    def root(parts: list[Any]) -> Any:
        failures = [p for p in parts if isinstance(p, _Failure)]
        if failures:
            return min(failures, key=lambda f: f.number)
        return parts if root_unmerged else merge(parts)

    if weights is None:
        parts = [dask.delayed(leaf)(part, i) for i, part in enumerate(ddf.to_delayed())]
    else:
        parts = [dask.delayed(leaf)(part, i, w) for i, (part, w) in enumerate(
            zip(ddf.to_delayed(), weights.to_delayed(), strict=True))]
    while len(parts) > split_every:
        parts = [dask.delayed(node)(parts[i:i + split_every])
                 for i in range(0, len(parts), split_every)]
    # the root: the last (at most split_every) results, merged and finished in one task
    result = dask.delayed(last)(parts).compute()
    if isinstance(result, _Failure):
        raise ValidationError(result.message)
    out, caught = result
    for category, message in caught:
        warnings.warn(message, category, stacklevel=3)
    return out


def _check_ddf(ddf: Any) -> None:
    _dask()
    import dask.dataframe as dd

    if not isinstance(ddf, dd.DataFrame):
        raise ValidationError(f"ddf must be a dask DataFrame (an entity table); found "
                              f"{type(ddf).__name__}")
    needed = ("correct", "confidence")
    missing = [c for c in needed if c not in ddf.columns]
    if missing:
        raise ValidationError(f"ddf must have the columns {list(needed)}; found "
                              f"{len(missing)} missing: {missing}")


def _check_split_every(split_every: Any) -> int:
    if isinstance(split_every, bool) or not isinstance(split_every, (int, np.integer)) or (
            split_every < 2):
        raise ValidationError(f"split_every must be an integer >= 2; found {split_every!r}")
    return int(split_every)


_WEIGHT = "__confcal_sample_weight__"  # the column a weight Series is joined in as


def _with_weights(ddf: Any, sample_weight: Any) -> tuple[str | None, Any]:
    """The name of the weight column (None: unweighted) and the dask Series to pair with
    ``ddf`` partition by partition (None: a column of ddf, or no weights)."""
    if sample_weight is None:
        return None, None
    import dask.dataframe as dd

    if isinstance(sample_weight, str):
        if sample_weight not in ddf.columns:
            raise ValidationError(f"sample_weight must be a column of ddf or a dask Series; "
                                  f"found {sample_weight!r}, not among {list(ddf.columns)}")
        return sample_weight, None
    if isinstance(sample_weight, dd.Series):
        if ddf.npartitions != sample_weight.npartitions:
            raise ValidationError(
                f"sample_weight must be aligned with ddf (one partition per partition of "
                f"ddf, {ddf.npartitions}); found a Series of {sample_weight.npartitions} "
                "partitions")
        if ddf.known_divisions and sample_weight.known_divisions and (
                tuple(ddf.divisions) != tuple(sample_weight.divisions)):
            raise ValidationError(
                f"sample_weight must be aligned with ddf (the same divisions, so that each "
                f"partition holds the rows of ddf's); found divisions "
                f"{_short(sample_weight.divisions)}, ddf has {_short(ddf.divisions)}. Pass a "
                "column of ddf, or sample_weight.repartition(divisions=ddf.divisions)")
        return _WEIGHT, sample_weight
    raise ValidationError(f"sample_weight must be None, a column name or a dask Series; "
                          f"found {type(sample_weight).__name__}")


def _short(divisions: Sequence[Any]) -> str:
    text = repr(tuple(divisions))
    return text if len(text) <= 80 else text[:77] + "..."


def _join_weights(part: pd.DataFrame, weight: Any, number: int) -> pd.DataFrame:
    """A partition of ddf with the values of the same partition of the sample_weight
    Series, which must hold its rows: the same length and the same index, in order."""
    if not isinstance(weight, pd.Series):
        raise ValidationError(f"sample_weight must be a dask Series; partition {number} is "
                              f"a {type(weight).__name__}")
    if len(weight) != len(part):
        raise ValidationError(
            f"sample_weight must be aligned with ddf (each partition with the rows of ddf's); "
            f"found {len(weight)} rows in partition {number}, ddf has {len(part)}")
    if not weight.index.equals(part.index):
        differ = [i for i, (a, b) in enumerate(zip(weight.index, part.index, strict=True))
                  if not (a == b)]
        row = differ[0] if differ else 0
        raise ValidationError(
            f"sample_weight must be aligned with ddf (the same index, in the same order); "
            f"found index {weight.index[row]!r} in partition {number} at row {row}, where "
            f"ddf has {part.index[row]!r}")
    return part.assign(**{_WEIGHT: weight.to_numpy()})


def _partition_arrays(part: pd.DataFrame, number: int, weight: str | None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """(correct, confidence, weights, rows kept) of the rows with a confidence, checked as
    the array metrics check them; errors name the partition and its row."""
    confidence = part["confidence"].to_numpy(dtype=np.float64, na_value=np.nan)
    has = ~np.isnan(confidence)
    c = confidence[has]
    y = part["correct"].to_numpy()[has]
    w = None if weight is None else part[weight].to_numpy()[has]
    if c.shape[0]:
        rows = np.flatnonzero(has)
        c = _checked(check_confidence, c, "confidence", number, rows)
        y = _checked(check_correct, y, "correct", number, rows)
        if w is not None:
            label = "sample_weight" if weight in (None, _WEIGHT) else str(weight)
            w = _checked(lambda a, name: check_sample_weight(a, a.shape[0], name,
                                                             positive_total=False),
                         w, label, number, rows)
    else:
        y = np.zeros(0, dtype=bool)
        w = None if w is None else np.zeros(0)
    return y, c, w, has


def _checked(check: Callable[..., np.ndarray], values: np.ndarray, column: str, number: int,
             rows: np.ndarray) -> np.ndarray:
    """``check`` on a partition's values; its error names the column, the partition and
    the row (the position in the partition, rows without a confidence counted)."""
    try:
        return check(values, name=f"ddf column {column!r}")
    except ValidationError as exc:
        text, marker = str(exc), "first at index "
        at = text.find(marker)
        digits = text[at + len(marker):].split(" ", 1)[0] if at >= 0 else ""
        if digits.isdigit():
            text = (f"{text[:at]}first in partition {number} at row {int(rows[int(digits)])}"
                    f"{text[at + len(marker) + len(digits):]}")
        else:
            text = f"{text} (in partition {number})"
        raise ValidationError(text) from None


def _partition_sketches(part: pd.DataFrame, number: int, by: tuple[str, ...],
                        weight: str | None) -> dict[tuple[Any, ...], CalibrationSketch]:
    y, c, w, has = _partition_arrays(part, number, weight)
    out: dict[tuple[Any, ...], CalibrationSketch] = {}
    if not by:
        if c.shape[0]:
            out[()] = CalibrationSketch.from_arrays(y, c, sample_weight=w)
        return out
    keys = part.loc[has, list(by)].reset_index(drop=True)
    for key, index in keys.groupby(list(by), sort=False, dropna=False,
                                   observed=True).indices.items():
        key = tuple(None if is_missing(k, blank=False) else k
                    for k in (key if isinstance(key, tuple) else (key,)))
        out[key] = CalibrationSketch.from_arrays(
            y[index], c[index], sample_weight=None if w is None else w[index])
    return out


def _sketch_groups(parts: list[dict[tuple[Any, ...], CalibrationSketch]]
                   ) -> dict[tuple[Any, ...], list[CalibrationSketch]]:
    """Each group's sketches, groups in order of first appearance."""
    found: dict[tuple[Any, ...], list[CalibrationSketch]] = {}
    for part in parts:
        for key, sketch in part.items():
            found.setdefault(key, []).append(sketch)
    return found


def _merge_sketch_dicts(parts: list[dict[tuple[Any, ...], CalibrationSketch]]
                        ) -> dict[tuple[Any, ...], CalibrationSketch]:
    # one k-way merge per group (O(N log k)), not a fold of pairs (O(N k))
    return {key: CalibrationSketch.merge_all(group)
            for key, group in _sketch_groups(parts).items()}


def dask_calibration_reports(ddf: Any, *, by: str | Sequence[str] | None = None,
                             sample_weight: Any = None,
                             budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                             binning: str = "quantile", split_every: int = _SPLIT_EVERY
                             ) -> dict[tuple[Any, ...], CalibrationReport]:
    """:func:`confcal.calibration_report` of each group of a dask entity table.

    Each partition is summarised into one :class:`~confcal.metrics.sketch.CalibrationSketch` per
    group (rows with a confidence; correct = the ``correct`` column), the sketches are
    merged ``split_every`` at a time in a tree, and each report is computed from the final
    sketch of its group. Only sketches (O(distinct confidences) each) travel between
    workers.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        With columns ``correct`` and ``confidence`` (NaN: no confidence, left out as in
        :meth:`~confcal.scoring.ExtractionResult.to_calibration`), and the ``by`` columns.
    by : str or sequence of str, optional
        Group columns; default none: one group, keyed ``()``.
    sample_weight : str or dask.dataframe.Series, optional
        Per-row weights: the name of a column of ``ddf``, or a Series with the same
        partitions as ``ddf`` (as many, the same divisions when both are known) and, in
        each partition, the same index in the same order (``ddf["w"]`` or a Series
        computed from ddf's columns has them); partitions are paired one to one, never
        shuffled, and any other Series is a ValidationError naming ``sample_weight`` and
        the first partition that differs. The reports are then the weighted ones of
        :func:`confcal.calibration_report` (``sample_weight=``). Weights must be finite
        and >= 0. Rows of zero weight count as rows and nothing else, exactly as in
        :func:`confcal.calibration_report`: they are in ``n`` and ``n_errors`` (every row
        with a confidence is), in no metric and no bin. So a partition or group whose
        weights are all zero adds its rows to ``n`` and no weight, and a group with no
        weight at all gets the all-NaN report (``n`` its rows), with an
        :class:`~confcal.exceptions.UndefinedMetricWarning`.
    budgets, n_bins, binning
        As in :func:`confcal.calibration_report`.
    split_every : int, default 8
        Sketches merged per task of the tree reduction (one k-way merge per task,
        :meth:`~confcal.metrics.sketch.CalibrationSketch.merge_all`).

    Returns
    -------
    dict of group key (tuple) -> CalibrationReport
        Always a dict, whatever ``by`` is: keys are tuples of the ``by`` values (``()``
        without ``by``), groups in order of first appearance over the partitions; missing
        key values are None. A group whose rows all lack a confidence has no report (it
        has no rows to calibrate); it is absent from the dict.

    Raises
    ------
    ValidationError
        Eagerly: ``ddf`` not a dask DataFrame or without the columns, a bad ``by``,
        ``split_every`` or ``sample_weight`` (another number of partitions, other known
        divisions). At compute time, a ``sample_weight`` Series whose partition holds
        other rows than ddf's (another length or index). At compute time, as the array metrics do,
        naming the column, the partition and the row: ``correct`` not bool or 0/1 (text
        such as "yes", 0.5, 2), a confidence outside [0, 1], a weight negative or not
        finite. No row with a confidence at all.

    See Also
    --------
    dask_calibration_report : the one report of the whole table.
    confcal.calibration_report : the same report from in-memory arrays.

    Examples
    --------
    >>> import dask.dataframe as dd, confcal
    >>> frame = pd.DataFrame({"correct": [True, False, False, True],
    ...                       "confidence": [0.9, 0.8, 0.7, 0.95], "model": list("aabb")})
    >>> reports = dask_calibration_reports(dd.from_pandas(frame, npartitions=2), by="model")
    >>> list(reports), reports[("b",)].n
    ([('a',), ('b',)], 2)
    >>> list(dask_calibration_reports(dd.from_pandas(frame, npartitions=2)))
    [()]
    """
    _check_ddf(ddf)
    split_every = _check_split_every(split_every)
    columns: tuple[str, ...] = () if by is None else check_by(by, ddf._meta)
    weight, series = _with_weights(ddf, sample_weight)
    needed = list(dict.fromkeys(["correct", "confidence", *columns]
                                + ([] if weight is None or series is not None else [weight])))
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)

    def reports(parts: list[dict[tuple[Any, ...], CalibrationSketch]]
                ) -> dict[tuple[Any, ...], CalibrationReport]:
        groups = _sketch_groups(parts)
        if not groups:
            raise ValidationError("ddf must have at least one row with a confidence; found 0")
        # the last merge and the report in one step (merged_report skips building the
        # merged sketch when ranking the rows is cheaper)
        return {key: CalibrationSketch.merged_report(group, budgets=budgets, n_bins=n_bins,
                                                     binning=binning)
                for key, group in groups.items()}

    # the reports are computed where the last merge ran: the merged sketches (as large
    # as the distinct confidences) never travel to the client
    result: dict[tuple[Any, ...], CalibrationReport] = _tree_reduce(
        ddf[needed], lambda part, i: _partition_sketches(part, i, columns, weight),
        _merge_sketch_dicts, split_every, finish=reports, root_unmerged=True, weights=series)
    return result


def dask_calibration_report(ddf: Any, *, sample_weight: Any = None,
                            budgets: Sequence[float] = DEFAULT_BUDGETS,
                            n_bins: int = 5, binning: str = "quantile",
                            split_every: int = _SPLIT_EVERY) -> CalibrationReport:
    """:func:`confcal.calibration_report` of a whole dask entity table, from merged sketches.

    The same numbers as :func:`confcal.calibration_report` on the collected arrays (AUROC
    and ECARB exactly, ECE and Brier up to summation order), computed as
    :func:`dask_calibration_reports` does, for one group: the whole table.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        With columns ``correct`` and ``confidence`` (NaN: no confidence, left out).
    sample_weight, budgets, n_bins, binning, split_every
        As in :func:`dask_calibration_reports`.

    Returns
    -------
    CalibrationReport

    See Also
    --------
    dask_calibration_reports : one report per group.
    confcal.calibration_report : the same report from in-memory arrays.

    Examples
    --------
    >>> import dask.dataframe as dd, confcal
    >>> frame = pd.DataFrame({"correct": [True, False, True, True], "confidence": [0.9, 0.8, 0.7,
    ...                                                                            0.95]})
    >>> rep = dask_calibration_report(dd.from_pandas(frame, npartitions=2), budgets=(0.5,))
    >>> rep.auroc == confcal.calibration_report(frame["correct"], frame["confidence"]).auroc
    True
    >>> frame["w"] = [1.0, 2.0, 0.5, 3.0]
    >>> weighted = dask_calibration_report(dd.from_pandas(frame, npartitions=2),
    ...                                    sample_weight="w", budgets=(0.5,))
    >>> weighted.auroc == confcal.calibration_report(frame["correct"], frame["confidence"],
    ...                                              sample_weight=frame["w"]).auroc
    True
    """
    return dask_calibration_reports(ddf, sample_weight=sample_weight, budgets=budgets,
                                    n_bins=n_bins, binning=binning,
                                    split_every=split_every)[()]


def _merge_summary_dicts(parts: list[dict[tuple[Any, ...], RunSummary]]
                         ) -> dict[tuple[Any, ...], RunSummary]:
    return merge_summaries(*parts)


def dask_compare_runs(ddf: Any, *, by: str | Sequence[str] | None = None,
                 budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                 binning: str = "quantile", split_every: int = _SPLIT_EVERY) -> pd.DataFrame:
    """:func:`confcal.report.compare_runs` (without intervals) of a dask entity table.

    Per partition and group a :class:`~confcal.report.RunSummary` (a calibration sketch,
    WOA and F1 sums, the doc ids), merged in a tree; the table equals ``compare_runs`` on
    the collected rows with ``n_resamples=0`` (up to floating-point summation order). The
    doc ids of each group are the one part that grows with the data.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(tiers=["high"], models=["sim-logprob"]).entities
    >>> table = dask_compare_runs(dd.from_pandas(entities, npartitions=3), by="model")
    >>> table[["model", "n_documents", "auroc"]].round(3)
             model  n_documents  auroc
    0  sim-logprob           75  0.855
    """
    _check_ddf(ddf)
    split_every = _check_split_every(split_every)
    columns = check_by(by, ddf._meta)
    summaries = _tree_reduce(ddf,
                             lambda part, _: summarize_runs(part, columns) if len(part) else {},
                             _merge_summary_dicts, split_every)
    return runs_table(summaries, columns, budgets=budgets, n_bins=n_bins, binning=binning)
