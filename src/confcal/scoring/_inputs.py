"""What the scorer is given, checked: documents by id, and per-document metadata.

Private module of :mod:`confcal.scoring`: :func:`doc_pairs` turns a mapping or an iterable
of ``(doc_id, document)`` pairs into pairs with unique, hashable, present ids;
:func:`metadata_columns` turns ``metadata=`` into one column per key; :func:`doc_label`
is how every scoring message names a document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._validation import is_missing
from ..exceptions import ValidationError
from ._result import ENTITY_COLUMNS


def doc_label(doc_id: Any) -> str:
    return f"doc {doc_id!r}"


def doc_pairs(docs: Any, name: str) -> list[tuple[Any, Any]]:
    """(doc_id, document) pairs from a mapping or an iterable of pairs; ids unique."""
    rule = f"{name} must be a mapping doc_id -> document or an iterable of (doc_id, document) pairs"
    if isinstance(docs, Mapping):
        pairs = list(docs.items())
    elif isinstance(docs, (str, bytes)) or not isinstance(docs, Iterable):
        raise ValidationError(f"{rule}; found {type(docs).__name__}")
    else:
        pairs = []
        for i, element in enumerate(docs):
            if (
                not isinstance(element, (tuple, list))
                or len(element) != 2
            ):
                raise ValidationError(
                    f"{rule}; found {type(element).__name__} {element!r:.80} at position {i}",
                    index=i,
                )
            pairs.append((element[0], element[1]))
    first_at: dict[Any, int] = {}
    written: dict[str, tuple[Any, int]] = {}  # the text a doc id is written as, its first id
    for i, (doc_id, _) in enumerate(pairs):
        try:
            hash(doc_id)
        except TypeError:
            raise ValidationError(
                f"{name} doc ids must be hashable; found {doc_id!r} at position {i}", index=i
            ) from None
        if is_missing(doc_id):
            raise ValidationError(f"{name} doc ids must not be missing; found {doc_id!r} at "
                                  f"position {i}",
                                  index=i)
        if doc_id in first_at:
            raise ValidationError(
                f"{name} must not repeat a doc id; found {doc_id!r} at positions "
                f"{first_at[doc_id]} and {i}", doc_id=doc_id, index=i
            )
        first_at[doc_id] = i
        # an entity table writes doc ids as text: 1 and "1" would be scored as two
        # documents and written as one
        other, j = written.setdefault(str(doc_id), (doc_id, i))
        if j != i:
            raise ValidationError(
                f"{name} doc ids must stay distinct as text (an entity table writes them "
                f"so); found {other!r} at position {j} and {doc_id!r} at position {i}, both "
                f"{str(doc_id)!r}", doc_id=doc_id, index=i)
    return pairs


def metadata_columns(
    metadata: Any, doc_ids: list[Any], doc_pos: dict[Any, int]
) -> dict[str, np.ndarray]:
    """Per-document metadata as object arrays indexed by document position."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValidationError(
            f"metadata must be a mapping doc_id -> {{column: value}}; "
            f"found {type(metadata).__name__}"
        )
    absent = [d for d in metadata if d not in doc_pos]
    if absent:
        raise ValidationError(
            f"metadata doc ids must be doc ids of truths; found {len(absent)} absent from "
            f"truths, first {absent[0]!r}", doc_id=absent[0]
        )
    columns: dict[str, np.ndarray] = {}
    for doc_id, row in metadata.items():
        if not isinstance(row, Mapping):
            raise ValidationError(
                f"metadata for {doc_label(doc_id)} must be a mapping of column -> value; "
                f"found {row!r}", doc_id=doc_id
            )
        for column, value in row.items():
            if column in ENTITY_COLUMNS or not isinstance(column, str):
                raise ValidationError(
                    "metadata columns must be strings other than the entity-table columns "
                    f"{list(ENTITY_COLUMNS)}; found {column!r} for {doc_label(doc_id)}",
                    doc_id=doc_id,
                )
            if column not in columns:
                columns[column] = np.full(len(doc_ids), None, dtype=object)
            columns[column][doc_pos[doc_id]] = value
    return columns
