"""relplot 1.0.3's smooth ECE on seeded datasets: the table tests/metrics/test_relplot.py reads.

Run it with the Python of an environment that has relplot (it imports only numpy and
relplot, never confcal):

    python -m venv /tmp/relplot-venv && /tmp/relplot-venv/bin/pip install relplot==1.0.3
    /tmp/relplot-venv/bin/python scripts/make_relplot_table.py tests/data/relplot_smece.json

The datasets are stored with their outputs (confidences rounded to 4 decimals, or to 2 for
the verbalized-style ones), so the table does not depend on a random number stream.
``--stdin`` reads ``{"datasets": [...]}`` in the same format and writes the outputs to
stdout, which is how the test runs relplot live when it is installed.
"""

from __future__ import annotations

import json
import sys

import numpy as np

FIXED_BANDWIDTHS = (0.02, 0.05, 0.1)


def _datasets() -> list[dict]:
    """20 seeded datasets: calibrated, over- and underconfident, crossing the diagonal,
    verbalized two-decimal confidences with heavy ties, the extremes 0 and 1, n 30 to 3000."""
    specs = [
        # (name, n, seed, how the true probability depends on the confidence, decimals)
        ("calibrated", 200, 1, "identity", 4),
        ("calibrated", 1000, 2, "identity", 4),
        ("calibrated", 3000, 3, "identity", 4),
        ("calibrated-small", 30, 4, "identity", 4),
        ("overconfident", 300, 5, "minus0.1", 4),
        ("overconfident", 2000, 6, "minus0.1", 4),
        ("underconfident", 500, 7, "plus0.1", 4),
        ("sharpened", 800, 8, "sharpen", 4),
        ("flattened", 800, 9, "flatten", 4),
        ("sharpened-small", 60, 10, "sharpen", 4),
        ("verbalized", 400, 11, "minus0.1", 2),
        ("verbalized", 1500, 12, "identity", 2),
        ("verbalized-high", 1000, 13, "high", 2),
        ("extremes", 300, 14, "extremes", 4),
        ("extremes-wrong", 300, 15, "extremes-wrong", 4),
        ("power", 1200, 16, "power", 4),
        ("random-labels", 500, 17, "half", 4),
        ("decile", 600, 18, "identity", 1),
        ("beta", 2500, 19, "minus0.05", 4),
        ("beta-small", 100, 20, "plus0.05", 4),
    ]
    out = []
    for name, n, seed, link, decimals in specs:
        rng = np.random.default_rng(seed)
        if name.startswith(("verbalized", "beta")):
            c = rng.beta(5, 1.5, size=n)
        else:
            c = rng.uniform(size=n)
        if link == "high":
            c = 0.7 + 0.3 * c
        if link.startswith("extremes"):
            c[: n // 5] = 0.0
            c[n // 5: 2 * n // 5] = 1.0
        c = np.round(c, decimals)
        p = {
            "identity": c,
            "minus0.1": c - 0.1,
            "plus0.1": c + 0.1,
            "minus0.05": c - 0.05,
            "plus0.05": c + 0.05,
            "sharpen": 1 / (1 + ((1 - c + 1e-12) / (c + 1e-12)) ** 2.5),
            "flatten": 0.5 + 0.5 * (c - 0.5),
            "high": c - 0.15,
            "extremes": np.where(c == 0, 0.05, np.where(c == 1, 0.95, c)),
            "extremes-wrong": np.where(c == 1, 0.7, np.where(c == 0, 0.3, c)),
            "power": c**1.7,
            "half": np.full(n, 0.5),
        }[link]
        y = rng.uniform(size=n) < np.clip(p, 0, 1)
        out.append({"name": name, "seed": seed, "n": n,
                    "confidence": [float(v) for v in c],
                    "correct": "".join("1" if v else "0" for v in y)})
    return out


def relplot_outputs(datasets: list[dict]) -> list[dict]:
    import relplot

    results = []
    for d in datasets:
        f = np.asarray(d["confidence"], dtype=float)
        y = np.array([ch == "1" for ch in d["correct"]], dtype=float)
        value, width = relplot.smECE(f, y, return_width=True)
        result = {
            "smECE": float(value),
            "bandwidth": float(width),
            "smECE_sigma": {str(s): float(relplot.smECE_sigma(f, y, s))
                            for s in FIXED_BANDWIDTHS},
        }
        ends = (f == 0) | (f == 1)
        if ends.any():
            # relplot's reflection counts a prediction at exactly 0 or 1 once where the
            # reflected kernel counts it twice (its mirror image is itself): giving those
            # rows twice to relplot shows that this is the whole difference
            f2, y2 = np.concatenate([f, f[ends]]), np.concatenate([y, y[ends]])
            result["smECE_sigma_ends_doubled"] = {
                str(s): float(relplot.smECE_sigma(f2, y2, s)) for s in FIXED_BANDWIDTHS}
        results.append(result)
    return results


def main(argv: list[str]) -> int:
    if argv[1:] == ["--stdin"]:
        datasets = json.load(sys.stdin)["datasets"]
        json.dump({"results": relplot_outputs(datasets)}, sys.stdout)
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    from importlib.metadata import version

    import relplot  # noqa: F401 - fail before writing anything

    datasets = _datasets()
    for d, result in zip(datasets, relplot_outputs(datasets), strict=True):
        d["relplot"] = result
    table = {"relplot_version": version("relplot"), "numpy_version": np.__version__,
             "fixed_bandwidths": list(FIXED_BANDWIDTHS), "datasets": datasets}
    with open(argv[1], "w", encoding="utf-8") as out:
        json.dump(table, out, separators=(",", ":"))
        out.write("\n")
    print(f"wrote {len(datasets)} datasets to {argv[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
