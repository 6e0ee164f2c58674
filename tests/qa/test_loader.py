"""The QA loaders on DocBench's real-world layouts (confcal.qa._records): byte order marks,
the numberings systems write, the type labels in any case, folders the official scripts
skip, the continuation-line ambiguity, and the sample's own description."""

from __future__ import annotations

import json

import pytest

from _docqa_records import docbench, qa, record
from confcal.exceptions import ValidationError
from confcal.qa.docqa import load_docbench, load_records, load_sample

BOM = "\ufeff"


def test_a_utf8_byte_order_mark_is_not_text(tmp_path):
    records = tmp_path / "r.jsonl"
    records.write_text(BOM + json.dumps(record(doc_id=1)) + "\n" + json.dumps(record(doc_id=2))
                       + "\n", encoding="utf-8")
    assert load_records(records)["doc_id"].tolist() == [1, 2]
    root = docbench(tmp_path, {"60": [qa(), qa(question="Who?", answer="Ann")]})
    qa_file = root / "60" / "60_qa.jsonl"
    qa_file.write_text(BOM + qa_file.read_text(encoding="utf-8"), encoding="utf-8")
    (root / "60" / "sys_results.txt").write_text(BOM + "1. 42\n2. Ann\n", encoding="utf-8")
    frame = load_docbench(root, system="sys")
    assert frame["answer"].tolist() == ["42", "Ann"]
    assert frame["question"].tolist() == ["What?", "Who?"]


def test_a_byte_order_mark_inside_a_file_is_still_an_error(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(record()) + "\n" + BOM + json.dumps(record()) + "\n",
                    encoding="utf-8")
    with pytest.raises(ValidationError, match="r.jsonl, line 2: must be valid JSON"):
        load_records(path)


@pytest.mark.parametrize("text, answers", [
    ("1) 42\n2) Ann\n3) no\n", ["42", "Ann", "no"]),
    ("**1.** 42\n**2.** Ann\n**3.** no\n", ["42", "Ann", "no"]),
    ("**1**. 42\n**2**) Ann\n3. no\n", ["42", "Ann", "no"]),
    ("1.Forty-two\n2.Ann\n3. no\n", ["Forty-two", "Ann", "no"]),  # no space, not a digit
    ("**1.**5 million\n2) Ann\n3. no\n", ["5 million", "Ann", "no"]),  # the mark is clear
])
def test_numberings_systems_write(tmp_path, text, answers):
    root = docbench(tmp_path, {"60": [qa(), qa(), qa()]}, answers={"60": text})
    assert load_docbench(root, system="sys")["answer"].tolist() == answers


def test_a_continuation_that_starts_with_the_next_number_and_a_digit_is_an_error(tmp_path):
    # "2.5 million" while answer 2 is due: answer 2 "5 million", or answer 1 going on?
    text = "1. Revenue grew to\n2.5 million dollars\n2. Ann\n"
    root = docbench(tmp_path, {"60": [qa(), qa()]}, answers={"60": text})
    results = root / "60" / "sys_results.txt"
    with pytest.raises(ValidationError) as info:
        load_docbench(root, system="sys")
    message = str(info.value)
    assert message.startswith(f"{results}, line 2: '2.5 million dollars' is ambiguous: it may "
                              "start answer 2 or continue answer 1")
    assert (info.value.source, info.value.line) == (str(results), 2)
    # written unambiguously, both readings work
    results.write_text("1. Revenue grew to\n2.5 million dollars.\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="line 2: .* is ambiguous"):
        load_docbench(root, system="sys")
    results.write_text("1. Revenue grew to 2.5 million dollars\n2. Ann\n", encoding="utf-8")
    assert load_docbench(root, system="sys")["answer"].tolist() == [
        "Revenue grew to 2.5 million dollars", "Ann"]
    results.write_text("1. Revenue grew to\n2. 5 million\n", encoding="utf-8")
    assert load_docbench(root, system="sys")["answer"].tolist() == ["Revenue grew to",
                                                                    "5 million"]


def test_numbers_that_are_not_due_continue_the_answer(tmp_path):
    # "3.5%" while answer 2 is due cannot start an answer: it continues answer 1
    text = "1. It rose by\n3.5% in 2023\n2. Ann\n"
    root = docbench(tmp_path, {"60": [qa(), qa()]}, answers={"60": text})
    assert load_docbench(root, system="sys")["answer"].tolist() == ["It rose by 3.5% in 2023",
                                                                    "Ann"]


@pytest.mark.parametrize("text, line, started", [
    # a numbered list inside answer 1: "2. clean" was taken as answer 2 and "2. Ann" as
    # part of it, so answer 2 read "clean 2. Ann" and answer 3 was right by luck
    ("1. The steps are:\n1. collect\n2. clean\n2. Ann\n3. no\n", 2, 1),
    ("1. Reasons:\n1) cost\n2) time\n2. Ann\n3. no\n", 2, 1),
    ("1. 42\n2. Steps:\n1. a\n2. b\n3. c\n3. no\n", 4, 2),
])
def test_a_numbered_list_inside_an_answer_is_an_error(tmp_path, text, line, started):
    root = docbench(tmp_path, {"60": [qa(), qa(), qa()]}, answers={"60": text})
    results = root / "60" / "sys_results.txt"
    with pytest.raises(ValidationError) as info:
        load_docbench(root, system="sys")
    assert str(info.value).startswith(f"{results}, line {line}: ")
    assert f"already started on line {started}" in str(info.value)
    assert (info.value.source, info.value.line) == (str(results), line)


def test_a_list_numbered_below_the_answer_in_progress_continues_it(tmp_path):
    text = "1. 42\n2. Ann\n3. Two reasons:\n1. cost\n2. time\n"
    root = docbench(tmp_path, {"60": [qa(), qa(), qa()]}, answers={"60": text})
    assert load_docbench(root, system="sys")["answer"].tolist() == [
        "42", "Ann", "Two reasons: 1. cost 2. time"]


def test_an_ambiguous_first_line_is_an_error_too(tmp_path):
    root = docbench(tmp_path, {"60": [qa()]}, answers={"60": "1.5 million\n"})
    with pytest.raises(ValidationError, match="line 1: '1.5 million' is ambiguous: it may start "
                                              "answer 1 or be text before it"):
        load_docbench(root, system="sys")


def test_type_labels_are_read_in_any_case_and_kept_as_written(tmp_path):
    root = docbench(tmp_path, {"60": [qa(kind="Multimodal-t"), qa(kind="TEXT-ONLY"),
                                      qa(kind="Una"), qa(kind="meta-data")]})
    frame = load_docbench(root)
    assert frame["qtype"].tolist() == ["multimodal", "text-only", "unanswerable", "meta-data"]
    assert frame["docbench_type"].tolist() == ["Multimodal-t", "TEXT-ONLY", "Una", "meta-data"]
    root = docbench(tmp_path / "x", {"60": [qa(kind="chart")]})
    with pytest.raises(ValidationError, match="60_qa.jsonl, line 1: type must be one of "
                                              ".* \\(any case\\); found 'chart'"):
        load_docbench(root)


def test_folders_the_official_scripts_skip_are_skipped_and_listed(tmp_path):
    root = docbench(tmp_path, {"60": [qa()]}, answers={"60": "1. 42\n"})
    (root / "__pycache__").mkdir()
    (root / "__MACOSX").mkdir()
    (root / ".git").mkdir()
    (root / "notes.txt").write_text("not a folder")
    frame = load_docbench(root, system="sys")
    assert frame["doc_id"].tolist() == ["60"]
    assert frame.attrs["skipped_folders"] == [".git", "__MACOSX", "__pycache__"]
    # a folder with one underscore is a document folder like any other
    (root / "_x").mkdir()
    with pytest.raises(ValidationError, match="_x: must hold _x_qa.jsonl"):
        load_docbench(root)


def test_an_empty_layout_after_skipping_is_an_error(tmp_path):
    (tmp_path / "data" / "__pycache__").mkdir(parents=True)
    with pytest.raises(ValidationError, match="must hold one folder per document; found none"):
        load_docbench(tmp_path / "data")


def test_the_sample_is_described_as_it_is():
    # Found in review: the docstring said eight documents and ten questions per domain;
    # the sample has ten documents (two per domain) and eight questions per domain.
    sample = load_sample()
    questions = sample.drop_duplicates(["doc_id", "question"])
    assert sample["doc_id"].nunique() == 10 and len(questions) == 40
    assert sample.groupby("domain")["doc_id"].nunique().tolist() == [2] * 5
    assert questions.groupby("domain").size().tolist() == [8] * 5
    doc = " ".join(load_sample.__doc__.split())
    assert "Ten invented documents (two per domain, none real) and eight questions per " \
           "domain" in doc


@pytest.mark.parametrize("system", ["../../x", "../outside", "a/b", ".hidden", "a\\b"])
def test_a_system_name_never_reads_outside_the_folder(tmp_path, system):
    # the attack: --system ../../x read <n>/../../x_results.txt, outside the DocBench folder
    root = docbench(tmp_path, {"1": [qa("Q?", "A")]})
    (tmp_path / "x_results.txt").write_text("1. read from outside\n")
    (root / "outside_results.txt").write_text("1. read from outside\n")
    with pytest.raises(ValidationError, match=r"system must be a file-name-safe name .*found"):
        load_docbench(root, system=system)
