"""confcal.extras.pdf, confcal.extras.docbench and ``confcal qa run``, end to end.

The PDFs are made here with PyMuPDF (several pages, a table, title and author); the model is
a real HTTP server on 127.0.0.1 (tests/extras/_docbench_helpers.py) that answers only from
the prompt it receives, so a right answer proves the page markers, the table row and the
metadata reached the prompt. Nothing else on the network is contacted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import types
from pathlib import Path

import pytest

from _optional import need_module
from _profiles import examples

pymupdf = need_module("pymupdf")

from _docbench_helpers import (  # noqa: E402
    PAPER_PAGES,
    PAPER_QA,
    REPORT_QA,
    ReaderServer,
    make_folder,
    make_pdf,
    qa,
    write_jsonl,
)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from confcal.cli import main  # noqa: E402
from confcal.exceptions import ValidationError  # noqa: E402
from confcal.extras.clients import ChatRequest, ChatResponse, OpenAICompatibleClient  # noqa: E402
from confcal.extras.docbench import (  # noqa: E402
    DEFAULT_TEMPLATE,
    RUN_FILES,
    build_question_request,
    estimate_tokens,
    fit_document,
    run_docbench,
)
from confcal.extras.pdf import PdfText, pdf_text  # noqa: E402
from confcal.qa.docqa import RuleJudge, judge_records, load_docbench, load_records  # noqa: E402

SECRET = "sk-docbench-test-not-real-41c7"
N_QUESTIONS = len(PAPER_QA) + len(REPORT_QA)  # 5 + 2 = 7


@pytest.fixture
def local(monkeypatch):
    monkeypatch.setenv("CONFCAL_TEST_KEY", SECRET)
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def data(tmp_path):
    return make_folder(tmp_path / "data")


def client_for(server, **options):
    return OpenAICompatibleClient(server.url, "reader-1", api_key_env="CONFCAL_TEST_KEY",
                                  **{"max_retries": 0, **options})


def run(server, data, tmp_path, **options):
    options = {"out": tmp_path / "out", "cache_dir": tmp_path / "cache",
               "context_tokens": 8000, "progress": False, **options}
    return run_docbench(client_for(server), data, **options)


# ------------------------------------------------------------------------------ pdf_text
def test_pdf_text_keeps_pages_table_rows_and_metadata(data):
    text = pdf_text(data / "0" / "2401.00001.pdf")
    assert text.page_count == 3 and text.title == "Sleep and Memory in Adults"
    assert text.author == "Ada Lovelace" and text.images == (0, 0, 0)
    # words: page 1 = 5 (title) + 11 (the sentence) + 60 ("Background text." x 30);
    # page 2 = 1 ("Results") + 3 x 3 table cells; page 3 = 1 + 3 + 60: 76 + 10 + 64 = 150
    assert text.word_count == 150
    # sort=True keeps a table row on one line
    assert re.search(r"^2023\s+91\.5%\s+68$", text.pages[1], re.M)
    rendered = text.render()
    assert rendered.startswith("Document information:\n- pages: 3\n- words: 150\n- title: "
                               "Sleep and Memory in Adults\n- author: Ada Lovelace\n\n"
                               "[Page 1 of 3]\n")
    assert [m for m in re.findall(r"^\[Page (\d) of 3\]$", rendered, re.M)] == ["1", "2", "3"]


def test_pdf_text_without_metadata_counts_images_and_empty_pages(tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Only page with text.")
    blank = doc.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 8, 8), 0)
    pixmap.clear_with(100)
    blank.insert_image(pymupdf.Rect(72, 72, 144, 144), pixmap=pixmap)
    doc.save(tmp_path / "scan.pdf")
    text = pdf_text(tmp_path / "scan.pdf")
    assert (text.title, text.author, text.images, text.pages_without_text) == (
        None, None, (0, 1), (2,))
    assert "- title" not in text.header() and "- pages without text: 2" in text.header()
    assert text.page(2) == ("[Page 2 of 2]\n(no text on this page)\n"
                            "[this page shows 1 image, not given here]")


def test_pdf_text_errors_name_the_file(tmp_path):
    with pytest.raises(ValidationError, match=r"path must be an existing PDF file; found "
                                              r"'.*missing\.pdf'"):
        pdf_text(tmp_path / "missing.pdf")
    (tmp_path / "empty.pdf").write_bytes(b"")
    with pytest.raises(ValidationError, match=r"empty\.pdf: must be a readable PDF; found a "
                                              r"file PyMuPDF cannot open"):
        pdf_text(tmp_path / "empty.pdf")
    (tmp_path / "text.pdf").write_bytes(b"this is not a PDF")
    with pytest.raises(ValidationError, match=r"text\.pdf: must be a readable PDF") as info:
        pdf_text(tmp_path / "text.pdf")
    assert info.value.source == str(tmp_path / "text.pdf")
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret")
    doc.save(tmp_path / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u",
             owner_pw="o")
    with pytest.raises(ValidationError, match=r"locked\.pdf: must be a PDF that opens without "
                                              r"a password; found an encrypted one"):
        pdf_text(tmp_path / "locked.pdf")
    with pytest.raises(ValidationError, match=r"number must be a page number from 1 to 1"):
        PdfText("a.pdf", ("x",), (0,)).page(2)


def _blank_pages(path, n: int, text: str = ""):
    doc = pymupdf.open()
    for _ in range(n):
        page = doc.new_page()
        if text:
            page.insert_text((72, 72), text)
    doc.save(path, garbage=4, deflate=True)
    return path


def test_pdf_text_bounds_pages_before_reading_any(tmp_path, monkeypatch):
    path = _blank_pages(tmp_path / "many.pdf", 30)
    read = []
    monkeypatch.setattr(pymupdf.Page, "get_text", lambda *a, **k: read.append(1) or "")
    with pytest.raises(ValidationError, match=r"many\.pdf: must have at most 20 pages "
                                              r"\(max_pages=20 raises it\); found 30") as info:
        pdf_text(path, max_pages=20)
    assert read == [] and info.value.source == str(path)  # refused from the page count
    assert pdf_text(path, max_pages=30).page_count == 30


def test_pdf_text_bounds_time_and_characters_page_by_page(tmp_path, monkeypatch):
    path = _blank_pages(tmp_path / "slow.pdf", 5, text="twelve chars")
    # a clock that moves 10 s a call: the bound is checked after each page, never a cut text
    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr("confcal.extras.pdf.time",
                        types.SimpleNamespace(monotonic=lambda: float(next(clock))))
    with pytest.raises(ValidationError, match=r"slow\.pdf: must be read within 15 s "
                                              r"\(max_seconds=15\.0 raises it\); found 20\.0 s "
                                              r"spent by page 2 of 5"):
        pdf_text(path, max_seconds=15)
    monkeypatch.undo()
    # 12 characters a page: 36 by page 3
    with pytest.raises(ValidationError, match=r"must hold at most 30 characters of text "
                                              r"\(max_chars=30 raises it\); found more by "
                                              r"page 3 of 5"):
        pdf_text(path, max_chars=30)
    assert pdf_text(path, max_chars=60).word_count == 10
    with pytest.raises(ValidationError, match=r"max_seconds must be a number > 0; found 0"):
        pdf_text(path, max_seconds=0)


# --------------------------------------------------------------------- tokens and fitting
def words(text: str) -> int:
    return len(text.split())


def test_estimate_tokens_divides_utf8_bytes():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1            # 3 bytes / 3
    assert estimate_tokens("abcd") == 2           # 4 / 3 = 1.33 -> 2
    assert estimate_tokens("€") == 1              # 3 bytes (E2 82 AC) / 3
    assert estimate_tokens("€uro", bytes_per_token=1) == 6  # 3 + 3 bytes
    with pytest.raises(ValidationError, match=r"bytes_per_token must be a number > 0; found 0"):
        estimate_tokens("a", bytes_per_token=0)


def test_fit_document_by_hand():
    # counted in words. The header is 3 lines, 8 words ("Document information:" 2, "- pages:
    # 3" 3, "- words: 30" 3); each page block is "[Page n of 3]" (4 words) + 10 words = 14.
    doc = PdfText("r.pdf", tuple(" ".join([f"p{n}"] * 10) for n in (1, 2, 3)), (0, 0, 0))
    whole = fit_document(doc, 8 + 3 * 14, count_tokens=words)       # 50: everything fits
    assert (whole.cut, whole.tokens, whole.text) == (False, 50, doc.render())
    # budget 49: the note is reserved at its longest ("... page 1 of 3 in full, page 2 in
    # part, page 3 left out.]": 23 words): 8 + 23 + 14 = 45 keeps page 1 whole; page 2 would
    # take 14 more (59 > 49); its one line (10) + the cut mark (12) + its marker (4) is 26 >
    # the 4 left, so nothing of it is kept.
    fitted = fit_document(doc, 49, count_tokens=words)
    assert (fitted.pages_full, fitted.page_part, fitted.pages_left_out) == (1, None, 2)
    note = ("[The text was cut to fit the model's context: page 1 of 3 in full, pages 2-3 "
            "left out.]")
    assert fitted.text == "\n\n".join([doc.header(), note, doc.page(1)])
    assert fitted.tokens == words(fitted.text) == 8 + 19 + 14  # the note as sent: 19 words
    # the header and the note do not fit (31 > 30): an error, not a text without its
    # page count
    with pytest.raises(ValidationError, match=r"r\.pdf: the document's header and cut note "
                                              r"need 31 tokens, more than the 30"):
        fit_document(doc, 30, count_tokens=words)


def test_fit_document_keeps_the_first_lines_of_the_page_it_cuts():
    lines = "\n".join(f"line {i} of page two" for i in range(1, 21))  # 20 lines, 5 words each
    doc = PdfText("r.pdf", ("one two three", lines), (0, 0))
    fitted = fit_document(doc, 60, count_tokens=words)
    assert (fitted.pages_full, fitted.page_part) == (1, 2)
    kept = fitted.text.split("[Page 2 of 2]\n", 1)[1].splitlines()
    assert kept[:-1] == lines.splitlines()[:fitted.lines_kept] and fitted.lines_kept >= 1
    assert kept[-1] == "[the rest of this page and the pages after it are left out]"
    assert "page 1 of 2 in full, page 2 in part." in fitted.text
    assert fitted.tokens == words(fitted.text) <= 60
    # one more line would not fit
    assert words(fitted.text) + 5 > 60


@settings(max_examples=examples(60), deadline=None)
@given(pages=st.lists(st.text(alphabet="ab \n€", max_size=120), min_size=1, max_size=6),
       budget=st.integers(60, 400))
def test_fitted_text_fits_keeps_a_prefix_and_the_header(pages, budget):
    doc = PdfText("p.pdf", tuple(pages), tuple(0 for _ in pages), title="T", author="A")
    try:
        fitted = fit_document(doc, budget)
    except ValidationError as exc:  # only when the header and the cut note cannot fit
        need = int(re.search(r"need (\d+) tokens", str(exc)).group(1))
        assert need > budget and need > estimate_tokens(doc.header())
        assert estimate_tokens(doc.render()) > budget
        return
    assert fitted.tokens == estimate_tokens(fitted.text) <= budget
    assert fitted.text.startswith(doc.header())
    for n in range(1, fitted.pages_full + 1):
        assert doc.page(n) in fitted.text
    shown = [int(m) for m in re.findall(r"^\[Page (\d+) of \d+\]$", fitted.text, re.M)]
    expected = list(range(1, fitted.pages_full + 1 + (fitted.page_part is not None)))
    assert shown == expected  # a prefix of the pages, in order
    assert fitted.cut == (fitted.pages_full < len(pages))
    if estimate_tokens(doc.render()) <= budget:
        assert not fitted.cut


def test_the_template_is_filled_in_one_pass():
    request = build_question_request("see {{question}} here", "Q?")
    assert request.text == "see {{question}} here\n\nQuestion: Q?\nAnswer:"
    with pytest.raises(ValidationError, match=r"template may hold only the placeholders "
                                              r"\{\{document\}\} and \{\{question\}\}; found "
                                              r"\{\{questions\}\}"):
        build_question_request("d", "q", template="{{document}} {{questions}}")
    with pytest.raises(ValidationError, match=r"template must hold \{\{question\}\}"):
        build_question_request("d", "q", template="{{document}}")
    assert DEFAULT_TEMPLATE.count("{{") == 2


# ---------------------------------------------------------------------------- the run
def test_run_answers_every_question_from_the_pdf_text(local, data, tmp_path):
    with ReaderServer() as server:
        result = run(server, data, tmp_path)
    assert dict(result.counts) == {
        "documents": 2, "documents_cut": 0, "questions": N_QUESTIONS,
        "answered": N_QUESTIONS, "failed": 0, "cached": 0, "called": N_QUESTIONS,
        "unreadable": 0, "shared": 0, "answers_cut": 0, "answers_empty": 0,
        "prompt_tokens_reported": 0, "prompt_tokens_over_estimate": 0}
    assert result.complete and result.system == "reader-1"
    records = result.records
    assert records["answer"].tolist() == [
        "128", "91.5%", "3", "Ada Lovelace", "The paper does not give an email address.",
        "5.5 million dollars", "2"]
    assert records["qtype"].tolist() == ["text-only", "multimodal", "meta-data", "meta-data",
                                         "unanswerable", "text-only", "meta-data"]
    assert records["domain"].tolist() == ["academia"] * 5 + ["finance"] * 2
    assert records["line"].tolist() == [1, 2, 3, 4, 5, 1, 2]
    assert not records["text_cut"].any()
    for body in server.requests:
        assert body["model"] == "reader-1" and "temperature" not in body
        assert body["max_tokens"] == 512
        assert body["messages"][0]["content"].startswith("You answer questions about one")
    users = server.user_messages()
    assert sorted(re.search(r"Question: (.*)\n", u).group(1) for u in users) == sorted(
        q["question"] for q in PAPER_QA + REPORT_QA)
    # one document text for all questions of a document (a server's prefix cache reuses it)
    texts = {u.split("\n\nQuestion: ")[0] for u in users}
    assert len(texts) == 2 and all(t.startswith("Document information:\n- pages: ")
                                   for t in texts)
    # the key went to the server it was given for, and nowhere else
    assert all(h["Authorization"] == f"Bearer {SECRET}" for h in server.headers)
    for path in [*(tmp_path / "out").rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8")


def test_outputs_are_docbench_layout_and_confcal_records(local, data, tmp_path):
    with ReaderServer() as server:
        result = run(server, data, tmp_path)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*RUN_FILES, "reader-1_eval_input.jsonl", "0", "50", ".confcal-manifest.json"])
    # DocBench's run.py output for open models: each qa object plus "sys_ans"
    lines = (out / "0" / "reader-1_results.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {**q, "sys_ans": a} for q, a in zip(PAPER_QA, result.records["answer"][:5],
                                            strict=True)]
    assert (out / "0" / "0_qa.jsonl").read_bytes() == (data / "0" / "0_qa.jsonl").read_bytes()
    # evaluate.py's input: plus "file", the folder name
    evaluated = [json.loads(line) for line in
                 (out / "reader-1_eval_input.jsonl").read_text().splitlines()]
    assert [e["file"] for e in evaluated] == ["0"] * 5 + ["50"] * 2
    assert evaluated[1]["type"] == "multimodal-t"  # DocBench's own label, as written
    # confcal reads both back to the same answers
    records = load_records(out / "records.jsonl")
    again = load_docbench(out, system="reader-1")
    assert records["answer"].tolist() == again["answer"].tolist() == \
        result.records["answer"].tolist()
    judged = judge_records(records, RuleJudge())
    # every answer was read from the prompt and matches its reference word for word (the
    # unanswerable one declines as the reference does)
    assert judged["verdict"].tolist() == [1] * N_QUESTIONS
    summary = json.loads((out / "run.json").read_text())
    assert summary["counts"] == dict(result.counts) and summary["model"] == "reader-1"
    assert summary["documents"]["0"]["pages"] == 3 and summary["documents"]["0"]["pdf"] == \
        "2401.00001.pdf"
    assert (out / "failures.jsonl").read_text() == ""


def test_confcal_qa_judges_the_output(local, data, tmp_path, capsys):
    with ReaderServer() as server:
        run(server, data, tmp_path)
    assert main(["qa", "--records", str(tmp_path / "out" / "records.jsonl"),
                 "-o", str(tmp_path / "judged")]) == 0
    verdicts = (tmp_path / "judged" / "verdicts.csv").read_text().splitlines()
    assert len(verdicts) == 1 + N_QUESTIONS
    assert main(["qa", "--docbench", str(tmp_path / "out"), "--system", "reader-1",
                 "-o", str(tmp_path / "judged2")]) == 0


def test_a_run_that_fails_midway_resumes_asking_only_what_is_missing(local, data, tmp_path):
    # the server fails every request after the third: 3 answers arrive, 4 calls fail
    with ReaderServer(fail=lambda n: 500 if n > 3 else None) as server:
        first = run(server, data, tmp_path, concurrency=1)
    assert len(server.requests) == N_QUESTIONS  # each failing question was tried once
    assert (first.counts["answered"], first.counts["failed"], first.counts["called"]) == (
        3, 4, 3)
    assert not first.complete
    failure = first.failures[0]
    assert (failure["doc_id"], failure["line"]) == ("0", 4) and "HTTP 500" in \
        failure["message"]
    out = tmp_path / "out"
    assert len((out / "failures.jsonl").read_text().splitlines()) == 4
    assert len(load_records(out / "records.jsonl")) == 3
    # a document with a failed question gets no DocBench results file (it needs them all)
    assert not (out / "0" / "reader-1_results.jsonl").exists()
    assert not (out / "50" / "reader-1_results.jsonl").exists()
    with ReaderServer() as healthy:
        second = run(healthy, data, tmp_path, concurrency=1)
    assert len(healthy.requests) == 4  # only the 4 that failed; none asked twice
    assert (second.counts["cached"], second.counts["called"], second.counts["answered"]) == (
        3, 4, N_QUESTIONS)
    assert second.complete and (out / "failures.jsonl").read_text() == ""
    with ReaderServer() as third_server:
        third = run(third_server, data, tmp_path)
    assert third_server.requests == [] and third.counts["cached"] == N_QUESTIONS
    assert third.records["answer"].tolist() == second.records["answer"].tolist()


class Interrupting:
    """The real client, interrupted (Ctrl-C) from its ``after``-th call on.

    Every later call is interrupted too: the worker thread may already have taken the next
    question when the interrupt reaches the run, and a dying process asks nothing more.
    """

    def __init__(self, client, after):
        self.client, self.after, self.calls = client, after, 0
        self.provider, self.model = client.provider, client.model
        self.supports_logprobs = client.supports_logprobs

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.calls >= self.after:
            raise KeyboardInterrupt
        return self.client.complete(request)


def test_an_interrupted_run_writes_nothing_and_loses_nothing(local, data, tmp_path):
    with ReaderServer() as server:
        client = Interrupting(client_for(server), after=4)
        with pytest.raises(KeyboardInterrupt):
            run_docbench(client, data, out=tmp_path / "out", cache_dir=tmp_path / "cache",
                         context_tokens=8000, concurrency=1, progress=False)
        assert len(server.requests) == 3
        assert not (tmp_path / "out").exists()
        assert len(list((tmp_path / "cache").rglob("*.json"))) == 3
        resumed = run(server, data, tmp_path, concurrency=1)
    assert len(server.requests) == N_QUESTIONS  # 3 before, 4 after: nothing asked twice
    assert (resumed.counts["cached"], resumed.counts["called"]) == (3, 4)


def test_concurrency_bounds_the_requests_in_flight(local, data, tmp_path):
    with ReaderServer(delay=0.15, hold_until=2) as server:
        result = run(server, data, tmp_path, concurrency=2, cache_dir=None)
    assert result.counts["answered"] == N_QUESTIONS
    assert server.max_in_flight == 2


def test_a_repeated_question_is_asked_once(local, data, tmp_path):
    write_jsonl(data / "50" / "50_qa.jsonl", [*REPORT_QA, REPORT_QA[0]])
    with ReaderServer() as server:
        result = run(server, data, tmp_path)
    assert len(server.requests) == N_QUESTIONS
    assert result.counts["shared"] == 1 and result.counts["answered"] == N_QUESTIONS + 1
    assert result.records["answer"].tolist()[-1] == "5.5 million dollars"


def test_a_small_context_cuts_the_text_and_says_so(local, data, tmp_path):
    # 1,000 tokens - 10% margin - 512 answer - 32 chat overhead - the prompts leaves about
    # 250 estimated tokens for the paper's text (1,950 bytes in full): page 1 is cut
    with ReaderServer(usage={"prompt_tokens": 400, "completion_tokens": 3}) as server:
        result = run(server, data, tmp_path, context_tokens=1000)
    paper = result.documents["0"]
    assert paper["pages_full"] < 3 and paper["tokens"] <= 1000
    assert result.counts["documents_cut"] == 1  # the 2-page report still fits
    prompt = server.user_messages()[0]
    assert "[The text was cut to fit the model's context:" in prompt
    assert "- pages: 3" in prompt and "[Page 3 of 3]" not in prompt
    for body in server.requests:
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        assert estimate_tokens(system) + estimate_tokens(user) + 32 <= 900 - 512
    records = result.records
    assert records.loc[records["doc_id"] == "0", "text_cut"].all()
    # the page count and author are still answered: the header is never cut
    assert records["answer"].tolist()[2:4] == ["3", "Ada Lovelace"]
    # the server's token count (400) is compared with the estimate
    assert result.counts["prompt_tokens_reported"] == N_QUESTIONS
    over = int((records["prompt_tokens"] > records["prompt_tokens_estimated"]).sum())
    assert result.counts["prompt_tokens_over_estimate"] == over


def test_a_real_tokenizer_can_count(local, data, tmp_path):
    # counted in words: a prompt may take 800 * 0.9 - 512 = 208 words here, of which the
    # system prompt, the template and the question take about 75; the paper (150 words,
    # more with its markers and header) is cut, the report (17 words) is not
    with ReaderServer() as server:
        result = run(server, data, tmp_path, count_tokens=lambda s: len(s.split()),
                     context_tokens=800)
    assert result.documents["0"]["pages_full"] < 3 and result.documents["50"]["pages_left_out"] == 0
    for body in server.requests:
        system, user = (m["content"] for m in body["messages"])
        assert len(system.split()) + len(user.split()) + 32 <= 720 - 512


def test_cut_and_empty_answers_are_counted_and_kept(local, data, tmp_path):
    with ReaderServer(finish="length", content="The accuracy in 2023 was") as server:
        result = run(server, data, tmp_path)
    assert (result.counts["answers_cut"], result.counts["answers_empty"]) == (N_QUESTIONS, 0)
    assert set(result.records["finish_reason"]) == {"length"}
    with ReaderServer(content="") as server:
        result = run(server, data, tmp_path, cache_dir=None)
    assert (result.counts["answers_cut"], result.counts["answers_empty"]) == (0, N_QUESTIONS)
    # an empty answer is an answer (judged wrong), not a failure
    assert result.complete and result.records["answer"].tolist() == [""] * N_QUESTIONS


# ----------------------------------------------------------------------------- errors
def test_input_errors_are_found_before_any_call(local, data, tmp_path):
    with ReaderServer() as server:
        (data / "0" / "2401.00001.pdf").unlink()
        with pytest.raises(ValidationError, match=r"data/0: must hold the document as one PDF "
                                                  r"file; found none"):
            run(server, data, tmp_path)
        make_pdf(data / "0" / "a.pdf", PAPER_PAGES)
        make_pdf(data / "0" / "b.pdf", PAPER_PAGES)
        with pytest.raises(ValidationError, match=r"one PDF file; found 2 \(a\.pdf, b\.pdf\)"):
            run(server, data, tmp_path)
        (data / "0" / "b.pdf").unlink()
        (data / "0" / "a.pdf").write_bytes(b"%PDF-1.7 broken")
        with pytest.raises(ValidationError, match=r"a\.pdf: must be a readable PDF") as info:
            run(server, data, tmp_path)
        assert info.value.doc_id == "0"
        make_pdf(data / "0" / "a.pdf", PAPER_PAGES)
        write_jsonl(data / "50" / "50_qa.jsonl", [REPORT_QA[0], '{"question": "Q?", '])
        with pytest.raises(ValidationError, match=r"50_qa\.jsonl, line 2: must be valid JSON"):
            run(server, data, tmp_path)
        write_jsonl(data / "50" / "50_qa.jsonl", [REPORT_QA[0], qa("Q?", "A", "chart")])
        with pytest.raises(ValidationError, match=r"50_qa\.jsonl, line 2: type must be one of"):
            run(server, data, tmp_path)
        write_jsonl(data / "50" / "50_qa.jsonl", REPORT_QA)
        with pytest.raises(ValidationError, match=r"context_tokens=600 leaves no room for the "
                                                  r"text of document '0'"):
            run(server, data, tmp_path, context_tokens=600)
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "notes.txt").write_text("mine")
        with pytest.raises(ValidationError, match=r"out: the qa run output folder must be new, "
                                                  r"empty or a previous confcal qa run output"):
            run(server, data, tmp_path)
        assert server.requests == []  # every error came before the first call
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValidationError, match=r"empty: must hold one folder per document; "
                                              r"found none"):
        run_docbench(client_for(server), empty, out=tmp_path / "o", context_tokens=8000,
                     progress=False)


@pytest.mark.parametrize("options, message", [
    ({"context_tokens": 0}, r"context_tokens must be an integer >= 1; found 0"),
    ({"margin": 1.0}, r"margin must be a number in \[0, 1\); found 1\.0"),
    ({"concurrency": 0}, r"concurrency must be an integer >= 1; found 0"),
    ({"system": "../x"}, r"system must be a file-name-safe name"),
    ({"count_tokens": lambda s: -1}, r"count_tokens must return an integer >= 0; found -1"),
    ({"template": "{{question}}"}, r"template must hold \{\{document\}\}"),
])
def test_arguments_are_checked(local, data, tmp_path, options, message):
    with ReaderServer() as server:
        with pytest.raises(ValidationError, match=message):
            run(server, data, tmp_path, **options)
        assert server.requests == []


@pytest.mark.parametrize("options, message", [
    ({"count_tokens": 3}, r"count_tokens must be a function str -> int; found int"),
    ({"system_prompt": None}, r"system_prompt must be a string; found NoneType"),
    ({"progress": 1}, r"progress must be True or False; found 1"),
])
def test_the_other_arguments_are_checked_before_any_call(local, data, tmp_path, options,
                                                         message):
    with ReaderServer() as server:
        with pytest.raises(ValidationError, match=message):
            run(server, data, tmp_path, **options)
        assert server.requests == []


def test_the_folder_and_the_client_are_checked(local, data, tmp_path):
    with ReaderServer() as server:
        with pytest.raises(ValidationError, match=r"folder must be an existing folder; found "
                                                  r"'.*absent'"):
            run(server, tmp_path / "absent", tmp_path)
        assert server.requests == []
    with pytest.raises(ValidationError, match=r"client must have provider, model, "
                                              r"supports_logprobs and complete\(request\) "
                                              r"\(a ChatClient\); found str"):
        run_docbench("reader-1", data, out=tmp_path / "out", context_tokens=8000)


# ------------------------------------------------------------------------------- CLI
def cli(server, data, tmp_path, *extra):
    return main(["qa", "run", str(data), "--base-url", server.url, "--model", "reader-1",
                 "--api-key-env", "CONFCAL_TEST_KEY", "--context-tokens", "8000",
                 "--max-retries", "0", "-o", str(tmp_path / "out"), *extra])


def test_cli_runs_resumes_and_exits_by_completeness(local, data, tmp_path, capsys):
    with ReaderServer(fail=lambda n: 503 if n > 5 else None) as server:
        assert cli(server, data, tmp_path, "--workers", "1") == 1
    captured = capsys.readouterr()
    assert "7 questions on 2 documents (0 cut to fit 8,000 tokens): 5 answered" in captured.out
    assert "confcal: error: 2 of 7 questions failed" in captured.err
    assert "run the same command again" in captured.err
    assert (tmp_path / "out.cache").is_dir()  # the default cache sits beside OUT
    with ReaderServer() as server:
        assert cli(server, data, tmp_path, "--concurrency", "2") == 0
        assert len(server.requests) == 2
    out = capsys.readouterr().out
    assert "7 answered (2 asked, 5 from the cache" in out
    assert f"judge with: confcal qa --records {tmp_path / 'out' / 'records.jsonl'}" in out
    assert len(load_records(tmp_path / "out" / "records.jsonl")) == N_QUESTIONS
    assert "unreadable" not in out

    # two entries spoiled (a FIFO used to hang the run; a cut file stopped it): both are
    # asked again, counted, and replaced by regular files
    entries = sorted((tmp_path / "out.cache").rglob("*.json"))
    entries[0].write_text('{"key": ')
    entries[1].unlink()
    os.mkfifo(entries[1])
    with ReaderServer() as server:
        assert cli(server, data, tmp_path) == 0
        assert len(server.requests) == 2
    out = capsys.readouterr().out
    assert "7 answered (2 asked, 5 from the cache" in out
    assert "note: 2 cache entries were unreadable and refetched (replaced in the cache)" in out
    assert all(stat.S_ISREG(os.lstat(e).st_mode) for e in entries[:2])
    assert json.loads(entries[0].read_text())["response"]["text"]


def test_cli_errors(local, data, tmp_path, capsys):
    with ReaderServer() as server:
        assert main(["qa", "run", str(data), "--model", "m", "--context-tokens", "10",
                     "-o", "x"]) == 2
        assert "--base-url" in capsys.readouterr().err
        assert cli(server, data, tmp_path, "--margin", "1.5") == 2
        assert "must be a number in [0, 1); found '1.5'" in capsys.readouterr().err
        (data / "50" / "report.pdf").unlink()
        assert cli(server, data, tmp_path, "--no-cache") == 1
        assert "must hold the document as one PDF file; found none" in capsys.readouterr().err
        assert main(["--debug", "qa", "run", "--help"]) == 0
        assert "--context-tokens" in capsys.readouterr().out
        assert server.requests == []


def test_cli_domain_labels_every_folder(local, tmp_path):
    data = tmp_path / "data"
    (data / "paper-a").mkdir(parents=True)
    make_pdf(data / "paper-a" / "a.pdf", ["Net income was 5.5 million dollars in 2023."])
    write_jsonl(data / "paper-a" / "paper-a_qa.jsonl", REPORT_QA[:1])
    with ReaderServer() as server:
        assert cli(server, data, tmp_path, "--domain", "finance", "--system", "mine") == 0
    records = load_records(tmp_path / "out" / "records.jsonl")
    assert records[["doc_id", "domain", "system", "answer"]].values.tolist() == [
        ["paper-a", "finance", "mine", "5.5 million dollars"]]


def test_api_reference_lists_the_new_modules():
    import importlib

    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    for module in ("confcal.extras.pdf", "confcal.extras.docbench"):
        assert f"## `{module}`" in text
        section = text.split(f"## `{module}`", 1)[1].split("\n## ", 1)[0]
        for name in importlib.import_module(module).__all__:
            assert f"`{name}" in section or f"`class {name}" in section, (module, name)


def test_cli_prompt_template_is_sent_verbatim_and_rebuilt_from_the_run_folder(
        local, data, tmp_path):
    # a template of the user's (DocBench's own prompt would be passed the same way): its
    # final newline kept, placeholders filled once; --system-prompt '' sends an empty one
    template = "Read this file:\n{{document}}\n\nNow answer: {{question}}\n"
    # written with a byte order mark, which is not text: the template starts after it
    (tmp_path / "prompt.txt").write_text(template, encoding="utf-8-sig")
    with ReaderServer(content="an answer") as server:
        assert cli(server, data, tmp_path, "--prompt-template", str(tmp_path / "prompt.txt"),
                   "--system-prompt", "", "--temperature", "0", "--top-p", "0.1") == 0
    sent = {m["content"] for body in server.requests for m in body["messages"]
            if m["role"] == "user"}
    for body in server.requests:
        assert body["messages"][0] == {"role": "system", "content": ""}
        assert body["temperature"] == 0.0 and body["top_p"] == 0.1 and "top_k" not in body
    out = tmp_path / "out"
    summary = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert summary["prompt"]["template"] == template
    assert summary["prompt"]["system_prompt"] == ""
    assert summary["sampling"] == {"temperature": 0.0, "top_p": 0.1}
    rows = [json.loads(line) for line in
            (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == N_QUESTIONS
    rebuilt = set()
    for row in rows:  # the fill rule of run.json, by hand: one pass over the template
        document = (out / row["doc_id"] / "document.txt").read_text(encoding="utf-8")
        values = {"document": document, "question": row["question"]}
        prompt = re.sub(r"\{\{(document|question)\}\}", lambda m: values[m.group(1)],
                        summary["prompt"]["template"])
        assert hashlib.sha256(prompt.encode("utf-8")).hexdigest() == row["prompt_sha256"]
        assert prompt.startswith("Read this file:\nDocument information:\n- pages: ")
        assert prompt.endswith(f"\n\nNow answer: {row['question']}\n")
        rebuilt.add(prompt)
    assert rebuilt == sent  # exactly what the server received


def test_cli_prompt_files_are_checked_before_any_call(local, data, tmp_path, capsys):
    (tmp_path / "no-question.txt").write_text("{{document}}\nAnswer:", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("{{document}} {{question}} caf\xe9".encode("latin-1"))
    with ReaderServer() as server:
        assert cli(server, data, tmp_path, "--no-cache", "--prompt-template",
                   str(tmp_path / "no-question.txt")) == 1
        assert "template must hold {{question}}" in capsys.readouterr().err
        assert cli(server, data, tmp_path, "--no-cache", "--prompt-template",
                   str(tmp_path / "latin1.txt")) == 1
        assert "must be UTF-8 text; found byte 0xe9 at offset 29" in capsys.readouterr().err
        (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf{{document}} {{question}} \xff")
        assert cli(server, data, tmp_path, "--no-cache", "--prompt-template",
                   str(tmp_path / "bom.txt")) == 1
        assert "found byte 0xff at offset 29" in capsys.readouterr().err
        assert cli(server, data, tmp_path, "--top-p", "0") == 2
        assert "--top-p: must be a number in (0, 1]; found '0'" in capsys.readouterr().err
        assert cli(server, data, tmp_path, "--temperature", "nan") == 2
        assert "must be a finite number >= 0; found 'nan'" in capsys.readouterr().err
        assert server.requests == []
