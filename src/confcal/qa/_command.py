"""The ``confcal qa`` subcommand: judge document-QA answers and write the tables.

::

    confcal qa --records R.jsonl [--judge rule|llm] [--by domain,qtype] -o DIR
    confcal qa --docbench DATA --system NAME [...] -o DIR
    confcal qa --demo [-o DIR]

``--judge llm`` also needs ``--base-url URL --model NAME`` (an OpenAI-compatible endpoint;
the key is read from the environment variable ``--api-key-env``, default
``OPENAI_API_KEY``).

Writes to DIR: ``verdicts.csv`` (every record with its verdict, rule and reason),
``accuracy.csv`` (accuracy with Wilson intervals, overall and per breakdown, undecided and
unparseable counted apart), ``agreement.csv`` (judge vs human verdicts, when the records
have them), ``calibration.csv`` and ``reliability.csv`` (when they carry confidences) and
``report.md`` with all of it. Files are written only once everything is computed.

Exit codes: 0 success, 1 a data error (the message names the file, line and rule), 2 a
usage error. :func:`add_qa_parser` and :func:`run_qa` are what ``confcal.cli`` wires in.
"""

from __future__ import annotations

import argparse
import math
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..exceptions import ConfcalError, UndefinedMetricWarning, ValidationError

__all__ = ["add_qa_parser", "run_qa"]

DEMO_OUT = Path("confcal-qa")
"""Where ``confcal qa --demo`` writes when no ``-o`` is given."""

_DEMO_NOTE = ("The demo sample is synthetic: 40 invented questions about 10 invented "
              "documents (two per DocBench domain), answered by three simulated systems; "
              "no real document, person or model is involved (confcal.qa.docqa.load_sample).")


def _columns(text: str) -> tuple[str, ...]:
    columns = tuple(part.strip() for part in text.split(","))
    if not all(columns):
        raise argparse.ArgumentTypeError(
            f"must be comma-separated column names such as domain,qtype; found {text!r}")
    return columns


def _budgets(text: str) -> tuple[float, ...]:
    from .._validation import check_budgets

    try:
        return check_budgets(tuple(float(part) for part in text.split(",")), "--budgets")
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated numbers in (0, 1] such as 0.1,0.3; found {text!r}"
        ) from None


def _positive(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0 or (kind is float and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"must be a number > 0; found {text!r}")
        return value
    return parse


def add_qa_parser(subparsers: Any, *, parents: Sequence[argparse.ArgumentParser] = ()
                  ) -> argparse.ArgumentParser:
    """Add the ``qa`` subcommand to an ``argparse`` subparsers object and return it.

    Parameters
    ----------
    subparsers
        What ``ArgumentParser.add_subparsers()`` returned.
    parents : sequence of ArgumentParser
        Shared options of the other subcommands (``--debug``).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="confcal")
    >>> _ = add_qa_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["qa", "--records", "r.jsonl", "--by", "domain", "-o", "out"])
    >>> args.records, args.judge, args.by, args.out
    (PosixPath('r.jsonl'), 'rule', ('domain',), PosixPath('out'))
    """
    qa = subparsers.add_parser(
        "qa", parents=list(parents),
        help="judge document question-answering answers (DocBench style)",
        description="Judge each answer against its reference (rule judge or a model judge), "
                    "then write accuracy by domain and question type with Wilson "
                    "intervals, judge-vs-human agreement when the records carry human "
                    "verdicts, and calibration when they carry confidences.",
        epilog="Exit codes: 0 success, 1 data error, 2 usage error. Docs: docs/docqa.md")
    source = qa.add_mutually_exclusive_group(required=True)
    source.add_argument("--records", type=Path, metavar="R.jsonl",
                        help="QA records, one JSON object per line (docs/docqa.md)")
    source.add_argument("--docbench", type=Path, metavar="DIR",
                        help="DocBench's data folder (one folder per document); needs "
                             "--system")
    source.add_argument("--demo", action="store_true",
                        help="the bundled synthetic sample (offline with the rule judge)")
    qa.add_argument("--system", metavar="NAME",
                    help="with --docbench: read NAME's answers from <n>/NAME_results.jsonl "
                         "or .txt")
    qa.add_argument("--judge", choices=("rule", "llm"), default="rule",
                    help="rule: deterministic rules, no model (default); llm: DocBench's "
                         "three-rule prompt sent to --model at --base-url")
    qa.add_argument("--by", type=_columns, default=("domain", "qtype"), metavar="COL,...",
                    help="breakdowns of the accuracy table (default domain,qtype)")
    qa.add_argument("--human", metavar="COL", default=None,
                    help="column of human verdicts (1/0) to compare the judge with "
                         "(default: 'human' when the records have it)")
    qa.add_argument("--base-url", metavar="URL",
                    help="--judge llm: an OpenAI-compatible API root, e.g. "
                         "https://api.openai.com/v1")
    qa.add_argument("--model", metavar="NAME", help="--judge llm: the judge model")
    qa.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                    help="--judge llm: environment variable holding the API key "
                         "(default OPENAI_API_KEY; '' for an endpoint without a key)")
    qa.add_argument("--timeout", type=_positive(float), default=60.0, metavar="S",
                    help="--judge llm: seconds per request (default 60)")
    qa.add_argument("--budgets", type=_budgets, default=None, metavar="B,...",
                    help="ECARB review budgets of the calibration section (default 0.1,0.3, "
                         "the library's DEFAULT_BUDGETS)")
    qa.add_argument("--bins", type=_positive(int), default=5, metavar="M",
                    help="equal-mass ECE bins (default 5)")
    qa.add_argument("-o", "--out", type=Path, metavar="DIR",
                    help=f"output folder (required, except with --demo: ./{DEMO_OUT})")
    return qa


# ---------------------------------------------------------------------------- tables
def _cell(value: Any, digits: int) -> str:
    from .._validation import is_missing  # numpy: not at import time of the command line

    if is_missing(value, blank=False):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _markdown(frame: Any, digits: int = 3) -> str:
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(_cell(v, digits) for v in row) + " |"
            for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def _interval(low: float, high: float) -> str:
    return "n/a" if math.isnan(low) else f"[{low:.3f}, {high:.3f}]"


def _accuracy_view(table: Any) -> Any:
    view = table.copy()
    view["95% CI"] = [_interval(lo, hi) for lo, hi in zip(view["ci_low"], view["ci_high"],
                                                          strict=True)]
    return view.drop(columns=["ci_low", "ci_high"])


def _agreement(judged: Any, column: str) -> Any:
    import pandas as pd

    from .docqa import judge_agreement

    rows = []
    has = judged[column].notna().to_numpy()
    systems = ([None] if "system" not in judged.columns
               else sorted(judged.loc[has, "system"].unique(), key=str))
    for system in systems:
        mask = has if system is None else has & (judged["system"] == system).to_numpy()
        result = judge_agreement(judged.loc[mask, "verdict"], judged.loc[mask, column])
        table = result["table"]
        rows.append({**({} if system is None else {"system": system}),
                     "with_human": int(mask.sum()), "compared": result["n"],
                     "excluded": result["excluded"], "agreement": result["agreement"],
                     "kappa": result["kappa"],
                     "both_1": int(table.loc[1, 1]), "judge_1_human_0": int(table.loc[1, 0]),
                     "judge_0_human_1": int(table.loc[0, 1]), "both_0": int(table.loc[0, 0])})
    return pd.DataFrame(rows)


def _calibration(judged: Any, budgets: tuple[float, ...] | None, n_bins: int
                 ) -> tuple[Any, Any]:
    import pandas as pd

    from ..metrics._metrics import DEFAULT_BUDGETS
    from ._tables import calibration_parts as parts_of
    from .docqa import calibration_table

    if budgets is None:  # --budgets not given: the library's default
        budgets = DEFAULT_BUDGETS

    table = calibration_table(judged, "verdict", budgets=budgets, n_bins=n_bins)
    status = judged["verdict_status"].to_numpy(dtype=object)
    bins = []
    for counts, report in parts_of(judged, status, budgets=budgets, n_bins=n_bins,
                                   binning="quantile", ties="expected"):
        if report is not None:
            frame = report.bins.copy()
            if "system" in counts:
                frame.insert(0, "system", counts["system"])
            bins.append(frame)
    return table, (pd.concat(bins, ignore_index=True) if bins else None)


QA_FILES = ("verdicts.csv", "accuracy.csv", "agreement.csv", "calibration.csv",
            "reliability.csv", "report.md")


def _write_all(out: Path, files: dict[str, str]) -> None:
    """Write the whole output folder at once: staged, then moved into place.

    ``out`` must be new, empty or a previous ``confcal qa`` output, and a new run replaces
    it whole, so a folder never mixes files of two runs.
    """
    from .._files import staged_folder

    unknown = sorted(set(files) - set(QA_FILES))
    if unknown:  # a programming error, not a user's: every file must be a known output
        raise AssertionError(f"unlisted qa outputs {unknown}")
    with staged_folder(out, QA_FILES, "qa output") as staging:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8", newline="\n")


# --------------------------------------------------------------------------- command
def _usage(message: str) -> int:
    print(f"confcal qa: error: {message}", file=sys.stderr)
    return 2


def _judge(args: argparse.Namespace) -> tuple[Any, str]:
    from .docqa import LLMJudge, RuleJudge

    if args.judge == "rule":
        return RuleJudge(), "rule judge (confcal.qa.docqa.RuleJudge, no model)"
    from ..extras.models import ChatCompletionsClient

    client = ChatCompletionsClient(args.base_url, args.model, api_key_env=args.api_key_env or None,
                        timeout=args.timeout)
    return LLMJudge(client), f"model judge {args.model} at {args.base_url}"


def _load(args: argparse.Namespace) -> tuple[Any, str]:
    from .docqa import load_docbench, load_records, load_sample

    if args.demo:
        return load_sample(), "the bundled synthetic sample"
    if args.docbench is not None:
        return (load_docbench(args.docbench, system=args.system),
                f"DocBench folder {args.docbench}, system {args.system}")
    return load_records(args.records), str(args.records)


def _qa(args: argparse.Namespace) -> int:
    from .docqa import accuracy_table, judge_records

    records, source = _load(args)
    judge, judge_name = _judge(args)
    print(f"judging {len(records):,} answers from {source} with the {judge_name}",
          file=sys.stderr)
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        judged = judge_records(records, judge)
        accuracy = accuracy_table(judged, "verdict", by=args.by)
        human = args.human if args.human is not None else (
            "human" if "human" in judged.columns else None)
        if human is not None and human not in judged.columns:
            raise ValidationError(
                f"--human must name a column of the records; found {human!r}, not among "
                f"{', '.join(map(str, judged.columns))}")
        agreement = _agreement(judged, human) if human is not None else None
        has_confidence = ("confidence" in judged.columns
                          and bool(judged["confidence"].notna().any()))
        calibration, bins = (_calibration(judged, args.budgets, args.bins)
                             if has_confidence else (None, None))
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning):
            print(f"confcal: warning: {w.message}", file=sys.stderr)
            notes.append(f"Warning: {w.message}")
        else:  # not ours to swallow
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    counts = judged["verdict_status"].value_counts()
    summary = (f"{len(judged):,} answers: {counts.get('correct', 0):,} right, "
               f"{counts.get('wrong', 0):,} wrong, {counts.get('undecided', 0):,} undecided, "
               f"{counts.get('unparseable', 0):,} unparseable (the last two are counted "
               f"apart, never as right or wrong)")
    files = {"verdicts.csv": judged.to_csv(index=False),
             "accuracy.csv": accuracy.to_csv(index=False)}
    md = [f"# confcal qa: {source}", "", f"Judge: {judge_name}. {summary}.", ""]
    if args.demo:
        md += [_DEMO_NOTE, ""]
    md += ["## Accuracy", "",
           ("Accuracy = right / (right + wrong), with 95% Wilson intervals; undecided and "
           "unparseable verdicts are left out of it and counted in their own columns."), ""]
    view = _accuracy_view(accuracy)
    for by in dict.fromkeys(view["by"]):
        md += [f"### {'Overall' if by == 'overall' else 'By ' + by}", "",
               _markdown(view[view["by"] == by].drop(columns=["by"])), ""]
    if agreement is not None:
        files["agreement.csv"] = agreement.to_csv(index=False)
        md += ["## Judge vs human", "",
               (f"Verdicts of the judge against the `{human}` column, on the answers both "
               "decided (Cohen's kappa corrects the agreement for chance)."), "",
               _markdown(agreement), ""]
    if calibration is not None:
        files["calibration.csv"] = calibration.to_csv(index=False)
        md += ["## Calibration", "",
               ("Answers with a confidence and a decided verdict, through "
               "`confcal.calibration_report`: does the confidence separate right answers "
               "from wrong ones?"), "", _markdown(calibration), ""]
        if bins is not None:
            files["reliability.csv"] = bins.to_csv(index=False)
            md += ["### Reliability bins (equal-mass)", "", _markdown(bins), ""]
    if notes:
        md += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    files["report.md"] = "\n".join(md)
    _write_all(args.out, files)

    overall = view[view["by"] == "overall"].drop(columns=["by", "group"])
    print(overall.to_string(index=False))
    if agreement is not None:
        for row in agreement.itertuples(index=False):
            who = f"{row.system}: " if "system" in agreement.columns else ""
            print(f"judge vs {human}: {who}agreement {_cell(row.agreement, 3)}, kappa "
                  f"{_cell(row.kappa, 3)} on {row.compared} answers ({row.excluded} left out "
                  f"as undecided)")
    if calibration is not None:
        for row in calibration.to_dict(orient="records"):
            who = f"{row['system']}: " if "system" in row else ""
            print(f"calibration: {who}AUROC {_cell(row['auroc'], 3)}, ECE "
                  f"{_cell(row['ece'], 3)}, Brier {_cell(row['brier'], 3)} on {row['n']} "
                  f"answers")
    print(f"wrote {', '.join(files)} to {args.out}")
    return 0


def run_qa(args: argparse.Namespace) -> int:
    """Run ``confcal qa`` on parsed arguments; return the exit code (0, 1 or 2).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="confcal")
    >>> _ = add_qa_parser(parser.add_subparsers(dest="command"))
    >>> run_qa(parser.parse_args(["qa", "--records", "r.jsonl"]))  # no -o
    2
    """
    if args.out is None:
        if not args.demo:
            return _usage("-o/--out DIR is required (except with --demo)")
        args.out = DEMO_OUT
    if args.judge == "llm" and not (args.base_url and args.model):
        return _usage("--judge llm needs --base-url URL and --model NAME")
    if args.judge == "rule" and (args.base_url or args.model):
        return _usage("--base-url and --model are for --judge llm")
    if (args.docbench is None) != (args.system is None):
        return _usage("--docbench DIR and --system NAME go together")
    try:
        from .._files import check_destination

        check_destination(Path(args.out), QA_FILES, "qa output")  # before any judging
        return _qa(args)
    except KeyboardInterrupt:
        print("confcal: interrupted; nothing was written", file=sys.stderr)
        return 130
    except (ConfcalError, ValueError, OSError) as exc:
        if getattr(args, "debug", False):
            traceback.print_exc()
        if isinstance(exc, OSError) and not isinstance(exc, ConfcalError):
            message = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
        else:
            message = str(exc)
        print(f"confcal: error: {message}", file=sys.stderr)
        return 1
