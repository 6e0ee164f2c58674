"""Reproducibility signatures: the settings that produced a number, as one short string.

In the spirit of sacrebleu's signatures, two numbers are comparable only when their
signatures are equal. A signature is ``key:value`` pairs joined by ``|`` in a fixed order:

``confcal:0.1.0|schema:fcc-invoice@5d3c0e9a41b2|conventions:confcal|match:0.0`` for the
extraction scorer (:attr:`confcal.scoring.ExtractionResult.signature`, built by the scorer
from the schema, since this module sits below the scoring layer: the schema's name and
:attr:`~confcal.scoring.schema.Schema.digest`, the scoring conventions and the line-item match
threshold), and ``confcal:0.1.0|ece:quantile-5|ecarb-ties:expected`` for the calibration
metrics (:attr:`confcal.metrics.CalibrationReport.signature`: ECE binning and bin count,
ECARB's tie rule). :func:`combine_signatures` joins them for a report that shows both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._validation import shown
from ._version import __version__
from .exceptions import ValidationError

__all__ = ["SIGNATURE_ATTR", "calibration_signature", "combine_signatures", "table_signature"]

SIGNATURE_ATTR = "confcal.signature"
"""Key of the extraction signature in an entity table's ``DataFrame.attrs``; Parquet files
written by confcal keep it in their metadata, so a table read back still names its settings."""


def calibration_signature(*, binning: str, n_bins: int, ties: str) -> str:
    """Version, ECE binning and bin count, ECARB's tie rule."""
    return f"confcal:{__version__}|ece:{binning}-{n_bins}|ecarb-ties:{ties}"


def combine_signatures(signatures: Iterable[str]) -> str:
    """Join signatures into one, each key once, in order of first appearance.

    Raises
    ------
    ValueError
        When two signatures give one key different values: the numbers were produced by
        different settings and are not comparable.
    """
    merged: dict[str, str] = {}
    for signature in signatures:
        for part in signature.split("|"):
            key, _, value = part.partition(":")
            if merged.setdefault(key, value) != value:
                raise ValueError(
                    f"signatures disagree on {key!r}: {merged[key]!r} and {value!r}")
    return "|".join(f"{k}:{v}" for k, v in merged.items())


def table_signature(entities: Any, *, binning: str, n_bins: int, ties: str) -> str:
    """The signature of metrics computed from an entity table: its extraction signature
    (``schema:unknown`` when the table does not carry one, as a CSV file cannot) joined with
    the calibration settings."""
    extraction = entities.attrs.get(SIGNATURE_ATTR) or f"confcal:{__version__}|schema:unknown"
    if not isinstance(extraction, str):
        raise ValidationError(
            f"entities.attrs[{SIGNATURE_ATTR!r}] must be a string (the settings that scored the "
            f"table); found {type(extraction).__name__} {shown(extraction)}",
            field=f"attrs.{SIGNATURE_ATTR}")
    calibration = calibration_signature(binning=binning, n_bins=n_bins, ties=ties)
    try:
        return combine_signatures([extraction, calibration])
    except ValueError:  # scored by another confcal version: say both
        return f"{extraction}|metrics-{calibration}"
