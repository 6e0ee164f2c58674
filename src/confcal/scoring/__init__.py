"""Extraction scoring: from documents to the entity table that calibration reads.

:mod:`~confcal.scoring.comparators` (how two values compare),
:mod:`~confcal.scoring.schema` and :mod:`~confcal.scoring.presets` (what to score),
:mod:`~confcal.scoring.predictions` (how a predicted leaf is read),
:mod:`~confcal.scoring.matching` (line-item pairing), the scorer itself
(:func:`score_documents`, :func:`score_documents_iter`, with the ``stickler-1.0``
conventions in a private module) and :mod:`~confcal.scoring.io` (entity tables on disk).
Imports only the foundation and :mod:`confcal.metrics` (docs/architecture.md).
"""

from . import comparators, io, matching, predictions, presets, schema  # noqa: I001
from ._result import ENTITY_COLUMNS, OUTCOMES, ExtractionResult
from ._scoring import score_documents
from ._stream import score_documents_iter
from ._totals import ExtractionTotals
from .comparators import *  # noqa: F403
from .io import *  # noqa: F403
from .matching import *  # noqa: F403
from .predictions import *  # noqa: F403
from .presets import *  # noqa: F403
from .schema import *  # noqa: F403

__all__ = [
    *comparators.__all__,
    *io.__all__,
    *matching.__all__,
    *predictions.__all__,
    *presets.__all__,
    *schema.__all__,
    "ENTITY_COLUMNS",
    "OUTCOMES",
    "ExtractionResult",
    "ExtractionTotals",
    "score_documents",
    "score_documents_iter",
]
