"""Benchmark: peak memory of a streamed `confcal score` as the number of documents grows.

Usage (from the repository root)::

    python benchmarks/bench_streaming.py                       # 10k, 100k, 1M documents
    python benchmarks/bench_streaming.py --sizes 10000,100000  # a quicker run

For each size, synthetic FCC invoices (``bench_scoring.make_invoice``/``make_prediction``:
typos, reformatted amounts and dates, dropped and invented line items, top-K and scalar
confidences) are written as truth and prediction JSONL files, then scored by the real
command in a child process, ``python -m confcal score ... -o out.parquet``, and the
child's peak resident set size is read from ``os.wait4`` (the kernel's ``ru_maxrss`` of
that one process). Predictions are written in a shuffled order with ``--shuffled``, which
exercises the indexed pairing path (``confcal.scoring._documents._PredictionIndex``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scoring import make_invoice, make_prediction


def write_corpus(folder: Path, n_docs: int, n_items: int, shuffled: bool, seed: int = 0
                 ) -> tuple[Path, Path]:
    """Truth and prediction JSONL files, written document by document (never all held)."""
    rng = random.Random(seed)
    truth_path, pred_path = folder / "truth.jsonl", folder / "pred.jsonl"
    order = list(range(n_docs)) if shuffled else None
    if order is not None:
        random.Random(seed + 1).shuffle(order)
    with open(truth_path, "w") as t, open(pred_path, "w") as p:
        preds: list[str] | None = [] if shuffled else None
        for i in range(n_docs):
            truth = make_invoice(rng, n_items)
            pred = make_prediction(rng, truth)
            t.write(json.dumps({"doc_id": f"inv-{i:07d}", "document": truth}) + "\n")
            line = json.dumps({"doc_id": f"inv-{i:07d}", "document": pred}) + "\n"
            if preds is None:
                p.write(line)
            else:
                preds.append(line)  # the benchmark's own memory, not the child's
        if preds is not None and order is not None:
            p.writelines(preds[j] for j in order)
    return truth_path, pred_path


def run_score(truth: Path, pred: Path, out: Path) -> tuple[float, float, str]:
    """(peak RSS in MiB, wall seconds, stdout) of one `confcal score` child process."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "confcal", "score", "--schema", "fcc-invoice", "--truth",
         str(truth), "--pred", str(pred), "--meta", "model=bench", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Pipes are read after wait4: the command prints a few lines, far below a pipe buffer.
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    stdout, stderr = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"confcal score failed: {stderr}")
    return usage.ru_maxrss / 1024, seconds, stdout  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--items", type=int, default=3, help="line items per invoice")
    parser.add_argument("--shuffled", action="store_true",
                        help="write predictions in another order than the truth")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp dir)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print("| documents | entities | input MiB | peak RSS MiB | seconds | docs/s |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n in sizes:
            folder = Path(tmp) / str(n)
            folder.mkdir()
            truth, pred = write_corpus(folder, n, args.items, args.shuffled)
            size = (truth.stat().st_size + pred.stat().st_size) / 2**20
            rss, seconds, stdout = run_score(truth, pred, folder / "out.parquet")
            entities = stdout.split(" entities")[0].rsplit(": ", 1)[-1]
            print(f"| {n:,} | {entities} | {size:,.0f} | {rss:,.0f} | {seconds:,.1f} | "
                  f"{n / seconds:,.0f} |", flush=True)
            for f in folder.iterdir():
                f.unlink()  # free the disk before the next size


if __name__ == "__main__":
    main()
