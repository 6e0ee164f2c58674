"""Real PDFs and a real reading server for tests/extras/test_docbench_run.py.

``make_folder`` writes a DocBench-layout folder with PDFs made by PyMuPDF (several pages, a
table drawn as one, title and author in the document information). ``ReaderServer`` is a
chat-completions endpoint on 127.0.0.1 whose "model" answers only from the prompt it is
sent: the page count and author from the document-information block, the table cell from
the table's row, "not in the document" when the text has nothing. An answer is therefore
right only if the run put that information into the prompt.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _optional import need_module

# ------------------------------------------------------------------------------ PDFs
PAPER_PAGES = [
    "Sleep and Memory in Adults\n"
    "We enrolled 128 patients in the study between 2019 and 2021. " + "Background text. " * 30,
    "Results\nTABLE",  # the table is drawn on this page
    "Conclusion\nSleep improves recall. " + "Discussion text. " * 30,
]
TABLE = [("Year", "Accuracy", "Patients"), ("2022", "88.0%", "60"), ("2023", "91.5%", "68")]


def make_pdf(path: Path, pages: list[str], *, title: str | None = None,
             author: str | None = None, table_on: int | None = None) -> Path:
    pymupdf = need_module("pymupdf")  # imported here: collecting this helper needs no extra
    doc = pymupdf.open()
    for number, text in enumerate(pages, start=1):
        page = doc.new_page()
        body = text.replace("TABLE", "")
        page.insert_textbox(pymupdf.Rect(72, 72, 520, 400), body, fontsize=10)
        if number == table_on:
            html = ("<table border='1'>" + "".join(
                "<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in TABLE)
                + "</table>")
            page.insert_htmlbox(pymupdf.Rect(72, 420, 520, 700), html)
    metadata = {}
    if title:
        metadata["title"] = title
    if author:
        metadata["author"] = author
    if metadata:
        doc.set_metadata(metadata)
    doc.save(path)
    doc.close()
    return path


def qa(question: str, answer: str, qtype: str, evidence: str = "") -> dict[str, str]:
    return {"question": question, "answer": answer, "evidence": evidence, "type": qtype}


PAPER_QA = [
    qa("How many patients were enrolled?", "128", "text-only", "We enrolled 128 patients"),
    qa("What was the accuracy in 2023 according to the table?", "91.5%", "multimodal-t"),
    qa("How many pages does the paper have?", "3", "meta-data"),
    qa("Who is the author of the paper?", "Ada Lovelace", "meta-data"),
    qa("What is the email address of the corresponding author?",
       "The paper does not give an email address", "una"),
]
REPORT_PAGES = ["Annual report\nNet income was 5.5 million dollars in 2023.",
                "Outlook\nRevenue is expected to grow."]
REPORT_QA = [
    qa("What was the net income in 2023?", "5.5 million dollars", "text-only"),
    qa("How many pages does the report have?", "2", "meta-data"),
]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def make_folder(root: Path) -> Path:
    """Two documents: 0 (academia, 3 pages, table, metadata) and 50 (finance, 2 pages)."""
    (root / "0").mkdir(parents=True)
    make_pdf(root / "0" / "2401.00001.pdf", PAPER_PAGES, title="Sleep and Memory in Adults",
             author="Ada Lovelace", table_on=2)
    write_jsonl(root / "0" / "0_qa.jsonl", PAPER_QA)
    (root / "50").mkdir()
    make_pdf(root / "50" / "report.pdf", REPORT_PAGES)
    write_jsonl(root / "50" / "50_qa.jsonl", REPORT_QA)
    return root


# ---------------------------------------------------------------------------- reader
def read_and_answer(system: str, text: str) -> str:
    """Answer the question at the end of ``text`` from the text alone."""
    question = re.search(r"Question: (.*)\nAnswer:\s*\Z", text, re.S)
    if question is None:
        return "no question found"
    q = question.group(1)
    document = text[:question.start()]
    if not re.search(r"^\[Page 1 of \d+\]$", document, re.M):
        return "no page markers"
    if "How many pages" in q:
        found = re.search(r"^- pages: (\d+)$", document, re.M)
        return found.group(1) if found else "unknown"
    if "author" in q and "email" not in q:
        found = re.search(r"^- author: (.+)$", document, re.M)
        return found.group(1) if found else "unknown"
    if "accuracy in 2023" in q:
        found = re.search(r"^2023\s+(\S+%)", document, re.M)
        return found.group(1) if found else "unknown"
    if "patients" in q:
        found = re.search(r"enrolled (\d+) patients", document)
        return found.group(1) if found else "unknown"
    if "net income" in q:
        found = re.search(r"Net income was ([\d.]+ million dollars)", document)
        return found.group(1) if found else "unknown"
    return "The paper does not give an email address."


class ReaderServer:
    """A chat-completions endpoint on 127.0.0.1 answering with ``read_and_answer``.

    ``fail`` (a function of the 1-based request number) returns an HTTP status to answer
    instead (e.g. 500 after the third request); ``delay`` holds each answer (seconds).
    Records every request's JSON body and the most requests in flight at once.
    """

    def __init__(self, *, fail: Callable[[int], int | None] | None = None,
                 delay: float = 0.0, usage: dict[str, int] | None = None,
                 finish: str = "stop", content: str | None = None,
                 hold_until: int = 0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fail = fail
        self.delay = delay
        self.usage = usage
        self.finish = finish
        self.content = content  # a fixed reply instead of reading ("" for an empty one)
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        # the first requests wait (up to 5 s) until this many were in flight at once, so a
        # concurrency test does not depend on how fast a loaded machine starts threads
        self.hold_until = hold_until
        self._reached = threading.Condition(self._lock)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    number = len(server.requests)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    server._reached.notify_all()
                    server._reached.wait_for(
                        lambda: server.max_in_flight >= server.hold_until, timeout=5.0)
                answered = False
                try:
                    time.sleep(server.delay)
                    status = server.fail(number) if server.fail else None
                    if status:
                        payload = {"error": {"message": f"scripted {status}"}}
                    else:
                        messages = {m["role"]: m["content"] for m in body["messages"]}
                        reply = (server.content if server.content is not None else
                                 read_and_answer(messages["system"], messages["user"]))
                        payload = {"choices": [{"index": 0, "finish_reason": server.finish,
                                                "message": {"role": "assistant",
                                                            "content": reply}}],
                                   "usage": server.usage or {}}
                    data = json.dumps(payload).encode()
                    # out of flight before the answer leaves: once the client has it, its
                    # next request may arrive before this thread reaches a later decrement
                    with server._lock:
                        server.in_flight -= 1
                        answered = True
                    self.send_response(status or 200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    if not answered:
                        with server._lock:
                            server.in_flight -= 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ReaderServer:  # noqa: PYI034
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def user_messages(self) -> list[str]:
        return [next(m["content"] for m in r["messages"] if m["role"] == "user")
                for r in self.requests]
