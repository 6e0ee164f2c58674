"""Benchmark: what the 20 pipelines do to a real OCR engine, on several page designs.

Usage (from the repository root; needs the ``augment`` and ``ocr`` extras and Debian's
``tesseract-ocr``)::

    nice python benchmarks/bench_degradation.py                  # every design, seeds 1-3
    nice python benchmarks/bench_degradation.py --write-tiers    # and rewrite the registry's
    nice python benchmarks/bench_degradation.py --designs demo --pipelines custom12 --seeds 1

Pages (:data:`PAGES`): the demo invoices 8 and 3 as the demo corpus draws them (DejaVu
Sans 30 px at 200 dpi, an open table), and three other designs of
``confcal.extras.augment.PAGE_DESIGNS``, each on an invoice of its own: DejaVu Serif at 200
dpi with a ruled 23-row table, DejaVu Sans Mono at 150 dpi with an open table, DejaVu Sans
at 150 dpi with a ruled 22-row table. Each page is read by Tesseract
(``confcal.extras.ocr.tesseract_words``, one OpenMP thread) as it is, then degraded by
every pipeline of ``PIPELINES`` with every seed and read again. Per pipeline, over all
pages and seeds:

* ``seconds``: mean wall time of one ``degrade`` call;
* ``word_acc``: the share of the page's printed words that Tesseract read exactly
  (bag of words: each printed word is matched at most once, reading order ignored), and
  ``min`` the lowest of any page and seed;
* ``char_sim``: ``rapidfuzz.fuzz.token_sort_ratio / 100`` of printed and read text;
* ``ocr_conf``: mean Tesseract word confidence (in [0, 1]);
* ``drop`` and ``tier``: the mean over pages and seeds of the page's clean word accuracy
  minus the degraded one, read by the paper's rule (mild < 0.05, moderate 0.05 to 0.10,
  high > 0.10; the drop rounded to 12 decimals first, as ``confcal.report.degradation``
  does); ``intended`` is the registry's design intent (its highest phase severity);
* ``mad``: the least, over designs, of the mean absolute difference from the input in grey
  levels (the least over a design's pages and seeds), and ``changed`` the least share of
  pixels changed.

A second table gives each design's lowest word accuracy and its least mean absolute
difference per pipeline. The script exits 1, naming every failure, unless the empty
pipeline is the identity; every (pipeline, page, seed) keeps word accuracy >= ``--floor``
(0.5); every pipeline changes every design by a mean absolute difference of at least 2
grey levels (the few whose change is confined to the strokes or the binding edge,
:data:`LOCAL`, change that part instead: the ink by 5, the edge by 2); and at least 3
pipelines fall in each tier. A run on every design and seed writes its pipelines'
measurements to ``--results``
(``benchmarks/results/degradation.json``, which the registry's measured tiers are tested
against; the other pipelines' entries are kept when the pages, seeds and versions are the
same) and, with ``--write-tiers``, once the
file holds every pipeline, rewrites the measured-tier block of
``src/confcal/extras/augment/_registry.py``. It also times the worker process and writes a
contact sheet (one crop of every pipeline's output on demo invoice 8) to ``--sheet``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHEET = ROOT / "docs" / "images" / "degradation-contact-sheet.png"
RESULTS = ROOT / "benchmarks" / "results" / "degradation.json"
REGISTRY = ROOT / "src" / "confcal" / "extras" / "augment" / "_registry.py"
# design name -> (PAGE_DESIGNS layout, demo invoice numbers drawn in it)
PAGES: dict[str, tuple[str, tuple[int, ...]]] = {
    "demo": ("sans-200-open", (8, 3)),
    "serif-200-ruled": ("serif-200-ruled", (2,)),
    "mono-150-open": ("mono-150-open", (4,)),
    "sans-150-ruled": ("sans-150-ruled", (5,)),
}
SEEDS = (1, 2, 3)
MIN_MAD = 2.0  # grey levels: the least mean absolute difference a pipeline must make
# Pipelines whose change is confined to one part of the page, held to a visible change of
# that part instead of the whole page's mean absolute difference (MIN_MAD):
# * "ink": every change is inside the strokes, and the pages are 2-7% ink (demo invoice
#   3: 2.0%), so lightening or breaking them, however visible, moves the page's mean by
#   less than 2 grey levels; the ink pixels (< 128 on the clean page) must change by at
#   least MIN_INK_MAD on average (low_ink's streaks, the least: 8.0);
# * "edge": holes, staples and clips along the left (binding) edge; the left quarter of
#   the page must change by at least MIN_MAD on average.
LOCAL = {
    "archetype10": ("ink", "letterpress dropouts inside the strokes, then a fax"),
    "low_ink": ("ink", "faded streaks across the strokes only"),
    "fax_letterpress": ("ink", "letterpress dropouts inside the strokes, then a fax"),
    "custom22": ("ink", "the strokes broken into dots"),
    "bindings": ("edge", "holes, staples or clips along the left edge"),
}
MIN_INK_MAD = 5.0


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


def mean_abs_diff(out: np.ndarray, page: np.ndarray, where: np.ndarray | None = None
                  ) -> float:
    """Mean absolute difference in grey levels (gray pages: the benchmark's are gray), over
    the whole page or the pixels ``where`` is true."""
    diff = np.abs(out.astype(np.int16) - page.astype(np.int16))
    return float(diff.mean() if where is None else diff[where].mean())


def render_pages(designs: list[str]) -> dict[tuple[str, int], tuple[np.ndarray, list[str]]]:
    """(design, invoice) -> (gray page, printed words)."""
    from confcal.datasets._generate import make_invoice
    from confcal.extras.augment import PAGE_DESIGNS, render_invoice

    pages = {}
    for design in designs:
        layout, invoices = PAGES[design]
        for i in invoices:
            invoice = make_invoice(i)
            page = np.asarray(render_invoice(invoice, layout=PAGE_DESIGNS[layout]))
            pages[(design, i)] = (page, printed_words(invoice))
    return pages


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


def measure(name: str, spec: Any, pages: dict, clean: dict, seeds: list[int],
            tiles: dict[str, np.ndarray]) -> dict[str, Any]:
    """One pipeline over every page and seed: the row of the table."""
    from rapidfuzz import fuzz

    from confcal.extras.augment import degrade
    from confcal.extras.ocr import tesseract_words

    seconds, drops, sims, confs, changed = [], [], [], [], []
    per_page: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for (design, invoice), (page, printed) in pages.items():
        for seed in seeds:
            start = time.perf_counter()
            out = degrade(page, name, seed=seed)
            seconds.append(time.perf_counter() - start)
            words = tesseract_words(out)
            read = [w.text for w in words]
            acc = word_accuracy(printed, read)
            drops.append(clean[(design, invoice)] - acc)
            sims.append(fuzz.token_sort_ratio(" ".join(printed), " ".join(read)) / 100)
            confs.extend(w.confidence for w in words)
            changed.append(float((out != page).mean()))
            per_page[design].append({"invoice": invoice, "seed": seed,
                                     "word_acc": round(acc, 4),
                                     "mad": round(mean_abs_diff(out, page), 3),
                                     "ink_mad": round(mean_abs_diff(out, page, page < 128),
                                                      3),
                                     "edge_mad": round(mean_abs_diff(
                                         out[:, :page.shape[1] // 4],
                                         page[:, :page.shape[1] // 4]), 3)})
            if name not in tiles and design == "demo":
                tiles[name] = out[80:80 + 620, 60:60 + 920]
    designs = {d: {"min_acc": min(r["word_acc"] for r in rows),
                   "drop": round(float(np.mean([clean[(d, r["invoice"])] - r["word_acc"]
                                                for r in rows])), 4),
                   "mad": min(r["mad"] for r in rows),
                   "ink_mad": min(r["ink_mad"] for r in rows),
                   "edge_mad": min(r["edge_mad"] for r in rows), "pages": rows}
               for d, rows in per_page.items()}
    drop = float(np.mean(drops))
    accs = [r["word_acc"] for rows in per_page.values() for r in rows]
    return {"pipeline": name, "intended": spec.intended_tier,
            "seconds": float(np.mean(seconds)), "word_acc": float(np.mean(accs)),
            "min_acc": float(np.min(accs)), "char_sim": float(np.mean(sims)),
            "ocr_conf": float(np.mean(confs)) if confs else float("nan"),
            "drop": drop, "tier": tier(drop),
            "mad": min(d["mad"] for d in designs.values()),
            "changed": float(np.min(changed)), "designs": designs}


def write_tiers(tiers: dict[str, str], path: Path = REGISTRY) -> None:
    """Rewrite the registry's measured-tier block (between its two markers)."""
    text = path.read_text()
    pattern = re.compile(r"(# --- measured tiers: begin\n).*?(# --- measured tiers: end\n)",
                         re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path} has no measured-tier block to rewrite")
    body = ("MEASURED: Mapping[str, str] = MappingProxyType({\n"
            + "".join(f'    "{name}": "{t}",\n' for name, t in tiers.items()) + "})\n")
    path.write_text(pattern.sub(lambda m: m.group(1) + body + m.group(2), text))


def save_results(path: Path, rows: list[dict[str, Any]], clean: dict, floor: float,
                 seeds: list[int]) -> dict[str, Any]:
    """Write the measured rows into ``path``, keeping the other pipelines' from an earlier
    run on the same pages, seeds and versions; return every pipeline's entry."""
    from confcal.extras.augment import PIPELINES, tool_versions

    result = {
        "command": "python benchmarks/bench_degradation.py",
        "versions": tool_versions(), "floor": floor, "min_mad": MIN_MAD,
        "local": {k: list(v) for k, v in LOCAL.items()}, "min_ink_mad": MIN_INK_MAD,
        "seeds": seeds,
        "pages": {d: {"design": PAGES[d][0], "invoices": list(PAGES[d][1]),
                      "clean_word_acc": {str(i): round(clean[(d, i)], 4)
                                         for i in PAGES[d][1]}} for d in PAGES},
    }
    entries: dict[str, Any] = {}
    if path.exists():
        earlier = json.loads(path.read_text())
        same = all(earlier.get(k) == result[k] for k in ("versions", "seeds", "pages"))
        if same:
            entries = earlier["pipelines"]
    for r in rows:
        entries[r["pipeline"]] = {
            "tier": r["tier"], "intended_tier": r["intended"], "drop": round(r["drop"], 4),
            "word_acc": round(r["word_acc"], 4), "min_acc": round(r["min_acc"], 4),
            "designs": r["designs"]}
    result["pipelines"] = {n: entries[n] for n in PIPELINES if n in entries}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    return result["pipelines"]  # type: ignore[no-any-return]


PAPER_NAMES = {"custom12": "Custom12", "custom15": "Custom15", "custom22": "Custom22"}


def markdown(path: Path) -> str:
    """The docs' two tables from a results file: the registry, and each design's lowest."""
    from confcal.extras.augment import PHASES, PIPELINES

    result = json.loads(path.read_text())
    lines = ["| name | paper's name | based on | phases (intended tier) | effect | "
             "measured tier (drop) |", "|---|---|---|---|---|---|"]
    for name, r in result["pipelines"].items():
        spec = PIPELINES[name]
        based = f"`{spec.based_on.split('.')[-1]}`" if spec.based_on else ""
        phases = ", ".join(p for p in PHASES if spec[p])
        lines.append(f"| `{name}` | {PAPER_NAMES.get(name, '')} | {based} | {phases} "
                     f"({spec.intended_tier}) | {spec.effect} | **{r['tier']}** "
                     f"({r['drop']:.3f}) |")
    designs = list(result["pages"])
    lines += ["", "| pipeline | " + " | ".join(f"`{d}`" for d in designs) + " |",
              "|---|" + "---:|" * len(designs)]
    for name, r in result["pipelines"].items():
        kind = result["local"].get(name, ["page"])[0]
        key = "mad" if kind == "page" else f"{kind}_mad"
        cells = [f"{r['designs'][d]['min_acc']:.3f} ({r['designs'][d][key]:.1f}"
                 + ("" if kind == "page" else f" {kind}") + ")" for d in designs]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    clean = [f"`{d}` " + ", ".join(f"{a:.3f}" for a in p["clean_word_acc"].values())
             for d, p in result["pages"].items()]
    lines += ["", "Clean pages, word accuracy: " + "; ".join(clean) + "."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--designs", default=",".join(PAGES),
                        help=f"page designs to measure (default: all of {list(PAGES)})")
    parser.add_argument("--pipelines", default=None,
                        help="pipelines to measure (default: all of PIPELINES)")
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)),
                        help="degradation seeds (default 1,2,3)")
    parser.add_argument("--floor", type=float, default=0.5,
                        help="lowest word accuracy any pipeline may leave (default 0.5)")
    parser.add_argument("--sheet", type=Path, default=SHEET,
                        help=f"contact sheet PNG (default {SHEET.relative_to(ROOT)})")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help=f"measurement JSON (default "
                             f"{RESULTS.relative_to(ROOT)})")
    parser.add_argument("--markdown", action="store_true",
                        help="print the docs' tables from --results and stop (no OCR)")
    parser.add_argument("--write-tiers", action="store_true",
                        help="rewrite the registry's measured tiers from --results")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(args.results))
        return 0
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Tesseract's threads, for this process
    from confcal.extras.augment import PIPELINES, degrade
    from confcal.extras.ocr import tesseract_words

    designs = args.designs.split(",")
    names = list(PIPELINES) if args.pipelines is None else args.pipelines.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    unknown = [d for d in designs if d not in PAGES] + [n for n in names if n not in PIPELINES]
    if unknown:
        parser.error(f"--designs must be among {list(PAGES)} and --pipelines among "
                     f"{list(PIPELINES)}; found {unknown}")
    # every design and seed: the rows measured are the benchmark's, and go to --results
    complete = set(designs) == set(PAGES) and seeds == list(SEEDS)
    if args.write_tiers and not complete:
        parser.error("--write-tiers needs every design and seed")
    pages = render_pages(designs)

    first = next(iter(pages.values()))[0]
    cost = worker_cost(first)
    print(f"worker: first call {cost['first_call']:.2f} s (start-up included); a cheap call "
          f"{1000 * cost['through_worker']:.0f} ms through it vs "
          f"{1000 * cost['in_process']:.0f} ms in this process (page "
          f"{first.shape[1]} x {first.shape[0]}, BGR)")

    failures = []
    clean = {}
    for key, (page, printed) in pages.items():
        same = degrade(page, {}, seed=0)
        if not (same.dtype == page.dtype and same.shape == page.shape
                and np.array_equal(same, page)):
            failures.append(f"the empty pipeline changed {key}")
        clean[key] = word_accuracy(printed, [w.text for w in tesseract_words(page)])
    print("clean pages, word accuracy: " + ", ".join(
        f"{d} {i} ({pages[(d, i)][0].shape[1]} x {pages[(d, i)][0].shape[0]}): {a:.3f}"
        for (d, i), a in clean.items()))
    print(f"{len(names)} pipelines x {len(pages)} pages x {len(seeds)} seeds\n")

    header = (f"{'pipeline':<16} {'intended':>8} {'seconds':>7} {'word_acc':>8} {'min':>6} "
              f"{'char_sim':>8} {'ocr_conf':>8} {'drop':>6} {'tier':>8} {'mad':>5} "
              f"{'changed':>7}")
    print(header)
    print("-" * len(header))
    tiles: dict[str, np.ndarray] = {}
    rows = []
    for name in names:
        row = measure(name, PIPELINES[name], pages, clean, seeds, tiles)
        rows.append(row)
        print(f"{name:<16} {row['intended']:>8} {row['seconds']:>7.2f} {row['word_acc']:>8.3f} "
              f"{row['min_acc']:>6.3f} {row['char_sim']:>8.3f} {row['ocr_conf']:>8.3f} "
              f"{row['drop']:>6.3f} {row['tier']:>8} {row['mad']:>5.1f} "
              f"{row['changed']:>7.3f}", flush=True)
        for design, d in row["designs"].items():
            for p in d["pages"]:
                if p["word_acc"] < args.floor:
                    failures.append(f"{name} left word accuracy {p['word_acc']:.3f} < "
                                    f"{args.floor} on {design} invoice {p['invoice']}, "
                                    f"seed {p['seed']}")
            kind = LOCAL.get(name, ("page", ""))[0]
            least = {"page": MIN_MAD, "ink": MIN_INK_MAD, "edge": MIN_MAD}[kind]
            if d[f"{kind}_mad" if kind != "page" else "mad"] < least:
                failures.append(f"{name} changed {design} ({kind}) by less than {least} "
                                "grey levels on average")

    print("\nper design: lowest word accuracy / mean drop / least mean absolute difference")
    print(f"{'pipeline':<16} " + " ".join(f"{d:>22}" for d in designs))
    for row in rows:
        print(f"{row['pipeline']:<16} " + " ".join(
            f"{row['designs'][d]['min_acc']:>8.3f} {row['designs'][d]['drop']:>6.3f} "
            f"{row['designs'][d]['mad']:>6.1f}" for d in designs))
    print(f"\nmeasured tiers of this run: {dict(collections.Counter(r['tier'] for r in rows))}")
    if "demo" in designs and names == list(PIPELINES):
        contact_sheet(tiles, args.sheet)
        print(f"contact sheet: {args.sheet}")
    if complete:
        measured = save_results(args.results, rows, clean, args.floor, seeds)
        counts = collections.Counter(r["tier"] for r in measured.values())
        print(f"results: {args.results} ({len(measured)} of {len(PIPELINES)} pipelines; "
              f"tiers {dict(counts)})")
        if len(measured) == len(PIPELINES) and any(counts[t] < 3 for t in
                                                   ("mild", "moderate", "high")):
            failures.append(f"tiers must hold >= 3 pipelines each; found {dict(counts)}")
        if args.write_tiers:
            if len(measured) != len(PIPELINES):
                parser.error(f"--write-tiers needs every pipeline measured; {args.results} "
                             f"has {len(measured)} of {len(PIPELINES)}")
            write_tiers({name: r["tier"] for name, r in measured.items()})
            print(f"measured tiers written to {REGISTRY}")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    print("all checks passed" if not failures else f"{len(failures)} checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
