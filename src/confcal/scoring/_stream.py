"""Scoring a stream of documents in bounded memory, chunk by chunk."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from .._validation import InputLimits, check_limits, is_missing
from ..exceptions import ValidationError
from ._inputs import check_distinct_text, no_predictions_error
from ._result import ExtractionResult
from ._scoring import score_documents
from .schema import Schema

__all__ = ["score_documents_iter"]


# --------------------------------------------------------------------- streaming


def score_documents_iter(
    schema: Schema,
    pairs: Iterable[tuple[Any, Mapping[str, Any], Mapping[str, Any] | None]],
    *,
    chunk_size: int = 1000,
    metadata: Mapping[Any, Mapping[str, Any]] | Callable[[Any], Mapping[str, Any] | None]
    | None = None,
    strict: bool = False,
    allow_case_mismatch: bool = False,
    conventions: str = "confcal",
    limits: InputLimits | None = None,
    allow_empty: bool = False,
) -> Iterator[ExtractionResult]:
    """Score documents from a stream, yielding the entity table chunk by chunk.

    The streaming twin of :func:`score_documents`: ``pairs`` is consumed lazily and only
    ``chunk_size`` documents (and their entity rows) are held at a time, so any number of
    documents can be scored in bounded memory, apart from the set of doc ids seen (see
    Notes).

    Parameters
    ----------
    schema : Schema
    pairs : iterable of (doc_id, truth, prediction)
        One triple per truth document. ``prediction`` is the predicted document, or None
        when the document has no prediction (scored as all-missing and counted in
        ``counts["docs_missing_prediction"]``, or an error with ``strict=True``).
    chunk_size : int, default 1000
        Documents per yielded chunk (the last one may be smaller).
    metadata : mapping doc_id -> {column: value}, or callable doc_id -> {column: value}, optional
        Columns carried into every row of a document, as in :func:`score_documents`. A
        callable is asked once per document (``lambda doc_id: {"model": "gpt-x"}`` gives a
        constant column without listing the ids). With a mapping, an id never seen in
        ``pairs`` is an error, raised when the stream ends.
    strict, allow_case_mismatch : bool, default False
        As in :func:`score_documents`.
    conventions : {"confcal", "stickler-1.0"}, default "confcal"
        As in :func:`score_documents`.
    limits : InputLimits, optional
        As in :func:`score_documents` (the longest string value compared).
    allow_empty : bool, default False
        Score a stream in which no triple has a prediction: every truth document is then
        scored as all-missing. By default that is an error, as for :func:`score_documents`
        (most often a wrong path or filter upstream), raised when the stream ends, after
        the chunks it scored.

    Yields
    ------
    ExtractionResult
        One per chunk: its ``entities`` are the rows of the chunk's documents, in the row
        order :func:`score_documents` gives them, and its ``counts`` are the chunk's (they
        add up: the sum over chunks equals the counts of scoring everything at once).

    Raises
    ------
    ValidationError
        As :func:`score_documents`, when the offending document's chunk is scored; a doc
        id repeated anywhere in the stream (naming both positions); an element that is not
        a (doc_id, truth, prediction) triple; no documents at all; no prediction in any
        triple (unless ``allow_empty``), when the stream ends. An error about one
        triple has its position in ``pairs`` as its ``index`` attribute (for a repeated
        doc id, the second position), besides ``doc_id`` and ``field`` when known.

    See Also
    --------
    score_documents : everything in memory at once.
    confcal.scoring.io.iter_documents : documents streamed from files.

    Notes
    -----
    Repeated doc ids, and two ids written as the same text (``1`` and ``"1"``: an entity
    table writes ids as text), are detected across chunks with a set of the ids seen so
    far (and their positions): memory grows with the number of documents at roughly 100
    bytes per short string id (twice that for an id that is no string), against the
    kilobytes a scored document's rows take. Everything else
    is per chunk. The concatenation of the chunks' entity tables equals the entity table of
    :func:`score_documents` on the same documents (with a fresh index per chunk), but for
    the dtype of a metadata column whose values are of different types in different chunks:
    pandas infers each chunk's metadata dtypes (``infer_objects``) from that chunk alone.
    Tiers 1, 2 and None are float64 1.0, 2.0 and NaN in memory, where
    :func:`score_documents` sees all three at once, but int64 1, 2 in one chunk and None in
    the next stack to an object column of 1, 2 and None.

    Examples
    --------
    >>> from confcal.scoring.comparators import Text
    >>> from confcal.scoring.schema import Field
    >>> schema = Schema({"Agency": Field(Text())})
    >>> stream = ((f"inv-{i}", {"Agency": "ACME"}, {"Agency": {"value": "ACME", "confidence": 0.9}})
    ...           for i in range(5))
    >>> chunks = list(score_documents_iter(schema, stream, chunk_size=2))
    >>> [len(c.entities) for c in chunks], sum(c.counts["TP"] for c in chunks)
    ([2, 2, 1], 5)
    >>> list(score_documents_iter(schema, [("a", {}, None), ("a", {}, None)]))
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: pairs must not repeat a doc id; found 'a' at positions 0 and
    1
    """
    if not isinstance(schema, Schema):
        raise ValidationError(f"schema must be a confcal Schema; found {type(schema).__name__}")
    if (isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer))
            or chunk_size < 1):
        raise ValidationError(f"chunk_size must be an integer >= 1; found {chunk_size!r}")
    if not isinstance(strict, bool):
        raise ValidationError(f"strict must be True or False; found {strict!r}")
    if not isinstance(allow_case_mismatch, bool):
        raise ValidationError(
            f"allow_case_mismatch must be True or False; found {allow_case_mismatch!r}")
    if not isinstance(allow_empty, bool):
        raise ValidationError(f"allow_empty must be True or False; found {allow_empty!r}")
    from ._stickler import check_conventions

    check_conventions(conventions)
    limits = check_limits(limits)
    if metadata is not None and not (isinstance(metadata, Mapping) or callable(metadata)):
        raise ValidationError(
            "metadata must be a mapping doc_id -> {column: value} or a callable doc_id -> "
            f"{{column: value}}; found {type(metadata).__name__}")
    if isinstance(pairs, (str, bytes, Mapping)) or not isinstance(pairs, Iterable):
        raise ValidationError(
            "pairs must be an iterable of (doc_id, truth, prediction) triples; found "
            f"{type(pairs).__name__}")
    return _score_stream(schema, pairs, int(chunk_size), metadata,
                         (strict, allow_case_mismatch, allow_empty), conventions, limits)


def _score_stream(
    schema: Schema, pairs: Iterable[Any], chunk_size: int, metadata: Any,
    rules: tuple[bool, bool, bool], conventions: str, limits: InputLimits,
) -> Iterator[ExtractionResult]:
    # A generator behind a plain function: argument errors are raised at the call, not at
    # the first next().
    first_at: dict[Any, int] = {}
    not_text: dict[str, tuple[Any, int]] = {}  # over the whole stream, not one chunk
    meta_used = 0
    predicted = 0

    def flush(chunk: list[tuple[Any, Any, Any]]) -> ExtractionResult:
        nonlocal meta_used, predicted
        truths = [(doc_id, truth) for doc_id, truth, _ in chunk]
        preds = [(doc_id, pred) for doc_id, _, pred in chunk if pred is not None]
        predicted += len(preds)
        meta: dict[Any, Mapping[str, Any]] | None = None
        if isinstance(metadata, Mapping):
            meta = {d: metadata[d] for d, _, _ in chunk if d in metadata}
            meta_used += len(meta)
        elif metadata is not None:
            meta = {}
            for d, _, _ in chunk:
                row = metadata(d)
                if row is not None:
                    meta[d] = row
        try:
            return score_documents(schema, truths, preds, metadata=meta or None,
                                   strict=rules[0], allow_case_mismatch=rules[1],
                                   conventions=conventions, limits=limits,
                                   allow_empty=True)  # a chunk may have none
        except ValidationError as exc:
            if exc.doc_id is None:
                raise
            # the document's position in the stream, not in its chunk
            raise exc.with_location(index=first_at.get(exc.doc_id)) from None

    chunk: list[tuple[Any, Any, Any]] = []
    position = -1
    for position, element in enumerate(pairs):
        if not isinstance(element, (tuple, list)) or len(element) != 3:
            raise ValidationError(
                "pairs must be an iterable of (doc_id, truth, prediction) triples; found "
                f"{type(element).__name__} {element!r:.80} at position {position}",
                index=position)
        doc_id = element[0]
        try:
            earlier = first_at.get(doc_id)
        except TypeError:
            raise ValidationError(
                f"pairs doc ids must be hashable; found {doc_id!r} at position {position}",
                index=position,
            ) from None
        if earlier is not None:
            raise ValidationError(
                f"pairs must not repeat a doc id; found {doc_id!r} at positions {earlier} "
                f"and {position}", doc_id=doc_id, index=position)
        if is_missing(doc_id):
            raise ValidationError(
                f"pairs doc ids must not be missing; found {doc_id!r} at position {position}",
                index=position)
        check_distinct_text(doc_id, position, first_at, not_text, "pairs")
        first_at[doc_id] = position
        chunk.append((doc_id, element[1], element[2]))
        if len(chunk) == chunk_size:
            yield flush(chunk)
            chunk = []
    if chunk:
        yield flush(chunk)
    if position < 0:
        raise ValidationError("pairs must contain at least one document; found 0")
    if not predicted and not rules[2]:
        raise no_predictions_error(position + 1)
    if isinstance(metadata, Mapping) and meta_used != len(metadata):
        absent = [d for d in metadata if d not in first_at]
        raise ValidationError(
            f"metadata doc ids must be doc ids of pairs; found {len(absent)} absent from "
            f"pairs, first {absent[0]!r}", doc_id=absent[0])
