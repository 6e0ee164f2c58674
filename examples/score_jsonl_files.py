"""Score two JSONL files, compare the runs, and read the report.

Run: ``python examples/score_jsonl_files.py [TRUTH.jsonl PRED_A.jsonl PRED_B.jsonl]``.

Each JSONL file holds one ``{"doc_id": ..., "document": {...}}`` per line, documents in the
FCC_INVOICE schema. Without arguments the script first writes three such files from the
bundled synthetic demo corpus (the truth and two extractors on degraded scans), so it runs
as is. The same job on the command line::

    confcal score --schema fcc-invoice --truth truth.jsonl --pred a.jsonl --meta model=a \\
        -o a.parquet
    confcal score --schema fcc-invoice --truth truth.jsonl --pred b.jsonl --meta model=b \\
        -o b.parquet
    confcal report a.parquet b.parquet --by model -o report/
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pandas as pd

from confcal.datasets import load_demo
from confcal.report import write_report
from confcal.scoring import score_documents
from confcal.scoring.io import read_documents
from confcal.scoring.presets import FCC_INVOICE


def demo_files(folder: Path) -> tuple[Path, Path, Path]:
    """Truth and two runs of the synthetic demo corpus, written as JSONL."""
    corpus = load_demo()

    def write(name: str, documents: dict) -> Path:
        path = folder / name
        with path.open("w", encoding="utf-8") as fh:
            for doc_id, document in documents.items():
                fh.write(json.dumps({"doc_id": doc_id, "document": document}) + "\n")
        return path

    return (write("truth.jsonl", dict(corpus.truths)),
            write("calibrated.jsonl", dict(corpus.run("sim-calibrated", "high").predictions)),
            write("logprob.jsonl", dict(corpus.run("sim-logprob", "high").predictions)))


def main(truth_path: Path, runs: dict[str, Path], out: Path) -> None:
    truths = read_documents(truth_path)  # errors name the file and the line
    tables = []
    for model, path in runs.items():
        result = score_documents(FCC_INVOICE, truths, read_documents(path),
                                 metadata={doc_id: {"model": model} for doc_id in truths})
        print(f"{model}: {len(result.entities):,} entities, WOA {result.woa:.3f}, "
              f"F1 {result.f1:.3f}, {result.counts['without_confidence']:,} without confidence")
        tables.append(result.entities)

    written = write_report(pd.concat(tables, ignore_index=True), out, by="model",
                           budgets=(0.1, 0.3), n_resamples=200)
    print(f"\nreport: {written.html}\n")
    # Reading the table: AUROC says whether confidence ranks wrong answers below right
    # ones, ECE whether the numbers can be taken literally, ECARB what a review buys.
    for r in written.runs.to_dict("records"):
        print(f"{r['model']}: AUROC {r['auroc']:.2f} [{r['auroc_low']:.2f}, "
              f"{r['auroc_high']:.2f}], ECE {r['ece']:.3f}; reviewing the least confident "
              f"10% catches {r['ecarb@0.1']:.1f}x the errors of a random 10% "
              f"(at best {r['ecarb_ceiling@0.1']:.1f}x)")
    best = written.runs.sort_values("ecarb@0.1").iloc[-1]["model"]
    print(f"\nTo route by confidence, {best} ranks its errors best; check its reliability "
          "diagram in the report before trusting its numbers as probabilities.")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        if len(sys.argv) == 4:
            truth, a, b = map(Path, sys.argv[1:])
        else:
            truth, a, b = demo_files(Path(tmp))
        main(truth, {a.stem: a, b.stem: b}, Path("example-report"))
