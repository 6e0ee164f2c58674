"""confcal: can you trust the confidence of a document-extraction model?

- Calibration metrics on arrays: :func:`auroc`, :func:`ece`, :func:`mce`, :func:`brier`,
  :func:`ecarb`, :func:`reliability_bins`, :func:`calibration_report`, the debiased and
  smooth calibration errors (:func:`debiased_ece`, :func:`smooth_ece`),
  :func:`brier_decomposition`, :func:`calibration_slope`, :func:`log_loss`, the curves
  (:func:`risk_coverage_curve` and :func:`aurc`, :func:`roc_curve_points`,
  :func:`pr_curve_points`), :func:`bootstrap_ci` intervals that resample documents,
  and tests: :func:`calibration_test` (is it calibrated?) and :func:`delong_test`
  (two AUROCs of the same predictions).
- Extraction scoring: typed comparators (:class:`Text`, :class:`Number`, :class:`Date`,
  :class:`Exact`), schemas (:class:`Schema`, :class:`Field`, :class:`Items`), Hungarian
  line-item matching and :func:`score_documents`, which builds the entity table.
- Confidence: :mod:`confcal.calibration.confidence` (log-probabilities, verbalized
  top-K), :mod:`confcal.calibration.calibrators` (post-hoc calibration),
  :mod:`confcal.calibration.routing` (thresholds and review budgets).

The packages are the layers (docs/architecture.md): ``metrics``, ``scoring``,
``calibration``, ``report``, ``qa``, ``cli``; every name above is imported on first use.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

from ._version import __version__ as __version__

# Lazy submodules (Scientific Python SPEC 1): ``import confcal`` costs numpy and no more;
# each name below is imported on first use, from the module that defines it.
_LAZY: dict[str, str] = {
    "CalibrationReport": "confcal.metrics",
    "auroc": "confcal.metrics",
    "brier": "confcal.metrics",
    "calibration_report": "confcal.metrics",
    "CalibrationTest": "confcal.metrics",
    "DeLongTest": "confcal.metrics",
    "calibration_test": "confcal.metrics",
    "debiased_ece": "confcal.metrics",
    "delong_test": "confcal.metrics",
    "ecarb": "confcal.metrics",
    "ecarb_ceiling": "confcal.metrics",
    "ecarb_curve": "confcal.metrics",
    "ece": "confcal.metrics",
    "mce": "confcal.metrics",
    "reliability_bins": "confcal.metrics",
    "review_count": "confcal.metrics",
    "smooth_ece": "confcal.metrics",
    "BrierDecomposition": "confcal.metrics",
    "CalibrationSlope": "confcal.metrics",
    "aurc": "confcal.metrics",
    "brier_decomposition": "confcal.metrics",
    "calibration_slope": "confcal.metrics",
    "log_loss": "confcal.metrics",
    "pr_curve_points": "confcal.metrics",
    "risk_coverage_curve": "confcal.metrics",
    "roc_curve_points": "confcal.metrics",
    "bootstrap_ci": "confcal.metrics.bootstrap",
    "CalibrationSketch": "confcal.metrics.sketch",
    "ConfcalError": "confcal.exceptions",
    "UndefinedMetricWarning": "confcal.exceptions",
    "ValidationError": "confcal.exceptions",
    "Date": "confcal.scoring.comparators",
    "Exact": "confcal.scoring.comparators",
    "Number": "confcal.scoring.comparators",
    "Text": "confcal.scoring.comparators",
    "parse_date": "confcal.scoring.comparators",
    "parse_number": "confcal.scoring.comparators",
    "Field": "confcal.scoring.schema",
    "Items": "confcal.scoring.schema",
    "Schema": "confcal.scoring.schema",
    "match_items": "confcal.scoring.matching",
    "ExtractionResult": "confcal.scoring",
    "score_documents": "confcal.scoring",
    "score_documents_iter": "confcal.scoring",
    "HistogramBinning": "confcal.calibration.calibrators",
    "IsotonicCalibration": "confcal.calibration.calibrators",
    "PlattScaling": "confcal.calibration.calibrators",
    "TemperatureScaling": "confcal.calibration.calibrators",
    "aggregate_logprobs": "confcal.calibration.confidence",
    "parse_topk": "confcal.calibration.confidence",
    "budget_for_residual_error": "confcal.calibration.routing",
    "threshold_for_accuracy": "confcal.calibration.routing",
    "compare_runs": "confcal.report",
    "compare_systems": "confcal.report",
    "write_report": "confcal.report",
    "LLMJudge": "confcal.qa.docqa",
    "RuleJudge": "confcal.qa.docqa",
    "Verdict": "confcal.qa.docqa",
    "accuracy_table": "confcal.qa.docqa",
    "judge_agreement": "confcal.qa.docqa",
    "judge_records": "confcal.qa.docqa",
    "load_demo": "confcal.datasets",
}
# The public subpackages, imported on first use as attributes (``confcal.report``).
_SUBMODULES = ("calibration", "cli", "dask", "datasets", "exceptions", "extras", "metrics",
               "qa", "report", "scoring", "testing")

if _TYPE_CHECKING:
    from .calibration.calibrators import (
        HistogramBinning,
        IsotonicCalibration,
        PlattScaling,
        TemperatureScaling,
    )
    from .calibration.confidence import aggregate_logprobs, parse_topk
    from .calibration.routing import budget_for_residual_error, threshold_for_accuracy
    from .datasets import load_demo
    from .exceptions import ConfcalError, UndefinedMetricWarning, ValidationError
    from .metrics import (
        BrierDecomposition,
        CalibrationReport,
        CalibrationSlope,
        CalibrationTest,
        DeLongTest,
        aurc,
        auroc,
        brier,
        brier_decomposition,
        calibration_report,
        calibration_slope,
        calibration_test,
        debiased_ece,
        delong_test,
        ecarb,
        ecarb_ceiling,
        ecarb_curve,
        ece,
        log_loss,
        mce,
        pr_curve_points,
        reliability_bins,
        review_count,
        risk_coverage_curve,
        roc_curve_points,
        smooth_ece,
    )
    from .metrics.bootstrap import bootstrap_ci
    from .metrics.sketch import CalibrationSketch
    from .qa.docqa import (
        LLMJudge,
        RuleJudge,
        Verdict,
        accuracy_table,
        judge_agreement,
        judge_records,
    )
    from .report import compare_runs, compare_systems, write_report
    from .scoring import ExtractionResult, score_documents, score_documents_iter
    from .scoring.comparators import Date, Exact, Number, Text, parse_date, parse_number
    from .scoring.matching import match_items
    from .scoring.schema import Field, Items, Schema


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(_importlib.import_module(module), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'confcal' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public names and subpackages only: not this module's own helpers, not the
    # private modules that importing a submodule binds here
    return sorted({*__all__, *_SUBMODULES, "__version__"})


__all__ = [
    "BrierDecomposition",
    "CalibrationReport",
    "CalibrationSketch",
    "CalibrationSlope",
    "CalibrationTest",
    "ConfcalError",
    "DeLongTest",
    "Date",
    "Exact",
    "ExtractionResult",
    "Field",
    "HistogramBinning",
    "IsotonicCalibration",
    "Items",
    "LLMJudge",
    "Number",
    "PlattScaling",
    "RuleJudge",
    "Schema",
    "TemperatureScaling",
    "Text",
    "UndefinedMetricWarning",
    "ValidationError",
    "Verdict",
    "accuracy_table",
    "aggregate_logprobs",
    "aurc",
    "auroc",
    "bootstrap_ci",
    "brier",
    "brier_decomposition",
    "budget_for_residual_error",
    "calibration_report",
    "calibration_slope",
    "calibration_test",
    "compare_runs",
    "compare_systems",
    "debiased_ece",
    "delong_test",
    "ecarb",
    "ecarb_ceiling",
    "ecarb_curve",
    "ece",
    "judge_agreement",
    "judge_records",
    "load_demo",
    "log_loss",
    "match_items",
    "mce",
    "parse_date",
    "parse_number",
    "parse_topk",
    "pr_curve_points",
    "reliability_bins",
    "review_count",
    "risk_coverage_curve",
    "roc_curve_points",
    "score_documents",
    "score_documents_iter",
    "smooth_ece",
    "threshold_for_accuracy",
    "write_report",
]
