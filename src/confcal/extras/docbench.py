"""Run a parse-then-read system over a DocBench folder: PDF text in, one answer per question.

DocBench (Zou et al., 2024) keeps a folder per document, ``<n>/``, holding the PDF and
``<n>_qa.jsonl`` (one ``{"question", "answer", "evidence", "type"}`` object per line, where
``answer`` is the reference). Its parse-then-read baseline extracts the PDF's text with
PyMuPDF, cuts it to the model's context and asks the questions. :func:`run_docbench` does
that against any :class:`~confcal._chat.ChatClient` (an OpenAI-compatible endpoint through
:class:`~confcal.extras.clients.OpenAICompatibleClient`):

* **Text**: :func:`confcal.extras.pdf.pdf_text`, with ``[Page n of N]`` markers and a header
  with the page count, word count, title and author, so meta-data questions have an answer.
* **Context**: the text is fitted into ``context_tokens`` (:func:`fit_document`): whole
  pages from the first, then the first lines of the next page, and a note in the prompt
  saying which pages were given in full, in part, or left out. Tokens are estimated
  without a tokenizer (:func:`estimate_tokens`), or counted by one the caller passes.
* **Asking**: one request per question (the document, then the question), ``concurrency``
  in flight at once, every answer cached as it arrives (:class:`~confcal._chat.ChatCache`,
  kind ``"qa-run"``), so an interrupted run resumes asking only what is missing.
* **Writing**: DocBench's own results layout and confcal's QA records
  (:data:`RUN_FILES`), which ``confcal qa --records OUT/records.jsonl`` judges.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._chat import ChatCache, ChatClient, ChatRequest, ChatResponse, check_sampling
from .._files import check_destination, read_json_object, staged_folder
from .._validation import check_positive_int, is_real
from ..exceptions import ModelError, ValidationError
from ..qa.docqa import check_records, load_docbench
from ._optional import progress as _progress_bar
from ._optional import run_concurrently
from .pdf import PdfText, pdf_text

__all__ = [
    "BYTES_PER_TOKEN",
    "DEFAULT_SYSTEM_PROMPT",
    "DEFAULT_TEMPLATE",
    "FILL_RULE",
    "RUN_FILES",
    "DocBenchRun",
    "FittedDocument",
    "build_question_request",
    "estimate_tokens",
    "fit_document",
    "run_docbench",
]

BYTES_PER_TOKEN = 3.0
"""UTF-8 bytes per token assumed by :func:`estimate_tokens` (see its Notes)."""

DEFAULT_SYSTEM_PROMPT = (
    "You answer questions about one document. Its text was extracted from a PDF and is "
    "given page by page, after a block of document information (page count, word count, "
    "and title and author where the PDF records them). Answer from the document only, "
    "briefly: give the answer itself, not an explanation. If the document does not contain "
    "the answer, say that it does not.")
"""The system prompt of every question (confcal's wording; ``system_prompt=`` replaces it)."""

DEFAULT_TEMPLATE = "{{document}}\n\nQuestion: {{question}}\nAnswer:"
"""The user message: ``{{document}}`` and ``{{question}}`` are filled in (``template=``)."""

FILL_RULE = (
    "user message = template with every {{document}} replaced by the text of "
    "<n>/document.txt (UTF-8, as is) and every {{question}} by the record's question (as "
    "is), in one left-to-right pass: text put in is never filled again; system message = "
    "system_prompt")
"""How a run's prompt is rebuilt from its folder (written to ``run.json``)."""

RUN_FILES = ("records.jsonl", "failures.jsonl", "run.json")
"""The files :func:`run_docbench` writes at the top of ``out``, besides DocBench's own:
``<system>_eval_input.jsonl`` and ``<n>/<n>_qa.jsonl`` with ``<n>/<system>_results.jsonl``."""

# Chat templates wrap each message in role markers (Llama 3: 5 tokens a message, and the
# assistant header): reserved on top of the counted text.
_CHAT_OVERHEAD = 32
_EXTRA = "pdf"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


# ---------------------------------------------------------------------------------------
# tokens and fitting
# ---------------------------------------------------------------------------------------
def estimate_tokens(text: str, *, bytes_per_token: float = BYTES_PER_TOKEN) -> int:
    """Tokens of ``text`` estimated from its length, without a tokenizer.

    Parameters
    ----------
    text : str
    bytes_per_token : float, default 3.0
        UTF-8 bytes assumed per token; 1.0 gives an upper bound (see Notes).

    Returns
    -------
    int
        ``ceil(len(text.encode("utf-8")) / bytes_per_token)``.

    Notes
    -----
    Nothing is downloaded: a tokenizer's vocabulary is model-specific and would have to
    be fetched. Instead the UTF-8 length is divided by ``bytes_per_token``. The default 3.0
    is below the rule of thumb of about 4 characters of English per token for the
    large-vocabulary BPE tokenizers of current models (GPT-4o, Llama 3, Qwen; a published
    rule of thumb, not measured here), so prose is over-counted and the text is cut early
    rather than late; dense numeric tables and tokenizers that split every digit
    (Llama 2, Mistral) can take more tokens than estimated, which the run's ``margin`` and the
    ``prompt_tokens`` the server reports (compared in :attr:`DocBenchRun.counts`) are there
    to catch. ``bytes_per_token=1.0`` is a bound for byte-level tokenizers: every token
    covers at least one byte, so the estimate is never below the true count. For an exact
    count pass the model's tokenizer as ``count_tokens`` to :func:`run_docbench`.

    Examples
    --------
    >>> estimate_tokens("Net income was $5.5 million.")  # 28 bytes / 3 = 9.33 -> 10
    10
    >>> estimate_tokens("Überschuss", bytes_per_token=1.0)  # Ü is 2 bytes: 11
    11
    """
    if not isinstance(text, str):
        raise ValidationError(f"text must be a string; found {type(text).__name__}")
    if not is_real(bytes_per_token) or not float(bytes_per_token) > 0:
        raise ValidationError(f"bytes_per_token must be a number > 0; found {bytes_per_token!r}")
    return math.ceil(len(text.encode("utf-8")) / float(bytes_per_token))


@dataclass(frozen=True)
class FittedDocument:
    """A document's text cut to a token budget.

    Attributes
    ----------
    text : str
        What the prompt gets: the header, the cut note (when cut) and the pages kept.
    tokens : int
        ``text``'s token count (by the counter used).
    pages : int
        Pages of the document.
    pages_full : int
        Pages 1 .. ``pages_full`` are given whole.
    page_part : int or None
        The page after them given in part (its first lines), if any.
    lines_kept : int
        Lines of ``page_part`` kept (0 when there is none).
    """

    text: str
    tokens: int
    pages: int
    pages_full: int
    page_part: int | None = None
    lines_kept: int = 0

    @property
    def cut(self) -> bool:
        """Whether any text was left out."""
        return self.pages_full < self.pages

    @property
    def pages_left_out(self) -> int:
        """Pages not given at all."""
        return self.pages - self.pages_full - (self.page_part is not None)

    def to_dict(self) -> dict[str, Any]:
        """The counts, JSON-ready (without the text)."""
        return {"pages": self.pages, "pages_full": self.pages_full,
                "page_part": self.page_part, "lines_kept": self.lines_kept,
                "pages_left_out": self.pages_left_out, "tokens": self.tokens}


def _span(first: int, last: int) -> str:
    return f"page {first}" if first == last else f"pages {first}-{last}"


def _cut_note(n: int, full: int, part: int | None) -> str:
    given = []
    if full:
        given.append(f"{_span(1, full)} of {n} in full")
    if part is not None:
        given.append(f"page {part} in part")
    first_out = full + 1 + (part is not None)
    out = f"{_span(first_out, n)} left out" if first_out <= n else ""
    told = ", ".join(given + ([out] if out else [])) if given else f"{_span(1, n)} left out"
    return f"[The text was cut to fit the model's context: {told}.]"


_PART_MARK = "[the rest of this page and the pages after it are left out]"


def _compose(doc: PdfText, full: int, part: int | None, lines: list[str], kept: int) -> str:
    pieces = [doc.header()]
    if full < doc.page_count:
        pieces.append(_cut_note(doc.page_count, full, part))
    pieces += [doc.page(n) for n in range(1, full + 1)]
    if part is not None:
        pieces.append(doc.page(part, "\n".join([*lines[:kept], _PART_MARK])))
    return "\n\n".join(pieces)


def fit_document(doc: PdfText, budget: int, *,
                 count_tokens: Callable[[str], int] = estimate_tokens) -> FittedDocument:
    """Cut a PDF's rendered text to at most ``budget`` tokens, keeping the first pages.

    Parameters
    ----------
    doc : PdfText
        From :func:`confcal.extras.pdf.pdf_text`.
    budget : int
        Tokens the document text may take.
    count_tokens : callable, default :func:`estimate_tokens`
        str -> number of tokens.

    Returns
    -------
    FittedDocument

    Raises
    ------
    ValidationError
        The header and the cut note alone exceed ``budget``.

    Notes
    -----
    The header (page count, words, title, author) is always kept, so meta-data questions
    stay answerable. Pages are kept whole from the first while they fit, as DocBench kept
    the start of the text; the next page is then kept line by line as far as it fits, ending
    with a mark that the rest is left out, and a note after the header says which pages
    were given in full, in part and not at all. The final text is counted once more as a
    whole (a tokenizer's count of joined pieces may differ from the sum of the pieces) and
    shortened a line or page at a time until it fits.

    Examples
    --------
    >>> doc = PdfText("r.pdf", ("a " * 40, "b " * 40, "c " * 40), (0, 0, 0))
    >>> fitted = fit_document(doc, 90, count_tokens=lambda s: len(s.split()))
    >>> fitted.pages_full, fitted.page_part, fitted.pages_left_out, fitted.tokens <= 90
    (1, None, 2, True)
    >>> print(fitted.text.splitlines()[4])
    [The text was cut to fit the model's context: page 1 of 3 in full, pages 2-3 left out.]
    """
    if not isinstance(doc, PdfText):
        raise ValidationError(f"doc must be a PdfText (from pdf_text); found {type(doc).__name__}")
    budget = check_positive_int(budget, "budget", 1)
    whole = doc.render()
    tokens = count_tokens(whole)
    if tokens <= budget:
        return FittedDocument(whole, tokens, doc.page_count, doc.page_count)
    n = doc.page_count
    worst_note = _cut_note(n, max(n - 2, 0), n - 1 if n > 1 else None)
    used = count_tokens(doc.header()) + count_tokens("\n\n" + worst_note)
    if used > budget:
        raise ValidationError(
            f"{doc.source}: the document's header and cut note need {used} tokens, more than "
            f"the {budget} its text may take; raise context_tokens", source=doc.source)
    full = 0
    while full < n:
        cost = count_tokens("\n\n" + doc.page(full + 1))
        if used + cost > budget:
            break
        used, full = used + cost, full + 1
    part: int | None = None
    lines: list[str] = []
    kept = 0
    if full < n:
        lines = doc.pages[full].splitlines()
        low, high = 0, len(lines)  # the most lines that fit, by bisection
        while low < high:
            mid = (low + high + 1) // 2
            block = doc.page(full + 1, "\n".join([*lines[:mid], _PART_MARK]))
            if used + count_tokens("\n\n" + block) <= budget:
                low = mid
            else:
                high = mid - 1
        if low:
            part, kept = full + 1, low
    while True:
        text = _compose(doc, full, part, lines, kept)
        tokens = count_tokens(text)
        if tokens <= budget:
            return FittedDocument(text, tokens, n, full, part, kept)
        if part is not None and kept > 1:
            kept -= 1
        elif part is not None:
            part, kept = None, 0
        elif full:
            full -= 1
        else:
            raise ValidationError(
                f"{doc.source}: the document's header and cut note need {tokens} tokens, "
                f"more than the {budget} its text may take; raise context_tokens",
                source=doc.source)


# ---------------------------------------------------------------------------------------
# prompts
# ---------------------------------------------------------------------------------------
def _check_template(template: Any) -> str:
    if not isinstance(template, str):
        raise ValidationError(f"template must be a string; found {type(template).__name__}")
    names = _PLACEHOLDER.findall(template)
    unknown = sorted(set(names) - {"document", "question"})
    if unknown:
        raise ValidationError(f"template may hold only the placeholders {{{{document}}}} and "
                              f"{{{{question}}}}; found {{{{{unknown[0]}}}}}")
    for name in ("document", "question"):
        if name not in names:
            raise ValidationError(f"template must hold {{{{{name}}}}}; found none in "
                                  f"{template[:80]!r}")
    return template


def _fill(template: str, document: str, question: str) -> str:
    # one pass: a document that happens to contain "{{question}}" is not filled in again
    values = {"document": document, "question": question}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def build_question_request(document: str, question: str, *,
                           system_prompt: str = DEFAULT_SYSTEM_PROMPT,
                           template: str = DEFAULT_TEMPLATE,
                           max_tokens: int = 512,
                           sampling: Mapping[str, Any] | None = None) -> ChatRequest:
    """The request :func:`run_docbench` sends for one question.

    Parameters
    ----------
    document : str
        The document text (:attr:`FittedDocument.text`).
    question : str
    system_prompt : str, default :data:`DEFAULT_SYSTEM_PROMPT`
    template : str, default :data:`DEFAULT_TEMPLATE`
        The user message; ``{{document}}`` and ``{{question}}`` are replaced in one pass
        (text inside the document is never taken for a placeholder).
    max_tokens : int, default 512
        The most tokens the answer may have.
    sampling : mapping, optional
        Sampling parameters to send (``{"temperature": 0.0}`` for greedy decoding where
        the server takes it); none by default, so the server decides.

    Returns
    -------
    ChatRequest

    Examples
    --------
    >>> request = build_question_request("[Page 1 of 1]\\nNet income: $5m.", "Net income?")
    >>> print(request.text)
    [Page 1 of 1]
    Net income: $5m.
    <BLANKLINE>
    Question: Net income?
    Answer:
    """
    template = _check_template(template)
    if not isinstance(system_prompt, str):
        raise ValidationError(f"system_prompt must be a string; found "
                              f"{type(system_prompt).__name__}")
    for name, value in (("document", document), ("question", question)):
        if not isinstance(value, str):
            raise ValidationError(f"{name} must be a string; found {type(value).__name__}")
    return ChatRequest(system=system_prompt, text=_fill(template, document, question),
                       max_tokens=check_positive_int(max_tokens, "max_tokens", 1),
                       **check_sampling(sampling))


# ---------------------------------------------------------------------------------------
# the folder
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Question:
    doc_id: str
    line: int           # of <n>_qa.jsonl
    raw: dict[str, Any]  # the qa object as DocBench wrote it
    record: dict[str, Any]  # confcal's record fields (no answer yet)


def _raw_questions(qa_file: Path) -> list[tuple[int, dict[str, Any]]]:
    found = []
    with open(qa_file, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if raw.strip():  # bytes: a BOM on line 1 is read as JSON allows
                found.append((number, read_json_object(
                    raw, where=f"{qa_file}, line {number}:", what="a JSON object (one record)",
                    source=qa_file, line=number)))
    return found


def _find_pdf(folder: Path) -> Path:
    pdfs = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".pdf")
    if len(pdfs) != 1:
        found = "none" if not pdfs else f"{len(pdfs)} ({', '.join(p.name for p in pdfs)})"
        raise ValidationError(f"{folder}: must hold the document as one PDF file; found {found}",
                              source=folder)
    return pdfs[0]


def _questions(root: Path, domains: Any) -> tuple[list[_Question], dict[str, Path]]:
    records = load_docbench(root, domains=domains)  # checks every qa line, names file + line
    questions: list[_Question] = []
    pdfs: dict[str, Path] = {}
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for row in records.to_dict(orient="records"):
        by_doc.setdefault(str(row["doc_id"]), []).append(row)
    for doc_id, rows in by_doc.items():
        folder = root / doc_id
        pdfs[doc_id] = _find_pdf(folder)
        qa_file = folder / f"{doc_id}_qa.jsonl"
        raw = _raw_questions(qa_file)
        if len(raw) != len(rows):  # the loader and this reader must agree line for line
            raise ValidationError(f"{qa_file}: read as {len(rows)} questions by load_docbench "
                                  f"and {len(raw)} lines here", source=qa_file)
        for (line, obj), row in zip(raw, rows, strict=True):
            evidence = row.get("evidence")
            record = {"doc_id": doc_id, "question": row["question"],
                      "reference": row["reference"], "domain": row["domain"],
                      "qtype": row["qtype"],
                      "evidence": evidence if isinstance(evidence, str) else None}
            questions.append(_Question(doc_id, line, obj, record))
    return questions, pdfs


# ---------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DocBenchRun:
    """What :func:`run_docbench` asked, got and wrote.

    Attributes
    ----------
    records : DataFrame
        One QA record per answered question (:func:`confcal.qa.docqa.check_records`'s
        columns, ``system`` set), plus ``line`` (of ``<n>_qa.jsonl``), ``finish_reason``,
        ``text_cut`` (the document text was cut to fit), ``prompt_tokens_estimated`` and
        ``prompt_tokens`` (as the server reported it; null when it did not). Questions whose
        call failed are not here: they are in ``failures``.
    failures : tuple of mappings
        ``{"doc_id", "line", "question", "message"}`` per question whose call failed after
        the client's retries; nothing about them is cached, so the next run asks them.
    documents : mapping
        doc_id -> ``{"pdf", "pages", "pages_full", "page_part", "lines_kept",
        "pages_left_out", "tokens"}``: how each document was fitted.
    counts : mapping of str to int
        ``documents``, ``documents_cut``, ``questions``, ``answered``, ``failed``,
        ``cached`` (answers read from the cache), ``called`` (answers bought),
        ``unreadable`` (cache entries that could not be read as an answer - not a regular
        file, too large, not JSON, wrong types -: asked again and replaced),
        ``shared`` (questions repeating another's exact request, asked once),
        ``answers_cut`` (stopped at ``max_tokens``), ``answers_empty``, and, over the answers
        whose server reported ``prompt_tokens``: ``prompt_tokens_reported`` (how many) and
        ``prompt_tokens_over_estimate`` (how many took more tokens than estimated).
    system : str
        The name the results are filed under.
    out : Path
        The folder written.
    """

    records: pd.DataFrame
    failures: tuple[Mapping[str, Any], ...]
    documents: Mapping[str, Mapping[str, Any]]
    counts: Mapping[str, int]
    system: str
    out: Path

    @property
    def complete(self) -> bool:
        """Every question has an answer."""
        return not self.failures


def _system_name(system: Any, client: Any) -> str:
    if system is None:
        name = _NAME.sub("-", str(client.model)).strip("-.")
        if not name:
            raise ValidationError(f"system must be given: the model name {client.model!r} "
                                  "has no characters usable in a file name")
        return name
    if not isinstance(system, str) or not system or _NAME.search(system) \
            or system.startswith("."):
        raise ValidationError(f"system must be a file-name-safe name (letters, digits, '.', "
                              f"'_', '-', not starting with '.'); found {system!r}")
    return system


def _check_margin(margin: Any) -> float:
    if not is_real(margin) or not 0.0 <= float(margin) < 1.0:
        raise ValidationError(f"margin must be a number in [0, 1); found {margin!r}")
    return float(margin)


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def run_docbench(client: ChatClient, folder: str | os.PathLike[str], *,
                 out: str | os.PathLike[str], context_tokens: int,
                 cache_dir: str | os.PathLike[str] | None = None, system: str | None = None,
                 max_tokens: int = 512, margin: float = 0.1,
                 count_tokens: Callable[[str], int] | None = None, concurrency: int = 4,
                 system_prompt: str = DEFAULT_SYSTEM_PROMPT, template: str = DEFAULT_TEMPLATE,
                 domains: Mapping[str, str] | Callable[[str], str] | None = None,
                 sampling: Mapping[str, Any] | None = None,
                 progress: bool = True) -> DocBenchRun:
    """Answer every question of a DocBench folder with a model reading the PDFs' text.

    Parameters
    ----------
    client : ChatClient
        E.g. :class:`~confcal.extras.clients.OpenAICompatibleClient`.
    folder : path
        DocBench's layout: one folder per document, ``<n>/`` holding one PDF and
        ``<n>_qa.jsonl`` (read by :func:`confcal.qa.docqa.load_docbench`).
    out : path
        The output folder (:data:`RUN_FILES` and DocBench's results, below); it must be
        new, empty or a previous ``qa run`` output holding only what it wrote (listed in
        its manifest ``.confcal-manifest.json``, unchanged), which it replaces whole;
        anything else in it is an error naming the entry, and nothing is removed.
    context_tokens : int
        The model's context window in tokens (prompt and answer).
    cache_dir : path, optional
        Answers are stored there as each arrives (kind ``"qa-run"``): a run that is
        interrupted or partly fails is resumed by running it again, and only the questions
        without a cached answer are asked. None: no cache.
    system : str, optional
        The name DocBench files the answers under (``<system>_results.jsonl``); default
        the model name with characters other than letters, digits, ``.``, ``_``, ``-``
        replaced by ``-``.
    max_tokens : int, default 512
        The longest answer; reserved in the context.
    margin : float, default 0.1
        Share of ``context_tokens`` kept free for the error of the token count.
    count_tokens : callable, optional
        str -> tokens; default :func:`estimate_tokens` (UTF-8 bytes / 3). Pass the model's
        tokenizer for exact counts, e.g. ``lambda s: len(enc.encode(s))``.
    concurrency : int, default 4
        Requests in flight at once.
    system_prompt, template : str
        The prompts (:func:`build_question_request`).
    domains : mapping or callable, optional
        Folder name -> domain (default DocBench's numbering, as ``load_docbench``).
    sampling : mapping, optional
        Sampling parameters every question sends (:func:`build_question_request`); none
        by default.
    progress : bool, default True
        A tqdm progress bar.

    Returns
    -------
    DocBenchRun

    Raises
    ------
    ValidationError
        Before any call: a bad argument, an empty folder, a bad qa line (file and line
        named), a folder without exactly one PDF, an unreadable or encrypted PDF, a context
        too small for a document's header, an ``out`` holding other files; later: a
        folder where a cache entry belongs (an unreadable entry is asked again instead).

    Notes
    -----
    The document text is fitted once per document, for its longest question, so every
    question of a document sends the same text (a server's prefix cache can reuse it):
    ``budget = floor(context_tokens * (1 - margin)) - max_tokens - 32 - tokens(system prompt)
    - tokens(template with the longest question)``, 32 tokens being reserved for the chat
    template's role markers. See :func:`fit_document` for what is kept.

    ``out`` gets, written together once every question was asked:

    - ``records.jsonl``: confcal QA records of the answered questions, for
      ``confcal qa --records`` (or :func:`confcal.qa.docqa.load_records`);
    - ``<n>/<n>_qa.jsonl`` (a copy) and ``<n>/<system>_results.jsonl``: DocBench's
      ``run.py`` output for open models, each qa object with ``"sys_ans"`` added, so
      ``out`` is itself a DocBench folder for ``confcal qa --docbench OUT --system S``. A
      document with a failed question gets no results file (DocBench needs one answer per
      question);
    - ``<system>_eval_input.jsonl``: the qa objects with ``"sys_ans"`` and ``"file"`` (the
      folder name), the input of DocBench's ``evaluate.py``;
    - ``<n>/document.txt``: the document text every question of ``<n>`` was sent;
    - ``failures.jsonl`` (empty when none failed) and ``run.json`` (settings, counts, how
      each document was fitted, and under ``"prompt"`` the system prompt, the template and
      :data:`FILL_RULE`; no key, header or URL). Each record's ``prompt_sha256`` is the
      SHA-256 of its UTF-8 user message, so a prompt rebuilt by that rule can be checked.

    A failed call (:class:`~confcal.exceptions.ModelError` after the client's retries) does
    not stop the run: it is counted, listed and asked again by the next run. On an
    interrupt nothing is written to ``out``; the answers that arrived are in the cache.

    Examples
    --------
    >>> from confcal.extras.clients import OpenAICompatibleClient
    >>> client = OpenAICompatibleClient("http://127.0.0.1:8000/v1", "my_model",
    ...                                 api_key_env=None)
    >>> run = run_docbench(client, "data", out="run-out", cache_dir="run-cache",
    ...                    context_tokens=8192)                      # doctest: +SKIP
    >>> run.counts["answered"], run.counts["failed"]                 # doctest: +SKIP
    (1102, 0)
    """
    if not isinstance(client, ChatClient):
        raise ValidationError("client must have provider, model, supports_logprobs and "
                              f"complete(request) (a ChatClient); found {type(client).__name__}")
    root = Path(folder)
    out = Path(out)
    context_tokens = check_positive_int(context_tokens, "context_tokens", 1)
    max_tokens = check_positive_int(max_tokens, "max_tokens", 1)
    concurrency = check_positive_int(concurrency, "concurrency", 1)
    margin = _check_margin(margin)
    tokens = _token_counter(count_tokens)
    template = _check_template(template)
    sampling = check_sampling(sampling)
    if not isinstance(system_prompt, str):
        raise ValidationError(f"system_prompt must be a string; found "
                              f"{type(system_prompt).__name__}")
    if not isinstance(progress, bool):
        raise ValidationError(f"progress must be True or False; found {progress!r}")
    name = _system_name(system, client)
    if not root.is_dir():
        raise ValidationError(f"folder must be an existing folder; found {str(root)!r}",
                              source=root)

    # Everything is read, fitted and built before the first call: an input error costs
    # nothing, and the output folder is checked now, not after an hour of answers.
    questions, pdfs = _questions(root, domains)
    doc_ids = list(dict.fromkeys(q.doc_id for q in questions))
    eval_name = f"{name}_eval_input.jsonl"
    check_destination(out, "qa run output")
    usable = math.floor(context_tokens * (1.0 - margin)) - max_tokens - _CHAT_OVERHEAD \
        - tokens(system_prompt)
    fitted = {doc_id: _fit_for_longest_question(
                  doc_id, [q.record["question"] for q in questions if q.doc_id == doc_id],
                  pdfs[doc_id], usable, template, tokens, context_tokens=context_tokens,
                  margin=margin, max_tokens=max_tokens)
              for doc_id in doc_ids}
    requests = [build_question_request(fitted[q.doc_id].text, q.record["question"],
                                       system_prompt=system_prompt, template=template,
                                       max_tokens=max_tokens, sampling=sampling)
                for q in questions]

    cache = None
    if cache_dir is not None:
        Path(cache_dir).parent.mkdir(parents=True, exist_ok=True)
        cache = ChatCache(cache_dir, kind="qa-run")
    # one call per distinct request: a question repeated word for word is asked once
    keys = ([cache.key(client, r) for r in requests] if cache is not None
            else [ChatCache.digest(r.fingerprint()) for r in requests])
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    bar = _progress_bar(len(first), f"{client.model} on {root.name or root}", progress,
                        unit="question", user="confcal.extras.docbench", extra="models")
    answers, failed, tally = _ask(client, requests, keys, list(first.values()), cache,
                                  concurrency=concurrency, bar=bar)
    tally["unreadable"] = 0 if cache is None else len(dict.fromkeys(cache.unreadable))
    return _write(out, client, name, root, questions, requests, keys, first, answers,
                  failed, fitted, pdfs, tally, tokens=tokens,
                  settings={"context_tokens": context_tokens, "max_tokens": max_tokens,
                            "margin": margin, "concurrency": concurrency,
                            "sampling": sampling,
                            "prompt": {"system_prompt": system_prompt, "template": template,
                                       "fill": FILL_RULE},
                            "token_count": "count_tokens" if count_tokens is not None
                            else f"estimate_tokens (UTF-8 bytes / {BYTES_PER_TOKEN:g})"},
                  eval_name=eval_name)


def _token_counter(count_tokens: Any) -> Callable[[str], int]:
    """``count_tokens`` (default :func:`estimate_tokens`), checked to return an int >= 0."""
    counter = estimate_tokens if count_tokens is None else count_tokens
    if not callable(counter):
        raise ValidationError(f"count_tokens must be a function str -> int; found "
                              f"{type(counter).__name__}")

    def tokens(text: str) -> int:
        value = counter(text)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationError(f"count_tokens must return an integer >= 0; found "
                                  f"{value!r}")
        return value

    return tokens


def _fit_for_longest_question(doc_id: str, questions: list[str], pdf: Path, usable: int,
                              template: str, tokens: Callable[[str], int], *,
                              context_tokens: int, margin: float, max_tokens: int) -> Any:
    """One document's text fitted to the room its longest question leaves of ``usable``
    tokens (the context after margin, answer and prompts).

    Every question of the document then sends the same text (a server's prefix cache can
    reuse it).
    """
    longest = max(questions, key=lambda text: tokens(_fill(template, "", text)))
    budget = usable - tokens(_fill(template, "", longest))
    if budget < 1:
        raise ValidationError(
            f"context_tokens={context_tokens} leaves no room for the text of document "
            f"{doc_id!r} ({budget} tokens after margin={margin:g}, max_tokens="
            f"{max_tokens}, the prompts and the longest question); raise context_tokens",
            doc_id=doc_id)
    try:
        return fit_document(pdf_text(pdf), budget, count_tokens=tokens)
    except ValidationError as exc:
        raise exc.with_location(doc_id=doc_id) from None


def _ask(client: ChatClient, requests: list[ChatRequest], keys: list[str], todo: list[int],
         cache: ChatCache | None, *, concurrency: int, bar: Any,
         ) -> tuple[dict[int, ChatResponse], dict[int, str], dict[str, int]]:
    """The answers of the requests ``todo``, from the cache or the client, and the failures.

    Each answer is cached the moment it arrives; a :class:`ModelError` is recorded, not
    raised. An interrupt stops handing out work; what arrived is in the cache already.
    Returns answers and failure messages by request index, and the ``cached`` and
    ``called`` counts.
    """
    tally = {"cached": 0, "called": 0}
    lock = threading.Lock()

    def work(i: int) -> ChatResponse:
        request = requests[i]
        if cache is not None:
            cached = cache.get(keys[i])
            if cached is not None:
                with lock:
                    tally["cached"] += 1
                return cached
        response = client.complete(request)
        if cache is not None:
            cache.put(keys[i], response)  # kept the moment it arrives
        with lock:
            tally["called"] += 1
        return response

    answers: dict[int, ChatResponse] = {}
    failed: dict[int, str] = {}
    for i, outcome in run_concurrently(work, todo, concurrency=concurrency, bar=bar,
                                       catch=ModelError).items():
        if isinstance(outcome, ModelError):
            failed[i] = str(outcome)
        else:
            answers[i] = outcome
    return answers, failed, tally


def _write(out: Path, client: Any, name: str, root: Path,
           questions: list[_Question], requests: list[ChatRequest], keys: list[str],
           first: dict[str, int], answers: dict[int, ChatResponse], failed: dict[int, str],
           fitted: dict[str, Any], pdfs: dict[str, Path], tally: dict[str, int], *,
           tokens: Callable[[str], int], settings: dict[str, Any],
           eval_name: str) -> DocBenchRun:
    records: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    results: dict[str, list[dict[str, Any]]] = {}
    eval_rows: list[dict[str, Any]] = []
    incomplete: set[str] = set()
    reported = over = cut = empty = 0
    for i, q in enumerate(questions):
        source = first[keys[i]]
        if source in failed:
            failures.append({"doc_id": q.doc_id, "line": q.line,
                             "question": q.record["question"], "message": failed[source]})
            incomplete.add(q.doc_id)
            continue
        response = answers[source]
        estimated = tokens(requests[i].system) + tokens(requests[i].text) + _CHAT_OVERHEAD
        reported_tokens = response.usage.get("prompt_tokens") if i == source else None
        if reported_tokens is not None:
            reported += 1
            over += reported_tokens > estimated
        cut += response.finish_reason == "length"
        empty += not response.text.strip()
        records.append({**q.record, "answer": response.text, "system": name, "line": q.line,
                        "finish_reason": response.finish_reason,
                        "text_cut": fitted[q.doc_id].cut,
                        "prompt_tokens_estimated": estimated,
                        "prompt_tokens": reported_tokens,
                        "prompt_sha256": hashlib.sha256(
                            requests[i].text.encode("utf-8", "surrogatepass")).hexdigest()})
        results.setdefault(q.doc_id, []).append({**q.raw, "sys_ans": response.text})
        eval_rows.append({**q.raw, "sys_ans": response.text, "file": q.doc_id})
    doc_ids = list(dict.fromkeys(q.doc_id for q in questions))
    documents = {d: MappingProxyType({"pdf": pdfs[d].name, **fitted[d].to_dict()})
                 for d in doc_ids}
    counts = {"documents": len(doc_ids),
              "documents_cut": sum(fitted[d].cut for d in doc_ids),
              "questions": len(questions), "answered": len(records),
              "failed": len(failures), "cached": tally["cached"], "called": tally["called"],
              "unreadable": tally["unreadable"],
              "shared": len(questions) - len(first), "answers_cut": cut,
              "answers_empty": empty, "prompt_tokens_reported": reported,
              "prompt_tokens_over_estimate": over}
    frame = check_records(records) if records else pd.DataFrame()
    summary = {"format": "confcal.qa-run", "version": 1, "system": name,
               "provider": str(client.provider), "model": str(client.model),
               "folder": str(root), **settings, "counts": counts,
               "documents": {d: dict(v) for d, v in documents.items()}}
    with staged_folder(out, "qa run output") as staging:
        (staging / "records.jsonl").write_text(_jsonl(records), encoding="utf-8")
        (staging / "failures.jsonl").write_text(_jsonl(failures), encoding="utf-8")
        (staging / eval_name).write_text(_jsonl(eval_rows), encoding="utf-8")
        (staging / "run.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False)
                                          + "\n", encoding="utf-8")
        for doc_id in doc_ids:
            folder = staging / doc_id
            folder.mkdir()
            qa_name = f"{doc_id}_qa.jsonl"
            (folder / qa_name).write_bytes((root / doc_id / qa_name).read_bytes())
            (folder / "document.txt").write_bytes(
                fitted[doc_id].text.encode("utf-8", "surrogatepass"))
            if doc_id not in incomplete:
                (folder / f"{name}_results.jsonl").write_text(_jsonl(results[doc_id]),
                                                              encoding="utf-8")
    return DocBenchRun(records=frame, failures=tuple(MappingProxyType(f) for f in failures),
                       documents=MappingProxyType(documents),
                       counts=MappingProxyType(counts), system=name, out=out)
