"""Can each extractor's confidence be trusted? The ConfBench metrics on bundled predictions.

Run: ``python examples/calibration_report.py [path/to/predictions.csv]``

The CSV needs columns ``doc_id, model, correct, confidence`` (one row per extracted entity);
by default it reads the synthetic examples/data/predictions.csv.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

import confcal

BUDGETS = (0.1, 0.3)


def main(path: Path) -> None:
    table = pd.read_csv(path)
    rows = []
    for model, group in table.groupby("model", sort=False):
        rep = confcal.calibration_report(group["correct"], group["confidence"], budgets=BUDGETS)
        ci = confcal.bootstrap_ci(group["correct"], group["confidence"], groups=group["doc_id"],
                                  metrics=("auroc", "ece", "ecarb"), n_resamples=1000, seed=0)
        ci = ci.set_index("metric")
        rows.append({
            "model": model,
            "n": rep.n,
            "accuracy": rep.accuracy,
            "AUROC": f"{rep.auroc:.3f} [{ci.low['auroc']:.3f}, {ci.high['auroc']:.3f}]",
            "ECE (5 adaptive bins)": f"{rep.ece:.3f} [{ci.low['ece']:.3f}, {ci.high['ece']:.3f}]",
            "Brier": round(rep.brier, 4),
            "ECARB@10%": round(rep.ecarb[0.1], 2),
            "ECARB@30%": f"{rep.ecarb[0.3]:.2f} [{ci.low['ecarb']:.2f}, {ci.high['ecarb']:.2f}]",
            "ceiling@30%": round(rep.ecarb_ceiling[0.3], 2),
        })
    pd.set_option("display.width", 200)
    print(f"{path.name}: {len(table)} entities; [95% intervals, documents resampled]\n")
    print(pd.DataFrame(rows).to_string(index=False))
    print("\nReliability of 'overconfident' (5 equal-mass bins): says 0.98, is right 85%")
    over = table[table["model"] == "overconfident"]
    print(confcal.reliability_bins(over["correct"], over["confidence"], n_bins=5,
                                   binning="quantile").round(3).to_string(index=False))


if __name__ == "__main__":
    default = Path(__file__).with_name("data") / "predictions.csv"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
