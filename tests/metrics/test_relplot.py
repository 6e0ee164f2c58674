"""smooth_ece against relplot 1.0.3's smECE, the reference implementation of the smooth ECE.

Two sources of relplot's numbers: a stored table of 20 seeded datasets with relplot's
outputs (``tests/data/relplot_smece.json``, written by ``scripts/make_relplot_table.py``
run in an environment with relplot), so the comparison always runs; and relplot itself,
run in its own virtual environment (``CONFCAL_RELPLOT_PYTHON``, else
``/tmp/relplot-venv/bin/python``) when it is installed, which must reproduce the table and
agree on fresh data.

The tolerances are relplot's discretisation, not confcal's (confcal matches the definition
to a relative 2e-6 in tests/metrics/test_estimators.py): a 200-point sum, a kernel sampled
on 1,001 nodes and cut at ±0.5, σ* from 10 bisection steps (a resolution of 2**-10), and a
prediction at exactly 0 or 1 counted once where the reflected kernel counts it twice.
docs/metrics.md gives the measured figures.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from _optional import missing
from confcal import smooth_ece

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "tests" / "data" / "relplot_smece.json"
SCRIPT = ROOT / "scripts" / "make_relplot_table.py"
RELPLOT_PYTHON = Path(os.environ.get("CONFCAL_RELPLOT_PYTHON",
                                     "/tmp/relplot-venv/bin/python"))

# relative agreement at a fixed bandwidth <= 0.1 (measured: at most 0.45%)
FIXED_REL = 0.006
# ... when relplot is given the rows at exactly 0 or 1 twice (measured: at most 1.5%)
ENDS_DOUBLED_REL = 0.02
# automatic bandwidth: relplot's σ is within 2**-10 above its fixed point
BISECTION = 2.0**-10
# relplot's kernel cut at ±0.5 drops 2·P(Z > 0.5/σ) of its mass: 1.2% at σ = 0.2
WIDE_REL = 0.03


def load_table() -> list[dict]:
    return json.loads(TABLE.read_text(encoding="utf-8"))["datasets"]


def arrays(dataset: dict) -> tuple[np.ndarray, np.ndarray]:
    correct = np.array([ch == "1" for ch in dataset["correct"]])
    return correct, np.asarray(dataset["confidence"], dtype=float)


def has_ends(confidence: np.ndarray) -> bool:
    return bool(((confidence == 0) | (confidence == 1)).any())


def check_fixed_bandwidths(dataset: dict, relplot: dict) -> list[str]:
    correct, confidence = arrays(dataset)
    failures = []
    for sigma, theirs in relplot["smECE_sigma"].items():
        ours = smooth_ece(correct, confidence, bandwidth=float(sigma))
        if has_ends(confidence):
            theirs = relplot["smECE_sigma_ends_doubled"][sigma]
            tol = ENDS_DOUBLED_REL
        else:
            tol = FIXED_REL
        if abs(ours - theirs) > tol * theirs:
            failures.append(f"{dataset['name']} n={dataset['n']} σ={sigma}: {ours} vs {theirs}")
    return failures


def check_automatic(dataset: dict, relplot: dict) -> list[str]:
    correct, confidence = arrays(dataset)
    ours, theirs, width = smooth_ece(correct, confidence), relplot["smECE"], relplot["bandwidth"]
    tol = BISECTION + (FIXED_REL if width <= 0.1 else WIDE_REL) * theirs
    failures = []
    # at relplot's own bandwidth only the kernel's discretisation is left
    at_width = smooth_ece(correct, confidence, bandwidth=width)
    if abs(at_width - theirs) > (FIXED_REL if width <= 0.1 else WIDE_REL) * theirs:
        failures.append(f"{dataset['name']} n={dataset['n']}: at σ {width}: {at_width} vs "
                        f"{theirs}")
    if abs(ours - theirs) > tol:
        failures.append(f"{dataset['name']} n={dataset['n']}: {ours} vs {theirs} (σ {width})")
    # relplot's bisection keeps the upper end of a 2**-10 bracket around its fixed point
    if not width - BISECTION - tol <= ours <= width + tol:
        failures.append(f"{dataset['name']} n={dataset['n']}: σ* {ours} outside relplot's "
                        f"bracket [{width - BISECTION}, {width}]")
    return failures


def test_the_table_covers_the_hard_cases():
    datasets = load_table()
    assert len(datasets) == 20
    assert sum(has_ends(arrays(d)[1]) for d in datasets) >= 2  # predictions at 0 and 1
    assert min(d["n"] for d in datasets) <= 30 and max(d["n"] for d in datasets) >= 3000
    assert any(d["relplot"]["bandwidth"] > 0.15 for d in datasets)  # a wide kernel


def test_fixed_bandwidths_agree_with_the_stored_relplot_outputs():
    failures = [f for d in load_table() for f in check_fixed_bandwidths(d, d["relplot"])]
    assert not failures, "\n".join(failures)


def test_automatic_bandwidth_agrees_with_the_stored_relplot_outputs():
    failures = [f for d in load_table() if not has_ends(arrays(d)[1])
                for f in check_automatic(d, d["relplot"])]
    assert not failures, "\n".join(failures)


def test_predictions_at_the_ends_count_in_full():
    # relplot halves the rows at exactly 0 or 1; confcal follows the reflected kernel, in
    # which 0.0 and 1e-9 weigh the same, so the two differ by far more than the tolerance
    for d in load_table():
        correct, confidence = arrays(d)
        if not has_ends(confidence) or d["name"] != "extremes-wrong":
            continue
        ours = smooth_ece(correct, confidence, bandwidth=0.05)
        nudged = np.clip(confidence, 1e-9, 1 - 1e-9)
        assert smooth_ece(correct, nudged, bandwidth=0.05) == pytest.approx(ours, rel=1e-6)
        assert abs(ours - d["relplot"]["smECE_sigma"]["0.05"]) > 0.2 * ours
        return
    pytest.fail("no extremes-wrong dataset in the table")


def fresh_datasets() -> list[dict]:
    rng = np.random.default_rng(2024)
    fresh = []
    for i in range(8):
        n = int(rng.integers(50, 2000))
        c = np.round(rng.uniform(0.001, 0.999, size=n), 3)
        p = np.clip(c + rng.uniform(-0.15, 0.15), 0, 1)
        y = rng.uniform(size=n) < p
        fresh.append({"name": f"fresh-{i}", "n": n, "confidence": c.tolist(),
                      "correct": "".join("1" if v else "0" for v in y)})
    return fresh


@pytest.fixture(scope="module")
def live() -> dict[str, list[dict]]:
    """relplot's outputs on the table's datasets and on fresh ones, from one run."""
    if not RELPLOT_PYTHON.exists():
        missing(f"needs relplot: no relplot python at {RELPLOT_PYTHON} (python -m venv "
                "/tmp/relplot-venv && /tmp/relplot-venv/bin/pip install relplot==1.0.3, as "
                ".ci/run does, or set CONFCAL_RELPLOT_PYTHON)")
    table, fresh = load_table(), fresh_datasets()
    done = subprocess.run([str(RELPLOT_PYTHON), str(SCRIPT), "--stdin"],
                          input=json.dumps({"datasets": table + fresh}), capture_output=True,
                          text=True, timeout=300, check=False)
    if done.returncode != 0 and "No module named 'relplot'" in done.stderr:
        missing(f"needs relplot: {RELPLOT_PYTHON} has no relplot (pip install relplot==1.0.3)")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    return {"table": results[:len(table)], "fresh": results[len(table):]}


def flat(result: dict) -> dict[str, float]:
    out = {}
    for key, value in result.items():
        if isinstance(value, dict):
            out.update({f"{key}@{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def test_relplot_reproduces_the_stored_table(live):
    for d, result in zip(load_table(), live["table"], strict=True):
        assert flat(result) == pytest.approx(flat(d["relplot"]), rel=1e-12), d["name"]


def test_fresh_data_agrees_with_relplot_live(live):
    failures = []
    for d, result in zip(fresh_datasets(), live["fresh"], strict=True):
        failures += check_fixed_bandwidths(d, result) + check_automatic(d, result)
    assert not failures, "\n".join(failures)
