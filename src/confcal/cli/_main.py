"""The ``confcal`` command: score extractions, compare runs, write the report.

::

    confcal demo   [-o DIR] [--n-resamples N] [--budgets B,...] [--n-bins M] [--min-count C]
                   [--seed S] [--extra NAME,...]
    confcal score  --schema fcc-invoice|SCHEMA.json --truth T --pred P [--meta KEY=VALUE ...]
                   [--strict] [--allow-case-mismatch] -o OUT.parquet|OUT.csv
    confcal report ENTITIES... [--by COL,...] [--budgets B,...] [--n-bins M] [--min-count C]
                   [--n-resamples N] [--seed S] [--extra NAME,...] [--sketch]
                   [--baseline NAME [--baseline-on error|intersection]] [--title TEXT]
                   -o DIR
    confcal qa     --records R.jsonl|--docbench DIR|--demo [...] -o DIR

One vocabulary: ``-o/--output`` names what every subcommand writes, and the options are the
library's keywords (``--n-bins`` is ``n_bins``, ``--n-resamples`` is ``n_resamples``,
``--min-count`` is ``min_count``, ``--extra`` is ``extra``).

Every subcommand also takes ``--debug`` (a traceback with errors) and ``--progress`` (a
progress bar even when stderr is not a terminal). Exit codes: 0 success, 1 a data error
(unreadable or invalid input: the message says which file, line and rule; nothing is
left half-written), 2 a usage error (bad options). ``python -m confcal`` is the same
command. See docs/cli.md.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._options import (
    budgets,
    columns,
    error_message,
    int_at_least,
    positive,
    terminal_output,
)
from ..exceptions import ConfcalError, ValidationError
from ..qa._command import add_qa_parser, run_qa

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..scoring._documents import Read

__all__ = ["main"]

PROGRESS_MIN_DOCUMENTS = 300
"""On a terminal, a progress bar is shown when scoring more documents than this."""

_CHUNK = 100  # documents per scoring call while a progress bar is shown
# documents per streamed chunk of `confcal score` (one Parquet row group each): large
# enough that per-call overhead vanishes, small enough that memory stays a few MB
_STREAM_CHUNK = 2000
_SCHEMAS = ("fcc-invoice",)
_ENTITY_SUFFIXES = (".parquet", ".csv", ".csv.gz")
_DEMO_NOTE = ("The demo corpus is synthetic: 75 invented FCC-style invoices and four "
              "simulated extractors at four degradation tiers (confcal.datasets). No real "
              "document, advertiser or model is involved.")
_OCR_NOTE = ("The OCR corpus (model tesseract-template, one run per degradation pipeline; "
             "'original' is the undegraded page): 6 of the invoices drawn as pages, degraded "
             "by the 20 confcal.extras.augment pipelines and read by Tesseract 5.3; fields "
             "taken by a template, each with the product of its OCR word confidences "
             "(scripts/make_ocr_corpus.py).")


class _DataError(ConfcalError):
    """An input problem found by the command itself (a file, a line, a doc id)."""


# ----------------------------------------------------------------------------- parsing
def _budgets_or_default(budgets: tuple[float, ...] | None) -> tuple[float, ...]:
    """``--budgets``, or :data:`confcal.metrics.DEFAULT_BUDGETS` when it was not given."""
    from ..metrics._metrics import DEFAULT_BUDGETS

    return DEFAULT_BUDGETS if budgets is None else budgets


def _size(text: str) -> int:
    """A byte count: an integer, or one with a binary suffix K, M or G (16M = 16 MiB)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    try:
        value = int(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a positive byte count such as 16777216, 16M or 4G; found {text!r}")
    return value


def _depth(text: str) -> int:
    from .._validation import MAX_DEPTH_CEILING

    value = int_at_least(1)(text)
    if value > MAX_DEPTH_CEILING:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_DEPTH_CEILING} (Python's JSON parser recurses); found {text!r}")
    return value


def _meta(text: str) -> tuple[str, str]:
    from ..scoring._result import ENTITY_COLUMNS

    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE; found {text!r}")
    if key in ENTITY_COLUMNS:
        raise argparse.ArgumentTypeError(
            f"KEY must not be an entity-table column ({', '.join(ENTITY_COLUMNS)}); "
            f"found {key!r}")
    return key, value


def _entities_path(text: str) -> Path:
    if not text.lower().endswith(_ENTITY_SUFFIXES):
        raise argparse.ArgumentTypeError(
            f"must end in {', '.join(_ENTITY_SUFFIXES)}; found {text!r}")
    return Path(text)


def _extra_metrics(text: str) -> tuple[str, ...]:
    """``--extra``: comma-separated names of confcal.metrics.EXTRA_METRICS, each once."""
    from ..metrics._report import EXTRA_METRICS

    names = tuple(n.strip() for n in text.split(","))
    for name in names:
        if name not in EXTRA_METRICS:
            raise argparse.ArgumentTypeError(
                f"{name!r} is not one of {', '.join(EXTRA_METRICS)}")
    if len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"each name once; found {text!r}")
    return names


def _parser() -> argparse.ArgumentParser:
    from .._version import __version__
    from ._qa_run import QA_RUN_HELP

    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: given before or after the subcommand, neither default overwrites the other
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")
    common.add_argument("--progress", action="store_true", default=argparse.SUPPRESS,
                        help="show a progress bar on stderr even when it is not a terminal")
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog="confcal", parents=[common],
        description="Can you trust the confidence? Score document extractions against "
                    "ground truth and compare how well each run's confidence separates "
                    "right from wrong (WOA, F1, AUROC, ECE, Brier, ECARB).",
        epilog="Exit codes: 0 success, 1 data error, 2 usage error. `confcal COMMAND "
               "--help` lists a command's options; `python -m pydoc confcal` documents the "
               "library.")
    parser.add_argument("--version", action="version", version=f"confcal {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def report_options(p: argparse.ArgumentParser, bootstrap: int) -> None:
        # default None: the library's DEFAULT_BUDGETS, read when used (no numpy at start-up)
        p.add_argument("--budgets", type=budgets, default=None, metavar="B,...",
                       help="ECARB review budgets (default 0.1,0.3, the library's "
                            "DEFAULT_BUDGETS)")
        p.add_argument("--n-bins", type=int_at_least(1), default=5, metavar="M",
                       help="equal-mass bins of the table's ECE (default 5, the paper's); "
                            "the reliability diagrams draw 10 uniform bins and name both ECEs")
        p.add_argument("--min-count", type=int_at_least(0), default=30, metavar="C",
                       help="reliability bins with fewer predictions are not drawn "
                            "(default 30)")
        p.add_argument("--n-resamples", type=int_at_least(0), default=bootstrap,
                       metavar="N", help=f"bootstrap resamples of documents for the "
                                         f"intervals, 0 for none (default {bootstrap})")
        p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
        # default None: the library's MAX_WORK, read when used (no numpy at start-up)
        p.add_argument("--max-work", type=positive(float, "a number of work units"),
                       default=None, metavar="N",
                       help="most work the metrics may take, in rows times resamples "
                            "(default 2e10, about four minutes; bins and budgets count too: "
                            "docs/cli.md); a larger request is refused before it starts")
        p.add_argument("--extra", type=_extra_metrics, default=(), metavar="NAME,...",
                       help="more columns, any of confcal.metrics.EXTRA_METRICS: "
                            "debiased_ece, smooth_ece, log_loss, aurc, e_aurc, "
                            "brier_reliability, brier_resolution, brier_uncertainty, "
                            "calibration_slope, calibration_intercept, calibration_p (the "
                            "consistency test with a document effect; needs --n-resamples "
                            ">= 1)")

    demo = commands.add_parser(
        "demo", allow_abbrev=False, parents=[common],
        help="score the bundled synthetic corpus and write the report",
        description="Score the four simulated extractors of the bundled synthetic corpus at "
                    "every degradation tier, print the comparison table and write the full "
                    "report.")
    demo.add_argument("-o", "--output", type=Path, default=Path("confcal-report"),
                      metavar="DIR", help="report folder (default ./confcal-report)")
    demo.add_argument("--corpus", choices=("synthetic", "ocr"), default="synthetic",
                      help="synthetic (default): the four simulated extractors; ocr: "
                           "Tesseract on pages degraded by the 20 pipelines, with the "
                           "simulated extractors next to it (no Tesseract needed)")
    report_options(demo, bootstrap=200)

    score = commands.add_parser(
        "score", allow_abbrev=False, parents=[common],
        help="score predicted documents into an entity table",
        description="Score predicted documents against ground truth and write the entity "
                    "table (one row per scored leaf). T and P are JSONL files, one "
                    '{"doc_id": ..., "document": {...}} per line (.gz allowed), or folders '
                    "of <doc_id>.json files.")
    score.add_argument("--schema", required=True, metavar="NAME|FILE",
                       help=f"a built-in schema ({', '.join(_SCHEMAS)}) or a schema JSON file")
    score.add_argument("--truth", required=True, type=Path, metavar="T",
                       help="ground-truth documents")
    score.add_argument("--pred", required=True, type=Path, metavar="P",
                       help="predicted documents")
    score.add_argument("--meta", type=_meta, action="append", default=[],
                       metavar="KEY=VALUE", help="a column for every row, e.g. model=gpt-x "
                                                 "(repeatable)")
    score.add_argument("--strict", action="store_true",
                       help="fail on a truth document without prediction or an unknown "
                            "predicted field instead of counting them")
    score.add_argument("--allow-case-mismatch", action="store_true",
                       help="count a predicted field named as a schema field in another case "
                            "(grosstotal for GrossTotal) as an unknown field, ignored, instead "
                            "of failing")
    score.add_argument("--conventions", choices=("confcal", "stickler-1.0"), default="confcal",
                       help="scoring rules: confcal's (default) or stickler-1.0, a reproduction "
                            "of stickler-eval 1.0.0 (the ConfBench paper's scorer) for "
                            "comparing with published numbers")
    score.add_argument("-o", "--output", required=True, type=_entities_path, metavar="OUT",
                       help="entity table to write: .parquet, .csv or .csv.gz")
    score.add_argument("--allow-empty", action="store_true",
                       help="accept a prediction file or folder without documents (every truth "
                            "value is then scored as missing) instead of failing")
    limits = score.add_argument_group(
        "input limits", "hostile or broken input fails with the file and line instead of "
                        "exhausting memory or time; raise a limit for a real input beyond it")
    limits.add_argument("--max-line-bytes", type=_size, default=16 << 20, metavar="N",
                        help="longest JSONL line or per-document JSON file (default 16M)")
    limits.add_argument("--max-decompressed-bytes", type=_size, default=4 << 30, metavar="N",
                        help="most bytes a .gz input may decompress to (default 4G)")
    limits.add_argument("--max-depth", type=_depth, default=64, metavar="N",
                        help="deepest nesting of JSON objects and lists (default 64, at most "
                             "500)")
    limits.add_argument("--max-value-chars", type=int_at_least(1), default=10_000,
                        metavar="N", help="longest string value compared; text comparison is "
                                          "quadratic in length (default 10000)")
    limits.add_argument("--max-pair-chars", type=int_at_least(1), default=10**11,
                        metavar="N", help="most character pairs one document's line items "
                                          "may cost to compare, all against all (default "
                                          "1e11, a few seconds)")
    limits.add_argument("--max-item-pairs", type=int_at_least(1), default=10**6,
                        metavar="N", help="most pairs of truth and predicted items one "
                                          "document's line-item field may make (default "
                                          "1e6, 0.4 s and 120 MB)")

    report = commands.add_parser(
        "report", allow_abbrev=False, parents=[common],
        help="compare runs from entity tables and write the report",
        description="Compare runs from one or more entity tables (from confcal score): the "
                    "metrics table with bootstrap intervals, reliability diagrams, AUROC vs. "
                    "WOA, ECARB vs. budget, in report.html, report.md, metrics.csv and PNGs.")
    report.add_argument("entities", nargs="+", type=_entities_path, metavar="ENTITIES",
                        help="entity tables (.parquet, .csv, .csv.gz)")
    report.add_argument("--by", type=columns("model,tier"), default=None, metavar="COL,...",
                        help="columns that tell runs apart (default: every metadata column)")
    report_options(report, bootstrap=1000)
    report.add_argument("--sketch", action="store_true",
                        help="stream the tables (Parquet row groups, CSV chunks), reading only "
                             "the needed columns, and compute the metrics from per-run "
                             "calibration sketches in bounded memory: writes metrics.csv and "
                             "report.md only (no intervals, no figures: they need the rows)")
    report.add_argument("--sample-weight", default=None, metavar="COL",
                        help="with --sketch: a column of per-row weights for the calibration "
                             "metrics (finite, >= 0), as calibration_report(sample_weight=)")
    report.add_argument("--baseline", default=None, metavar="NAME",
                        help="compare every run with the run whose first --by column is NAME "
                             "(and whose other --by columns are the same), on the documents "
                             "both have: paired differences with intervals and p-values in the "
                             "table and report.html (needs --n-resamples >= 1)")
    report.add_argument("--baseline-on", choices=("error", "intersection"), default="error",
                        help="a document that only one of two compared runs has: an error "
                             "(default), or left out and counted (intersection)")
    report_limits = report.add_argument_group(
        "input limits", "a table beyond one fails with the file and the limit instead of "
                        "exhausting memory; raise a limit for a real table beyond it")
    report_limits.add_argument("--max-rows", type=int_at_least(1), default=10**7, metavar="N",
                               help="most rows of the tables read whole, all of them "
                                    "together (default 1e7 as 10000000; --sketch streams "
                                    "any number)")
    report_limits.add_argument("--max-decompressed-bytes", type=_size, default=4 << 30,
                               metavar="N", help="most bytes of CSV text (after "
                                                 "decompression) or decoded Parquet columns "
                                                 "a table may hold (default 4G)")
    report.add_argument("--title", default="confcal report", help="report title")
    report.add_argument("-o", "--output", type=Path, required=True, metavar="DIR",
                        help="report folder")
    # DocBench-style QA evaluation lives with confcal.qa.docqa; it brings its own options
    add_qa_parser(commands, parents=[common])
    # `qa run` is dispatched before this parser is built (it needs the extras and has its
    # own parser); listed here so that `confcal --help` names every command
    commands.add_parser("qa run", add_help=False, help=QA_RUN_HELP)
    return parser


# ---------------------------------------------------------------------------- helpers
class _Console:
    """Messages on stderr, and a progress bar when one is wanted and tqdm is there."""

    def __init__(self, stream: TextIO, forced: bool, raw: TextIO | None = None) -> None:
        # raw: the stream under the command's terminal_output (the bar's carriage returns
        # are its own; a message's characters are data and go through the escaping stream)
        self.stream, self.forced, self.raw = stream, forced, raw or stream

    def say(self, message: str) -> None:
        print(f"confcal: {message}", file=self.stream, flush=True)

    def bar(self, total: int | None, unit: str, desc: str | None = None,
            minimum: int = PROGRESS_MIN_DOCUMENTS) -> Any:
        # total None: a stream of unknown length, shown on a terminal whatever its size;
        # a bar only on a terminal (or with --progress), never in a log or a pipe
        wanted = self.forced or (self.stream.isatty() and (
            total is None or total > minimum))
        if not wanted:
            return None
        try:
            from tqdm import tqdm
        except ImportError:
            if self.forced:
                self.say("no progress bar: tqdm is not installed (pip install tqdm, or pip "
                         "install -e '.[cli]' in a clone of confcal)")
            return None
        return tqdm(total=total, unit=unit, desc=desc, file=self.raw, leave=False,
                    dynamic_ncols=True)

    def stages(self, *, desc: str, total: int) -> Any:
        """A bar for one stage of write_report (its ``progress``): every stage that takes
        more than a second gets one; a stage of a few steps is no reason to hide it."""
        return self.bar(total, "step", desc, minimum=0)


def _load_schema(name: str) -> Any:
    from ..scoring.presets import FCC_INVOICE
    from ..scoring.schema import Schema

    if name == "fcc-invoice":
        return FCC_INVOICE
    path = Path(name)
    if not path.is_file():
        raise _DataError(f"--schema must be {' or '.join(_SCHEMAS)} or a schema JSON file; "
                         f"found {name!r}, which is neither")
    try:
        return Schema.from_json(path.read_text(encoding="utf-8"))
    except (ValidationError, UnicodeDecodeError) as exc:
        raise _DataError(f"{path}: {exc}") from None


def _place(source: str, line: int | None) -> str:
    return source if line is None else f"{source}, line {line}"


def _stream_error(exc: ValidationError, recent: Mapping[Any, Read]) -> str:
    """A streamed scoring error, with where its document was read.

    Built from the error's attributes, never from its message: an error about a document
    (``doc_id`` set, no ``source``: the scorer's, which never sees a file) gets the file
    and line of that document's truth and prediction, from the records read. Errors that
    already have a ``source`` come from the readers, whose messages name file and line.
    """
    message = error_message(exc)
    if exc.source is not None or exc.doc_id is None:
        return message
    try:
        read = recent.get(exc.doc_id)
    except TypeError:  # an unhashable doc id: not one read from a file
        return message
    if read is None:
        return message
    found = [f"truth at {_place(read.truth.source, read.truth.line)}"]
    if read.prediction is not None:
        found.append(f"prediction at {_place(read.prediction.source, read.prediction.line)}")
    return f"{message} ({'; '.join(found)})"


def _chunks(ids: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


# ---------------------------------------------------------------------------- commands
_NAMES_SHOWN = 5  # unknown predicted field names a note lists


def _score(args: argparse.Namespace, console: _Console) -> int:
    import numpy as np

    from .._files import check_output_file
    from ..scoring._documents import paired_documents
    from ..scoring._result import OUTCOMES
    from ..scoring._scoring import extraction_signature
    from ..scoring._stream import score_documents_iter
    from ..scoring._tables import ChunkWriter

    # before any reading or scoring: a folder named like a table, or a missing folder, fails
    # now, not after the whole input was scored (and no folder is created for a typo)
    check_output_file(args.output, "entity table")
    schema = _load_schema(args.schema)
    meta = dict(args.meta)
    started = time.perf_counter()
    # Streamed: one chunk of documents and its rows in memory at a time, each chunk a
    # Parquet row group (or CSV rows); see docs/scaling.md for what else grows with size.
    recent: dict[Any, Read] = {}  # doc_id -> where its truth and prediction were read
    from .._validation import InputLimits

    limits = InputLimits(max_line_bytes=args.max_line_bytes,
                         max_decompressed_bytes=args.max_decompressed_bytes,
                         max_depth=args.max_depth, max_value_chars=args.max_value_chars,
                         max_pair_chars=args.max_pair_chars,
                         max_item_pairs=args.max_item_pairs)
    pairs = paired_documents(args.truth, args.pred, recent, keep=2 * _STREAM_CHUNK,
                             allow_empty=args.allow_empty, limits=limits)
    writer = ChunkWriter(args.output)
    bar = console.bar(None, "doc")
    c: dict[str, int] = {}
    unknown: dict[str, None] = {}  # the unknown predicted field names, in the order met
    woa_num = woa_den = 0.0
    try:
        for result in score_documents_iter(
                schema, pairs, chunk_size=_STREAM_CHUNK, strict=args.strict,
                allow_case_mismatch=args.allow_case_mismatch,
                metadata=(lambda _doc_id: meta) if meta else None,
                conventions=args.conventions, limits=limits, allow_empty=args.allow_empty):
            writer.write(result.entities)
            for key, value in result.counts.items():
                c[key] = c.get(key, 0) + value
            unknown.update(dict.fromkeys(result.unknown_field_names))
            e = result.entities
            evaluated = (e["outcome"] != "TN").to_numpy()
            w = e["weight"].to_numpy(dtype=np.float64)[evaluated]
            woa_num += float(np.dot(w, e["similarity"].to_numpy(dtype=np.float64)[evaluated]))
            woa_den += float(w.sum())
            if bar is not None:
                bar.update(result.counts["documents"])
        path = writer.close()
    except ValidationError as exc:
        writer.abort()
        raise _DataError(_stream_error(exc, recent)) from None
    except BaseException:
        writer.abort()
        raise
    finally:
        if bar is not None:
            bar.close()
    tp, fd, fa, fn = (c.get(k, 0) for k in OUTCOMES[:4])
    rows = sum(c.get(k, 0) for k in OUTCOMES)
    woa = f"{woa_num / woa_den:.3f}" if woa_den > 0 else "n/a"
    f1_den = 2 * tp + 2 * fd + fa + fn
    f1 = f"{2 * tp / f1_den:.3f}" if f1_den else "n/a"
    print(f"scored {c['documents']:,} documents in {time.perf_counter() - started:.1f} s: "
          f"{rows:,} entities (TP {tp:,}, FD {fd:,}, FA {fa:,}, "
          f"FN {fn:,}, TN {c['TN']:,}), {c['without_confidence']:,} without confidence")
    print(f"WOA {woa}, F1 {f1}")
    print(f"signature: {extraction_signature(schema, getattr(args, 'conventions', 'confcal'))}")
    for key, text in (
            ("docs_missing_prediction",
             "truth documents without a prediction (scored as all missing)"),
            ("unknown_fields", "predicted fields not in the schema (ignored)"),
            ("unscored_truth_fields", "truth fields not in the schema (ignored)"),
            ("whole_item_outcomes",
             "outcomes of whole line items or lists (stickler-1.0 counts; no entity row)"),
            ("excluded_by_conventions",
             "line-item leaves stickler-1.0 leaves unlabelled (gated or unpaired items)")):
        if c.get(key) and key == "unknown_fields":
            names = list(unknown)
            shown = ", ".join(repr(n) for n in names[:_NAMES_SHOWN])
            more = f" and {len(names) - _NAMES_SHOWN:,} more" if len(names) > _NAMES_SHOWN else ""
            print(f"note: {c[key]:,} {text}, {len(names):,} distinct: {shown}{more}")
        elif c.get(key):
            print(f"note: {c[key]:,} {text}")
    print(f"wrote {path}")
    return 0


def _print_table(runs: Any) -> None:
    from ..report._render import format_runs

    point = runs[[c for c in runs.columns if not str(c).endswith(("_low", "_high"))]]
    print(format_runs(point).to_string(index=False))


_SMALL = re.compile(r"^compare_runs, (?P<run>.*): intervals from (?P<n>[0-9,]+) documents "
                    r"\(fewer than (?P<limit>[0-9,]+)\) are too narrow to trust; read them "
                    r"as rough$")


def _warning_lines(caught: Sequence[Any], small: type[Warning]) -> list[str]:
    """Every warning the library gave, none dropped: the small-sample warnings of several
    runs summed in one line that names them, and a message repeated word for word given
    once with its count."""
    runs = [m for m in (_SMALL.match(str(w.message)) for w in caught
                        if issubclass(w.category, small)) if m]
    lines: dict[str, int] = {}
    for w in caught:
        text = str(w.message)
        if len(runs) > 1 and _SMALL.match(text) and issubclass(w.category, small):
            continue
        lines[text] = lines.get(text, 0) + 1
    out = [text if n == 1 else f"{text} ({n} times)" for text, n in lines.items()]
    if len(runs) > 1:
        named = ", ".join(f"{m['run']} ({m['n']})" for m in runs[:5])
        more = f" and {len(runs) - 5} more" if len(runs) > 5 else ""
        out.insert(0, f"{len(runs)} runs have bootstrap intervals from fewer than "
                      f"{runs[0]['limit']} documents, too narrow to trust (read them as rough): "
                      f"{named}{more} (documents in brackets)")
    return out


def _write(entities: Any, args: argparse.Namespace, console: _Console, *, by: Any,
           title: str, notes: Sequence[str], baseline: str | None = None,
           baseline_on: str = "error") -> int:
    from ..exceptions import UndefinedMetricWarning
    from ..report._render import write_report
    from ..report._runs import SmallSampleWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        warnings.simplefilter("always", SmallSampleWarning)
        written = write_report(entities, args.output, by=by,
                               budgets=_budgets_or_default(args.budgets),
                               n_bins=args.n_bins, n_resamples=args.n_resamples,
                               min_count=args.min_count, seed=args.seed,
                               title=title, notes=notes, status=console.say,
                               progress=console.stages, baseline=baseline,
                               baseline_on=baseline_on, extra=args.extra,
                               **({} if args.max_work is None
                                  else {"max_work": args.max_work}))
    for line in _warning_lines([w for w in caught if issubclass(w.category, UserWarning)],
                               SmallSampleWarning):
        console.say(f"warning: {line}")
    _print_table(written.runs)
    if written.runs.attrs.get("differences"):
        from ..report._render import format_differences

        print(f"\ndifferences from {written.runs.attrs['baseline_column']}="
              f"{written.runs.attrs['baseline']} (paired, same documents; "
              "difference [interval] p-value):")
        print(format_differences(written.runs).to_string(index=False))
    if args.n_resamples:
        print(f"\n95% intervals from {args.n_resamples} document resamples are in the "
              "report.")
    print(f"\nsignature: {written.signature}")
    print(f"report: {written.html}")
    return 0


def _demo(args: argparse.Namespace, console: _Console) -> int:
    from ..datasets import load_demo
    from ..report._render import check_destination

    check_destination(Path(args.output))  # before scoring, not after
    corpora = [load_demo()] if args.corpus == "synthetic" else [load_demo("ocr"), load_demo()]
    n_docs = sum(len(c.truths) * len(c.runs) for c in corpora)
    console.say(f"scoring {sum(len(c.runs) for c in corpora)} runs of "
                f"{' + '.join(str(len(c.truths)) for c in corpora)} synthetic invoices")
    bar = console.bar(n_docs, "doc")
    try:
        results = [c.score(progress=None if bar is None else bar.update) for c in corpora]
    finally:
        if bar is not None:
            bar.close()
    if args.corpus == "ocr":
        import pandas as pd

        return _write(pd.concat([r.entities for r in results], ignore_index=True), args,
                      console, by=("model", "tier"),
                      title="confcal demo: Tesseract on degraded pages, next to four "
                            "simulated extractors", notes=[_DEMO_NOTE, _OCR_NOTE])
    return _write(results[0].entities, args, console, by=("model", "tier"),
                  title="confcal demo: four simulated extractors on synthetic invoices",
                  notes=[_DEMO_NOTE])


def _report_sketched(args: argparse.Namespace, console: _Console) -> int:
    from .._markdown import escape_text, write_csv
    from ..report._render import check_destination, format_runs, staged_report, to_markdown
    from ..report._runs import (
        SummaryStack,
        check_by,
        merge_summaries,
        runs_table,
        summarize_runs,
    )
    from ..scoring.io import InputLimits, iter_entities

    limits = InputLimits(max_decompressed_bytes=args.max_decompressed_bytes)
    if args.n_resamples:
        console.say("--sketch: no bootstrap intervals (they resample rows, which a sketch "
                    "does not keep); use --n-resamples 0 to silence this")
    out = Path(args.output)
    check_destination(out)  # before reading a single table
    by = args.by
    if by is None:  # the metadata columns of the first table, as compare_runs; from its header
        first = next(iter_entities(args.entities[0], chunk_rows=1, limits=limits))
        # the weight column weighs rows; it does not tell runs apart
        by = [c for c in check_by(None, first) if c != args.sample_weight]
    # only the required columns and the run columns are decoded (Parquet)
    bar = console.bar(None, "row")  # a stream of unknown length: rows read so far
    weight = [] if args.sample_weight is None else [args.sample_weight]

    # one summary per table, merged only when no run has a document in two tables (the
    # same table twice would otherwise count every row twice)
    parts = []
    try:
        for path in args.entities:
            stack = SummaryStack()  # a balanced tree of merges, not a fold over chunks
            for chunk in iter_entities(path, columns=[*by, *weight], limits=limits):
                stack.push(summarize_runs(chunk, by, sample_weight=args.sample_weight))
                if bar is not None:
                    bar.update(len(chunk))
            parts.append(stack.result())
    finally:
        if bar is not None:
            bar.close()
    summaries = merge_summaries(*parts, disjoint=True, names=[str(p) for p in args.entities])
    runs = runs_table(summaries, by, budgets=_budgets_or_default(args.budgets),
                      n_bins=args.n_bins)
    with staged_report(out) as staging:
        write_csv(runs, staging / "metrics.csv")
        (staging / "report.md").write_text(  # the title is the user's text: escaped
            f"# {escape_text(args.title)}\n\nComputed from calibration sketches (exact; no "
            f"bootstrap intervals).\n\n{to_markdown(format_runs(runs))}\n", encoding="utf-8")
    _print_table(runs)
    print(f"\nreport: {out / 'report.md'}")
    return 0


def _report(args: argparse.Namespace, console: _Console) -> int:
    import pandas as pd

    from ..scoring.io import InputLimits, read_entity_tables

    if args.sketch:
        return _report_sketched(args, console)

    from .._signature import SIGNATURE_ATTR
    from ..report._render import check_destination

    check_destination(Path(args.output))  # before reading the tables, not after

    from ..report._runs import check_unique_entities

    limits = InputLimits(max_rows=args.max_rows,
                         max_decompressed_bytes=args.max_decompressed_bytes)
    tables = read_entity_tables(args.entities, limits=limits)  # --max-rows bounds the sum
    entities = tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)
    check_unique_entities(entities, name="the entity tables",
                          sources=[(str(p), len(t)) for p, t in zip(args.entities, tables,
                                                                     strict=True)])
    signatures = {t.attrs.get(SIGNATURE_ATTR) or "unknown" for t in tables}
    if len(signatures) > 1:
        # pd.concat keeps attrs only when they agree: the report then says schema:unknown
        console.say("warning: the entity tables were scored with different settings, so "
                    f"their numbers are not comparable: {sorted(signatures)}")
        entities.attrs.pop(SIGNATURE_ATTR, None)
    return _write(entities, args, console, by=args.by, title=args.title, notes=(),
                  baseline=args.baseline, baseline_on=args.baseline_on)


def _check_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What argparse cannot check on its own, as usage errors (exit 2)."""
    if args.command == "score":
        keys = [key for key, _ in args.meta]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            parser.error(f"argument --meta: each KEY must be given once; found {repeated} "
                         "more than once")
    if args.command not in ("demo", "report"):
        return
    if getattr(args, "sample_weight", None) is not None and not args.sketch:
        parser.error("argument --sample-weight: only with --sketch")
    if args.extra and getattr(args, "sketch", False):
        parser.error("argument --extra: not with --sketch (the estimators need the rows)")
    if "calibration_p" in args.extra and not args.n_resamples:
        parser.error("argument --extra: calibration_p needs --n-resamples >= 1 (the "
                     "consistency test's redraws); found 0")
    if args.command == "report" and args.baseline is not None:
        if args.sketch:
            parser.error("argument --baseline: not with --sketch (paired resamples need "
                         "the rows)")
        if not args.n_resamples:
            parser.error("argument --baseline: needs --n-resamples >= 1 (the paired "
                         "resamples); found 0")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``confcal`` command; returns the exit code (0 ok, 1 data error, 2 usage).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``confcal`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 success; 1 a data error, reported on stderr as ``confcal: error: ...`` naming
        the file, line or document and the rule (a traceback too with ``--debug``); 2 a
        usage error (argparse's message on stderr); 130 interrupted.

    Examples
    --------
    >>> main(["--version"])  # doctest: +ELLIPSIS
    confcal ...
    0
    >>> main(["report", "entities.txt", "-o", "out"])  # usage error; argparse says why on stderr
    2
    """
    from ._qa_run import is_qa_run, qa_run_main

    # what the command prints may hold data (run names, fields, file metadata): every
    # character a terminal would act on is shown as an escape instead
    with terminal_output() as raw:
        # `qa run` (answering questions with a model) has its own parser: `qa` judges
        if is_qa_run(sys.argv[1:] if argv is None else argv):
            return qa_run_main(sys.argv[1:] if argv is None else argv)
        return _main(argv, raw)


def _main(argv: Sequence[str] | None, raw: TextIO) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        _check_usage(parser, args)
    except SystemExit as exc:  # argparse: 0 after --help/--version, 2 on a usage error
        return int(exc.code or 0)
    debug = getattr(args, "debug", False)
    console = _Console(sys.stderr, forced=getattr(args, "progress", False), raw=raw)
    command = {"demo": _demo, "score": _score, "report": _report,
               "qa": lambda qa_args, _console: run_qa(qa_args)}[args.command]
    try:
        with warnings.catch_warnings():
            # the library's warnings (a float16 column read, ...) in the command's own words,
            # not Python's file:line format with a source line of confcal's code
            warnings.showwarning = lambda message, *_args, **_kw: console.say(
                f"warning: {message}")
            return command(args, console)
    except KeyboardInterrupt:
        console.say("interrupted; nothing was left half-written")
        return 130
    except (ConfcalError, ValueError, OSError) as exc:
        if debug:
            traceback.print_exc()
        print(f"confcal: error: {error_message(exc)}", file=sys.stderr)
        return 1
