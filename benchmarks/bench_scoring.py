"""Benchmark: confcal.score_documents against stickler-eval 1.0.0 on synthetic FCC invoices.

Usage (from the repository root)::

    python benchmarks/bench_scoring.py                  # creates /tmp/stickler-venv if absent
    python benchmarks/bench_scoring.py --no-stickler    # confcal only

stickler-eval is never a confcal dependency: it is installed into a separate virtual
environment (``--venv``, default ``/tmp/stickler-venv``; created with
``python -m venv`` + ``pip install stickler-eval==1.0.0`` on first use) and run in a
subprocess that re-executes this file with ``--stickler-worker``. Both sides score the same
JSON documents in the same run; stickler is timed on a handful of them because it takes
about a second per document.

Workload: invoices with 20 line items, predictions with typos, amount drift, reformatted
dates, dropped, invented and shuffled items, and a confidence on every predicted leaf
(stickler gets the bare values). Reported: documents per second for each, their ratio,
and the time to score one document with 300 truth and 300 predicted line items.

Times are CPU seconds of the process (``time.process_time``) and the fastest of several
runs, on both sides, so that other work on a shared machine inflates neither.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

STICKLER_VERSION = "1.0.0"
AGENCIES = ["Buying Time LLC", "Canal Partners Media", "GMMB", "Screen Strategies",
            "Waterfront Strategies"]
ADVERTISERS = ["Friends of Jane Doe", "Citizens for Progress", "Smith for Senate", "Vote Yes on 3"]
PROGRAMS = ["Early Today", "News 4 at 5", "Today Show", "Evening News", "Jeopardy",
            "Wheel of Fortune", "Late Night", "Sunday Morning", "Meet the Press", "NFL Football",
            "Local News at 11",
            "Good Morning America", "Nightly News", "Judge Judy", "Dr. Phil", "Ellen"]
DAYS = ["M-F", "MTWTF--", "Sa", "Su", "M-Su", "-T-T---", "Sa-Su"]
TERMS = ["Net 30", "Net 45", "Due on receipt", "Cash in advance"]


# --------------------------------------------------------------------- data


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _date_formats(day: Any) -> list[str]:
    return [day.isoformat(), day.strftime("%m/%d/%Y"), day.strftime("%B %-d, %Y"),
            day.strftime("%-d %b %Y"), day.isoformat() + "T00:00:00"]


def _typo(rng: random.Random, text: str) -> str:
    if len(text) < 2:
        return text
    i = rng.randrange(len(text))
    return text[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz") + text[i + 1:]


def make_invoice(rng: random.Random, n_items: int) -> dict[str, Any]:
    from datetime import date, timedelta

    start = date(2024, 1, 1) + timedelta(days=rng.randrange(300))
    items = []
    for _ in range(n_items):
        first = start + timedelta(days=rng.randrange(30))
        last = first + timedelta(days=rng.randrange(1, 14))
        items.append({
            "StartDate": first.isoformat(),
            "EndDate": last.isoformat(),
            "Days": rng.choice(DAYS),
            "Description": f"{rng.choice(PROGRAMS)} {rng.randrange(1, 999)}",
            "Rate": _money(rng.randrange(20, 5000) + rng.choice([0, 0.5, 0.25])),
        })
    gross = sum(float(it["Rate"][1:].replace(",", "")) for it in items)
    commission = round(gross * 0.15, 2)
    return {
        "Agency": rng.choice(AGENCIES),
        "Advertiser": rng.choice(ADVERTISERS),
        "GrossTotal": _money(gross),
        "PaymentTerms": rng.choice(TERMS),
        "AgencyCommission": _money(commission),
        "NetAmountDue": _money(gross - commission),
        "LineItems": items,
    }


def _perturb(rng: random.Random, field: str, value: str) -> str:
    from datetime import date

    if field in ("StartDate", "EndDate") and rng.random() < 0.5:
        return rng.choice(_date_formats(date.fromisoformat(value)))
    if field in ("Rate", "GrossTotal", "AgencyCommission", "NetAmountDue") and rng.random() < 0.2:
        number = float(value[1:].replace(",", "")) * (1 + rng.gauss(0, 0.01))
        return rng.choice([f"{number:.2f}", _money(number), f"{number:,.0f}"])
    if (field in ("Agency", "Advertiser", "Description", "PaymentTerms", "Days")
            and rng.random() < 0.15):
        return _typo(rng, value)
    return value


def make_prediction(rng: random.Random, truth: dict[str, Any]) -> dict[str, Any]:
    def leaf(field: str, value: str) -> dict[str, Any]:
        return {"value": _perturb(rng, field, value), "confidence": round(rng.uniform(0.5, 1.0), 3)}

    items = [
        {k: leaf(k, v) for k, v in item.items()}
        for item in truth["LineItems"]
        if rng.random() >= 0.05  # dropped
    ]
    for _ in range(rng.choice([0, 0, 1])):  # invented
        fake = make_invoice(rng, 1)["LineItems"][0]
        items.append({k: {"value": v, "confidence": 0.99} for k, v in fake.items()})
    rng.shuffle(items)
    pred: dict[str, Any] = {k: leaf(k, v) for k, v in truth.items() if k != "LineItems"}
    pred["LineItems"] = items
    return pred


def make_corpus(n_docs: int, n_items: int, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = random.Random(seed)
    truths = {f"inv-{i:05d}": make_invoice(rng, n_items) for i in range(n_docs)}
    preds = {doc_id: make_prediction(rng, doc) for doc_id, doc in truths.items()}
    return truths, preds


def bare(pred: dict[str, Any]) -> dict[str, Any]:
    """The prediction without confidences (what stickler compares)."""
    def value(leaf: Any) -> Any:
        return leaf["value"] if isinstance(leaf, dict) else leaf

    out = {k: value(v) for k, v in pred.items() if k != "LineItems"}
    out["LineItems"] = [{k: value(v) for k, v in item.items()} for item in pred["LineItems"]]
    return out


# ------------------------------------------------------------------ stickler


def stickler_worker(path: str, repeat: int) -> None:
    """Runs inside the stickler virtualenv: time compare_with on each document pair.

    Each document is timed ``repeat`` times and its fastest run kept, as confcal's best of
    several runs is, so that a busy machine does not flatter either side.
    """

    import stickler

    # the FCC-equivalent models, shared with the test that checks conventions="stickler-1.0"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from _stickler_models import fcc_models

    Invoice, _ = fcc_models()

    data = json.loads(Path(path).read_text())
    times = []
    for truth, pred in zip(data["truths"], data["predictions"], strict=True):
        gt, pr = Invoice(**truth), Invoice(**pred)
        best = float("inf")
        for _ in range(repeat):
            t0 = time.process_time()
            gt.compare_with(pr, include_confusion_matrix=True)
            best = min(best, time.process_time() - t0)
        times.append(best)
    print(json.dumps({"version": stickler.__version__, "seconds": times}))


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import stickler; print(stickler.__version__)"]
    if python.exists():
        found = subprocess.run(probe, capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip() == STICKLER_VERSION:
            return python
    print(f"creating {venv} with stickler-eval=={STICKLER_VERSION} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q",
                    f"stickler-eval=={STICKLER_VERSION}"],
                   check=True)
    return python


def run_stickler(python: Path, truths: list[Any], preds: list[Any], repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.json"
        path.write_text(json.dumps({"truths": truths, "predictions": preds}))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        proc = subprocess.run([str(python), __file__, "--stickler-worker", str(path),
                               "--stickler-repeat", str(repeat)],
                              capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"stickler worker failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------- main


def time_confcal(truths: dict[str, Any], preds: dict[str, Any], repeat: int) -> float:
    """Best-of-``repeat`` seconds for one score_documents call (caches cleared each time)."""
    from confcal.scoring import comparators, score_documents
    from confcal.scoring.presets import FCC_INVOICE

    best = float("inf")
    for _ in range(repeat):
        # Cold caches: every run parses and normalizes every string again.
        comparators.clear_caches()
        t0 = time.process_time()
        score_documents(FCC_INVOICE, truths, preds)
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000, help="documents scored by confcal")
    parser.add_argument("--stickler-docs", type=int, default=10,
                        help="documents scored by stickler")
    parser.add_argument("--stickler-repeat", type=int, default=2,
                        help="runs per stickler document (fastest kept)")
    parser.add_argument("--items", type=int, default=20, help="line items per invoice")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5, help="confcal runs (fastest kept)")
    parser.add_argument("--venv", type=Path, default=Path("/tmp/stickler-venv"))
    parser.add_argument("--no-stickler", action="store_true")
    parser.add_argument("--stickler-worker", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stickler_worker:
        stickler_worker(args.stickler_worker, args.stickler_repeat)
        return

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    truths, preds = make_corpus(args.docs, args.items, args.seed)
    seconds = time_confcal(truths, preds, args.repeat)
    confcal_rate = args.docs / seconds
    print(f"confcal   score_documents: {args.docs} invoices x {args.items} items in "
          f"{seconds:.3f} s = {confcal_rate:,.0f} docs/s")

    ids = list(truths)[: args.stickler_docs]
    same = {i: truths[i] for i in ids}, {i: preds[i] for i in ids}
    small = time_confcal(*same, args.repeat)
    print(f"confcal   same {len(ids)} invoices as stickler: {small * 1e3:.1f} ms "
          f"= {len(ids) / small:,.0f} docs/s")

    if not args.no_stickler:
        python = ensure_venv(args.venv)
        result = run_stickler(python, [truths[i] for i in ids], [bare(preds[i]) for i in ids],
                              args.stickler_repeat)
        per_doc = result["seconds"]
        stickler_rate = len(per_doc) / sum(per_doc)
        print(f"stickler  {result['version']} compare_with(include_confusion_matrix=True): "
              f"{len(per_doc)} invoices, median {statistics.median(per_doc):.3f} s/doc "
              f"= {stickler_rate:.2f} docs/s")
        print(f"ratio     confcal / stickler: {confcal_rate / stickler_rate:,.0f}x "
              f"(same {len(ids)} docs: {len(ids) / small / stickler_rate:,.0f}x; target >= 500x)")

    big_truths, big_preds = make_corpus(1, 300, args.seed + 1)
    big = time_confcal(big_truths, big_preds, args.repeat)
    n_pred = len(next(iter(big_preds.values()))["LineItems"])
    print(f"one invoice, 300 truth x {n_pred} predicted line items: {big:.3f} s (target < 1 s)")


if __name__ == "__main__":
    main()
