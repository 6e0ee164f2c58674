"""The result of scoring: the entity table, its counts, signature and summaries."""

from __future__ import annotations

import builtins
import json
import math
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import (
    ExtensionArray,
    ExtensionDtype,
    register_extension_dtype,
    take,
)

from ..exceptions import UndefinedMetricWarning, ValidationError
from ._totals import (
    UNDEFINED,
    ExtractionTotals,
    f1_from_counts,
    group_totals,
    outcome_codes,
    precision_from_counts,
    recall_from_counts,
    woa_from_sums,
)

__all__ = ["ENTITY_COLUMNS", "OUTCOMES", "ExtractionResult", "ValueArray", "ValueDtype",
           "register_with_dask", "value_column"]

OUTCOMES: tuple[str, ...] = ("TP", "FD", "FA", "FN", "TN")
"""Outcome labels, in the category order of the entity table's ``outcome`` column."""

ENTITY_COLUMNS: tuple[str, ...] = (
    "doc_id", "field", "truth_index", "pred_index", "truth", "prediction",
    "similarity", "threshold", "correct", "outcome", "confidence", "weight",
)
"""The entity table's columns, in order; metadata columns follow them."""


# ------------------------------------------------------------------------- values
# The truth and prediction columns hold the raw values of the documents: strings, numbers,
# bools, dates, missing values, mixed in one column. An object column of mixed types cannot
# go to Arrow (ArrowTypeError), so the columns are a pandas extension array that holds the
# very Python objects in memory and goes to Arrow (Parquet, Feather) as text: the JSON of
# each value, which keeps "100" (text), 100 (int), 100.0 (float) and true apart, and reads
# back into the same objects (pandas restores the dtype from the file's pandas metadata).
# A value JSON has no form for is written as a one-key object, which no leaf can be (a
# mapping is never a value): {"decimal": "1.50"}, {"date": "2024-03-01"},
# {"datetime": "..."}, {"missing": "NA"} for pandas.NA, {"missing": "NaT"}. None is null.


def _encode(value: Any, ascii_only: bool) -> str | None:
    if value is None:
        return None
    if isinstance(value, np.generic):
        if isinstance(value, np.datetime64) and np.isnat(value):
            return '{"missing": "NaT"}'
        value = value.item()
    if isinstance(value, Decimal):
        return json.dumps({"decimal": str(value)})
    if type(value).__name__ == "NaTType":
        return '{"missing": "NaT"}'
    if type(value).__name__ == "NAType":
        return '{"missing": "NA"}'
    if isinstance(value, datetime):
        return json.dumps({"datetime": value.isoformat()})
    if isinstance(value, date):
        return json.dumps({"date": value.isoformat()})
    try:
        return json.dumps(value, ensure_ascii=ascii_only)
    except (TypeError, ValueError):
        raise ValidationError(f"an entity-table value must be a string, number, bool, date or "
                              f"missing to be written; found {type(value).__name__} "
                              f"{value!r:.80}") from None


def _decode(text: str | None) -> Any:
    if text is None:
        return None
    value = json.loads(text)
    if isinstance(value, dict):
        (kind, raw), = value.items()
        if kind == "decimal":
            return Decimal(raw)
        if kind == "datetime":
            return pd.Timestamp(raw) if raw else pd.NaT
        if kind == "date":
            return date.fromisoformat(raw)
        return pd.NA if raw == "NA" else pd.NaT
    return value


@register_extension_dtype
class ValueDtype(ExtensionDtype):
    """The dtype of the entity table's ``truth`` and ``prediction`` columns: raw values of
    any scalar type (the ``confcal.value`` extension type; stored as JSON text in Arrow)."""

    name = "confcal.value"
    type = object
    kind = "O"
    na_value = None
    _is_boolean = False

    @classmethod
    def construct_array_type(cls) -> builtins.type[ValueArray]:
        return ValueArray

    def __repr__(self) -> str:
        return "ValueDtype()"

    def __from_arrow__(self, array: Any) -> ValueArray:
        chunks = array.chunks if hasattr(array, "chunks") else [array]
        texts = [t for chunk in chunks for t in chunk.to_pylist()]
        return ValueArray(object_values([_decode(t) for t in texts]))


def object_values(values: Sequence[Any]) -> np.ndarray:
    # fromiter keeps each value as one object; np.array would unpack an empty-list value.
    return np.fromiter(values, dtype=object, count=len(values))


class ValueArray(ExtensionArray):
    """Raw values (any scalar type, missing values as given) in one pandas column.

    Elements are the very objects scored (``"100"`` stays text, ``100`` an int); the column
    converts to Arrow as the JSON text of each value (``pyarrow.array(column)``,
    ``DataFrame.to_parquet``), and reading such a file back gives the same objects.

    Examples
    --------
    >>> import pandas as pd
    >>> column = pd.Series(ValueArray.from_values(["100", 100, 100.0, True, None]))
    >>> column.dtype, column.tolist(), column.isna().tolist()
    (ValueDtype(), ['100', 100, 100.0, True, None], [False, False, False, False, True])
    >>> import pyarrow as pa
    >>> pa.array(column.array).to_pylist()
    ['"100"', '100', '100.0', 'true', None]
    """

    _dtype = ValueDtype()

    def __init__(self, values: np.ndarray) -> None:
        self._data = values

    @classmethod
    def from_values(cls, values: Sequence[Any]) -> ValueArray:
        """An array holding ``values`` as they are."""
        return cls(object_values(values))

    @classmethod
    def _from_sequence(cls, scalars: Any, *, dtype: Any = None, copy: bool = False
                       ) -> ValueArray:
        if isinstance(scalars, ValueArray):
            return scalars.copy() if copy else scalars
        return cls(object_values(list(scalars)))

    @classmethod
    def _from_factorized(cls, values: np.ndarray, original: ValueArray) -> ValueArray:
        return cls(object_values(list(values)))

    @property
    def dtype(self) -> ValueDtype:
        return self._dtype

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, np.integer)):
            return self._data[item]
        item = pd.api.indexers.check_array_indexer(self, item)
        return type(self)(self._data[item])

    def __setitem__(self, key: Any, value: Any) -> None:
        key = pd.api.indexers.check_array_indexer(self, key)
        if isinstance(value, ValueArray):
            value = value._data
        self._data[key] = value

    def __iter__(self) -> Any:
        return iter(self._data)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype is None else np.asarray(self._data, dtype=dtype)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if isinstance(other, (pd.Series, pd.Index, pd.DataFrame)):
            return NotImplemented
        other = other._data if isinstance(other, ValueArray) else other
        return np.asarray(self._data == other, dtype=bool)

    def isna(self) -> np.ndarray:
        return np.asarray(pd.isna(self._data), dtype=bool)

    def take(self, indices: Any, *, allow_fill: bool = False, fill_value: Any = None
             ) -> ValueArray:
        out = take(self._data, indices, allow_fill=allow_fill, fill_value=fill_value)
        return type(self)(np.asarray(out, dtype=object))

    def copy(self) -> ValueArray:
        return type(self)(self._data.copy())

    @classmethod
    def _concat_same_type(cls, to_concat: Sequence[ValueArray]) -> ValueArray:
        return cls(np.concatenate([a._data for a in to_concat]) if to_concat
                   else np.zeros(0, dtype=object))

    def _values_for_factorize(self) -> tuple[np.ndarray, Any]:
        return self._data, None

    def _formatter(self, boxed: bool = False) -> Any:
        return str if boxed else repr

    def __arrow_array__(self, type: Any = None) -> Any:
        import pyarrow as pa

        try:
            return pa.array([_encode(v, False) for v in self._data], type=pa.string())
        except (UnicodeEncodeError, pa.ArrowInvalid):
            # a lone surrogate (possible in a Python str, never in a file) has no UTF-8:
            # JSON's \\u escapes keep it
            return pa.array([_encode(v, True) for v in self._data], type=pa.string())


def value_column(values: Sequence[Any] | np.ndarray) -> pd.Series:
    """A ``truth``/``prediction`` column (:class:`ValueArray`) holding ``values``."""
    data = values if isinstance(values, np.ndarray) else object_values(values)
    return pd.Series(ValueArray(data), copy=False)


def register_with_dask() -> None:
    """Tell Dask how to make placeholder data of :class:`ValueDtype` (its metadata), so that
    ``dask.dataframe.from_pandas(result.entities)`` works. Done on import when Dask is
    already loaded, and by :mod:`confcal.dask`; idempotent."""
    from dask.dataframe.extensions import make_array_nonempty

    make_array_nonempty.register(ValueDtype)(
        lambda dtype: ValueArray.from_values(["a", None]))


if "dask.dataframe" in sys.modules:  # pragma: no cover - depends on the import order
    register_with_dask()


# ------------------------------------------------------------------------- result



@dataclass(frozen=True, eq=False)
class ExtractionResult:
    """The scored entities of a set of documents and the summaries computed from them.

    Attributes
    ----------
    entities : pandas.DataFrame
        One row per evaluated leaf; columns ``doc_id, field, truth_index, pred_index, truth,
        prediction, similarity, threshold, correct, outcome, confidence, weight`` then the
        metadata columns. ``field`` is the top-level field name (``"Agency"``) or
        ``"<items>.<sub-field>"`` for a line-item sub-field (``"LineItems.Rate"``), whose
        ``truth_index``/``pred_index`` are the item positions in the truth and predicted lists
        (``<NA>`` on the side without an item, and for top-level fields). ``truth`` and
        ``prediction`` are the raw values (the winning candidate's value for a top-K leaf), in
        :class:`ValueArray` columns that go to Parquet as they are (``to_parquet``).
        ``similarity`` is the comparator similarity for TP/FD rows, 0.0 for FA/FN, 1.0 for
        TN. ``correct`` is True for TP and TN. ``confidence`` is NaN where the prediction
        carries none. ``field`` and ``outcome`` are categoricals (schema order,
        :data:`OUTCOMES` order).
    counts : dict of str to int
        ``TP, FD, FA, FN, TN`` (row counts); ``documents`` (truth documents scored);
        ``docs_missing_prediction`` (truth documents without a prediction, scored as if
        every predicted value were missing); ``unknown_fields`` (predicted keys, top-level or
        inside a line item, that the schema does not define; ignored);
        ``unscored_truth_fields`` (ground-truth keys the schema does not define; ignored);
        ``without_confidence`` (entity rows with no confidence, left out of
        :meth:`to_calibration`). With ``conventions="stickler-1.0"`` also
        ``excluded_by_conventions`` (line-item leaves stickler-eval leaves unlabelled, so
        without a row) and ``whole_item_outcomes`` (outcomes it gives whole items or lists,
        counted in TP...TN without a row).
    signature : str
        The settings that produced the table (:mod:`confcal._signature`): confcal's version,
        the schema's name and digest, the conventions and the line-item match threshold,
        e.g. ``confcal:0.1.0|schema:fcc-invoice@afba760d3140|conventions:confcal|match:0.0``.
        Two results are comparable when their signatures are equal. Empty for a result
        built by hand.
    unknown_field_names : tuple of str
        The predicted keys that ``counts["unknown_fields"]`` counts, each once, in the order
        first met: a top-level field as it is spelled (``"grosstotal"``), a line-item
        sub-field as ``"<items>.<key>"`` (``"LineItems.rate"``).

    Notes
    -----
    precision = TP / (TP + FD + FA), recall = TP / (TP + FD + FN), F1 their harmonic mean
    = 2 TP / (2 TP + 2 FD + FA + FN); row counts, unweighted. WOA is the weighted mean of
    ``similarity`` over TP, FD, FA and FN rows (weights from the ``weight`` column). TN rows
    count in neither. A metric whose denominator is zero emits
    :class:`~confcal.exceptions.UndefinedMetricWarning` and is NaN.
    """

    entities: pd.DataFrame
    counts: dict[str, int]
    signature: str = ""
    unknown_field_names: tuple[str, ...] = ()

    @property
    def totals(self) -> ExtractionTotals:
        """The sums behind :attr:`woa`, :attr:`precision`, :attr:`recall` and :attr:`f1`
        (mergeable across chunks: :class:`~confcal.scoring.ExtractionTotals`)."""
        e = self.entities
        return ExtractionTotals.from_codes(outcome_codes(e["outcome"]),
                                           e["weight"].to_numpy(np.float64),
                                           e["similarity"].to_numpy(np.float64))

    def _metric(self, name: str) -> float:
        value: float = getattr(self.totals, name)
        if math.isnan(value):
            warnings.warn(f"{name} is undefined: {UNDEFINED[name]}; returning NaN",
                          UndefinedMetricWarning, stacklevel=3)
        return value

    @property
    def woa(self) -> float:
        """Weighted overall accuracy: weighted mean similarity of the non-TN rows."""
        return self._metric("woa")

    @property
    def precision(self) -> float:
        """TP / (TP + FD + FA)."""
        return self._metric("precision")

    @property
    def recall(self) -> float:
        """TP / (TP + FD + FN)."""
        return self._metric("recall")

    @property
    def f1(self) -> float:
        """2 TP / (2 TP + 2 FD + FA + FN), the harmonic mean of precision and recall."""
        return self._metric("f1")

    def by_field(self) -> pd.DataFrame:
        """Per-field summary in schema order.

        Returns
        -------
        pandas.DataFrame
            Columns ``field, n, woa, precision, recall, f1, TP, FD, FA, FN, TN``; ``n`` is the
            number of evaluated rows (TP + FD + FA + FN). A metric with a zero denominator is
            NaN, and one :class:`~confcal.exceptions.UndefinedMetricWarning` names the fields.
        """
        field = self.entities["field"]
        if isinstance(field.dtype, pd.CategoricalDtype):
            names = list(field.cat.categories)
            fcodes = field.cat.codes.to_numpy().astype(np.int64)
        else:
            fcodes_raw, uniques = pd.factorize(field, sort=False)
            names, fcodes = list(uniques), fcodes_raw.astype(np.int64)
        sums = group_totals(fcodes, len(names), outcome_codes(self.entities["outcome"]),
                            self.entities["weight"].to_numpy(dtype=np.float64),
                            self.entities["similarity"].to_numpy(dtype=np.float64))
        tp, fd, fa, fn = (sums[k] for k in ("TP", "FD", "FA", "FN"))
        out = pd.DataFrame({
            "field": names,
            "n": (tp + fd + fa + fn).astype(np.int64),
            "woa": woa_from_sums(sums["weighted_similarity"], sums["weight"]),
            "precision": precision_from_counts(tp, fd, fa),
            "recall": recall_from_counts(tp, fd, fn),
            "f1": f1_from_counts(tp, fd, fa, fn),
        })
        for label in OUTCOMES:
            out[label] = sums[label].astype(np.int64)
        undefined = out.loc[out[["woa", "precision", "recall", "f1"]].isna().any(axis=1), "field"]
        if len(undefined):
            warnings.warn(
                "by_field: a metric is undefined (zero denominator) for fields "
                f"{list(undefined)}; returning NaN there",
                UndefinedMetricWarning,
                stacklevel=2,
            )
        return out

    def to_calibration(self) -> tuple[np.ndarray, np.ndarray, int]:
        """The calibration input: every row that carries a confidence, any outcome.

        Returns
        -------
        correct : numpy.ndarray of bool
            True for TP and TN rows (a confident "nothing here" that is right is correct).
        confidence : numpy.ndarray of float
        n_without_confidence : int
            Rows left out because they carry no confidence (``counts["without_confidence"]``);
            ``len(entities) == len(confidence) + n_without_confidence``.
        """
        confidence = self.entities["confidence"].to_numpy(dtype=np.float64)
        has = ~np.isnan(confidence)
        correct = self.entities["correct"].to_numpy(dtype=bool)[has]
        return correct, confidence[has], int((~has).sum())
