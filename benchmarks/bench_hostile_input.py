"""Benchmark: time and peak memory of reading hostile inputs, against size.

Usage (from the repository root)::

    python benchmarks/bench_hostile_input.py            # every case, three sizes each
    python benchmarks/bench_hostile_input.py --quick    # the two smaller sizes

Each case is run in a child process (``python benchmarks/bench_hostile_input.py --case
NAME --size N``), so that its peak resident set size (``ru_maxrss`` from ``os.wait4``) is
its own; the table gives it above the child's resident size after importing confcal and
building the input (``base``), and the wall time of the read alone. The inputs are built
in memory or in a temporary folder by the child and are what the issue describes, scaled:

* ``nul-gz``: one record, then N bytes of NUL in a .gz (one "line"); the issue's 10 GiB of
  NUL was read whole (6.6 GB, then a MemoryError);
* ``newline-gz``: one record, N newlines, one record, in a .gz (1 MB of .gz newlines took
  245 s); ``newline-gz-old`` is the line-by-line loop the reader replaced, for comparison;
* ``shuffled-gz``: two records out of truth order with N newlines between them, paired with
  a truth file (the index's temporary copy of a 2 MB .gz was 2 GiB); ``temp`` is its size;
* ``deep``: a record nesting N lists (100k gave a RecursionError);
* ``long-int``: a record holding an N-digit integer;
* ``long-value``: two different N-character values compared by ``Text`` with the value limit
  raised to N (the default limit, 10,000, refuses longer ones at once);
* ``empty-items``: one document of N line items a side with empty values (no characters,
  so ``max_pair_chars`` passes; 5,000 a side took 40 s and 3.1 GB), scored with
  ``max_item_pairs`` raised to N x N (``empty-items-bounded``: the default limit, which
  refuses N x N > 10**6 before any comparison);
* ``dup-key``: a record of N keys whose last repeats the first (found by the decoder, then
  located by reading the record once more with positions: the error path only).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MiB = 1 << 20
SIZES = {
    "nul-gz": (64 * MiB, 256 * MiB, 1024 * MiB),
    "newline-gz": (16 * MiB, 64 * MiB, 256 * MiB),
    "newline-gz-old": (4 * MiB, 16 * MiB, 64 * MiB),
    "shuffled-gz": (16 * MiB, 64 * MiB, 256 * MiB),
    "deep": (10_000, 100_000, 1_000_000),
    "long-int": (10_001, 100_000, 1_000_000),
    "long-value": (10_000, 30_000, 100_000),
    "dup-key": (10_000, 100_000, 800_000),
    "empty-items": (300, 1_000, 2_000),
    "empty-items-bounded": (1_000, 5_000, 20_000),
}


def _record(doc_id: str, document: Any) -> bytes:
    return json.dumps({"doc_id": doc_id, "document": document}).encode() + b"\n"


def _gzip_stream(path: Path, parts: list[tuple[bytes, int]]) -> None:
    """Write each (bytes, repeat) part to a .gz without holding the repeats in memory."""
    with gzip.open(path, "wb", compresslevel=1) as out:
        for chunk, repeat in parts:
            block = chunk * max(1, min(repeat, MiB // max(1, len(chunk))))
            left = repeat * len(chunk)
            while left > 0:
                out.write(block[:left])
                left -= len(block[:left])


def run_case(name: str, size: int, folder: Path) -> dict[str, Any]:
    """Build the input, then time the read; returns what the table shows."""
    from confcal.exceptions import ValidationError
    from confcal.scoring import score_documents
    from confcal.scoring._documents import _PredictionIndex, paired_documents
    from confcal.scoring.comparators import Text
    from confcal.scoring.io import InputLimits, iter_documents, read_documents
    from confcal.scoring.schema import Field, Schema

    extra: dict[str, Any] = {}
    if name == "nul-gz":
        path = folder / "nul.jsonl.gz"
        _gzip_stream(path, [(_record("a", {}), 1), (b"\0", size)])
        read = lambda: list(iter_documents(path))  # noqa: E731
    elif name in ("newline-gz", "newline-gz-old"):
        path = folder / "nl.jsonl.gz"
        _gzip_stream(path, [(_record("a", {}), 1), (b"\n", size), (_record("b", {}), 1)])
        if name == "newline-gz":
            read = lambda: list(iter_documents(path))  # noqa: E731
        else:
            def read() -> list[bytes]:  # a line-at-a-time reader, for comparison
                with gzip.open(path, "rb") as fh:
                    return [raw for raw in fh if raw.strip()]
    elif name == "shuffled-gz":
        truth = folder / "truth.jsonl"
        truth.write_bytes(_record("a", {"Agency": "A"}) + _record("b", {"Agency": "B"}))
        path = folder / "pred.jsonl.gz"
        _gzip_stream(path, [(_record("b", {"Agency": "B"}), 1), (b"\n", size),
                            (_record("a", {"Agency": "A"}), 1)])
        read = lambda: list(paired_documents(truth, path))  # noqa: E731
        index = _PredictionIndex(path, InputLimits())
        index._fh.seek(0, 2)
        extra["temp"] = index._fh.tell()
        index.close()
    elif name == "deep":
        path = folder / "deep.jsonl"
        path.write_bytes(b'{"doc_id": "a", "document": {"x": ' + b"[" * size + b"]" * size
                         + b"}}\n")
        read = lambda: read_documents(path)  # noqa: E731
    elif name == "long-int":
        path = folder / "int.jsonl"
        path.write_bytes(b'{"doc_id": "a", "document": {"x": ' + b"7" * size + b"}}\n")
        read = lambda: read_documents(path)  # noqa: E731
    elif name == "dup-key":
        path = folder / "dup.jsonl"
        keys = ", ".join(f'"k{i}": {i}' for i in range(size))
        path.write_text(f'{{"doc_id": "a", "document": {{{keys}, "k0": -1}}}}\n')
        read = lambda: read_documents(path)  # noqa: E731
    elif name == "long-value":
        schema = Schema({"Agency": Field(Text())})
        truth = {"a": {"Agency": "ab" * (size // 2)}}
        pred = {"a": {"Agency": "ba" * (size // 2)}}
        limits = InputLimits(max_value_chars=size)
        read = lambda: score_documents(schema, truth, pred, limits=limits)  # noqa: E731
    elif name in ("empty-items", "empty-items-bounded"):
        from confcal.scoring.presets import FCC_INVOICE

        items = [{"Description": ""} for _ in range(size)]
        truth, pred = {"a": {"LineItems": items}}, {"a": {"LineItems": items}}
        limits = InputLimits(max_item_pairs=size * size) if name == "empty-items" \
            else InputLimits()
        read = lambda: score_documents(FCC_INVOICE, truth, pred, limits=limits)  # noqa: E731
    else:
        raise SystemExit(f"unknown case {name!r}")
    started = time.perf_counter()
    try:
        read()
        outcome = "read"
    except ValidationError as exc:
        outcome = str(exc).split(": ", 1)[1][:60]
    extra.update(seconds=time.perf_counter() - started, outcome=outcome)
    if name.endswith("-gz"):
        extra["gz"] = path.stat().st_size
    return extra


def child(name: str, size: int) -> None:
    import resource

    with tempfile.TemporaryDirectory() as tmp:
        # the import and the input are the base: ru_maxrss before the read
        import confcal.scoring.io  # noqa: F401

        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = run_case(name, size, Path(tmp))
        result["base_kib"] = base
    print(json.dumps(result))


def measure(name: str, size: int) -> dict[str, Any]:
    proc = subprocess.Popen([sys.executable, __file__, "--case", name, "--size", str(size)],
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"{name} {size}: the child failed ({status})")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["peak_mib"] = (usage.ru_maxrss - result["base_kib"]) / 1024
    return result


def _size(name: str, size: int) -> str:
    if "-gz" in name:
        return f"{size / MiB:,.0f} MiB"
    return f"{size:,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the two smaller sizes")
    parser.add_argument("--case")
    parser.add_argument("--size", type=int)
    args = parser.parse_args()
    if args.case:
        child(args.case, args.size)
        return
    print("| case | size | .gz | seconds | peak MiB above base | temp copy | outcome |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, sizes in SIZES.items():
        for size in sizes[:2] if args.quick else sizes:
            r = measure(name, size)
            gz = f"{r['gz'] / 1024:,.0f} KiB" if "gz" in r else ""
            temp = f"{r['temp']:,} B" if "temp" in r else ""
            print(f"| {name} | {_size(name, size)} | {gz} | {r['seconds']:.3f} | "
                  f"{max(r['peak_mib'], 0):.1f} | {temp} | {r['outcome']} |", flush=True)


if __name__ == "__main__":
    main()
