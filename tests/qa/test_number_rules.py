"""The rule judge's number rules (confcal.qa._number_rules), one at a time.

Each rule is tested on hand-worked cases where it decides and where it must let the case
pass. A case is read as the judge reads it: the question's, the reference's and the
answer's facts, and the reference numbers the question does not already state.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal.qa import _text as qt
from confcal.qa._number_rules import (
    NUMBER_RULES,
    Candidates,
    Facts,
    NumberCase,
    answer_rounds,
    asked_entity_rule,
    doubt_rule,
    fmt_quantities,
    missing_rule,
    pair_order_rule,
    range_rule,
    read_numbers,
    reference_rounds,
    sign_rule,
    stated_numbers,
    year_rule,
)
from confcal.qa._verdicts import Verdict


def case(question: str, reference: str, answer: str, *, rel_tol: float = 0.0) -> NumberCase:
    q, r, a = (Facts.read(t, dayfirst=False) for t in (question, reference, answer))
    return NumberCase.of(q, r, a, rel_tol=rel_tol, share=qt.share_question(question))


def apply(rule, question: str, reference: str, answer: str):
    """The rule on the candidates :func:`stated_numbers` finds: a Verdict, or the texts of
    the answer numbers it leaves for each reference number."""
    c = case(question, reference, answer)
    outcome = rule(c, stated_numbers(c))
    if isinstance(outcome, Verdict):
        return outcome.score, outcome.rule, outcome.reason
    return [[b.quantity.text for b in bs] for bs in outcome.found]


def kinds(reference: str, answer: str, share: bool = False):
    """(the reference's one number, how each answer number states it)."""
    [x] = qt.quantities_in(reference)
    return x, [(qt.compare(x, b.quantity, 0.0, share), b) for b in qt.bind(answer)]


# ----------------------------------------------------------------------- the case
def test_the_case_holds_the_numbers_beyond_the_question():
    # 2023 is the question's: context, not something the answer must repeat
    c = case("What was revenue in 2023?", "Revenue in 2023 was $5.5M", "It was $5.5M.")
    assert [x.text for x in c.numbers] == ["$5.5M"] and c.beyond
    # the question states every number of the reference: they are the answer
    c = case("Was it 2019 or 2020?", "2020", "2020")
    assert [x.text for x in c.numbers] == ["2020"] and not c.beyond
    # the reference's words around its number: "for" is 52's, "against" 48's
    c = case("How many voted?", "52 for and 48 against", "52 and 48")
    assert [sorted(b.labels) for b in c.reference_bound] == [["for"], ["against"]]


def test_facts_read_dates_apart_from_numbers():
    f = Facts.read("Signed on March 1, 2024 for $5 million.", dayfirst=False)
    assert f.dates.describe() == ["2024-03-01"]
    assert [x.text for x in f.plain_numbers] == ["$5 million"]
    # a date's year answers "which year"
    assert [x.value for x in f.numbers] == [5_000_000.0, 2024.0]
    assert [b.quantity.text for b in f.bound] == ["2024", "$5 million"]
    assert [b.quantity.text if b else None for b in f.bound_of(f.plain_numbers)] == [
        "$5 million"]


def test_numbers_are_named_as_written_with_a_worded_currency():
    assert fmt_quantities(qt.quantities_in("3 million euros, $4")) == "3 million (EUR), $4"
    assert fmt_quantities([]) == "none"


# ---------------------------------------------------------- stating a number
def test_reference_rounds_doubts_a_coarse_reference_that_differs():
    # "4%" rounds 4.4% (|4 - 4.4| = 0.4 <= 1/2) but they differ by 0.4 > 1% of 4 = 0.04
    x, k = kinds("4%", "4.4%")
    assert reference_rounds(x, k) == ("4% (the answer states 4.4%, more precisely than the "
                                      "reference and not the same)")
    # not: 0.02 <= 0.04, the reference only rounds
    assert reference_rounds(*kinds("4%", "4.02%")) is None
    # not: "5.5 million" is written to 100,000, coarser than a thousand
    assert reference_rounds(*kinds("5.5 million", "5,512,000")) is None
    # not: another number of the answer states 4% itself
    assert reference_rounds(*kinds("4%", "4.4%, or 4% rounded")) is None


def test_answer_rounds_accepts_only_a_rounding_it_says():
    [x] = qt.quantities_in("61.8%")
    [hedged] = qt.bind("about 62%")
    assert answer_rounds(x, [hedged]) == ([hedged], None)
    # a count put into a scale word: 2.3 million is written to 100,000 >= 1,000 > 1
    [x] = qt.quantities_in("2,314,562")
    [scaled] = qt.bind("2.3 million")
    assert answer_rounds(x, [scaled]) == ([scaled], None)
    # "4.3%" for 4.25% drops a digit without saying so: kept, with a doubt
    [x] = qt.quantities_in("4.25%")
    [silent] = qt.bind("4.3%")
    assert answer_rounds(x, [silent]) == (
        [silent], "4.25% (the answer rounds it to 4.3% without saying so)")
    assert answer_rounds(x, []) == ([], None)


def test_stated_numbers_finds_each_reference_number_once():
    c = case("What was net income?", "$5,500,000", "5.5 million dollars")
    assert stated_numbers(c) == Candidates(((c.answer.bound[0],),))
    # 4.3% states the reference's 4.3%, so it cannot also be 4.25% rounded
    c = case("What were the rates?", "4.3% and 4.25%", "4.3%")
    assert [len(bs) for bs in stated_numbers(c).found] == [1, 0]
    # 4.3% alone rounds 4.25%, with a doubt
    c = case("What was the rate?", "4.25%", "4.3%")
    found = stated_numbers(c)
    assert [[b.quantity.text for b in bs] for bs in found.found] == [["4.3%"]]
    assert found.doubts == ("4.25% (the answer rounds it to 4.3% without saying so)",)
    # not: 13 does not state 12
    assert stated_numbers(case("How many?", "12", "13")).found == ((),)


# ---------------------------------------------------------------------- the rules
def test_missing_rule():
    q = "How many training samples were used?"
    assert apply(missing_rule, q, "1,042", "The authors used 1,024 training samples.") == (
        0, "number", "the reference states 1,042; the answer states 1,024")
    # the answer's only number is the question's 2023: nothing of its own to compare
    assert apply(missing_rule, "What was revenue in 2023?", "$5.5 million",
                 "Revenue in 2023 grew strongly.") == (
        None, "number", "the reference states $5.5 million; the answer states no number of "
                        "its own that can be read")
    # 12 * 0.01 = 0.12: perhaps points of a share
    assert apply(missing_rule, "What was the growth?", "0.12", "It grew by 12.") == (
        None, "number", "the reference states 0.12; the answer states 12, perhaps as points "
                        "of a share")
    # the question's numbers are the choice: 2019 is the answer's own, and wrong
    assert apply(missing_rule, "Was it 2019 or 2020?", "2020", "It was 2019.")[0] == 0
    # not: every number is stated
    assert apply(missing_rule, "What was the growth?", "12", "It grew by 12.") == [["12"]]


def test_sign_rule():
    q = "What was the change in operating income?"
    # a written minus against an answer with no word of direction: a dropped sign
    assert apply(sign_rule, q, "-3.5%", "3.5%") == (
        0, "sign", "the reference states -3.5% (negative); the answer states 3.5% (no sign)")
    assert apply(sign_rule, q, "-3.5%", "Operating income changed by 3.5%.")[0] == 0
    # opposite worded signs: fell against rose
    assert apply(sign_rule, "What was the change in sales?", "Sales fell 2%.",
                 "Sales rose 2%.") == (
        0, "sign", "the reference states 2% (negative); the answer states 2% (positive)")
    # words of direction in the answer, but not the 3.5%'s: it may be phrased otherwise
    assert apply(sign_rule, q, "-3.5%", "Revenue rose 2% while operating income moved "
                                        "3.5%.") == (
        None, "sign", "the reference states -3.5% (negative); the answer does not say "
                      "whether 3.5% is negative")
    # of two 3.5%, one positive (rose) and one that may be phrased otherwise: not all
    # opposite, so undecided
    assert apply(sign_rule, q, "-3.5%", "Sales rose 3.5% while operating income moved "
                                        "3.5%.")[:2] == (None, "sign")
    # a worded minus (fell) against a bare 2%: a sign may be phrased otherwise
    assert apply(sign_rule, "What was the change in sales?", "Sales fell 2%.", "2%")[:2] == (
        None, "sign")
    # not: the question gives the answer's bare number its sign (a deficit is negative)
    assert apply(sign_rule, "What was the trade deficit?", "-$3 billion", "$3 billion") == [
        ["$3 billion"]]
    # not: "fell" is a minus
    assert apply(sign_rule, q, "-3.5%", "Operating income fell 3.5%.") == [["3.5%"]]
    # not: an unsigned reference number and a rising one are both not negative
    assert apply(sign_rule, q, "3.5%", "Operating income rose 3.5%.") == [["3.5%"]]
    # of two 5%, only the one that fell is left
    c = case("What was the change in sales?", "-5%",
             "Sales fell 5% in March and rose 5% in April.")
    [[b]] = sign_rule(c, stated_numbers(c)).found
    assert b.index == 0 and b.direction == -1


def test_year_rule():
    q = "What was total revenue in 2023?"
    # 4.2 billion's nearest year is 2022 (2023 is past "and")
    assert apply(year_rule, q, "$4.2 billion",
                 "Total revenue was $4.2 billion in 2022 and $4.6 billion in 2023.") == (
        0, "year", "the reference states $4.2 billion for 2023; the answer states "
                   "$4.2 billion for 2022")
    # the reference's own year, when the question names none
    assert apply(year_rule, "What was total revenue?", "$4.2 billion in 2023",
                 "Total revenue was $4.2 billion in 2022.")[:2] == (0, "year")
    # not: the right year; no year asked at all
    assert apply(year_rule, q, "$4.2 billion", "In 2023, total revenue reached $4.2 "
                 "billion, up from $3.9 billion in 2022.") == [["$4.2 billion"]]
    assert apply(year_rule, "What was total revenue?", "$4.2 billion",
                 "Total revenue was $4.2 billion in 2022.") == [["$4.2 billion"]]
    # not: a number written without a year fits any
    assert apply(year_rule, q, "$4.2 billion", "Total revenue was $4.2 billion.") == [
        ["$4.2 billion"]]
    # of two $4.2 billion (indices 0 and 2; 1 and 3 are the years), 2023's is left
    c = case(q, "$4.2 billion", "Revenue was $4.2 billion in 2022 and $4.2 billion in 2023.")
    assert [[b.index for b in bs] for bs in year_rule(c, stated_numbers(c)).found] == [[2]]
    # not: a reference number that is itself a year (2,020 in the answer is its count,
    # written for 2019)
    assert apply(year_rule, "How many units were sold in 2021?", "2020",
                 "They sold 2,020 units in 2019.") == [["2,020"]]


def test_range_rule():
    q = "How many people attended the rally?"
    assert apply(range_rule, q, "about 5,000", "Between 3,000 and 5,000 people attended.") == (
        0, "range", "the reference states 5,000; the answer states the range 3,000 to 5,000")
    # not: the reference gives the range too; no range at all
    assert apply(range_rule, q, "3,000 to 5,000", "Between 3,000 and 5,000 people.") == [
        ["3,000"], ["5,000"]]
    assert apply(range_rule, q, "about 5,000", "About 5,000 people attended.") == [["5,000"]]


def test_pair_order_rule():
    q = "How many senators voted for and against the bill?"
    # 52's own word is "for"; in the answer 52 has "against", 48's own word
    assert apply(pair_order_rule, q, "52 for and 48 against", "48 for and 52 against") == (
        0, "pair-order", "the reference states 52 with for; the answer states it with against")
    # words both numbers have ("votes") are no one's own: 52 still has only 48's "against"
    assert apply(pair_order_rule, q, "52 votes for and 48 votes against",
                 "48 votes for and 52 votes against")[:2] == (0, "pair-order")
    # another order without words to say which is which
    assert apply(pair_order_rule, q, "52 for and 48 against", "48 and 52") == (
        None, "pair-order", "the answer states the reference's numbers in another order, and "
                            "their words do not say which is which")
    # not: another order that the words confirm; the same order without words
    assert apply(pair_order_rule, q, "52 for and 48 against", "48 against and 52 for") == [
        ["52"], ["48"]]
    assert apply(pair_order_rule, q, "52 for and 48 against", "52 and 48") == [["52"], ["48"]]
    # not: one number, whatever its words
    assert apply(pair_order_rule, q, "52 for", "52 against") == [["52"]]


def test_asked_entity_rule():
    q = "What was Germany's GDP growth in 2023?"
    # the reference's 0.3% has France's words, the 0.9% Germany's, which the question asks
    assert apply(asked_entity_rule, q, "-0.3%",
                 "Germany's GDP grew 0.9% in 2023, while France's shrank 0.3%.") == (
        0, "asked-entity", "the answer states -0.3% for franc shrank, and 0.9% for gdp "
                           "germany, which the question asks")
    # a name of the question (Texas) beside the other number only
    assert apply(asked_entity_rule, "What was the unemployment rate in Texas?", "4.1%",
                 "The unemployment rate was 4.1% nationally, while Texas recorded 3.9%.")[:2] \
        == (None, "asked-entity")
    # a level asked, the reference's number given as a change and another as a level
    assert apply(asked_entity_rule, "What percentage of revenue was spent on R&D?", "18%",
                 "R&D spending rose 18% to 12% of revenue.") == (
        None, "asked-entity", "the answer states 18% as a change and 12% as a level; the "
                              "question asks for a level")
    # not: the reference speaks of a change ("rose"), so a change answers it
    assert apply(asked_entity_rule, "How did R&D spending change?", "rose 18%",
                 "R&D spending rose 18% while staff stayed at 12% of the total.") == [["18%"]]
    # not: the question speaks of a change ("rise"), so a change answers it
    assert apply(asked_entity_rule, "How much did R&D spending rise?", "18%",
                 "R&D spending rose 18% to 12% of revenue.") == [["18%"]]
    # not: the other number is the question's own 500
    assert apply(asked_entity_rule, "Of the 500 employees, how many were women?", "230",
                 "Of the 500 employees, 230 were women.") == [["230"]]
    # neither number has a word of the question ("figure" names no entity)
    assert apply(asked_entity_rule, "What was the figure?", "5", "It was 5 or 7.") == (
        None, "asked-entity", "the answer states 5 and also 7; its words do not say which "
                              "one the question asks for")
    # not: the reference's number has the question's words
    assert apply(asked_entity_rule, q, "-0.3%",
                 "France grew 0.9% while Germany shrank 0.3% in 2023.") == [["0.3%"]]
    # not: no other number; the other is for a year not asked; several reference numbers
    assert apply(asked_entity_rule, q, "-0.3%", "Germany shrank 0.3% in 2023.") == [["0.3%"]]
    assert apply(asked_entity_rule, "What was revenue in 2000?", "$2 million",
                 "$1 million in 1999 and $2 million in 2000") == [["$2 million"]]
    assert apply(asked_entity_rule, "What were the figures?", "5 and 7", "5 and 7 and 9") == [
        ["5"], ["7"]]


def test_doubt_rule():
    c = case("What was the rate?", "4.25%", "4.3%")
    doubted = stated_numbers(c)
    assert doubt_rule(c, doubted) == Verdict(
        None, "number", "the reference states 4.25% (the answer rounds it to 4.3% without "
                        "saying so)")
    # not: no doubt
    clear = Candidates(doubted.found)
    assert doubt_rule(c, clear) is clear


# ------------------------------------------------------------------ all of them
def test_the_rules_run_in_order_and_the_first_verdict_decides():
    assert NUMBER_RULES == (missing_rule, sign_rule, year_rule, range_rule, pair_order_rule,
                            asked_entity_rule, doubt_rule)
    # -4.25% answered 4.3%: a doubt (the answer rounds silently) and a dropped sign; the
    # sign rule comes first
    verdict = read_numbers(case("What was the rate?", "-4.25%", "4.3%"))
    assert isinstance(verdict, Verdict) and (verdict.score, verdict.rule) == (0, "sign")
    # every rule holds: the answer's numbers, one per reference number
    matched = read_numbers(case("How many voted?", "52 for and 48 against",
                                "48 against and 52 for"))
    assert [x.text for x in matched] == ["52", "48"]
    # each rule works on what the one before left: the sign rule drops the 5.0% that rose
    matched = read_numbers(case("What was the change in sales?", "-5%",
                                "Costs rose 5.0%, while sales fell 5%."))
    assert [x.text for x in matched] == ["5%"]
    # of the numbers left, the first in the answer
    assert [x.text for x in read_numbers(case("What was it?", "5%", "5% or 5.0%"))] == ["5%"]


@pytest.mark.parametrize("rule", NUMBER_RULES)
def test_every_rule_says_which_rule_it_implements(rule):
    assert rule.__doc__ and rule.__doc__.lstrip().startswith("``")


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 10**7), st.sampled_from(["{:,}", "${:,}", "{:,}%", "{:,} days"]))
def test_an_answer_that_repeats_the_reference_number_passes_every_rule(value, form):
    text = form.format(value)
    matched = read_numbers(case("What is the stated amount?", text, f"It is {text}."))
    assert [x.text for x in matched] == [text]
