"""confcal.qa.docqa: the rule judge, verdicts, tables, records and the sample.

The model judge (against a real chat-completions server on 127.0.0.1) is tested in
test_model_judge.py, the loaders' DocBench layouts in test_loader.py and the official
DocBench reading and aggregation in test_docbench_convention.py.
"""

from __future__ import annotations

import gzip
import json
import math
import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import confcal
from _docqa_records import docbench, qa, record, write_lines
from confcal.exceptions import UndefinedMetricWarning, ValidationError
from confcal.qa.docqa import (
    DOMAINS,
    QTYPES,
    RULES,
    RuleJudge,
    Verdict,
    accuracy_table,
    calibration_table,
    check_records,
    judge_agreement,
    judge_records,
    load_docbench,
    load_records,
    load_sample,
    wilson_interval,
)

ROOT = Path(__file__).resolve().parents[2]
JUDGE = RuleJudge()


def verdict(reference, answer, question="What is it?", judge=JUDGE, **kw):
    return judge.judge(question, answer, reference, **kw)


# ----------------------------------------------------------------------- rule judge
@pytest.mark.parametrize("reference, answer, score", [
    ("Yes", "Yes, it does", 1),
    ("Yes", "No.", 0),
    ("Yes.", "Correct", 1),
    ("No, the board suspended it.", "No.", 1),
    ("No", "Yes, it did.", 0),
    ("Yes", "Indeed, it does.", 1),
    ("No", "Incorrect", 1),
    ("Yes", "**Yes**, it is.", 1),
    ("No", "The answer is no", 1),
])
def test_yes_no_phrasings(reference, answer, score):
    v = verdict(reference, answer, "Does the policy cover floods?")
    assert (v.score, v.rule) == (score, "yes-no")


@pytest.mark.parametrize("answer", ["It does.", "Yes and no", "Yes-ish"])
def test_an_answer_without_a_leading_yes_or_no_is_undecided(answer):
    v = verdict("Yes", answer, "Does the policy cover floods?")
    assert (v.score, v.status, v.rule) == (None, "undecided", "yes-no")


def test_a_decline_of_a_yes_question_is_wrong_but_of_a_no_question_undecided():
    # "Does it mention a dividend?" "No": "the document does not mention one" may be a
    # decline or the right "no"; for a "yes" it can only be wrong.
    q = "Does the report mention a dividend?"
    assert verdict("Yes", "The document does not mention a dividend.", q).score == 0
    v = verdict("No", "The document does not mention a dividend.", q)
    assert (v.score, v.rule) == (None, "yes-no")


@pytest.mark.parametrize("reference, answer, score", [
    ("$5,500,000", "5.5 million", 1),
    ("5.5 million", "5,500,000", 1),
    ("$18.4 million", "$18,400,000", 1),
    ("$3bn", "3,000,000,000 dollars", 1),
    ("$40k", "40,000", 1),
    ("1,240", "1240", 1),
    ("240", "two hundred and forty", 1),
    ("Four", "4", 1),
    ("5,478,921", "about 5.5 million", 1),  # 5,478,921 rounds to 5.5 million
    ("5.5 million", "5.6 million", 0),
    ("5.5 million", "55 million", 0),
    ("2019", "2009", 0),  # 10 apart: a relative tolerance of 1% would call them equal
    ("1,240", "1,420", 0),
])
def test_numbers_with_scale_words_and_separators(reference, answer, score):
    v = verdict(reference, answer, "How much was it?")
    assert (v.score, v.rule) == (score, "number")


def test_rel_tol_is_an_extra_tolerance_and_why_it_is_off_by_default():
    assert verdict("2019", "2009", "Which year?").score == 0
    # |2019 - 2009| = 10 <= 0.01 * 2019 = 20.19: a relative tolerance cannot tell years apart
    assert verdict("2019", "2009", "Which year?", judge=RuleJudge(rel_tol=0.01)).score == 1
    assert verdict("$1,000", "$1,008", "How much?", judge=RuleJudge(rel_tol=0.01)).score == 1


@pytest.mark.parametrize("question, reference, answer, score", [
    ("What share of the fund was in bonds?", "45%", "0.45", 1),
    ("What proportion voted yes?", "0.62", "62%", 1),
    ("What share of the fund was in bonds?", "45%", "0.54", 0),
    ("By how much did sales grow?", "12%", "12 percent", 1),
    ("By how much did sales grow?", "12%", "0.12", 0),  # no share asked: 0.12 is not 12%
    ("By how much did sales grow?", "12%", "a rise of 12", 1),  # the number as printed
])
def test_percents(question, reference, answer, score):
    v = verdict(reference, answer, question)
    assert (v.score, v.rule) == (score, "number")


@pytest.mark.parametrize("reference, answer, score", [
    ("March 1, 2025", "03/01/2025", 1),
    ("March 1, 2025", "1 March 2025", 1),
    ("March 1, 2025", "2025-03-01", 1),
    ("March 1, 2025", "The policy takes effect on 1st of March 2025.", 1),
    ("5 November 2024", "Nov. 5, 2024", 1),
    ("March 2024", "March 14, 2024", 1),  # at the reference's precision
    ("March 1, 2025", "April 1, 2025", 0),
    ("March 1, 2025", "01/03/2025", 0),  # read month first: 3 January
    ("March 1, 2025", "March 2025", 0),  # less precise than the reference
])
def test_dates_in_several_formats(reference, answer, score):
    v = verdict(reference, answer, "When does it take effect?")
    assert (v.score, v.rule) == (score, "date")


def test_dayfirst_reads_ambiguous_dates_day_first():
    assert verdict("March 1, 2025", "01/03/2025", judge=RuleJudge(dayfirst=True)).score == 1


def test_what_the_question_states_need_not_be_repeated():
    # 2023 is in the question, so only $5.5 million is the answer's to state
    q = "What was the revenue in 2023?"
    assert verdict("Revenue in 2023 was $5.5 million.", "$5.5M", q).score == 1
    # an answer with no number beyond the question's states nothing to compare: undecided
    v = verdict("Revenue in 2023 was $5.5 million.", "Revenue in 2023 grew strongly.", q)
    assert (v.score, v.rule) == (None, "number")
    assert verdict("Revenue in 2023 was $5.5 million.", "$4.9M in 2023", q).score == 0
    # ... unless the question states every number of the reference: then they are the answer
    q = "Which year had more revenue, 2019 or 2020?"
    assert verdict("2020", "2020", q).score == 1
    assert verdict("2020", "2019", q).score == 0


@pytest.mark.parametrize("answer", [
    "The document does not mention the CEO's salary.",
    "not stated",
    "No information is provided.",
    "This cannot be determined from the report.",
    "The report doesn't say.",
    "Unanswerable.",
    "I don't know",
])
def test_unanswerable_questions_need_a_declining_answer(answer):
    v = verdict("Not mentioned", answer, "What is the CEO's salary?", qtype="unanswerable")
    assert (v.score, v.rule) == (1, "unanswerable")


def test_an_answer_to_an_unanswerable_question_is_wrong():
    v = verdict("Not mentioned", "$850,000", "What is the CEO's salary?", qtype="unanswerable")
    assert (v.score, v.rule) == (0, "unanswerable")


def test_a_reference_that_declines_makes_the_question_unanswerable_without_qtype():
    v = verdict("The document does not contain this information.", "Not stated",
                "What is the CEO's salary?")
    assert (v.score, v.rule) == (1, "unanswerable")


def test_declining_an_answerable_question_is_wrong():
    v = verdict("$1.2 million", "The report does not state the salary.", "What is the salary?")
    assert (v.score, v.rule) == (0, "declined-answerable")


@pytest.mark.parametrize("reference, answer, rule, kw", [
    # declines, and answers anyway
    ("Not mentioned", "The document does not mention it, but probably $1.2 million",
     "unanswerable", {"qtype": "unanswerable"}),
    ("$1.2 million", "The report does not state it, but it is $1.2 million.",
     "declined-answerable", {}),
    # the numbers match but a word of the reference is missing
    ("5 branches", "5 offices", "number", {}),
    # a date in words only
    ("March 1, 2025", "In early spring.", "date", {}),
    # close but not close enough: a different name or a typo?
    ("Jane Smith", "John Smith", "similarity", {}),
    # the reference, negated
    ("Jane Smith", "It was not Jane Smith", "contains-reference", {}),
    # a long reference needs a judgment of meaning
    (("Sales fell because a new competitor cut prices in every region where the company "
     "sells its main product line."), "Because of the weather.", "long-answer", {}),
])
def test_answers_it_must_leave_undecided(reference, answer, rule, kw):
    v = verdict(reference, answer, "What did the document say?", **kw)
    assert (v.score, v.status, v.rule) == (None, "undecided", rule)


@pytest.mark.parametrize("reference, answer, score, rule", [
    ("Jane Smith", "jane smith.", 1, "exact-match"),
    ("The Riverton Office", "the riverton office", 1, "exact-match"),
    ("Jane Smith", "The contract was signed by Jane Smith.", 1, "contains-reference"),
    ("Jane Smith", "Smith, Jane", 1, "contains-reference"),
    ("Jane Smith", "Jane Smyth", 1, "similarity"),  # 1 edit in 10 characters: 0.9
    ("Jane Smith", "Mary Jones", 0, "similarity"),
    ("Jane Smith", "", 0, "empty-answer"),
    ("Jane Smith", None, 0, "empty-answer"),
    ("Jane Smith", float("nan"), 0, "empty-answer"),
])
def test_short_text_answers(reference, answer, score, rule):
    v = verdict(reference, answer, "Who signed the contract?")
    assert (v.score, v.rule) == (score, rule)


def test_similarity_thresholds_are_options():
    # "jane smith" vs "john smith": 3 edits in 10 characters -> 0.7
    assert verdict("Jane Smith", "John Smith", "Who?").score is None
    assert verdict("Jane Smith", "John Smith", "Who?",
                   judge=RuleJudge(accept_similarity=0.7)).score == 1
    assert verdict("Jane Smith", "John Smith", "Who?",
                   judge=RuleJudge(reject_similarity=0.75)).score == 0


def test_every_verdict_names_a_known_rule():
    sample = load_sample()
    judged = judge_records(sample, JUDGE)
    assert set(judged["verdict_rule"]) <= set(RULES)
    assert judged["verdict_reason"].str.len().min() > 0


@pytest.mark.parametrize("kwargs, message", [
    ({"rel_tol": -0.1}, "rel_tol must be a number in \\[0, 1\\)"),
    ({"accept_similarity": 1.5}, "accept_similarity must be a number in \\(0, 1\\]"),
    ({"reject_similarity": 0.95}, "reject_similarity must be <= accept_similarity"),
    ({"max_short_words": 0}, "max_short_words must be an integer >= 1"),
    ({"dayfirst": "yes"}, "dayfirst must be True or False"),
])
def test_rule_judge_options_are_validated(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        RuleJudge(**kwargs)


@pytest.mark.parametrize("args, kw, message", [
    (("", "a", "r"), {}, "question must be a non-empty string"),
    (("q", "a", None), {}, "reference must be a non-empty string"),
    (("q", 12, "r"), {}, "answer must be a string or None; found 12"),
    (("q", "a", "r"), {"qtype": "una"}, "qtype must be one of 'text-only'"),
])
def test_judge_arguments_are_validated(args, kw, message):
    with pytest.raises(ValidationError, match=message):
        JUDGE.judge(*args, **kw)


def test_verdict_is_frozen_and_validated():
    v = Verdict(1, "yes-no")
    with pytest.raises(AttributeError):
        v.score = 0  # type: ignore[misc]
    with pytest.raises(ValidationError, match="score must be 1, 0 or None; found 2"):
        Verdict(2, "x")
    with pytest.raises(ValidationError, match="score must be 1, 0 or None; found True"):
        Verdict(True, "x")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="rule must be a non-empty string"):
        Verdict(1, "")
    assert [Verdict(s, r).status for s, r in ((1, "a"), (0, "a"), (None, "a"),
                                               (None, "unparseable"))] == [
        "correct", "wrong", "undecided", "unparseable"]


# ----------------------------------------------------------------- agreement and kappa
def test_agreement_and_kappa_against_hand_computed_values():
    # table (a rows, b columns): a=1,b=1: 20; a=1,b=0: 5; a=0,b=1: 10; a=0,b=0: 15; n = 50
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    result = judge_agreement(a, b)
    # p_o = (20 + 15) / 50 = 0.7
    assert result["agreement"] == pytest.approx(0.7)
    # p(a=1) = 25/50 = 0.5, p(b=1) = 30/50 = 0.6: p_e = 0.5*0.6 + 0.5*0.4 = 0.5
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert result["kappa"] == pytest.approx(0.4)
    assert result["table"].values.tolist() == [[20, 5], [10, 15]]
    assert result["n"] == 50 and result["excluded"] == 0


def test_kappa_equals_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 200)
    b = np.where(rng.uniform(size=200) < 0.8, a, 1 - a)
    assert judge_agreement(a, b)["kappa"] == pytest.approx(cohen_kappa_score(a, b))


def test_undecided_pairs_are_left_out_and_counted():
    # compared pairs: (1,1) (0,0) (1,0) -> agreement 2/3; three pairs left out
    a = [1, 0, 1, None, 1, Verdict(None, "unparseable")]
    b = [1, 0, 0, 1, None, 0]
    result = judge_agreement(a, b)
    assert result["agreement"] == pytest.approx(2 / 3)
    assert (result["n"], result["excluded"], result["undecided_a"], result["undecided_b"]) == (
        3, 3, 2, 1)


def test_agreement_accepts_series_with_missing_values():
    a = pd.Series([1, 0, pd.NA, 1], dtype="Int64")
    b = pd.Series([1.0, 0.0, 1.0, np.nan])
    result = judge_agreement(a, b)
    assert (result["n"], result["agreement"]) == (2, 1.0)


def test_undefined_agreement_and_kappa_warn_and_are_nan():
    with pytest.warns(UndefinedMetricWarning, match="no answer was decided by both"):
        result = judge_agreement([None, 1], [1, None])
    assert math.isnan(result["agreement"]) and math.isnan(result["kappa"])
    # both judges say 1 throughout: p_o = 1 and p_e = 1, kappa 0/0
    with pytest.warns(UndefinedMetricWarning, match="kappa is undefined"):
        result = judge_agreement([1, 1, 1], [1, 1, 1])
    assert result["agreement"] == 1.0 and math.isnan(result["kappa"])


@pytest.mark.parametrize("a, b, message", [
    ([1, 0], [1], "a and b must have the same length .*found 2 and 1"),
    ([1, 2], [1, 0], ("a must be a Verdict, 1, 0 or None; found 1 value breaking it, first "
                     "at index 1 \\(2\\)")),
    ("10", [1, 0], "a must be a sequence of Verdicts"),
])
def test_agreement_inputs_are_validated(a, b, message):
    with pytest.raises(ValidationError, match=message):
        judge_agreement(a, b)


# ----------------------------------------------------------------------------- Wilson
def test_wilson_interval_worked_example():
    # 8 of 10 at 95%, z = 1.9599640: z^2 = 3.8414588
    # centre = (8 + z^2/2) / (10 + z^2) = 9.9207294 / 13.8414588 = 0.7167402
    # half = z / (10 + z^2) * sqrt(8*2/10 + z^2/4) = 0.1416010 * 1.6001140 = 0.2265777
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.7167402 - 0.2265777, abs=1e-6)  # 0.4901625
    assert high == pytest.approx(0.7167402 + 0.2265777, abs=1e-6)  # 0.9433179


def test_wilson_interval_at_the_edges_and_its_symmetry():
    # 0 of 10: centre = half = (z^2/2) / (10 + z^2) = 1.9207294 / 13.8414588 = 0.1387664
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(2 * 0.1387664, abs=1e-6)
    for k in range(11):
        lo, hi = wilson_interval(k, 10, confidence_level=0.9)
        lo2, hi2 = wilson_interval(10 - k, 10, confidence_level=0.9)
        assert (lo, hi) == pytest.approx((1 - hi2, 1 - lo2))


def test_wilson_interval_validation_and_undefined():
    with pytest.raises(ValidationError, match="successes must be <= n \\(3\\); found 4"):
        wilson_interval(4, 3)
    with pytest.raises(ValidationError, match="confidence_level must be a number in \\(0, 1\\)"):
        wilson_interval(1, 3, confidence_level=95)
    with pytest.warns(UndefinedMetricWarning, match="n = 0"):
        assert all(math.isnan(x) for x in wilson_interval(0, 0))


# ---------------------------------------------------------------------- accuracy table
def test_accuracy_table_overall_and_by_each_breakdown():
    rows = [record(doc_id=i, domain=d, qtype=t) for i, (d, t) in enumerate(
        [("news", "text-only"), ("news", "unanswerable"), ("laws", "text-only"),
         ("laws", "text-only"), ("news", "text-only")])]
    verdicts = [1, 0, Verdict(None, "unparseable"), 1, None]
    table = accuracy_table(rows, verdicts)
    got = table[["by", "group", "n", "correct", "wrong", "undecided", "unparseable",
                 "judged"]].values.tolist()
    assert got == [
        ["overall", "all", 5, 2, 1, 1, 1, 3],
        ["domain", "laws", 2, 1, 0, 0, 1, 1],  # DocBench's domain order, not first-seen
        ["domain", "news", 3, 1, 1, 1, 0, 2],
        ["qtype", "text-only", 4, 2, 0, 1, 1, 2],
        ["qtype", "unanswerable", 1, 0, 1, 0, 0, 1],
    ]
    # accuracy = correct / judged: 2/3, 1/1, 1/2, 2/2, 0/1
    assert table["accuracy"].tolist() == pytest.approx([2 / 3, 1.0, 0.5, 1.0, 0.0])
    low, high = wilson_interval(2, 3)
    assert (table.loc[0, "ci_low"], table.loc[0, "ci_high"]) == pytest.approx((low, high))


def test_systems_are_never_pooled_and_joint_breakdowns_work():
    rows = [record(doc_id=i % 2, system=s, domain="news", qtype=t)
            for i, (s, t) in enumerate([("A", "text-only"), ("A", "meta-data"),
                                        ("B", "text-only"), ("B", "text-only")])]
    table = accuracy_table(rows, [1, 0, 0, 0], by=[("domain", "qtype")])
    assert table[["system", "by", "group", "n", "correct"]].values.tolist() == [
        ["A", "overall", "all", 2, 1],
        ["A", "domain+qtype", "news, text-only", 1, 1],
        ["A", "domain+qtype", "news, meta-data", 1, 0],
        ["B", "overall", "all", 2, 0],
        ["B", "domain+qtype", "news, text-only", 2, 0],
    ]


def test_missing_group_values_form_their_own_group():
    rows = [record(doc_id=i, page=p) for i, p in enumerate([1, None, 1, float("nan")])]
    table = accuracy_table(rows, [1, 1, 0, 0], by="page")
    assert table[["group", "n"]].values.tolist() == [["all", 4], ["(missing)", 2], ["1", 2]]


def test_a_group_without_decided_verdicts_is_nan_with_one_warning():
    rows = [record(doc_id=i, domain=d) for i, d in enumerate(["news", "laws", "laws"])]
    with pytest.warns(UndefinedMetricWarning, match="undefined for 1 group\\(s\\) .*group news"):
        table = accuracy_table(rows, [None, 1, 0], by=["domain"])
    assert math.isnan(table.loc[2, "accuracy"]) and math.isnan(table.loc[2, "ci_low"])


def test_verdicts_by_column_name_keep_unparseable_apart():
    judged = pd.DataFrame([record(doc_id=i) for i in range(3)])
    judged["verdict"] = pd.array([1, pd.NA, pd.NA], dtype="Int64")
    judged["verdict_status"] = ["correct", "unparseable", "undecided"]
    table = accuracy_table(judged, "verdict", by=())
    assert table[["correct", "undecided", "unparseable"]].values.tolist() == [[1, 1, 1]]
    judged.loc[0, "verdict_status"] = "wrong"
    with pytest.raises(ValidationError, match="verdict_status must be one of .* and agree "
                                              "with 'verdict'; found 1 value breaking it, "
                                              "first at index 0 \\('wrong'\\)"):
        accuracy_table(judged, "verdict", by=())


@pytest.mark.parametrize("by, verdicts, message", [
    (["nosuch"], [1], "by must name columns of the records; found 'nosuch'"),
    ([3], [1], "by must hold column names or tuples of them; found 3"),
    (["domain"], [1, 0], "verdicts must have one verdict per record \\(1\\); found 2"),
    (["domain"], "verdict", "verdicts must be a column of the records when given by name"),
    (["domain"], [0.5], "verdicts must be a Verdict, 1, 0 or None; found 1 value"),
])
def test_accuracy_table_inputs_are_validated(by, verdicts, message):
    with pytest.raises(ValidationError, match=message):
        accuracy_table([record()], verdicts, by=by)


# ----------------------------------------------------------------------- calibration
def test_calibration_feeds_the_verdicts_to_calibration_report_unchanged():
    confidence = [0.9, 0.8, 0.35, 0.6, None, 0.7, 0.2, 0.95]
    verdicts = [1, 1, 0, None, 1, 0, 0, 1]
    rows = [record(doc_id=i, confidence=c) for i, c in enumerate(confidence)]
    table = calibration_table(rows, verdicts, budgets=[0.2], n_bins=2)
    # kept: rows with a confidence and a decided verdict -> indices 0, 1, 2, 5, 6, 7
    kept = [0, 1, 2, 5, 6, 7]
    expected = confcal.calibration_report([verdicts[i] for i in kept],
                                          [confidence[i] for i in kept],
                                          budgets=[0.2], n_bins=2).to_frame()
    row = table.iloc[0]
    assert (row["records"], row["without_confidence"], row["unjudged"]) == (8, 1, 1)
    for column in expected.columns:
        assert row[column] == pytest.approx(expected.loc[0, column]), column


def test_calibration_is_per_system_and_skips_systems_without_confidence():
    rows = ([record(doc_id=i, system="A", confidence=c) for i, c in enumerate([0.9, 0.2, 0.6])]
            + [record(doc_id=i, system="B", confidence=None) for i in range(2)])
    table = calibration_table(rows, [1, 0, 1, 1, 0], budgets=[0.5])
    assert table["system"].tolist() == ["A"]
    assert table.loc[0, "auroc"] == 1.0


def test_calibration_without_usable_answers_warns_and_errors():
    rows = [record(doc_id=i, confidence=0.5) for i in range(2)]
    with pytest.warns(UndefinedMetricWarning, match="no answer has both a confidence and a "
                                                    "decided verdict"):
        table = calibration_table(rows, [None, None])
    assert table.loc[0, "n"] == 0 and math.isnan(table.loc[0, "auroc"])
    with pytest.raises(ValidationError, match="records must have a confidence column"):
        calibration_table([record()], [1])
    with pytest.raises(ValidationError, match="found none in 1 records"):
        calibration_table([record(confidence=None)], [1])


# ---------------------------------------------------------------------------- records
@pytest.mark.parametrize("change, message", [
    ({"doc_id": True}, ("doc_id must be a non-empty string or an integer; found 1 value "
                       "breaking it, first at index 1 \\(True\\)")),
    ({"question": " "}, "question must be a non-empty string; .* first at index 1"),
    ({"reference": 12}, "reference must be a non-empty string; .*\\(12\\)"),
    ({"answer": 12}, "answer must be a string \\(empty or null for no answer\\)"),
    ({"qtype": "una"}, ("qtype must be one of 'text-only', 'multimodal', 'meta-data', "
                       "'unanswerable'; .*\\('una'\\) \\(DocBench's own labels")),
    ({"domain": None}, "domain must be a non-empty string"),
    ({"confidence": 1.5}, "confidence must be a number within \\[0, 1\\] or null; .*\\(1.5\\)"),
    ({"confidence": True}, "confidence must be a number within \\[0, 1\\] or null"),
    ({"system": ""}, "system must be a non-empty string"),
    ({"evidence": ["a"]}, "evidence must be a string or null"),
])
def test_record_errors_name_the_column_the_rule_and_the_first_record(change, message):
    base = record(confidence=0.5, system="s", evidence="e")
    rows = [base, {**base, **change}]
    with pytest.raises(ValidationError, match=f"records: {message}"):
        check_records(rows)


def test_records_as_dataframe_or_dicts_give_the_same_frame():
    rows = [record(extra="x", confidence=None), record(doc_id=7, confidence=0.25)]
    from_dicts = check_records(rows)
    from_frame = check_records(pd.DataFrame(rows, index=[10, 11]))
    pd.testing.assert_frame_equal(from_dicts, from_frame)
    assert from_dicts.columns.tolist() == ["doc_id", "question", "reference", "answer",
                                           "domain", "qtype", "confidence", "extra"]
    assert from_dicts["confidence"].isna().tolist() == [True, False]


def test_record_shape_errors():
    with pytest.raises(ValidationError, match="records must not be empty"):
        check_records([])
    with pytest.raises(ValidationError, match="found 1 items that are not dicts, first at "
                                              "index 1 \\(list\\)"):
        check_records([record(), ["x"]])
    with pytest.raises(ValidationError, match="found 1 records without some, first at index 0 "
                                              "\\(no answer\\)"):
        check_records([{k: v for k, v in record().items() if k != "answer"}])
    with pytest.raises(ValidationError, match="found 1 missing \\(qtype\\)"):
        check_records(pd.DataFrame([record()]).drop(columns="qtype"))
    with pytest.raises(ValidationError, match="must be a DataFrame or a list of dicts; found str"):
        check_records("records.jsonl")
    assert "answer" not in check_records([{k: v for k, v in record().items()
                                           if k != "answer"}], require_answer=False)


def test_load_records_reads_jsonl_and_gzip(tmp_path):
    lines = [json.dumps(record(doc_id=i)) for i in range(3)]
    plain = write_lines(tmp_path / "r.jsonl", [lines[0], "", lines[1], "  ", lines[2]])
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert load_records(plain)["doc_id"].tolist() == [0, 1, 2]  # blank lines carry no record
    pd.testing.assert_frame_equal(load_records(plain), load_records(packed))


@pytest.mark.parametrize("lines, message", [
    (["{bad json"], "r.jsonl, line 1: must be valid JSON; found an error at column 2"),
    (["[1, 2]"], "r.jsonl, line 1: must be a JSON object \\(one record\\); found a JSON list"),
    ([json.dumps(record()), "", json.dumps(record(qtype="una"))],
     "records: qtype must be one of .* first at .*r.jsonl, line 3 \\('una'\\)"),
    ([json.dumps(record()), json.dumps({"doc_id": 1})],
     "every record must have the keys .* first at .*r.jsonl, line 2 \\(no question"),
    ([""], "must hold at least one record; found none"),
])
def test_load_records_errors_name_the_line(tmp_path, lines, message):
    path = write_lines(tmp_path / "r.jsonl", lines)
    with pytest.raises(ValidationError, match=message):
        load_records(path)


def test_load_records_refuses_bad_bytes_and_missing_files(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(json.dumps(record()).encode() + b"\n\xff\xfe\n")
    with pytest.raises(ValidationError, match="r.jsonl, line 2: must be UTF-8 text"):
        load_records(path)
    with pytest.raises(ValidationError, match="path must be an existing JSONL file"):
        load_records(tmp_path / "nope.jsonl")


def test_load_docbench_reads_the_layout_domains_and_types(tmp_path):
    root = docbench(tmp_path, {
        "50": [qa(kind="multimodal-t"), qa(kind="una", answer="Not mentioned")],
        "3": [qa(kind="meta-data")],
        "200": [qa(kind="multimodal-f")],
    }, answers={"50": "1. 42\n2. The report does not say.\n", "3": "1. forty\ntwo\n",
                "200": "1. 41\n"})
    frame = load_docbench(root, system="sys")
    assert frame["doc_id"].tolist() == ["3", "50", "50", "200"]  # numeric folder order
    assert frame["domain"].tolist() == ["academia", "finance", "finance", "news"]
    assert frame["qtype"].tolist() == ["meta-data", "multimodal", "unanswerable", "multimodal"]
    assert frame["reference"].tolist() == ["42", "42", "Not mentioned", "42"]
    # a line that does not start the next number continues the previous answer
    assert frame["answer"].tolist() == ["forty two", "42", "The report does not say.", "41"]
    assert set(frame["system"]) == {"sys"}
    assert judge_records(frame, JUDGE)["verdict"].tolist() == [1, 1, 1, 0]
    questions = load_docbench(root)  # no system: a question set without answers
    assert "answer" not in questions.columns and len(questions) == 4


def test_load_docbench_reads_results_jsonl_and_a_domain_mapping(tmp_path):
    root = docbench(tmp_path, {"contract": [qa(), qa(question="Who?", answer="Ann")]})
    write_lines(root / "contract" / "m_results.jsonl",
                [json.dumps({**qa(), "sys_ans": "42"}),
                 json.dumps({**qa(question="Who?", answer="Ann"), "sys_ans": "Bob"})])
    frame = load_docbench(root, system="m", domains={"contract": "laws"})
    assert frame["answer"].tolist() == ["42", "Bob"]
    assert frame["domain"].tolist() == ["laws", "laws"]
    assert load_docbench(root, domains=lambda name: "custom")["domain"].tolist() == [
        "custom", "custom"]


@pytest.mark.parametrize("folders, answers, kwargs, message", [
    ({"5": [qa()]}, {"5": "Here are the answers:\n1. 42\n"}, {"system": "sys"},
     ("sys_results.txt, line 1: answers must be numbered 1., 2., ...; found text before "
     "answer 1")),
    ({"5": [qa(), qa()]}, {"5": "1. 42\n"}, {"system": "sys"},
     "must hold one numbered answer per question \\(2\\); found 1"),
    ({"5": [qa()]}, None, {"system": "sys"}, ("must hold the answers of system 'sys' as "
                                             "sys_results.jsonl or sys_results.txt")),
    ({"5": [qa(kind="chart")]}, None, {}, "5_qa.jsonl, line 1: type must be one of"),
    ({"5": [{"question": "Q?"}]}, None, {}, ('line 1: must have the keys "question", '
                                            '"answer" and "type"; found it without answer, '
                                            "type")),
    ({"contract": [qa()]}, None, {}, ("folder 'contract': the domain of a DocBench folder is "
                                     "read from its number")),
    ({"999": [qa()]}, None, {}, "folder '999'"),
])
def test_load_docbench_errors(tmp_path, folders, answers, kwargs, message):
    root = docbench(tmp_path, folders, answers)
    with pytest.raises(ValidationError, match=message):
        load_docbench(root, **kwargs)


def test_load_docbench_needs_the_qa_file(tmp_path):
    (tmp_path / "data" / "7").mkdir(parents=True)
    with pytest.raises(ValidationError, match="7: must hold 7_qa.jsonl"):
        load_docbench(tmp_path / "data")


# --------------------------------------------------------------------- judge_records
def test_judge_records_adds_the_verdict_columns_with_a_prefix():
    rows = [record(reference="Yes", answer="No", question="Is it?"), record(answer=None)]
    judged = judge_records(rows, JUDGE, prefix="rule")
    assert judged["rule"].dtype == "Int64"
    assert judged[["rule", "rule_status", "rule_rule"]].values.tolist() == [
        [0, "wrong", "yes-no"], [0, "wrong", "empty-answer"]]
    with pytest.raises(ValidationError, match="must not already have the verdict columns; "
                                              "found rule"):
        judge_records(judged, JUDGE, prefix="rule")


def test_judge_records_checks_the_judge():
    with pytest.raises(ValidationError, match="judge must have a judge"):
        judge_records([record()], object())  # type: ignore[arg-type]

    class Bad:
        def judge(self, *args, **kw):
            return 1

    with pytest.raises(ValidationError, match="must return a Verdict; found int for record 0"):
        judge_records([record()], Bad())


def test_judge_records_passes_qtype_and_evidence():
    seen = []

    class Spy:
        def judge(self, question, answer, reference, *, qtype=None, evidence=None):
            seen.append((qtype, evidence))
            return Verdict(None, "spy")

    judge_records([record(evidence="E", qtype="meta-data"), record(evidence=None)], Spy())
    assert seen == [("meta-data", "E"), ("text-only", None)]


# ---------------------------------------------------------------------- the sample
def test_the_sample_covers_every_domain_type_and_system():
    sample = load_sample()
    assert len(sample) == 120
    assert set(sample["domain"]) == set(DOMAINS) and set(sample["qtype"]) == set(QTYPES)
    per_system = sample.groupby("system")
    assert per_system.size().tolist() == [40, 40, 40]
    with_confidence = per_system["confidence"].apply(lambda c: c.notna().sum())
    with_human = per_system["human"].apply(lambda c: c.notna().sum())
    assert sorted(with_confidence.tolist()) == [0, 0, 40]
    assert with_confidence.idxmax() == with_human.idxmax() == "sim-careful"
    assert set(sample["human"].dropna()) == {0, 1}
    # every (domain, qtype) pair appears, in all 40 questions
    assert sample[sample["system"] == "sim-careful"].groupby(["domain", "qtype"]).ngroups == 20


def test_the_sample_script_reproduces_the_file_byte_for_byte():
    script = runpy.run_path(str(ROOT / "scripts" / "make_docqa_sample.py"))
    packaged = (ROOT / "src" / "confcal" / "data" / "docqa_sample.jsonl").read_bytes()
    assert script["build"]() == packaged
    assert script["build"](seed=1) != packaged  # the seed matters


def test_the_sample_end_to_end_with_the_rule_judge():
    sample = load_sample()
    judged = judge_records(sample, JUDGE)
    careful = judged[judged["system"] == "sim-careful"]
    result = judge_agreement(careful["verdict"], careful["human"])
    assert result["n"] + result["excluded"] == 40
    assert result["agreement"] > 0.9  # the rules agree with the people on the decided ones
    table = calibration_table(judged, "verdict")
    assert table["system"].tolist() == ["sim-careful"]
    assert 0.5 < table.loc[0, "auroc"] <= 1.0
