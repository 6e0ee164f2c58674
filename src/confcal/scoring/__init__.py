"""Extraction scoring: from documents to the entity table that calibration reads.

:mod:`~confcal.scoring.comparators` (how two values compare),
:mod:`~confcal.scoring.schema` and :mod:`~confcal.scoring.presets` (what to score),
:mod:`~confcal.scoring.predictions` (how a predicted leaf is read),
:mod:`~confcal.scoring.matching` (line-item pairing), the scorer itself
(:func:`score_documents`, :func:`score_documents_iter`, with the ``stickler-1.0``
conventions in a private module) and :mod:`~confcal.scoring.io` (entity tables on disk).
Imports only the foundation and :mod:`confcal.metrics` (docs/architecture.md).
"""

from ._result import ENTITY_COLUMNS, OUTCOMES, ExtractionResult
from ._scoring import score_documents
from ._stream import score_documents_iter
from ._totals import ExtractionTotals

__all__ = [
    "ENTITY_COLUMNS",
    "OUTCOMES",
    "ExtractionResult",
    "ExtractionTotals",
    "score_documents",
    "score_documents_iter",
]
