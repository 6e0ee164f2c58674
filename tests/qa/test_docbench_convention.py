"""The official DocBench reading and aggregation (convention="docbench") and the official
verdicts read back (load_docbench_verdicts), on files written in the official layout.

The expected tables are worked out by hand in the comments, and checked against an
independent re-statement of the aggregation notebook's rules (``notebook`` below, written
from its behaviour: a "1" among a reply's first 20 characters is right overall and by
domain, a "0" there is wrong by type; type labels other than its six exact spellings fall
in the unanswerable group; domains by folder number).
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _docqa_records import write_lines
from _profiles import examples
from confcal.exceptions import ValidationError
from confcal.qa.docqa import (
    NOTEBOOK_TYPES,
    LLMJudge,
    RuleJudge,
    Verdict,
    accuracy_table,
    judge_agreement,
    judge_records,
    load_docbench_verdicts,
)


def line(file, kind, reply, *, question="What is it?", answer="42", sys_ans="42",
         evidence="It is 42."):
    return {"question": question, "answer": answer, "evidence": evidence, "type": kind,
            "sys_ans": sys_ans, "file": file, "eval": reply}


# Eight verdicts in the official layout. Per line: does the reply's first 20 characters
# hold a "1", a "0"?
LINES = [
    line("3", "text-only", "1"),                                   # 1: "1"
    line("3", "multimodal-f", "0"),                                # 2: "0"
    line("3", "una", "The answer is correct."),                    # 3: neither
    line("50", "meta-data", "Correctness: 1\nBecause 10 units"),   # 4: "1" ("10" is later)
    line("50", "Multimodal-t", "1 or 0"),                          # 5: both
    line("50", "text-only", "**0**"),                              # 6: "0"
    line("150", "text-only", "Score: 1"),                          # 7: "1"
    line("150", "una", "0"),                                       # 8: "0"
]


def write_eval(folder, system, lines):
    folder.mkdir(exist_ok=True)
    return write_lines(folder / f"{system}_eval_output.jsonl", [json.dumps(x) for x in lines])


def notebook(lines):
    """The aggregation notebook's numbers, restated: {label: accuracy}."""
    ranges = {"academia": range(0, 49), "finance": range(49, 89), "government": range(89, 133),
              "laws": range(133, 179), "news": range(179, 229)}
    one = [("1" in x["eval"][:20]) for x in lines]
    zero = [("0" in x["eval"][:20]) for x in lines]
    out = {("overall", "all"): sum(one) / len(lines)}
    for name, numbers in ranges.items():
        members = [i for i, x in enumerate(lines) if int(x["file"]) in numbers]
        if members:
            out[("domain", name)] = sum(one[i] for i in members) / len(members)
    groups = {"text-only": "text-only", "multimodal-f": "multimodal",
              "multimodal-t": "multimodal", "multimodal": "multimodal",
              "meta-data": "meta-data", "una": "unanswerable"}
    for group in ("text-only", "multimodal", "meta-data", "unanswerable"):
        members = [i for i, x in enumerate(lines)
                   if groups.get(x["type"], "unanswerable") == group]
        if members:
            out[("qtype", group)] = 1 - sum(zero[i] for i in members) / len(members)
    return out


def test_the_notebooks_type_groups_are_its_six_spellings():
    assert NOTEBOOK_TYPES == {"text-only": "text-only", "multimodal-f": "multimodal",
                              "multimodal-t": "multimodal", "multimodal": "multimodal",
                              "meta-data": "meta-data", "una": "unanswerable"}


def test_official_verdicts_are_read_with_the_docbench_reading(tmp_path):
    path = write_eval(tmp_path, "gpt-4o", LINES)
    frame = load_docbench_verdicts(path)
    assert frame["system"].unique().tolist() == ["gpt-4o"]
    assert frame["doc_id"].tolist() == ["3", "3", "3", "50", "50", "50", "150", "150"]
    assert frame["domain"].tolist() == ["academia"] * 3 + ["finance"] * 3 + ["laws"] * 2
    assert frame["qtype"].tolist()[3:5] == ["meta-data", "multimodal"]
    assert frame["docbench_type"].tolist()[4] == "Multimodal-t"
    assert frame["answer"].tolist() == ["42"] * 8 and frame["reference"].tolist() == ["42"] * 8
    assert frame["docbench"].tolist() == [1, 0, pd.NA, 1, pd.NA, 0, 1, 0]
    assert frame["docbench_status"].tolist() == [
        "correct", "wrong", "unparseable", "correct", "unparseable", "wrong", "correct", "wrong"]
    assert frame["docbench_reply"].tolist() == [x["eval"] for x in LINES]
    assert set(frame["docbench_convention"]) == {"docbench"}
    assert "no 1 and no 0 in its first 20 characters" in frame.loc[2, "docbench_reason"]
    assert "both a 1 and a 0" in frame.loc[4, "docbench_reason"]


def test_the_docbench_aggregation_reproduces_the_notebook_by_hand(tmp_path):
    frame = load_docbench_verdicts(write_eval(tmp_path, "gpt-4o", LINES))
    table = accuracy_table(frame, "docbench", convention="docbench")
    got = {(r.by, r.group): (r.n, r.correct, r.accuracy, r.counted_differently)
           for r in table.itertuples()}
    # Overall, "1" rule: lines 1, 4, 5, 7 -> 4/8; left out by the strict reading: 3 and 5.
    # By domain, "1" rule: academia lines 1-3 -> 1/3 (3 differs); finance 4-6 -> 2/3 (5
    # differs); laws 7-8 -> 1/2.
    # By type, "0" rule, the notebook's groups: text-only 1, 6, 7 -> 1 - 1/3;
    # multimodal 2 only ("Multimodal-t" is not one of its spellings) -> 1 - 1/1 = 0;
    # meta-data 4 -> 1; unanswerable 3, 5, 8 -> 1 - 2/3, lines 3 and 5 differing (3 is
    # right here, left out strictly; 5 is wrong here, left out strictly).
    expected = {
        ("overall", "all"): (8, 4, 4 / 8, 2),
        ("domain", "academia"): (3, 1, 1 / 3, 1),
        ("domain", "finance"): (3, 2, 2 / 3, 1),
        ("domain", "laws"): (2, 1, 1 / 2, 0),
        ("qtype", "text-only"): (3, 2, 2 / 3, 0),
        ("qtype", "multimodal"): (1, 0, 0.0, 0),
        ("qtype", "meta-data"): (1, 1, 1.0, 0),
        ("qtype", "unanswerable"): (3, 1, 1 / 3, 2),
    }
    assert got.keys() == expected.keys()
    for key, (n, correct, accuracy, differs) in expected.items():
        assert got[key][:2] == (n, correct), key
        assert got[key][2] == pytest.approx(accuracy), key
        assert got[key][3] == differs, key
    reference = notebook(LINES)
    for key, value in reference.items():
        assert got[key][2] == pytest.approx(value), key
    assert table["judged"].tolist() == table["n"].tolist()  # every answer counts
    assert (table["correct"] + table["wrong"] == table["n"]).all()
    assert table.columns[-1] == "counted_differently"


def test_the_strict_table_of_the_same_verdicts_leaves_the_unread_ones_out(tmp_path):
    frame = load_docbench_verdicts(write_eval(tmp_path, "gpt-4o", LINES))
    table = accuracy_table(frame, "docbench", by=["qtype"])
    overall = table.iloc[0]
    # lines 3 and 5 unparseable; 3 right of the 6 read -> 0.5
    assert (overall["correct"], overall["wrong"], overall["unparseable"],
            overall["judged"]) == (3, 3, 2, 6)
    assert "counted_differently" not in table.columns
    # strictly the types are confcal's: line 5 ("Multimodal-t") is multimodal
    assert table.loc[table["group"] == "multimodal", "n"].item() == 2


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(
    st.sampled_from(["0", "5", "48", "49", "100", "140", "200", "228"]),
    st.sampled_from(["text-only", "multimodal-f", "multimodal-t", "multimodal", "meta-data",
                     "una", "Multimodal-t", "Text-only", "unanswerable"]),
    st.text(st.sampled_from("01 aC*:.\n"), max_size=30)), min_size=1, max_size=25))
def test_the_docbench_aggregation_equals_the_notebook_on_any_replies(tmp_path_factory, items):
    lines = [line(f, k, r) for f, k, r in items]
    folder = tmp_path_factory.mktemp("eval")
    frame = load_docbench_verdicts(write_eval(folder, "s", lines))
    table = accuracy_table(frame, "docbench", convention="docbench")
    got = {(r.by, r.group): r.accuracy for r in table.itertuples()}
    reference = notebook(lines)
    assert got.keys() == reference.keys()
    for key, value in reference.items():
        assert math.isclose(got[key], value, abs_tol=1e-12), key


def test_verdicts_read_back_from_a_csv_aggregate_the_same(tmp_path):
    # what `confcal qa` writes (verdicts.csv) carries the replies the aggregation needs
    class Replies:
        provider, model, supports_logprobs = "replies", "m", False

        def __init__(self):
            self.replies = [x["eval"] for x in LINES]

        def complete(self, request):
            from confcal._chat import ChatResponse

            return ChatResponse(self.replies.pop(0), "stop")

    frame = load_docbench_verdicts(write_eval(tmp_path, "gpt-4o", LINES))
    records = frame.drop(columns=[c for c in frame.columns if c.startswith("docbench")])
    records["docbench_type"] = frame["docbench_type"]
    judged = judge_records(records, LLMJudge(Replies()))  # the strict reading
    # strictly only "1", "0" and "0" are read; lines 3-7 are not
    assert judged["verdict_status"].tolist().count("unparseable") == 5
    in_memory = accuracy_table(judged, "verdict", convention="docbench")
    judged.to_csv(tmp_path / "verdicts.csv", index=False)
    text = {c: str for c in ("doc_id", "reference", "answer", "verdict_reply")}
    from_csv = pd.read_csv(tmp_path / "verdicts.csv", dtype={**text, "verdict": "Int64"})
    pd.testing.assert_frame_equal(accuracy_table(from_csv, "verdict", convention="docbench"),
                                  in_memory)
    official = accuracy_table(frame, "docbench", convention="docbench")
    # the same replies, read strictly or not, aggregate to the official numbers
    pd.testing.assert_frame_equal(in_memory[["by", "group", "n", "correct", "accuracy"]],
                                  official[["by", "group", "n", "correct", "accuracy"]])
    assert in_memory["counted_differently"].iloc[0] == 5  # overall: lines 3 to 7


def test_verdicts_without_a_reply_read_as_their_score_or_as_no_digit():
    rows = [{"doc_id": str(i), "question": "Q?", "reference": "R", "answer": "A",
             "domain": "news", "qtype": "text-only"} for i in range(4)]
    verdicts = [Verdict(1, "exact-match"), Verdict(0, "yes-no"), Verdict(None, "long-answer"),
                Verdict(None, "model-error")]
    table = accuracy_table(rows, verdicts, by=["qtype"], convention="docbench")
    # overall "1" rule: only the first -> 1/4; by type "0" rule: only the second is wrong,
    # the undecided and the failed one count as right -> 3/4
    assert table["correct"].tolist() == [1, 3]
    assert table["counted_differently"].tolist() == [2, 2]
    assert table.loc[0, ["undecided", "failed"]].tolist() == [1, 1]


def test_official_verdicts_compare_with_confcals_judges(tmp_path):
    lines = [line("3", "text-only", "1", answer="Jane Smith", sys_ans="Jane Smith"),
             line("3", "text-only", "1", question="Is it signed?", answer="Yes",
                  sys_ans="No, it is not."),
             line("50", "text-only", "0", answer="$5.5 million", sys_ans="5,500,000 dollars"),
             line("50", "una", "The answer is wrong", answer="Not mentioned",
                  sys_ans="It is 7.")]
    official = load_docbench_verdicts(write_eval(tmp_path, "m", lines))
    mine = judge_records(official, RuleJudge())
    assert mine["verdict"].tolist() == [1, 0, 1, 0]
    result = judge_agreement(official["docbench"], mine["verdict"])
    # pairs: (1,1) (1,0) (0,1); the 4th official verdict is unread and left out
    assert (result["n"], result["excluded"]) == (3, 1)
    assert result["agreement"] == pytest.approx(1 / 3)
    assert result["table"].values.tolist() == [[1, 1], [1, 0]]


def test_a_folder_of_outputs_gives_one_system_each(tmp_path):
    write_eval(tmp_path, "gpt-4o", LINES[:2])
    write_eval(tmp_path, "llama3-8b", LINES[2:5])
    (tmp_path / "gpt-4o_eval_input.jsonl").write_text("not read")
    frame = load_docbench_verdicts(tmp_path)
    assert frame["system"].tolist() == ["gpt-4o"] * 2 + ["llama3-8b"] * 3
    table = accuracy_table(frame, "docbench", convention="docbench", by=())
    # gpt-4o: lines 1-2, a "1" in line 1; llama3-8b: lines 3-5, a "1" in lines 4 and 5
    assert table[["system", "n", "correct"]].values.tolist() == [["gpt-4o", 2, 1],
                                                                ["llama3-8b", 3, 2]]
    renamed = load_docbench_verdicts(tmp_path / "gpt-4o_eval_output.jsonl", system="mine",
                                     prefix="official")
    assert set(renamed["system"]) == {"mine"} and "official_status" in renamed.columns


@pytest.mark.parametrize("lines, message", [
    ([{k: v for k, v in LINES[0].items() if k != "eval"}],
     "s_eval_output.jsonl, line 1: must have the keys .* found it without eval"),
    ([{**LINES[0], "eval": None}], "line 1: eval must be the judge's reply \\(a string\\); "
                                   "found None"),
    ([LINES[0], {**LINES[0], "file": "999"}], "line 2: folder '999': the domain of a DocBench "
                                              "folder"),
    ([{**LINES[0], "file": True}], "line 1: file must be the document folder's name"),
    ([{**LINES[0], "type": "chart"}], "line 1: type must be one of"),
    ([{**LINES[0], "sys_ans": 7}], "answer must be a string .* first at .*line 1 \\(7\\)"),
])
def test_bad_official_lines_are_errors_naming_file_and_line(tmp_path, lines, message):
    path = write_eval(tmp_path, "s", lines)
    with pytest.raises(ValidationError, match=message):
        load_docbench_verdicts(path)


def test_bad_paths_and_options(tmp_path):
    with pytest.raises(ValidationError, match="must be an existing \\*_eval_output.jsonl file"):
        load_docbench_verdicts(tmp_path / "missing.jsonl")
    with pytest.raises(ValidationError, match="found none"):
        load_docbench_verdicts(tmp_path)
    write_eval(tmp_path, "a", LINES[:1])
    write_eval(tmp_path, "b", LINES[:1])
    with pytest.raises(ValidationError, match="only for one file; found 'x' for 2 files"):
        load_docbench_verdicts(tmp_path, system="x")
    with pytest.raises(ValidationError, match="convention must be one of 'strict', 'docbench'"):
        accuracy_table(load_docbench_verdicts(tmp_path), "docbench", convention="paper")
