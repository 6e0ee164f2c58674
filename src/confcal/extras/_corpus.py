"""What a corpus extraction returns, and the check of the corpus it is given.

Shared by :func:`confcal.extras.extraction.run_extraction` (which re-exports
:class:`ExtractionRun` and :data:`FAILURE_KINDS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._validation import is_missing
from ..exceptions import ValidationError

__all__ = ["FAILURE_KINDS", "ExtractionRun", "check_documents"]

FAILURE_KINDS: tuple[str, ...] = ("call", "response", "answer", "cache", "error")
"""What failed for a document (:attr:`ExtractionRun.failures`): the call (HTTP error, no
answer, retries exhausted), the response (a 2xx body that is not the API's), the answer
(the model's text cannot be read), the cache (an unreadable entry), anything else."""

@dataclass(frozen=True)
class ExtractionRun:
    """The predictions of one (model, modality, strategy) run over a corpus.

    Attributes
    ----------
    predictions : mapping
        doc_id -> predicted document, for the documents whose answer was read, in input
        order. Pass it to :func:`~confcal.scoring.score_documents`: documents that failed
        are absent and counted there as ``docs_missing_prediction``.
    failures : mapping
        doc_id -> ``{"kind", "stage", "message"}``, one record per failed document.
        ``kind`` is one of :data:`FAILURE_KINDS`: ``"call"`` (an HTTP error, no answer or
        retries exhausted), ``"response"`` (a 2xx body that is not the API's: not JSON,
        too large, too deeply nested, a non-finite number, no reply text), both not
        cached and asked again by the next run; ``"answer"`` (the model's text cannot be
        read, or was cut at ``max_tokens``: cached as the model gave it); ``"cache"`` (a
        folder where a cache entry belongs, named, or an answer that could not be cached);
        ``"error"`` (anything
        else a client raised). ``stage`` is ``"extract"``, or ``"score"`` for the second
        call of the two-stage strategy.
    metadata : mapping
        doc_id -> ``{"provider", "model", "modality", "strategy", "confidence_provider",
        "confidence_model"}`` for every document, ready for ``score_documents(...,
        metadata=run.metadata)``: the entity table then says which model extracted and
        which model scored each value (the same one except for a two-stage run with
        another scorer).
    counts : mapping of str to int
        ``documents``, ``ok``, ``failed``, ``cached`` (answers read from the cache),
        ``called`` (answers bought from an endpoint; two per document for two-stage),
        ``rejected`` (cache entries whose stored request is not the one asked, refetched),
        ``unreadable`` (cache entries that could not be read as an answer - not a regular
        file, too large, not JSON, wrong types -, refetched and replaced).
    failure_counts : mapping of str to int
        Failed documents by kind, every kind of :data:`FAILURE_KINDS` listed.
    rejected : tuple of Path
        The rejected cache entries (overwritten by the fresh answers).
    unreadable : tuple of Path
        The unreadable cache entries (replaced by the fresh answers).
    """

    predictions: Mapping[Any, dict[str, Any]]
    failures: Mapping[Any, Mapping[str, str]]
    metadata: Mapping[Any, Mapping[str, str]]
    counts: Mapping[str, int]
    model: str
    modality: str
    strategy: str
    failure_counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    rejected: tuple[Path, ...] = ()
    unreadable: tuple[Path, ...] = ()

    def summary(self) -> str:
        """One line: documents, failures by kind, cache use.

        Examples
        --------
        >>> run = ExtractionRun({}, {}, {}, {"documents": 2, "ok": 1, "failed": 1,
        ...                     "cached": 1, "called": 1, "rejected": 1, "unreadable": 2},
        ...                     "m", "ocr", "verbalized", {"call": 1, "answer": 0}, ())
        >>> run.summary()
        'm ocr verbalized: 2 documents, 1 ok, 1 failed (call 1); 1 cached, 1 called, 1 cache \
entry rejected and refetched, 2 cache entries unreadable and refetched'
        """
        c = self.counts
        kinds = ", ".join(f"{k} {n}" for k, n in self.failure_counts.items() if n)
        text = (f"{self.model} {self.modality} {self.strategy}: {c['documents']} documents, "
                f"{c['ok']} ok, {c['failed']} failed" + (f" ({kinds})" if kinds else "")
                + f"; {c['cached']} cached, {c['called']} called")
        for name in ("rejected", "unreadable"):
            if c.get(name):
                text += (f", {c[name]} cache entr{'y' if c[name] == 1 else 'ies'} {name} "
                         "and refetched")
        return text


def check_documents(documents: Any, modality: str) -> list[tuple[Any, Any, Any]]:
    """(doc_id, image, ocr) per document, with the inputs ``modality`` reads; all checked."""
    pairs = _document_pairs(documents)
    need = {"ocr": ("ocr",), "image": ("image",), "ocr+image": ("ocr", "image")}[modality]
    seen: dict[Any, int] = {}
    out = []
    for i, (doc_id, inputs) in enumerate(pairs):
        _check_doc_id(doc_id, i, seen)
        _check_inputs(doc_id, inputs, need, modality)
        out.append((doc_id, inputs.get("image") if "image" in need else None,
                    inputs.get("ocr") if "ocr" in need else None))
    return out


def _document_pairs(documents: Any) -> list[tuple[Any, Any]]:
    """The (doc_id, inputs) pairs of a mapping or an iterable of pairs; at least one."""
    if isinstance(documents, Mapping):
        pairs = list(documents.items())
    elif isinstance(documents, (str, bytes)) or not isinstance(documents, Iterable):
        raise ValidationError("documents must be a mapping doc_id -> {'image': ..., 'ocr': "
                              f"...}} or (doc_id, inputs) pairs; found {type(documents).__name__}")
    else:
        pairs = []
        for i, pair in enumerate(documents):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValidationError(f"documents must be (doc_id, inputs) pairs; found "
                                      f"{pair!r:.80} at position {i}")
            pairs.append((pair[0], pair[1]))
    if not pairs:
        raise ValidationError("documents must not be empty; found 0 documents")
    return pairs


def _check_doc_id(doc_id: Any, i: int, seen: dict[Any, int]) -> None:
    """A doc id hashable, not missing and not seen before (``seen``: id -> position)."""
    try:
        hash(doc_id)
    except TypeError:
        raise ValidationError(f"documents doc ids must be hashable; found {doc_id!r} at "
                              f"position {i}") from None
    if is_missing(doc_id):
        raise ValidationError(f"documents doc ids must not be missing; found {doc_id!r} at "
                              f"position {i}")
    if doc_id in seen:
        raise ValidationError(f"documents must not repeat a doc id; found {doc_id!r} at "
                              f"positions {seen[doc_id]} and {i}")
    seen[doc_id] = i


def _check_inputs(doc_id: Any, inputs: Any, need: tuple[str, ...], modality: str) -> None:
    """One document's inputs: a mapping of 'image' and/or 'ocr' holding what the modality
    reads (``need``)."""
    if not isinstance(inputs, Mapping) or not inputs or set(inputs) - {"image", "ocr"}:
        found = sorted(map(str, inputs)) if isinstance(inputs, Mapping) else repr(inputs)[:80]
        raise ValidationError(f"documents[{doc_id!r}] must be a mapping with the keys "
                              f"'image' and/or 'ocr'; found {found}")
    absent = [n for n in need if inputs.get(n) is None]
    if absent:
        raise ValidationError(f"documents[{doc_id!r}] must have {' and '.join(need)} for "
                              f"modality {modality!r}; found no {' or '.join(absent)}")
