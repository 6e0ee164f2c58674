"""What the scorer is given, checked: documents by id, and per-document metadata.

Private module of :mod:`confcal.scoring`: :func:`doc_pairs` turns a mapping or an iterable
of ``(doc_id, document)`` pairs into pairs with unique, hashable, present ids;
:func:`check_distinct_text` refuses two ids an entity table would write alike;
:func:`metadata_columns` turns ``metadata=`` into one column per key; :func:`doc_label`
is how every scoring message names a document; :class:`NameCheck` checks predicted keys
against the schema's names; :func:`case_hint` says when a doc id differs from a truth id
only in case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import is_missing
from ..exceptions import ValidationError
from ._result import ENTITY_COLUMNS


def doc_label(doc_id: Any) -> str:
    return f"doc {doc_id!r}"


def no_predictions_error(n_truth: int) -> ValidationError:
    """The error for predictions with no document at all, unless ``allow_empty``: the same
    words in memory, on a stream and on Dask."""
    return ValidationError(
        f"predictions must contain at least one document; found 0 (for {n_truth} truth "
        "documents): an empty collection is most often a wrong path or filter ({option} "
        "scores every truth document as missing)", option=("allow_empty", True))


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
    not_text: dict[str, tuple[Any, int]] = {}  # the text of a non-string id: the id, where
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
        check_distinct_text(doc_id, i, first_at, not_text, name)
        first_at[doc_id] = i
    return pairs


def check_distinct_text(doc_id: Any, position: int, first_at: Mapping[Any, int],
                        not_text: dict[str, tuple[Any, int]], name: str) -> None:
    """Refuse a doc id written as the same text as an earlier, different one.

    An entity table writes doc ids as text, so ``1`` and ``"1"`` would be scored as two
    documents and written as one. ``first_at`` maps every earlier id to its position (a
    repeat of the same id is the caller's error, checked first); ``not_text`` maps the
    text of every earlier id that is no string to that id and its position, and gains
    ``doc_id``'s. A string id is its own text, so only the ids that are not strings cost
    memory beyond ``first_at``: the check holds over a whole stream at a few dozen bytes
    per such id.
    """
    text = str(doc_id)
    if isinstance(doc_id, str):
        earlier = not_text.get(text)
    elif text in first_at:  # an earlier string id spelled as this id's text
        earlier = (text, first_at[text])
    else:
        earlier = not_text.setdefault(text, (doc_id, position))
        if earlier[1] == position:
            return
    if earlier is not None:
        other, j = earlier
        raise ValidationError(
            f"{name} doc ids must stay distinct as text (an entity table writes them "
            f"so); found {other!r} at position {j} and {doc_id!r} at position {position}, "
            f"both {text!r}", doc_id=doc_id, index=position)


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


@dataclass
class NameCheck:
    """How a scorer treats predicted keys the schema does not define, and what it met.

    ``strict``: such a key is an error. ``allow_case_mismatch``: a key that equals a
    schema name after case folding (``grosstotal`` for ``GrossTotal``) is counted and
    ignored like any unknown key, instead of being an error that names both spellings.
    ``seen`` collects the unknown keys' paths (``grosstotal``, ``LineItems.rate``), each
    once, in the order first met.
    """

    strict: bool = False
    allow_case_mismatch: bool = False
    seen: dict[str, None] = field(default_factory=dict)

    def unknown(self, keys: Iterable[Any], known: Iterable[str], doc_id: Any,
                path: str = "", item: str = "") -> int:
        """How many of ``keys`` are not in ``known``, after the checks above; ``path`` is the
        Items field of the keys (``LineItems``) and ``item`` its index as the message
        writes it (``[3]``), empty for top-level keys."""
        names = known if isinstance(known, (set, frozenset)) else frozenset(known)
        extra = [k for k in keys if k not in names]
        if not extra:
            return 0
        where = f"{doc_label(doc_id)}" + (f", field {path}{item}" if path else "")
        located = f"{path}{item}" if path else None
        if not self.allow_case_mismatch:
            folded = {str(n).casefold(): n for n in names}
            for key in extra:
                match = folded.get(str(key).casefold())
                if match is not None:
                    kind = "sub-field" if path else "field"
                    raise ValidationError(
                        f"{where}: predicted {kind} names must be spelled as in the schema; "
                        f"found {str(key)!r} for the schema's {match!r}, which differs only "
                        f"in case ({{option}} ignores it as an unknown {kind} instead)",
                        doc_id=doc_id, field=located, option=("allow_case_mismatch", True))
        if self.strict:
            kind = "sub-fields" if path else "fields"
            raise ValidationError(
                f"{where}: predicted {kind} must be defined by the schema ({{option}}); found "
                f"unknown {sorted(map(str, extra))}", doc_id=doc_id, field=located,
                option=("strict", True))
        for key in extra:
            self.seen.setdefault(f"{path}.{key}" if path else str(key), None)
        return len(extra)


def case_hint(doc_id: Any, ids: Iterable[Any]) -> str:
    """A note for an error about ``doc_id``, a doc id absent from the truth, when one of
    ``ids`` (the truth's) is written as the same text but is another value (``1`` and
    ``"1"``), or equals it after case folding, both as text; else "".

    >>> case_hint("inv-1", ["INV-1", "INV-2"])
    " (the truth has 'INV-1', which differs from it only in case)"
    >>> case_hint("1", [1, 2])
    ' (the truth has 1, an int written as the same text: doc ids are compared as values)'
    """
    text = str(doc_id)
    folded = text.casefold() if isinstance(doc_id, str) else None
    case_match = None
    for i in ids:
        if str(i) == text:
            return (f" (the truth has {i!r}, {_article(type(i).__name__)} written as the "
                    "same text: doc ids are compared as values)")
        if case_match is None and folded is not None and isinstance(i, str) \
                and i.casefold() == folded:
            case_match = i
    return ("" if case_match is None
            else f" (the truth has {case_match!r}, which differs from it only in case)")


def _article(noun: str) -> str:
    """``noun`` with its indefinite article: "an int", "a str"."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"
