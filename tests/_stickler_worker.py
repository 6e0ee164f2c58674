"""Run stickler-eval 1.0.0 on documents and print what it reports, as JSON.

Executed by the python of a virtual environment that has stickler-eval installed (never by
confcal's own interpreter), from tests/scoring/test_stickler.py::

    <venv>/bin/python tests/_stickler_worker.py DOCS.json

DOCS.json holds ``{"docs": [{"id": ..., "truth": {...}, "prediction": {...}}, ...]}``, with
predicted leaves in stickler's rich-value form ``{"_value": v, "_confidence": c}``. For each
document the output has stickler's leaf-level counts (``confusion_matrix["aggregate"]``)
and its calibration pairs (``ConfidenceCalculator.extract``: field path, match,
confidence). The models are the FCC-equivalent ones of tests/_stickler_models.py, which the
speed benchmark uses too.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path


def main(path: str) -> None:
    warnings.filterwarnings("ignore")
    import stickler
    from stickler.structured_object_evaluator.models.confidence import ConfidenceCalculator

    sys.path.insert(0, str(Path(__file__).parent))
    from _stickler_models import fcc_models

    Invoice, _ = fcc_models()
    calculator = ConfidenceCalculator()
    out = []
    for doc in json.loads(Path(path).read_text())["docs"]:
        truth = Invoice(**doc["truth"])
        pred = Invoice.from_json(doc["prediction"])
        result = truth.compare_with(pred, include_confusion_matrix=True,
                                    document_field_comparisons=True)
        aggregate = result["confusion_matrix"]["aggregate"]
        pairs = []
        if result["field_comparisons"]:
            extracted = calculator.extract(result, pred)
            pairs = [[key, p.is_match, p.confidence, p.similarity]
                     for key, found in extracted.keyed_pairs.items() for p in found]
        out.append({"id": doc["id"],
                    "counts": {k.upper(): aggregate[k] for k in ("tp", "fd", "fa", "fn", "tn")},
                    "pairs": pairs})
    print(json.dumps({"version": stickler.__version__, "docs": out}))


if __name__ == "__main__":
    main(sys.argv[1])
