"""``confcal qa run``: answer a DocBench folder's questions with a model reading the PDFs.

::

    confcal qa run DATA --base-url URL --model NAME --context-tokens N -o OUT
                   [--system NAME] [--cache-dir DIR | --no-cache] [--concurrency N]
                   [--max-tokens N] [--margin F] [--domain LABEL] [--api-key-env VAR]
                   [--timeout S] [--max-retries N] [--prompt-template FILE]
                   [--system-prompt TEXT] [--temperature T] [--top-p P] [--top-k K]
                   [--max-tokens-field NAME]

It calls :func:`confcal.extras.docbench.run_docbench` with an
:class:`~confcal.extras.clients.OpenAICompatibleClient` and prints what happened. The
answers are cached in ``--cache-dir`` (default ``OUT.cache`` beside OUT), so running the
same command again after an interruption or failed calls asks only what is missing.

Exit codes: 0 every question answered; 1 a data error, or some questions failed (listed in
``OUT/failures.jsonl``; run again to ask them); 2 a usage error; 130 interrupted. Kept apart
from ``qa/_command.py`` (the judge) because it needs the extras; ``confcal.cli.main``
sends ``qa run`` here before parsing anything else.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from .._options import (
    add_sampling,
    error_message,
    int_at_least,
    number_in,
    positive,
    sampling,
)
from ..exceptions import ConfcalError, ValidationError

__all__ = ["QA_RUN_HELP", "is_qa_run", "qa_run_main"]

# the one line `confcal --help` and `confcal qa --help` show for this command
QA_RUN_HELP = ("answer a DocBench folder's questions with a model reading the PDFs "
               "(needs pip install -e '.[models,pdf]')")

_FLAGS = ("--debug", "--progress")  # the options the confcal command takes before a command


def is_qa_run(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (after ``confcal``) asks for ``qa run``.

    Examples
    --------
    >>> is_qa_run(["--debug", "qa", "run", "data"]), is_qa_run(["qa", "--records", "r"])
    (True, False)
    """
    words = [a for a in argv if a not in _FLAGS]
    # "qa run" as one word is how `confcal --help` lists it; a shell user may copy it quoted
    return words[:2] == ["qa", "run"] or words[:1] == ["qa run"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog="confcal qa run",
        description="Answer every question of a DocBench folder (per document a PDF and "
                    "<n>_qa.jsonl) with a model behind an OpenAI-compatible endpoint, "
                    "reading each PDF's text with page markers and its page count, word "
                    "count, title and author. Answers are cached as they arrive; the same "
                    "command resumes an interrupted run.",
        epilog="Writes OUT/records.jsonl (judge it with confcal qa --records), DocBench's "
               "<n>/<system>_results.jsonl and <system>_eval_input.jsonl, failures.jsonl "
               "and run.json. Exit codes: 0 all answered, 1 data error or failed "
               "questions, 2 usage error. Docs: docs/docqa.md")
    parser.add_argument("folder", type=Path, metavar="DATA",
                        help="DocBench's data folder: one folder per document")
    parser.add_argument("--base-url", required=True, metavar="URL",
                        help="an OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--model", required=True, metavar="NAME", help="the model to ask")
    parser.add_argument("--context-tokens", required=True, type=int_at_least(1),
                        metavar="N", help="the model's context window in tokens")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUT",
                        help="output folder (new, empty or a previous qa run output)")
    parser.add_argument("--system", metavar="NAME",
                        help="name the answers are filed under (default: the model name)")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", type=Path, metavar="DIR",
                       help="answer cache (default OUT.cache beside OUT)")
    cache.add_argument("--no-cache", action="store_true",
                       help="keep no cache (an interrupted run starts over)")
    parser.add_argument("--concurrency", "--workers", type=int_at_least(1), default=4,
                        metavar="N", help="requests in flight at once (default 4)")
    parser.add_argument("--max-tokens", type=int_at_least(1), default=512, metavar="N",
                        help="longest answer in tokens, reserved in the context (default 512)")
    parser.add_argument("--margin", type=number_in(0.0, 1.0), default=0.1, metavar="F",
                        help="share of the context kept free for the token estimate's error "
                             "(default 0.1)")
    parser.add_argument("--domain", metavar="LABEL",
                        help="the domain of every document (default: DocBench's folder "
                             "numbering)")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                        help="environment variable holding the API key (default "
                             "OPENAI_API_KEY; '' for an endpoint without a key)")
    parser.add_argument("--timeout", type=positive(float, "a number of seconds"), default=60.0,
                        metavar="S",
                        help="seconds per request (default 60)")
    parser.add_argument("--max-retries", type=int_at_least(0), default=5, metavar="N",
                        help="retries of a 429, 5xx or timeout per request (default 5)")
    parser.add_argument("--prompt-template", type=Path, metavar="FILE",
                        help="the user message: a UTF-8 text file used exactly as written, "
                             "with {{document}} (the document's text) and {{question}} "
                             "filled in, e.g. DocBench's own prompt (default: confcal's "
                             "'{{document}}\\n\\nQuestion: {{question}}\\nAnswer:')")
    parser.add_argument("--system-prompt", metavar="TEXT",
                        help="the system message (default: confcal's instruction; '' sends "
                             "an empty one)")
    add_sampling(parser)
    parser.add_argument("--max-tokens-field", choices=("max_completion_tokens", "max_tokens"),
                        help="the request field of the answer's token limit (default: "
                             "max_completion_tokens for api.openai.com, max_tokens for any "
                             "other server)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    parser.add_argument("--progress", action="store_true",
                        help="show a progress bar even when stderr is not a terminal")
    return parser


def _read_template(path: Path) -> str:
    """The file's text exactly as written, a final newline included (a UTF-8 byte order
    mark is not text)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        offset = exc.start + 3 * data.startswith(b"\xef\xbb\xbf")
        raise ValidationError(f"--prompt-template {str(path)!r} must be UTF-8 text; found "
                              f"byte {data[offset]:#04x} at offset {offset}",
                              source=path) from None


def _run(args: argparse.Namespace) -> int:
    from ..extras.clients import OpenAICompatibleClient
    from ..extras.docbench import DEFAULT_SYSTEM_PROMPT, DEFAULT_TEMPLATE, run_docbench

    template = (DEFAULT_TEMPLATE if args.prompt_template is None
                else _read_template(args.prompt_template))
    client = OpenAICompatibleClient(args.base_url, args.model,
                                    api_key_env=args.api_key_env or None,
                                    timeout=args.timeout, max_retries=args.max_retries,
                                    max_tokens_field=args.max_tokens_field)
    cache = None if args.no_cache else (
        args.cache_dir if args.cache_dir is not None
        else args.output.with_name(args.output.name + ".cache"))
    domain = args.domain
    run = run_docbench(client, args.folder, out=args.output, context_tokens=args.context_tokens,
                       cache_dir=cache, system=args.system, max_tokens=args.max_tokens,
                       margin=args.margin, concurrency=args.concurrency,
                       domains=None if domain is None else (lambda _folder: domain),
                       template=template,
                       system_prompt=(DEFAULT_SYSTEM_PROMPT if args.system_prompt is None
                                      else args.system_prompt),
                       sampling=sampling(args), progress=args.progress or sys.stderr.isatty())
    c = run.counts
    print(f"{c['questions']:,} questions on {c['documents']:,} documents "
          f"({c['documents_cut']:,} cut to fit {args.context_tokens:,} tokens): "
          f"{c['answered']:,} answered ({c['called']:,} asked, {c['cached']:,} from the "
          f"cache, {c['shared']:,} repeated questions asked once), {c['failed']:,} failed")
    if c["unreadable"]:
        n = c["unreadable"]
        print(f"note: {n:,} cache entr{'y was' if n == 1 else 'ies were'} unreadable and "
              "refetched (replaced in the cache)")
    if c["answers_cut"] or c["answers_empty"]:
        print(f"note: {c['answers_cut']:,} answers stopped at --max-tokens "
              f"{args.max_tokens}; {c['answers_empty']:,} answers are empty")
    if c["prompt_tokens_over_estimate"]:
        print(f"note: {c['prompt_tokens_over_estimate']:,} of {c['prompt_tokens_reported']:,} "
              "prompts took more tokens than estimated (the server's count); raise --margin "
              "if the server refuses prompts as too long")
    print(f"wrote {run.out} (records.jsonl, {run.system}_eval_input.jsonl, "
          f"<n>/{run.system}_results.jsonl, failures.jsonl, run.json)")
    if cache is not None:
        print(f"answers cached in {cache}")
    if not run.complete:
        print(f"confcal: error: {c['failed']:,} of {c['questions']:,} questions failed "
              f"(listed in {run.out / 'failures.jsonl'}; first: {run.failures[0]['message']}); "
              "run the same command again to ask only those", file=sys.stderr)
        return 1
    print(f"judge with: confcal qa --records {run.out / 'records.jsonl'} -o DIR")
    return 0


def qa_run_main(argv: Sequence[str]) -> int:
    """Run ``confcal qa run``; ``argv`` is what follows ``confcal`` (``qa run ...``).

    Returns
    -------
    int
        0 every question answered, 1 a data error or failed questions, 2 a usage error,
        130 interrupted.

    Examples
    --------
    >>> qa_run_main(["qa", "run", "data"])  # no --base-url ...: argparse says so on stderr
    2
    """
    rest = list(argv)
    # drop the command words, keep --debug/--progress anywhere
    for word in ("qa run",) if "qa run" in rest else ("qa", "run"):
        rest.remove(word)
    try:
        args = _parser().parse_args(rest)
    except SystemExit as exc:  # 0 after --help, 2 on a usage error
        return int(exc.code or 0)
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("confcal: interrupted; nothing was written to the output folder. The answers "
              "that arrived are cached (requests already in flight finish first; Ctrl-C "
              "again stops at once): run the same command again to resume", file=sys.stderr)
        return 130
    except (ConfcalError, ValueError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"confcal: error: {error_message(exc)}", file=sys.stderr)
        return 1
    except ImportError as exc:  # an extra is missing: the message names it
        print(f"confcal: error: {exc}", file=sys.stderr)
        return 1
