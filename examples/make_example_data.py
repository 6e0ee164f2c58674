"""Write examples/data/predictions.csv: synthetic entity-level predictions of 3 extractors.

Synthetic, seeded and byte-for-byte reproducible (``python examples/make_example_data.py``).
Each row is one extracted entity of one invoice: whether the extraction was right and the
confidence the model gave it. The three simulated extractors behave like the families
ConfBench compares:

- ``calibrated``: confidence is the true probability of being right;
- ``overconfident``: right as often as ``calibrated`` but says 0.9-0.99 almost always;
- ``verbalized``: coarse tied scores (0.9, 0.95, 0.99), the way models verbalize.

Errors cluster by document (a hard scan makes every field harder), which is why the
intervals in the example resample documents, not rows.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

FIELDS = ["Agency", "Advertiser", "GrossTotal", "PaymentTerms", "AgencyCommission",
          "NetAmountDue"] + [f"LineItems.{f}" for f in ("StartDate", "EndDate", "Days",
                                                          "Description", "Rate")]


def main() -> None:
    rng = np.random.default_rng(20261129)
    rows = []
    n_docs = 60
    difficulty = rng.normal(0.0, 1.0, size=n_docs)  # per document: scan quality
    n_items = rng.integers(2, 8, size=n_docs)
    for model in ("calibrated", "overconfident", "verbalized"):
        for d in range(n_docs):
            fields = FIELDS[:6] + [f for _ in range(n_items[d]) for f in FIELDS[6:]]
            logit = 2.2 - 1.1 * difficulty[d] + rng.normal(0.0, 1.0, size=len(fields))
            p_right = 1.0 / (1.0 + np.exp(-logit))
            correct = rng.uniform(size=len(fields)) < p_right
            if model == "calibrated":
                conf = p_right
            elif model == "overconfident":
                conf = 0.9 + 0.09 * p_right ** 0.3
            else:
                conf = np.select([p_right < 0.75, p_right < 0.93], [0.9, 0.95], 0.99)
            for f, y, c in zip(fields, correct, conf, strict=True):
                rows.append((f"inv-{d:03d}", f, model, int(y), f"{c:.4f}"))
    out = Path(__file__).with_name("data") / "predictions.csv"
    out.parent.mkdir(exist_ok=True)
    with out.open("w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["doc_id", "field", "model", "correct", "confidence"])
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()
