"""How close confcal's smooth_ece comes to relplot 1.0.3 on the stored table.

    PYTHONPATH=src python scripts/relplot_agreement.py

Reads tests/data/relplot_smece.json (scripts/make_relplot_table.py) and prints, per kind of
comparison, the largest relative difference; docs/metrics.md quotes the output.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from confcal import smooth_ece

TABLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "relplot_smece.json"


def main() -> None:
    worst: dict[str, tuple[float, str]] = {}

    def record(kind: str, ours: float, theirs: float, where: str) -> None:
        rel = abs(ours - theirs) / theirs
        if rel > worst.get(kind, (-1.0, ""))[0]:
            worst[kind] = (rel, where)

    for d in json.loads(TABLE.read_text(encoding="utf-8"))["datasets"]:
        y = np.array([ch == "1" for ch in d["correct"]])
        c = np.asarray(d["confidence"], dtype=float)
        rp = d["relplot"]
        where = f"{d['name']} (n={d['n']}, relplot σ={rp['bandwidth']:.4f})"
        ends = bool(((c == 0) | (c == 1)).any())
        for sigma, theirs in rp["smECE_sigma"].items():
            ours = smooth_ece(y, c, bandwidth=float(sigma))
            if ends:
                record("fixed σ, rows at 0 or 1, as given", ours, theirs, where)
                record("fixed σ, rows at 0 or 1 doubled for relplot", ours,
                       rp["smECE_sigma_ends_doubled"][sigma], where)
            else:
                record(f"fixed σ = {sigma}", ours, theirs, where)
        if ends:
            continue
        auto = smooth_ece(y, c)
        at_width = smooth_ece(y, c, bandwidth=rp["bandwidth"])
        wide = "σ > 0.1" if rp["bandwidth"] > 0.1 else "σ <= 0.1"
        record(f"automatic, {wide}", auto, rp["smECE"], where)
        record(f"at relplot's own σ, {wide}", at_width, rp["smECE"], where)
        diff = abs(auto - rp["smECE"])
        if diff > worst.get("automatic, absolute", (-1.0, ""))[0]:
            worst["automatic, absolute"] = (diff, where)
    for kind, (rel, where) in sorted(worst.items()):
        label = "abs" if kind.endswith("absolute") else "rel"
        print(f"{kind:48s} max {label} diff {rel:.2e}  {where}")


if __name__ == "__main__":
    main()
