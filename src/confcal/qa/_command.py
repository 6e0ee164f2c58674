"""The ``confcal qa`` subcommand: judge document-QA answers and write the tables.

::

    confcal qa --records R.jsonl [--judge rule|llm|cascade] [--by domain,qtype] -o DIR
    confcal qa --docbench DATA --system NAME [...] -o DIR
    confcal qa --eval-output FILE|DIR [...] -o DIR
    confcal qa --demo [-o DIR]

``--judge llm`` (every answer to the model judge) and ``--judge cascade`` (the rule judge,
then the model judge for what it leaves undecided) also need ``--base-url URL --model
NAME`` (an OpenAI-compatible endpoint; the key is read from the environment variable
``--api-key-env``, default ``OPENAI_API_KEY``). ``--cache-dir DIR`` keeps every reply, so
a run that failed or stopped midway is resumed by running it again. ``--prompt FILE`` is a
judge prompt template (the DocBench paper's ``{{question}}``/``{{sys_ans}}``/``{{ref_ans}}``/
``{{ref_text}}`` or confcal's placeholders); ``--convention docbench`` reads replies and
aggregates as the official DocBench evaluation does. ``--eval-output`` reads the official
verdicts: judged again and compared with them, or with ``--judge official`` re-aggregated.

Writes to DIR: ``verdicts.csv`` (every record with its verdict, rule and reason),
``accuracy.csv`` (accuracy with Wilson intervals, overall and per breakdown, undecided,
unparseable and failed counted apart), ``agreement.csv`` (judge vs human verdicts, or vs
the official verdicts of ``--eval-output``), ``decided.csv`` (with ``--judge cascade``:
who decided what), ``calibration.csv`` and ``reliability.csv`` (when the records carry
confidences) and ``report.md`` with all of it. Files are written only once everything is
computed.

Exit codes: 0 success, 1 a data error (the message names the file, line and rule) or some
answers whose model call failed (the outputs are written, the failures counted; run again
with the same ``--cache-dir`` to ask only those), 2 a usage error, 130 interrupted.
:func:`add_qa_parser` and :func:`run_qa` are what ``confcal.cli`` wires in.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._options import (
    add_sampling,
    budgets,
    columns,
    error_message,
    int_at_least,
    positive,
    sampling,
)
from ..exceptions import ConfcalError, UndefinedMetricWarning, ValidationError

__all__ = ["add_qa_parser", "run_qa"]

DEMO_OUT = Path("confcal-qa")
"""Where ``confcal qa --demo`` writes when no ``-o`` is given."""

_DEMO_NOTE = ("The demo sample is synthetic: 40 invented questions about 10 invented "
              "documents (two per DocBench domain), answered by three simulated systems; "
              "no real document, person or model is involved (confcal.qa.docqa.load_sample).")


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
        "qa", allow_abbrev=False, parents=list(parents),
        help="judge document question-answering answers (DocBench style)",
        description="Judge each answer against its reference (rule judge or a model judge), "
                    "then write accuracy by domain and question type with Wilson "
                    "intervals, judge-vs-human agreement when the records carry human "
                    "verdicts, and calibration when they carry confidences.",
        epilog="Answers not there yet? `confcal qa run DATA --base-url URL --model NAME "
               "--context-tokens N -o OUT` asks a model each question of a DocBench folder, "
               "reading the PDFs (`confcal qa run --help`; needs pip install -e "
               "'.[models,pdf]'). Exit codes: 0 success, 1 data error, 2 usage error. Docs: "
               "docs/docqa.md")
    source = qa.add_mutually_exclusive_group(required=True)
    source.add_argument("--records", type=Path, metavar="R.jsonl",
                        help="QA records, one JSON object per line (docs/docqa.md)")
    source.add_argument("--docbench", type=Path, metavar="DIR",
                        help="DocBench's data folder (one folder per document); needs "
                             "--system")
    source.add_argument("--eval-output", type=Path, metavar="FILE|DIR",
                        help="the official DocBench evaluation's <system>_eval_output.jsonl "
                             "(or a folder of them): judged again, and compared with the "
                             "official verdicts")
    source.add_argument("--demo", action="store_true",
                        help="the bundled synthetic sample (offline with the rule judge)")
    qa.add_argument("--system", metavar="NAME",
                    help="with --docbench: read NAME's answers from <n>/NAME_results.jsonl "
                         "or .txt")
    qa.add_argument("--judge", choices=("rule", "llm", "cascade", "official"), default="rule",
                    help="rule: deterministic rules, no model (default); llm: the judge "
                         "prompt sent to --model at --base-url; cascade: the rule judge, "
                         "then the model judge for the answers it leaves undecided; "
                         "official: with --eval-output, the official verdicts themselves "
                         "(re-aggregated, nothing judged)")
    qa.add_argument("--convention", choices=("strict", "docbench"), default="strict",
                    help="strict: a reply must be the digit, and what is not decided is "
                         "counted apart (default); docbench: replies read and accuracy "
                         "aggregated as the official DocBench evaluation does")
    qa.add_argument("--by", type=columns("domain,qtype"), default=("domain", "qtype"),
                    metavar="COL,...",
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
    qa.add_argument("--timeout", type=positive(float), default=60.0, metavar="S",
                    help="--judge llm: seconds per request (default 60)")
    qa.add_argument("--max-retries", type=int_at_least(0), default=4, metavar="N",
                    help="--judge llm: retries of a failed request (429, 5xx, timeouts; "
                         "default 4)")
    qa.add_argument("--cache-dir", type=Path, metavar="DIR",
                    help="--judge llm: keep every reply in DIR and read it from there "
                         "next time (resume after a failure or an interruption)")
    qa.add_argument("--prompt", type=Path, metavar="FILE",
                    help="--judge llm: a judge prompt template (UTF-8), filled verbatim: "
                         "{{question}}, {{sys_ans}}, {{ref_ans}}, {{ref_text}} (the DocBench "
                         "paper's) or {question}, {answer}, {reference}, {evidence}")
    qa.add_argument("--system-prompt", metavar="TEXT",
                    help="--judge llm: the system message (default confcal's)")
    add_sampling(qa, "--judge llm: ")
    qa.add_argument("--budgets", type=budgets, default=None, metavar="B,...",
                    help="ECARB review budgets of the calibration section (default 0.1,0.3, "
                         "the library's DEFAULT_BUDGETS)")
    qa.add_argument("--n-bins", type=int_at_least(1), default=5, metavar="M",
                    help="equal-mass ECE bins (default 5)")
    qa.add_argument("-o", "--output", dest="out", type=Path, metavar="DIR",
                    help=f"output folder (required, except with --demo: ./{DEMO_OUT})")
    return qa


# ---------------------------------------------------------------------------- tables
def _cell(value: Any, digits: int) -> str:
    """A value as report text: n/a for missing, floats to ``digits`` decimals."""
    from .._validation import is_missing  # numpy: not at import time of the command line

    if is_missing(value, blank=False):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _markdown(frame: Any, digits: int = 3) -> str:
    # every header and cell escaped: answers, labels and system names are untrusted text
    from .._markdown import markdown_table

    return markdown_table([str(c) for c in frame.columns],
                          [[_cell(v, digits) for v in row]
                           for row in frame.itertuples(index=False)])


def _csv(frame: Any) -> str:
    # verdicts, answers and labels are untrusted text a spreadsheet opens: formula cells
    # neutralised, line breaks inside a cell quoted
    from .._markdown import write_csv

    return str(write_csv(frame))


def _text(value: Any) -> str:
    from .._markdown import escape_text

    return escape_text(value)


def _code(value: Any) -> str:
    """A column name shown as code in the report: escaped text, never a code span."""
    from .._markdown import escape_cell

    return f"'{escape_cell(value)}'"


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


QA_FILES = ("verdicts.csv", "accuracy.csv", "agreement.csv", "decided.csv",
            "calibration.csv", "reliability.csv", "report.md")


def _write_all(out: Path, files: dict[str, str]) -> None:
    """Write the whole output folder at once: staged, then moved into place.

    ``out`` must be new, empty or a previous ``confcal qa`` output, and a new run replaces
    it whole, so a folder never mixes files of two runs.
    """
    from .._files import staged_folder

    unknown = sorted(set(files) - set(QA_FILES))
    if unknown:  # a programming error, not a user's: every file must be a known output
        raise AssertionError(f"unlisted qa outputs {unknown}")
    with staged_folder(out, "qa output") as staging:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8", newline="\n")


# --------------------------------------------------------------------------- command
def _usage(message: str) -> int:
    print(f"confcal qa: error: {message}", file=sys.stderr)
    return 2


def _template(path: Path) -> str:
    """A prompt template file's text as written (a UTF-8 byte order mark is not text)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"--prompt {path}: must be UTF-8 text; found an undecodable "
                              f"byte at position {exc.start}", source=path) from None


def _judge(args: argparse.Namespace) -> tuple[Any, str]:
    from .docqa import JUDGE_PROMPT, CascadeJudge, LLMJudge, RuleJudge
    from .docqa import check_template as check

    if args.judge == "official":
        return None, "official DocBench verdicts (read from the eval field, nothing judged)"
    if args.judge == "rule":
        return RuleJudge(), "rule judge (confcal.qa.docqa.RuleJudge, no model)"
    template = JUDGE_PROMPT if args.prompt is None else _template(args.prompt)
    try:
        check(template)
    except ValidationError as exc:
        where = "" if args.prompt is None else f"--prompt {args.prompt}: "
        raise ValidationError(f"{where}{exc}", source=args.prompt) from None
    key_env = args.api_key_env or None
    if key_env is not None and not os.environ.get(key_env, "").strip():
        # one clear error now, rather than the same failure recorded for every answer
        raise ValidationError(
            f"--api-key-env {key_env}: the environment variable {key_env} must hold the API "
            f"key; found it unset or empty (pass --api-key-env '' for an endpoint without "
            f"a key)")
    from ..extras.clients import OpenAICompatibleClient

    client = OpenAICompatibleClient(args.base_url, args.model, api_key_env=key_env,
                                    timeout=args.timeout, max_retries=args.max_retries)
    options: dict[str, Any] = {"prompt_template": template, "convention": args.convention,
                               "cache_dir": args.cache_dir}
    if args.system_prompt is not None:
        options["system_prompt"] = args.system_prompt
    if sampling(args):
        options["sampling"] = sampling(args)
    model = LLMJudge(client, **options)
    # repr(client) shows the API root without credentials (the client refuses them anyway)
    name = f"model judge {args.model} ({client!r})"
    if args.judge == "llm":
        return model, name
    return (CascadeJudge(RuleJudge(), model),
            f"cascade: the rule judge, then the {name} for the answers it leaves undecided")


def _load(args: argparse.Namespace) -> tuple[Any, str]:
    from .docqa import load_docbench, load_docbench_verdicts, load_records, load_sample

    if args.demo:
        return load_sample(), "the bundled synthetic sample"
    if args.docbench is not None:
        records = load_docbench(args.docbench, system=args.system)
        skipped = records.attrs.get("skipped_folders", [])
        if skipped:
            print(f"confcal: skipped {len(skipped)} folder(s) as DocBench does: "
                  f"{', '.join(skipped)}", file=sys.stderr)
        return records, f"DocBench folder {args.docbench}, system {args.system}"
    if args.eval_output is not None:
        official = load_docbench_verdicts(args.eval_output)
        return official, f"the official DocBench verdicts in {args.eval_output}"
    return load_records(args.records), str(args.records)


def _model_line(judge: Any) -> str | None:
    from .docqa import CascadeJudge, LLMJudge

    model = judge.then if isinstance(judge, CascadeJudge) else judge
    if not isinstance(model, LLMJudge):
        return None
    c = model.counts
    return (f"model judge: {c['asked']:,} asked, {c['cached']:,} from the cache, "
            f"{c['failed']:,} failed, {c['not_asked']:,} empty answers not asked")


@dataclass(frozen=True)
class _Tables:
    """Everything ``confcal qa`` reports, computed before anything is written."""

    judged: Any  # the records with their verdicts
    accuracy: Any
    human: str | None  # the column the verdicts are compared with
    agreement: Any  # None without such a column
    decided: Any  # who decided what, with --judge cascade
    calibration: Any  # None without confidences
    bins: Any


def _judged(records: Any, judge: Any) -> Any:
    from .docqa import judge_records

    if judge is None:  # --judge official: the verdicts the source carries
        return records.rename(columns=lambda c: "verdict" + c[len("docbench"):]
                              if c.startswith("docbench") and c != "docbench_type" else c)
    return judge_records(records, judge)


def _human_column(args: argparse.Namespace, judged: Any) -> str | None:
    """--human, else 'human' or the official 'docbench' verdicts when the records have them."""
    default = ("human" if "human" in judged.columns
               else "docbench" if "docbench" in judged.columns else None)
    human = args.human if args.human is not None else default
    if human is not None and human not in judged.columns:
        raise ValidationError(
            f"--human must name a column of the records; found {human!r}, not among "
            f"{', '.join(map(str, judged.columns))}")
    return human


def _tables(args: argparse.Namespace, records: Any, judge: Any) -> _Tables:
    from .docqa import accuracy_table, cascade_table

    judged = _judged(records, judge)
    accuracy = accuracy_table(judged, "verdict", by=args.by, convention=args.convention)
    human = _human_column(args, judged)
    agreement = _agreement(judged, human) if human is not None else None
    decided = cascade_table(judged, "verdict") if args.judge == "cascade" else None
    has_confidence = ("confidence" in judged.columns
                      and bool(judged["confidence"].notna().any()))
    calibration, bins = (_calibration(judged, args.budgets, args.n_bins)
                         if has_confidence else (None, None))
    return _Tables(judged, accuracy, human, agreement, decided, calibration, bins)


def _computed(args: argparse.Namespace, records: Any, judge: Any) -> tuple[_Tables, list[str]]:
    """The tables, and the library's warnings on the way: printed, and kept as notes."""
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        tables = _tables(args, records, judge)
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning):
            print(f"confcal: warning: {w.message}", file=sys.stderr)
            notes.append(f"Warning: {w.message}")
        else:  # not ours to swallow
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return tables, notes


def _accuracy_section(args: argparse.Namespace, view: Any) -> list[str]:
    """The report's accuracy tables, overall and by each breakdown, with how they count."""
    if args.convention == "docbench":
        explain = ("Accuracy as the official DocBench notebook aggregates it: every answer "
                   "counts, read from the first 20 characters of the judge's reply (a 1 there "
                   "is right overall and by domain; a 0 there is wrong by qtype), with 95% "
                   "Wilson intervals. counted_differently: the answers the strict convention "
                   "counts otherwise (left out there, or the other way).")
    else:
        explain = ("Accuracy = right / (right + wrong), with 95% Wilson intervals; undecided, "
                   "unparseable and failed verdicts are left out of it and counted in their "
                   "own columns.")
    md = ["## Accuracy", "", explain, ""]
    for by in dict.fromkeys(view["by"]):
        md += [f"### {'Overall' if by == 'overall' else 'By ' + _text(by)}", "",
               _markdown(view[view["by"] == by].drop(columns=["by"])), ""]
    return md


def _other_sections(args: argparse.Namespace, t: _Tables, files: dict[str, str]
                    ) -> list[str]:
    """The report's sections after accuracy, adding each one's CSV to ``files``."""
    md: list[str] = []
    if t.decided is not None:
        files["decided.csv"] = _csv(t.decided)
        md += ["## Who decided", "",
               ("The cascade: the rule judge's verdicts, and the model judge's on the answers "
                "the rule judge left undecided."), "", _markdown(t.decided), ""]
    if t.agreement is not None:
        files["agreement.csv"] = _csv(t.agreement)
        official = args.eval_output is not None and t.human == "docbench"
        md += ["## Judge vs the official verdicts" if official else "## Judge vs human", "",
               (f"Verdicts of the judge against the {_code(t.human)} column, on the answers "
                "both decided (Cohen's kappa corrects the agreement for chance)."), "",
               _markdown(t.agreement), ""]
    if t.calibration is not None:
        files["calibration.csv"] = _csv(t.calibration)
        md += ["## Calibration", "",
               ("Answers with a confidence and a decided verdict, through "
               "`confcal.calibration_report`: does the confidence separate right answers "
               "from wrong ones?"), "", _markdown(t.calibration), ""]
        if t.bins is not None:
            files["reliability.csv"] = _csv(t.bins)
            md += ["### Reliability bins (equal-mass)", "", _markdown(t.bins), ""]
    return md


def _files(args: argparse.Namespace, source: str, judge_name: str, t: _Tables, view: Any,
           notes: list[str]) -> dict[str, str]:
    """Every output file's text: the CSV tables and report.md with all of them."""
    counts = t.judged["verdict_status"].value_counts()
    summary = (f"{len(t.judged):,} answers: {counts.get('correct', 0):,} right, "
               f"{counts.get('wrong', 0):,} wrong, {counts.get('undecided', 0):,} undecided, "
               f"{counts.get('unparseable', 0):,} unparseable, "
               f"{int(counts.get('failed', 0)):,} failed (the last three are counted apart, "
               f"never as right or wrong)")
    files = {"verdicts.csv": _csv(t.judged),
             "accuracy.csv": _csv(t.accuracy)}
    md = [f"# confcal qa: {_text(source)}", "", f"Judge: {_text(judge_name)}. {summary}.", ""]
    if args.demo:
        md += [_DEMO_NOTE, ""]
    md += _accuracy_section(args, view)
    md += _other_sections(args, t, files)
    if notes:
        md += ["## Notes", "", *[f"- {_text(n)}" for n in notes], ""]
    files["report.md"] = "\n".join(md)
    return files


def _print_tables(t: _Tables) -> None:
    """One line per system for each of the cascade, agreement and calibration tables."""
    if t.decided is not None:
        for row in t.decided.to_dict(orient="records"):
            who = f"{row['system']}: " if "system" in row else ""
            print(f"decided by the {row['judge']} judge: {who}{row['n']:,} ({row['correct']:,} "
                  f"right, {row['wrong']:,} wrong, {row['undecided']:,} undecided, "
                  f"{row['unparseable']:,} unparseable, {row['failed']:,} failed)")
    if t.agreement is not None:
        for agreed in t.agreement.itertuples(index=False):
            who = f"{agreed.system}: " if "system" in t.agreement.columns else ""
            print(f"judge vs {t.human}: {who}agreement {_cell(agreed.agreement, 3)}, kappa "
                  f"{_cell(agreed.kappa, 3)} on {agreed.compared} answers ({agreed.excluded} "
                  f"left out as undecided)")
    if t.calibration is not None:
        for row in t.calibration.to_dict(orient="records"):
            who = f"{row['system']}: " if "system" in row else ""
            print(f"calibration: {who}AUROC {_cell(row['auroc'], 3)}, ECE "
                  f"{_cell(row['ece'], 3)}, Brier {_cell(row['brier'], 3)} on {row['n']} "
                  f"answers")


def _qa(args: argparse.Namespace) -> int:
    records, source = _load(args)
    judge, judge_name = _judge(args)
    print(f"judging {len(records):,} answers from {source} with the {judge_name}",
          file=sys.stderr)
    tables, notes = _computed(args, records, judge)
    view = _accuracy_view(tables.accuracy)
    files = _files(args, source, judge_name, tables, view, notes)
    _write_all(args.out, files)

    overall = view[view["by"] == "overall"].drop(columns=["by", "group"])
    print(overall.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    line = _model_line(judge)
    if line is not None:
        print(line)
    _print_tables(tables)
    print(f"wrote {', '.join(files)} to {args.out}")
    failed = int((tables.judged["verdict_status"] == "failed").sum())
    if failed:
        again = (f"run the same command again (with --cache-dir {args.cache_dir}) to ask only "
                 f"those" if args.cache_dir is not None else
                 "run again with --cache-dir DIR to keep the replies that arrived")
        print(f"confcal: error: {failed:,} answers could not be judged (the model call "
              f"failed; the reasons are in verdicts.csv); {again}", file=sys.stderr)
        return 1
    return 0


def _misuse(args: argparse.Namespace) -> str | None:
    """What is wrong with how the options are combined, or None."""
    model = args.judge in ("llm", "cascade")
    if model and not (args.base_url and args.model):
        return f"--judge {args.judge} needs --base-url URL and --model NAME"
    given = [flag for flag, value in (
        ("--base-url", args.base_url), ("--model", args.model), ("--cache-dir", args.cache_dir),
        ("--prompt", args.prompt), ("--system-prompt", args.system_prompt),
        ("--temperature", args.temperature), ("--top-p", args.top_p),
        ("--top-k", args.top_k)) if value is not None]
    if not model and given:
        return (f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for --judge "
                f"llm or cascade")
    if (args.docbench is None) != (args.system is None):
        return "--docbench DIR and --system NAME go together"
    if args.judge == "official" and args.eval_output is None:
        return "--judge official needs --eval-output FILE|DIR (the official verdicts)"
    return None


def _data_error(args: argparse.Namespace, exc: Exception) -> int:
    """Print a data error (the traceback too with --debug); the exit code, 1."""
    if getattr(args, "debug", False):
        traceback.print_exc()
    print(f"confcal: error: {error_message(exc)}", file=sys.stderr)
    return 1


def run_qa(args: argparse.Namespace) -> int:
    """Run ``confcal qa`` on parsed arguments; return the exit code (0, 1, 2 or 130).

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
    problem = _misuse(args)
    if problem is not None:
        return _usage(problem)
    try:
        from .._files import check_destination

        check_destination(Path(args.out), "qa output")  # before any judging
        return _qa(args)
    except KeyboardInterrupt:
        kept = ("" if getattr(args, "cache_dir", None) is None
                else f" (the replies that arrived are kept in {args.cache_dir}; run again to "
                     f"resume)")
        print(f"confcal: interrupted; nothing was written{kept}", file=sys.stderr)
        return 130
    except (ConfcalError, ValueError, OSError) as exc:
        return _data_error(args, exc)
