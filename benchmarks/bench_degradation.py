"""Benchmark: what the 20 pipelines do to a real OCR engine, and what degrade() costs.

Usage (from the repository root; needs the ``augment`` and ``ocr`` extras and Debian's
``tesseract-ocr``)::

    nice python benchmarks/bench_degradation.py                        # invoices 8, 3; seeds 1-3
    nice python benchmarks/bench_degradation.py --invoices 8 --seeds 1  # a quick look

Each demo invoice (``confcal.datasets._generate.make_invoice``) is drawn by
``confcal.extras.augment.render_invoice`` (1700 x 2200, DejaVu Sans 30 px, shipped with
matplotlib), read by Tesseract (``confcal.extras.ocr.tesseract_words``) as it is, then
degraded by every pipeline of ``PIPELINES`` with every seed and read again. Per pipeline,
over all pages and seeds:

* ``seconds``: mean wall time of one ``degrade`` call;
* ``word_acc``: the share of the page's printed words that Tesseract read exactly
  (bag of words: each printed word is matched at most once, reading order ignored);
* ``char_sim``: ``rapidfuzz.fuzz.token_sort_ratio / 100`` of printed and read text
  (character similarity, reading order ignored);
* ``ocr_conf``: mean Tesseract word confidence (in [0, 1]);
* ``drop`` and ``tier``: the clean pages' word accuracy minus the pipeline's, read as the
  paper's rule (mild < 0.05, moderate 0.05 to 0.10, high > 0.10; the drop rounded to 12
  decimals first, as ``confcal.report.degradation`` does);
* ``changed``: the share of pixels the pipeline changed (the base blend changes none).

It checks the claims of docs/augment.md and exits 1 when one fails: the empty pipeline is
the identity, every pipeline changes at least 0.2% of the pixels on every page and seed
(ink-only effects such as ``low_ink`` touch little else on a page that is mostly paper),
every pipeline keeps word accuracy >= ``--floor`` (0.5) on every page and seed, at least
3 pipelines drop less than 5 points and at least 3 more than 10. It also times the worker
process: its start, and one cheap call through it against the same call in this process.
Finally it writes a contact sheet (one crop of every pipeline's first page) to ``--sheet``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHEET = ROOT / "docs" / "images" / "degradation-contact-sheet.png"


def printed_words(invoice: dict[str, Any]) -> list[str]:
    """Every word the page shows, as rendered."""
    from confcal.extras.augment import invoice_lines
    from confcal.extras.augment._render import TABLE_HEADER

    lines = invoice_lines(invoice)
    words = ["INVOICE"]
    for label, value in lines["header"]:
        words += f"{label} {value}".split()
    words += list(TABLE_HEADER)
    for row in lines["rows"]:
        words += " ".join(row).split()
    for label, value in lines["totals"]:
        words += f"{label} {value}".split()
    return words


def word_accuracy(printed: list[str], read: list[str]) -> float:
    """Share of printed words read exactly, each read word used once."""
    # e.g. printed [a, b, b], read [b, c]: b matches once -> 1 / 3
    left = collections.Counter(read)
    hits = 0
    for word in printed:
        if left[word]:
            left[word] -= 1
            hits += 1
    return hits / len(printed)


def tier(drop: float) -> str:
    d = round(drop, 12)
    return "mild" if d < 0.05 else ("moderate" if d <= 0.10 else "high")


@contextlib.contextmanager
def scratch_cwd() -> Iterator[None]:
    # this script is single-threaded: changing its working directory here harms nothing
    previous = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            yield
        finally:
            os.chdir(previous)


def worker_cost(page: np.ndarray) -> dict[str, float]:
    """Start-up of the worker, and one cheap call through it vs in this process."""
    import cv2

    from confcal.extras.augment import degrade, make_pipeline
    from confcal.extras.augment._degrade import stop_worker

    spec = {"post": [("Jpeg", {"quality_range": (95, 95)})]}
    color = cv2.cvtColor(page, cv2.COLOR_GRAY2BGR)
    stop_worker()
    start = time.perf_counter()
    degrade(color, spec, seed=0)
    first = time.perf_counter() - start
    n = 10
    start = time.perf_counter()
    for i in range(n):
        degrade(color, spec, seed=i)
    through = (time.perf_counter() - start) / n
    with scratch_cwd():
        make_pipeline(spec).augment(color.copy())  # warm: imports and compiled code
        start = time.perf_counter()
        for _ in range(n):
            make_pipeline(spec).augment(color.copy())
        local = (time.perf_counter() - start) / n
    return {"first_call": first, "through_worker": through, "in_process": local}


def contact_sheet(tiles: dict[str, np.ndarray], path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    from confcal.extras.augment._render import font_path

    width, height, label = 340, 230, 26
    columns = 5
    rows = (len(tiles) + columns - 1) // columns
    sheet = Image.new("L", (columns * width, rows * (height + label)), 255)
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.truetype(str(font_path()), 18)
    for i, (name, tile) in enumerate(tiles.items()):
        x, y = (i % columns) * width, (i // columns) * (height + label)
        image = Image.fromarray(tile).resize((width - 6, height - 6), Image.LANCZOS)
        sheet.paste(image, (x + 3, y + label))
        draw.text((x + 6, y + 3), name, fill=0, font=font)
    path.parent.mkdir(parents=True, exist_ok=True)
    # 16 grays are plenty to see each effect, and keep the PNG small for the docs
    sheet.quantize(colors=16).save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--invoices", default="8,3",
                        help="demo invoice numbers to render (default 8,3)")
    parser.add_argument("--seeds", default="1,2,3", help="degradation seeds (default 1,2,3)")
    parser.add_argument("--floor", type=float, default=0.5,
                        help="lowest word accuracy any pipeline may leave (default 0.5)")
    parser.add_argument("--sheet", type=Path, default=SHEET,
                        help=f"contact sheet PNG (default {SHEET.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Tesseract's threads, for this process
    from rapidfuzz import fuzz

    from confcal.datasets._generate import make_invoice
    from confcal.extras.augment import PIPELINES, degrade, render_invoice
    from confcal.extras.ocr import tesseract_words

    invoices = [int(i) for i in args.invoices.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    pages = {i: np.asarray(render_invoice(make_invoice(i))) for i in invoices}
    printed = {i: printed_words(make_invoice(i)) for i in invoices}

    cost = worker_cost(pages[invoices[0]])
    print(f"worker: first call {cost['first_call']:.2f} s (start-up included); a cheap call "
          f"{1000 * cost['through_worker']:.0f} ms through it vs "
          f"{1000 * cost['in_process']:.0f} ms in this process (page "
          f"{pages[invoices[0]].shape[1]} x {pages[invoices[0]].shape[0]}, BGR)")

    failures = []
    clean_acc = {}
    for i, page in pages.items():
        same = degrade(page, {}, seed=0)
        if not (same.dtype == page.dtype and same.shape == page.shape
                and np.array_equal(same, page)):
            failures.append(f"the empty pipeline changed invoice {i}")
        words = tesseract_words(page)
        clean_acc[i] = word_accuracy(printed[i], [w.text for w in words])
    baseline = float(np.mean(list(clean_acc.values())))
    print(f"clean pages: word accuracy {baseline:.3f} "
          f"({', '.join(f'invoice {i}: {a:.3f}' for i, a in clean_acc.items())}); "
          f"{len(PIPELINES)} pipelines x {len(invoices)} pages x {len(seeds)} seeds\n")

    header = (f"{'pipeline':<20} {'nominal':>8} {'seconds':>7} {'word_acc':>8} {'min':>6} "
              f"{'char_sim':>8} {'ocr_conf':>8} {'drop':>6} {'tier':>8} {'changed':>7}")
    print(header)
    print("-" * len(header))
    tiles: dict[str, np.ndarray] = {}
    rows = []
    for name, spec in PIPELINES.items():
        seconds, accs, sims, confs, changed = [], [], [], [], []
        for i, page in pages.items():
            for seed in seeds:
                start = time.perf_counter()
                out = degrade(page, name, seed=seed)
                seconds.append(time.perf_counter() - start)
                words = tesseract_words(out)
                read = [w.text for w in words]
                accs.append(word_accuracy(printed[i], read))
                sims.append(fuzz.token_sort_ratio(" ".join(printed[i]), " ".join(read)) / 100)
                confs.extend(w.confidence for w in words)
                changed.append(float((out != page).mean()))
                if name not in tiles:
                    tiles[name] = out[80:80 + 620, 60:60 + 920]
        acc = float(np.mean(accs))
        row = {"pipeline": name, "nominal": spec.tier, "seconds": float(np.mean(seconds)),
               "word_acc": acc, "min_acc": float(np.min(accs)),
               "char_sim": float(np.mean(sims)),
               "ocr_conf": float(np.mean(confs)) if confs else float("nan"),
               "drop": baseline - acc, "tier": tier(baseline - acc),
               "changed": float(np.min(changed))}
        rows.append(row)
        print(f"{name:<20} {row['nominal']:>8} {row['seconds']:>7.2f} {acc:>8.3f} "
              f"{row['min_acc']:>6.3f} {row['char_sim']:>8.3f} {row['ocr_conf']:>8.3f} "
              f"{row['drop']:>6.3f} {row['tier']:>8} {row['changed']:>7.3f}", flush=True)
        if row["min_acc"] < args.floor:
            failures.append(f"{name} left word accuracy {row['min_acc']:.3f} < {args.floor}")
        if row["changed"] < 0.002:
            failures.append(f"{name} changed {row['changed']:.4f} of the pixels (< 0.002)")
    counts = collections.Counter(r["tier"] for r in rows)
    print(f"\nmeasured tiers: {dict(counts)}")
    if counts["mild"] < 3 or counts["high"] < 3:
        failures.append(f"tiers must hold >= 3 mild and >= 3 high pipelines; found {dict(counts)}")
    contact_sheet(tiles, args.sheet)
    print(f"contact sheet: {args.sheet}")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    print("all checks passed" if not failures else f"{len(failures)} checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
