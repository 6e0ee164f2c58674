"""Records, files and DocBench folders for tests/qa/: the rule judge's tests (test_docqa.py)
and the ``confcal qa`` command's (test_command.py) alike."""

from __future__ import annotations

import json
from pathlib import Path


def record(**fields):
    base = {"doc_id": "d1", "question": "What is it?", "reference": "R", "answer": "A",
            "domain": "news", "qtype": "text-only"}
    return {**base, **fields}


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def docbench(tmp_path: Path, folders: dict[str, list[dict]], answers: dict[str, str] | None = None
             ) -> Path:
    root = tmp_path / "data"
    for name, qas in folders.items():
        (root / name).mkdir(parents=True)
        write_lines(root / name / f"{name}_qa.jsonl", [json.dumps(qa) for qa in qas])
        if answers and name in answers:
            (root / name / "sys_results.txt").write_text(answers[name], encoding="utf-8")
    return root


def qa(question="What?", answer="42", kind="text-only", evidence="It is 42."):
    return {"question": question, "answer": answer, "evidence": evidence, "type": kind}


def llm_records():
    return [
        record(doc_id="a", question="How many cores?", reference="240", answer="240 cores",
               evidence="240 soil cores were collected."),
        record(doc_id="b", question="Who signed?", reference="Jane Smith", answer="Bob"),
        record(doc_id="c", question="When?", reference="March 1, 2025", answer="1 March 2025"),
        record(doc_id="d", question="Is it free?", reference="Yes", answer="Yes, it is."),
        record(doc_id="e", question="Who?", reference="Ann", answer=""),
    ]
