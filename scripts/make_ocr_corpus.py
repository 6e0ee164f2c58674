"""Make the OCR demo corpus: demo invoices degraded by the 20 pipelines, read by Tesseract.

Usage (from the repository root; needs the ``augment`` and ``ocr`` extras and Debian's
``tesseract-ocr``)::

    nice python scripts/make_ocr_corpus.py            # rewrite src/confcal/datasets/ocr_data/
    nice python scripts/make_ocr_corpus.py --check    # regenerate and compare, byte for byte
    nice python scripts/make_ocr_corpus.py --check --invoices 8 --pipelines original,stains

What it does, for each of the demo invoices ``INVOICES``
(``confcal.datasets._generate.make_invoice``):

1. draw the invoice (``confcal.extras.augment.render_invoice``: 1700 x 2200, DejaVu Sans);
2. keep it as it is (pipeline ``original``) and degrade it with each of the 20
   ``PIPELINES``, each variant with its own seed derived from ``(SEED, doc_id, pipeline)``;
3. read every page with Tesseract (``confcal.extras.ocr.tesseract_words``, one thread);
4. take the invoice's fields from the OCR words with the **template extractor**
   (:func:`extract`): it knows the printed labels and the table's five columns, and the
   confidence of every value it returns is the product of the confidences of the OCR words
   it is made of (the chance that all of them are right, were Tesseract calibrated and its
   words independent).

The template extractor, step by step: words are grouped into rows by their vertical centre,
straightened by the page's skew (the median slope of Tesseract's own lines), a word joining
the current row when its centre is within 0.6 median word heights of the row's; a field's
row is the one whose first words match the field's printed label best
(``rapidfuzz.fuzz.ratio`` >= 80, case-insensitive), and its value is the rest of that row;
the table header is the first row in which at least 3 of ``Start End Days Program Rate`` are
found (``fuzz.ratio`` >= 70 each); a column starts at its header word, or where the layout
puts it, shifted as the found ones are; the line items are the rows between the header and
the ``Gross total:`` row, each word going to the last column that starts left of it (20 px
of slack); a value is the row's (or cell's) words joined with spaces (words without a letter
or digit are dropped first: speckle and streaks read as marks) (``Days`` without), exactly
as read: the scorer's comparators read ``$1,250.00`` and ``10/07/2024`` themselves. A field
whose label is not found, or a cell with no word, is left out (a miss, with no confidence).

Files (``src/confcal/datasets/ocr_data/``): ``truth.jsonl.gz`` (the invoices),
``predictions/tesseract-template__<pipeline>.jsonl.gz`` (one run per pipeline, every
invoice), ``ocr_words.jsonl.gz`` (every page's words: text, confidence, box, line),
``pages.jsonl.gz`` (every page's pixel fingerprint: the SHA-256 of its pixels and the mean
grey of each 50 x 50 px tile) and ``manifest.json`` (the runs, the seed, and the versions of
Tesseract, Augraphy, OpenCV, Pillow and NumPy that made them: the same versions give the
same bytes). ``confcal demo --corpus ocr`` and ``confcal.datasets.load_demo(corpus="ocr")``
read them without Tesseract.

``--check`` regenerates the selected pages (``--invoices``, ``--pipelines``) into memory and
compares each with the shipped one: its pixels (identical by SHA-256, or how many tiles'
means moved and by how many grey levels at most), its OCR words (how many read
differently) and its template values (how many changed). It prints how many pages are
identical and how many differ, and one line per differing page. On the manifest's
versions every byte must match, the files' too when nothing is left out (exit 1 on any
difference). On other versions it warns, naming them, and accepts the differences within
``TOLERANCE``: per page at most 5% of the OCR words read differently and no tile mean moved
by more than 8 grey levels, per run at most 5% of the template values changed (exit 1
beyond them).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import io
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "confcal" / "datasets" / "ocr_data"
SEED = 2026
INVOICES = (3, 8, 9, 11, 12, 13)
MODEL = "tesseract-template"
HEADER = ("Start", "End", "Days", "Program", "Rate")
COLUMNS = ("StartDate", "EndDate", "Days", "Description", "Rate")
TILE = 50  # px: the side of a tile of a page's pixel fingerprint
# What --check accepts when the installed versions differ from the manifest's (the same
# versions must reproduce every byte): per page, at most this share of the OCR words
# changed, and no tile mean moved by more than this many grey levels; per run, the
# template's values changed on at most this share of the fields.
TOLERANCE = {"words": 0.05, "grey": 8, "values": 0.05}


# ---------------------------------------------------------------------- the extractor
def skew(words: Sequence[Any]) -> float:
    """The page's slope (dy / dx): the median over Tesseract's lines of two or more words."""
    by_line: dict[int, list[Any]] = {}
    for word in words:
        by_line.setdefault(word.line, []).append(word)
    slopes = []
    for line in by_line.values():
        first, last = min(line, key=lambda w: w.box[0]), max(line, key=lambda w: w.box[0])
        dx = (last.box[0] + last.box[2] / 2) - (first.box[0] + first.box[2] / 2)
        if len(line) >= 2 and dx > 0:
            dy = (last.box[1] + last.box[3] / 2) - (first.box[1] + first.box[3] / 2)
            slopes.append(dy / dx)
    return sorted(slopes)[len(slopes) // 2] if slopes else 0.0


def rows_of(words: Sequence[Any]) -> list[list[Any]]:
    """OCR words grouped into rows by vertical centre, each row sorted left to right.

    The centres are first straightened by the page's :func:`skew` (a page scanned 3 degrees
    askew drifts 60 px over a table row, more than a line's height).
    """
    if not words:
        return []
    slope = skew(words)
    heights = sorted(w.box[3] for w in words)
    tolerance = 0.6 * heights[len(heights) // 2]

    def centre(w: Any) -> float:
        return w.box[1] + w.box[3] / 2 - slope * (w.box[0] + w.box[2] / 2)

    rows: list[list[Any]] = []
    centres: list[float] = []
    for word in sorted(words, key=lambda w: (centre(w), w.box[0])):
        if rows and abs(centre(word) - centres[-1]) <= tolerance:
            rows[-1].append(word)
            centres[-1] = sum(map(centre, rows[-1])) / len(rows[-1])
        else:
            rows.append([word])
            centres.append(centre(word))
    return [sorted(row, key=lambda w: w.box[0]) for row in rows]


def _confidence(words: Sequence[Any]) -> float:
    return round(math.prod(w.confidence for w in words), 4)


def _leaf(words: Sequence[Any], joiner: str = " ") -> dict[str, Any]:
    return {"value": joiner.join(w.text for w in words), "confidence": _confidence(words)}


def _best_row(rows: list[list[Any]], label: str, threshold: float) -> tuple[int, int] | None:
    """(row index, words the label takes) of the row starting most like ``label``."""
    from rapidfuzz import fuzz

    n = len(label.split())
    best: tuple[float, int] | None = None
    for i, row in enumerate(rows):
        if len(row) < n:
            continue
        score = fuzz.ratio(" ".join(w.text for w in row[:n]).casefold(), label.casefold())
        if score >= threshold and (best is None or score > best[0]):
            best = (score, i)
    return None if best is None else (best[1], n)


def _header_word(row: Sequence[Any], name: str) -> Any | None:
    from rapidfuzz import fuzz

    best = max(row, key=lambda w: fuzz.ratio(w.text.casefold(), name.casefold()))
    return best if fuzz.ratio(best.text.casefold(), name.casefold()) >= 70 else None


def _header_row(rows: list[list[Any]]) -> int | None:
    """The first row holding at least 3 of the 5 column headers."""
    for i, row in enumerate(rows):
        if sum(_header_word(row, name) is not None for name in HEADER) >= 3:
            return i
    return None


def _column_lefts(row: Sequence[Any], left: Callable[[Any], float]) -> list[float]:
    """Left edge of each column: its header word's, or the layout's shifted like the rest."""
    from confcal.extras.augment import InvoiceLayout

    layout = InvoiceLayout().columns
    found = {j: left(w) for j, name in enumerate(HEADER)
             if (w := _header_word(row, name)) is not None}
    shift = sum(found[j] - layout[j] for j in found) / len(found)
    return [found.get(j, layout[j] + shift) for j in range(len(HEADER))]


def extract(words: Sequence[Any]) -> dict[str, Any]:
    """The invoice's fields from OCR words, by the template (module docstring).

    Examples
    --------
    >>> from confcal.extras.ocr import OCRWord
    >>> words = [OCRWord("Agency:", 0.9, (100, 200, 110, 30)),
    ...          OCRWord("Blue", 0.8, (400, 200, 60, 30)),
    ...          OCRWord("Harbor", 0.5, (470, 202, 90, 30))]
    >>> extract(words)["Agency"]          # 0.8 x 0.5
    {'value': 'Blue Harbor', 'confidence': 0.4}
    """
    from confcal.extras.augment._render import INVOICE_LABELS

    # marks without a letter or digit are speckle and streaks read as text (no printed
    # value lacks one): they would split and merge rows
    words = [w for w in words if any(c.isalnum() for c in w.text)]
    rows = rows_of(words)
    out: dict[str, Any] = {}
    for field, label in INVOICE_LABELS.items():
        found = _best_row(rows, label, 80)
        if found is not None and len(rows[found[0]]) > found[1]:
            out[field] = _leaf(rows[found[0]][found[1]:])
    header = _header_row(rows)
    totals = _best_row(rows, INVOICE_LABELS["GrossTotal"], 80)
    items = []
    if header is not None:
        # straightened x, as rows_of straightens y: a 3-degree skew moves a word 100 px
        # sideways between the header and the last row
        slope = skew(words)

        def left(w: Any) -> float:
            return float(w.box[0] + slope * w.box[1])

        lefts = _column_lefts(rows[header], left)
        end = totals[0] if totals is not None and totals[0] > header else len(rows)
        for row in rows[header + 1:end]:
            cells: list[list[Any]] = [[] for _ in HEADER]
            for word in row:
                column = max((j for j, start in enumerate(lefts) if left(word) >= start - 20),
                             default=0)
                cells[column].append(word)
            item = {name: _leaf(cell, "" if name == "Days" else " ")
                    for name, cell in zip(COLUMNS, cells, strict=True) if cell}
            if item:
                items.append(item)
    out["LineItems"] = items
    return out


# ---------------------------------------------------------------------- the corpus
def variant_seed(doc_id: str, pipeline: str) -> int:
    digest = hashlib.blake2b(f"{SEED}\0{doc_id}\0{pipeline}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % 2**31


def doc_id(invoice: int) -> str:
    return f"ocr-{invoice:03d}"


def pipelines() -> list[str]:
    from confcal.extras.augment import PIPELINES

    return ["original", *PIPELINES]


def read_page(invoice: int, pipeline: str) -> tuple[Any, list[Any]]:
    """Render, degrade (unless original) and read one page: (pixels, OCR words)."""
    import numpy as np

    from confcal.datasets._generate import make_invoice
    from confcal.extras.augment import degrade, render_invoice
    from confcal.extras.ocr import tesseract_words

    page = np.asarray(render_invoice(make_invoice(invoice)))
    if pipeline != "original":
        page = degrade(page, pipeline, seed=variant_seed(doc_id(invoice), pipeline))
    return page, tesseract_words(page)


def fingerprint(page: Any) -> dict[str, Any]:
    """What the corpus keeps of a page's pixels: their SHA-256 and a thumbnail of tile means.

    The thumbnail is the mean grey of every ``TILE`` x ``TILE`` tile (a page's edge that
    does not fill a tile is left out), rounded to an integer, computed with NumPy alone:
    the same pixels give the same thumbnail whatever OpenCV does.
    """
    import base64

    import numpy as np

    gray = np.asarray(page)
    rows, cols = gray.shape[0] // TILE, gray.shape[1] // TILE
    tiles = gray[:rows * TILE, :cols * TILE].reshape(rows, TILE, cols, TILE)
    means = np.rint(tiles.mean(axis=(1, 3), dtype=np.float64)).astype(np.uint8)
    return {"sha256": hashlib.sha256(gray.tobytes()).hexdigest(), "shape": list(gray.shape),
            "tile": TILE, "means": base64.b64encode(means.tobytes()).decode()}


def tile_means(print_: dict[str, Any]) -> Any:
    """The thumbnail of a :func:`fingerprint` as a (rows, columns) uint8 array."""
    import base64

    import numpy as np

    h, w = print_["shape"][:2]
    return np.frombuffer(base64.b64decode(print_["means"]), dtype=np.uint8).reshape(
        h // print_["tile"], w // print_["tile"])


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _gzip(lines: list[bytes]) -> bytes:
    buffer = io.BytesIO()
    # mtime=0 and no file name: the header holds nothing that changes between runs
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(b"".join(lines))
    return buffer.getvalue()


def records(invoices: Sequence[int], names: Sequence[str], progress: bool = True
            ) -> dict[tuple[int, str], tuple[bytes, bytes, bytes]]:
    """(invoice, pipeline) -> (prediction line, words line, pixel fingerprint line)."""
    out = {}
    total = len(invoices) * len(names)
    for i, invoice in enumerate(invoices):
        for j, name in enumerate(names):
            page, words = read_page(invoice, name)
            doc = doc_id(invoice)
            out[(invoice, name)] = (
                _line({"doc_id": doc, "document": extract(words)}),
                _line({"doc_id": doc, "pipeline": name,
                       "words": [[w.text, w.confidence, list(w.box), w.line] for w in words]}),
                _line({"doc_id": doc, "pipeline": name, **fingerprint(page)}))
            if progress:
                done = i * len(names) + j + 1
                print(f"\r{done}/{total} pages read", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return out


def build(read: dict[tuple[int, str], tuple[bytes, bytes, bytes]]) -> dict[str, bytes]:
    """Every file of the corpus: relative path -> bytes."""
    from confcal.datasets._generate import make_invoice
    from confcal.extras.augment import PIPELINES, tool_versions

    invoices = sorted({i for i, _ in read})
    names = [n for n in pipelines() if any(k[1] == n for k in read)]
    files = {"truth.jsonl.gz": _gzip([_line({"doc_id": doc_id(i), "document": make_invoice(i)})
                                      for i in invoices])}
    runs = []
    for name in names:
        file = f"predictions/{MODEL}__{name}.jsonl.gz"
        files[file] = _gzip([read[(i, name)][0] for i in invoices])
        spec = PIPELINES.get(name)
        runs.append({"model": MODEL, "tier": name, "pipeline": "ocr",
                     "confidence_source": "product of Tesseract word confidences",
                     "degradation": "none" if spec is None else spec.effect,
                     "intended_tier": "clean" if spec is None else spec.intended_tier,
                     "file": file})
    files["ocr_words.jsonl.gz"] = _gzip([read[(i, n)][1] for n in names for i in invoices])
    files["pages.jsonl.gz"] = _gzip([read[(i, n)][2] for n in names for i in invoices])
    manifest = {
        "name": "confcal OCR demo corpus",
        "synthetic": True,
        "description": (
            "Synthetic FCC-style invoices (confcal.datasets._generate) drawn as pages, "
            "degraded by the 20 confcal.extras.augment pipelines, read by Tesseract, and "
            "extracted by a template whose confidence is the product of the OCR word "
            "confidences: real engine confidence on real degradation. The 'tier' of a run "
            "is its degradation pipeline; 'intended_tier' is the pipeline's design intent (its "
            "measured tier is the registry's, PIPELINES[name].measured_tier)."),
        "generator": "python scripts/make_ocr_corpus.py",
        "seed": SEED,
        "schema": "confcal.scoring.presets.FCC_INVOICE",
        "documents": len(invoices),
        "invoices": invoices,
        "versions": tool_versions(),
        "truth": "truth.jsonl.gz",
        "words": "ocr_words.jsonl.gz",
        "pages": "pages.jsonl.gz",
        "runs": runs,
    }
    files["manifest.json"] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    return files


def _shipped(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def _leaves(document: dict[str, Any]) -> dict[str, Any]:
    """Every value of an extraction by its path (``LineItems[2].Rate``)."""
    out = {}
    for field, value in document.items():
        if field == "LineItems":
            for k, item in enumerate(value):
                out.update({f"LineItems[{k}].{c}": v for c, v in item.items()})
        else:
            out[field] = value
    return out


def _words_changed(shipped: list[list[Any]], new: list[list[Any]]) -> int:
    """OCR words read differently: the larger side of the two bags' difference."""
    a = collections.Counter(w[0] for w in shipped)
    b = collections.Counter(w[0] for w in new)
    return max(sum((a - b).values()), sum((b - a).values()))


def _compare_page(shipped: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """How one page differs from the shipped one: pixels, OCR words, template values."""
    out: dict[str, Any] = {"n_words": len(shipped["words"]["words"])}
    words_same = shipped["words"] == new["words"]
    out["words_changed"] = 0 if words_same else _words_changed(shipped["words"]["words"],
                                                               new["words"]["words"])
    out["words_moved"] = not words_same and out["words_changed"] == 0
    a, b = _leaves(shipped["prediction"]["document"]), _leaves(new["prediction"]["document"])
    keys = set(a) | set(b)
    out["n_values"] = len(keys)
    # a value is its text (or its absence); its confidence may move on its own
    text = {k: (a.get(k) or {}).get("value") != (b.get(k) or {}).get("value") for k in keys}
    out["values_changed"] = sum(text.values())
    out["confidence_moved"] = max((abs(a[k]["confidence"] - b[k]["confidence"])
                                   for k in keys if not text[k] and k in a and k in b),
                                  default=0.0)
    if shipped["pixels"] is None:
        out["pixels"] = None  # a corpus without pixel fingerprints
    else:
        import numpy as np

        old, now = tile_means(shipped["pixels"]), tile_means(new["pixels"])
        moved = np.abs(old.astype(int) - now.astype(int))
        out["pixels"] = {"same": shipped["pixels"]["sha256"] == new["pixels"]["sha256"],
                         "tiles": int(old.size), "tiles_changed": int((moved > 0).sum()),
                         "grey": int(moved.max())}
    out["identical"] = words_same and a == b and (
        out["pixels"] is None or out["pixels"]["same"])
    return out


def _describe(diff: dict[str, Any]) -> str:
    parts = []
    pixels = diff["pixels"]
    if pixels is None:
        parts.append("pixels: no fingerprint shipped")
    elif not pixels["same"]:
        parts.append(f"pixels differ: the mean of {pixels['tiles_changed']} of "
                     f"{pixels['tiles']} {TILE}-px tiles moved, by at most {pixels['grey']} "
                     "grey levels")
    else:
        parts.append("pixels identical")
    parts.append(f"OCR words: {diff['words_changed']} of {diff['n_words']} read differently"
                 + (" (same words, other boxes or confidences)" if diff["words_moved"] else ""))
    parts.append(f"template values: {diff['values_changed']} of {diff['n_values']} changed, "
                 f"the others' confidence by at most {diff['confidence_moved']:.4f}")
    return "; ".join(parts)


def _within(diff: dict[str, Any]) -> bool:
    pixels = diff["pixels"]
    return (diff["words_changed"] <= TOLERANCE["words"] * diff["n_words"]
            and (pixels is None or pixels["grey"] <= TOLERANCE["grey"]))


def check(invoices: Sequence[int], names: Sequence[str]) -> int:
    """Regenerate the pages chosen and compare them with the shipped corpus (docstring)."""
    from confcal.extras.augment import tool_versions

    manifest = json.loads((DATA / "manifest.json").read_text())
    installed = tool_versions()
    differ = {k: (manifest["versions"].get(k), v) for k, v in installed.items()
              if manifest["versions"].get(k) != v}
    if differ:
        print("warning: installed versions differ from the manifest's (shipped -> "
              "installed): " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in differ.items())
              + "; the pages are compared with the tolerances of TOLERANCE "
              f"({TOLERANCE})", file=sys.stderr)
    shipped_docs = manifest["invoices"]
    runs = {r["tier"]: r for r in manifest["runs"]}
    missing = [n for n in names if n not in runs]
    if missing:
        print(f"differs: the shipped corpus has no run for {missing}", file=sys.stderr)
        return 1
    words = {(w["doc_id"], w["pipeline"]): w for w in _shipped(DATA / manifest["words"])}
    pixels = {(p["doc_id"], p["pipeline"]): p
              for p in _shipped(DATA / manifest.get("pages", "pages.jsonl.gz"))}
    predictions = {name: {p["doc_id"]: p for p in _shipped(DATA / runs[name]["file"])}
                   for name in names}
    read = records(invoices, names)
    diffs = {}
    for (invoice, name), (prediction, page_words, page_pixels) in read.items():
        doc = doc_id(invoice)
        shipped = {"prediction": predictions[name][doc], "words": words[(doc, name)],
                   "pixels": pixels.get((doc, name))}
        new = {"prediction": json.loads(prediction), "words": json.loads(page_words),
               "pixels": json.loads(page_pixels)}
        diffs[(doc, name)] = _compare_page(shipped, new)
    problems = []
    for (doc, name), diff in diffs.items():
        if not diff["identical"]:
            print(f"differs: {doc} under {name}: {_describe(diff)}", file=sys.stderr)
    for name in names:
        changed = sum(d["values_changed"] for (_, n), d in diffs.items() if n == name)
        total = sum(d["n_values"] for (_, n), d in diffs.items() if n == name)
        if changed and (not differ or changed > TOLERANCE["values"] * total):
            problems.append(f"run {name}: {changed} of {total} template values changed")
    if set(invoices) == set(shipped_docs) and list(names) == pipelines():
        for relative, data in build(read).items():
            shipped_bytes = (DATA / relative).read_bytes() if (DATA / relative).exists() else b""
            if relative == "manifest.json" and differ:
                # its versions differ by definition: the rest of it must not
                new, old = json.loads(data), json.loads(shipped_bytes)
                new.pop("versions"), old.pop("versions")
                if new != old:
                    problems.append("file manifest.json (besides its versions)")
            elif shipped_bytes != data and not differ:
                problems.append(f"file {relative}")
    n_same = sum(d["identical"] for d in diffs.values())
    outside = [key for key, d in diffs.items() if not d["identical"]
               and (not differ or not _within(d))]
    problems += [f"{doc} under {name}" for doc, name in outside]
    print(f"checked {len(diffs)} pages: {n_same} identical, {len(diffs) - n_same} differ"
          + ("" if not differ else f", {len(outside)} outside the tolerances"))
    for problem in problems:
        print(f"outside: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate and compare with the shipped files; write nothing")
    parser.add_argument("--invoices", default=",".join(map(str, INVOICES)),
                        help="with --check: the invoices to regenerate (default: all)")
    parser.add_argument("--pipelines", default=None,
                        help="with --check: the pipelines to regenerate (default: all, "
                             "original included)")
    parser.add_argument("--out", type=Path, default=DATA, help=f"folder (default {DATA})")
    args = parser.parse_args(argv)
    # Tesseract's OpenMP threads: one, so that the words never depend on scheduling
    os.environ["OMP_THREAD_LIMIT"] = "1"
    invoices = [int(i) for i in args.invoices.split(",")]
    names = pipelines() if args.pipelines is None else args.pipelines.split(",")
    unknown = [n for n in names if n not in pipelines()]
    if unknown or any(i not in INVOICES for i in invoices):
        parser.error(f"--pipelines must be among {pipelines()} and --invoices among "
                     f"{list(INVOICES)}; found {unknown or invoices}")
    if args.check:
        return check(invoices, names)
    if invoices != list(INVOICES) or names != pipelines():
        parser.error("--invoices and --pipelines choose what --check regenerates; writing "
                     "the corpus takes all of them")
    files = build(records(invoices, names))
    for relative, data in files.items():
        path = args.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    size = sum(len(d) for d in files.values())
    print(f"wrote {len(files)} files, {size / 1e3:.0f} kB, to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
