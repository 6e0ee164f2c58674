"""The rule judge's "correct" can be trusted: known failures, the labelled judge
cases (tests/data/qa_judge_cases.jsonl) with their targets, and Hypothesis properties.

The labelled cases say what a careful human grader says (``label``); half of them are
adversarial (wrong answers that look right, right answers that look wrong). The targets:
no false positive on the adversarial half, at least 90% agreement on the decided answers,
at least 80% of the answers decided. ``scripts/rule_judge_accuracy.py`` prints the figures.
"""

from __future__ import annotations

import json
import runpy
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal.qa import _text as qt
from confcal.qa.docqa import QTYPES, RULES, RuleJudge

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "data" / "qa_judge_cases.jsonl"
HOLDOUT = ROOT / "tests" / "data" / "qa_judge_holdout.jsonl"
# Written for a review of the judge without reading the two sets above (DocBench-style
# questions answered the way chat models answer); before the review's rules, 7 of its 39
# wrong answers were judged correct.
REVIEW = ROOT / "tests" / "data" / "qa_judge_review.jsonl"
# Written before the rules below about contrary answers and units were in place: answers
# that also say the opposite, corrections, direction words, unit conversions, basis points
# and scale words. Before those rules 12 of its 59 wrong answers were judged correct and 10
# of its 26 right answers wrong.
CONTRARY = ROOT / "tests" / "data" / "qa_judge_contrary.jsonl"
# Written after those rules, as a probe of how far they carry: 1 of its 12 wrong answers
# was judged correct ("€2.3 billion" for "$2.3 billion", an exact match of the words).
CONTRARY_PROBE = ROOT / "tests" / "data" / "qa_judge_contrary_probe.jsonl"
# Written blind by a helper who had read neither the judge's code, its tests nor the sets
# above, only the judge's description in docs/docqa.md: 112 DocBench-style answers written
# as chat models answer (hedges, lists, tables, units, currencies, dates), 85 of them wrong
# and 82 of those adversarial. Before these rules, 43 of its 85 wrong answers were judged
# correct (and 2 of its 27 right answers wrong): a wrong role for the reference ("came
# second" for who won), a reversing prefix ("unconstitutional"), a yes or no contradicted
# by what follows it, a decline that answers after all, another entity's or bound's or
# date's number, a hedge too far off, another dollar, brackets, a spelled-out acronym.
BLIND = ROOT / "tests" / "data" / "qa_judge_blind.jsonl"
# Written after the blind set's rules by the same helper, as a probe of how far they carry:
# 3 of its 12 wrong answers were judged correct ("lost the tender" beside the reference
# after "but", "fastest" for "slowest", an opening year beside the reference's month);
# the judge before the blind set's rules called 10 of the 12 correct.
BLIND_PROBE = ROOT / "tests" / "data" / "qa_judge_blind_probe.jsonl"
SCRIPT = runpy.run_path(str(ROOT / "scripts" / "rule_judge_accuracy.py"))
JUDGE = RuleJudge()


def judge(question, answer, reference, **kw):
    return JUDGE.judge(question, answer, reference, **kw)


# ------------------------------------------------------------------ known failures
def test_a_dropped_minus_is_wrong():
    # words("-3.5%") was ["3.5"], so "3.5%" was an exact match. Now the minus is kept, and
    # a written minus against an answer with no word of direction at all is a dropped sign.
    q = "What was the year-over-year change in operating income?"
    v = judge(q, "3.5%", "-3.5%")
    assert (v.score, v.rule) == (0, "sign")
    assert judge(q, "Operating income fell 3.5%.", "-3.5%").score == 1  # fell = minus
    assert judge(q, "It was \u22123.5%.", "-3.5%").score == 1  # the typographic minus


def test_the_right_amount_for_the_wrong_year_is_wrong():
    # 4.2 billion is nearest to 2022 (1 word away; 2023 is past "and", cost 2 more)
    v = judge("What was total revenue in 2023?",
              "Total revenue was $4.2 billion in 2022 and $4.6 billion in 2023.",
              "$4.2 billion")
    assert (v.score, v.rule) == (0, "year")
    assert judge("What was total revenue in 2023?",
                 "In 2023, total revenue reached $4.2 billion, up from $3.9 billion in 2022.",
                 "$4.2 billion").score == 1


def test_swapped_counts_are_wrong():
    q = "How many senators voted for and against the bill?"
    v = judge(q, "48 for and 52 against", "52 for and 48 against")
    # 52 carries "for" in the reference; in the answer 48 does, 52 carries "against"
    assert (v.score, v.rule) == (0, "pair-order")
    assert judge(q, "48 against and 52 for", "52 for and 48 against").score == 1
    assert judge(q, "The bill passed with 52 votes in favor and 48 against.",
                 "52 for and 48 against").score == 1


def test_an_answer_that_rounds_the_reference_unasked_is_not_correct():
    # 4.25 rounds to 4.3 at one decimal, which the old rule took for the same number; the
    # answer drops a digit without saying it rounds: undecided, never correct.
    q = "What was the policy interest rate set in June?"
    v = judge(q, "The central bank set the policy rate at 4.3%.", "4.25%")
    assert (v.status, v.rule) == ("undecided", "number")
    assert judge(q, "about 4.3%", "4.25%").score == 1  # said to be approximate
    assert judge(q, "4.35%", "4.25%").score == 0


def test_a_percent_and_its_fraction():
    # 0.124 has three significant digits: 12.4% as a fraction, even where the question does
    # not ask for a share
    v = judge("What was the gross margin in 2023?", "The gross margin was 0.124 in 2023.",
              "12.4%")
    assert (v.score, v.rule) == (1, "number")
    assert judge("What was the dropout rate?", "0.1%", "0.1").score == 0  # 0.001 is not 0.1


def test_months_and_years():
    q = "How long is the warranty period?"
    assert judge(q, "The warranty lasts 2 years.", "24 months").score == 1  # 2 x 12 = 24
    assert judge(q, "36-month warranty", "3 years").score == 1
    assert judge(q, "The warranty lasts 2 months.", "2 years").score == 0  # 2 != 24
    assert judge(q, "six weeks", "6 months").score == 0  # days and months never equal
    # 72 hours = 72 x 60 = 4,320 minutes = 3 x 1,440: the bundled sample's one disagreement
    assert judge("Within how many hours must a breach be reported?",
                 "Within three days of becoming aware of it.", "72 hours").score == 1


def test_acronyms_of_the_reference_words():
    q = "Which agency issued the regulation?"
    v = judge(q, "The regulation was issued by the EPA.", "Environmental Protection Agency")
    assert (v.score, v.rule) == (1, "acronym")
    # capitalised words with the initials of an acronym reference: what it stands for is
    # not known to the rules ("Executive Council of Brussels" has the initials of "ECB")
    assert judge(q, "The Environmental Protection Agency.", "EPA").score is None
    assert judge(q, "MIT", "Massachusetts Institute of Technology").score == 1  # "of" skipped
    assert judge(q, "The FTC.", "the Securities and Exchange Commission").score == 0
    assert judge(q, "Not the EPA.", "Environmental Protection Agency").score is None


def test_there_is_no_x_in_the_paper_is_a_decline():
    v = judge("What is the email address of the corresponding author?",
              "There is no email address in the paper.", "Not mentioned", qtype="meta-data")
    assert (v.score, v.rule) == (1, "unanswerable")
    assert qt.declines("There are no supplementary materials in the report.")
    assert qt.declines("No funding source is given in the paper.")
    # findings, not declines
    assert not qt.declines("There is no significant effect.")
    assert not qt.declines("No significant effect was found.")


# ----------------------------------------------------------------- the other new rules
@pytest.mark.parametrize("answer, score, rule", [
    ("Between 3,000 and 5,000 people attended.", 0, "range"),  # a range for one number
    ("About 5,000 people attended.", 1, "number"),
])
def test_a_range_is_not_a_number(answer, score, rule):
    v = judge("How many people attended the rally?", answer, "about 5,000")
    assert (v.score, v.rule) == (score, rule)


def test_the_number_of_the_asked_entity():
    q = "What was Germany's GDP growth in 2023?"
    v = judge(q, "Germany's GDP grew 0.9% in 2023, while France's shrank 0.3%.", "-0.3%")
    assert (v.score, v.rule) == (0, "asked-entity")
    assert judge(q, "France grew 0.9% while Germany shrank 0.3% in 2023.", "-0.3%").score == 1


def test_a_name_of_the_question_beside_another_number_is_not_the_reference_s():
    # the topic ("the unemployment rate") is said once, next to the first number: more of
    # the question's words there do not make it Texas's
    q = "What was the unemployment rate in Texas?"
    v = judge(q, "The unemployment rate was 4.1% nationally, while Texas recorded 3.9%.",
              "4.1%")
    assert (v.score, v.rule) == (None, "asked-entity")
    assert judge(q, "In Texas the unemployment rate was 4.1%, against 3.9% nationally.",
                 "4.1%").score == 1


def test_amounts_in_different_currencies_differ():
    q = "How much did the company raise in the Series A round?"
    v = judge(q, "The company raised $3 million in its Series A round.", "\u20ac3 million")
    assert (v.score, v.rule) == (0, "number")
    assert judge(q, "It raised EUR 3 million.", "\u20ac3 million").score == 1
    assert judge(q, "It raised US$3 million.", "$3 million").score == 1  # "$": any dollar
    assert judge(q, "It raised C$3 million.", "US$3 million").score == 0
    assert judge(q, "It raised 3 million.", "\u20ac3 million").score == 1  # no currency
    # currencies named by a word or code after the number
    v = judge(q, "It raised 3 million pounds.", "3 million euros")
    assert (v.score, v.reason) == (0, "the reference states 3 million (EUR); the answer "
                                      "states 3 million (GBP)")
    assert judge(q, "It raised $3 million.", "3 million euros").score == 0
    assert judge(q, "It raised 3 million euros.", "\u20ac3 million").score == 1
    assert judge(q, "It raised 3 million US dollars.", "$3 million").score == 1
    assert judge(q, "It raised USD 3 million.", "3 million dollars").score == 1
    # a near spelling of the reference's name is no other name
    assert judge("Who signed?", "It was signed by Jane Smyth.", "Jane Smith").score == 1


@pytest.mark.parametrize("question, answer, reference", [
    ("Where is the company's headquarters currently located?",
     "The headquarters moved from Paris to London in 2019.", "Paris"),
    ("Who is the first author of the paper?",
     "The first author is Yoshua Bengio; Yann LeCun is listed as the last author.",
     "Yann LeCun"),
    ("What architecture do the authors use for the encoder?",
     "The authors use an LSTM encoder rather than a Transformer.", "Transformer"),
    ("What architecture do the authors use?",
     "They use a recurrent encoder instead of a transformer.", "transformer"),
    ("Who won the election?", "Maria Lopez lost the election to Daniel Kim.", "Maria Lopez"),
])
def test_a_name_beside_another_or_set_against_one_is_not_decided(question, answer, reference):
    v = judge(question, answer, reference)
    assert v.score is None and v.rule == "contains-reference", v


def test_a_place_written_beside_the_reference_is_no_rival():
    assert judge("Which city hosted the summit?", "The summit was hosted in Geneva, "
                 "Switzerland.", "Geneva").score == 1
    assert judge("In which country is the company headquartered?", "It is headquartered in "
                 "Amsterdam, the Netherlands.", "Netherlands").score == 1
    assert judge("Who was appointed as the new CEO?", "Sarah Johnson was appointed as the new "
                 "CEO in March.", "Sarah Johnson").score == 1


def test_a_change_is_not_the_level_asked():
    q = "What percentage of revenue was spent on R&D?"
    v = judge(q, "R&D spending rose 18% to 12% of revenue.", "18%")
    assert (v.score, v.rule) == (None, "asked-entity")
    assert judge(q, "R&D spending was 18% of revenue.", "18%").score == 1
    # the reference speaks of a change: a change answers it
    assert judge("How did R&D spending change?", "R&D spending rose 18% while staff stayed "
                 "at 12% of the total.", "rose 18%").score == 1


def test_a_negated_reference_is_wrong():
    q = "What was the outcome of the vote on the amendment?"
    v = judge(q, "The amendment was not rejected.", "The amendment was rejected.")
    assert (v.score, v.rule) == (0, "negation")
    v = judge("What is the status of the pilot?", "The pilot has been extended.",
              "It has not been extended.")
    assert (v.score, v.rule) == (0, "negation")


def test_text_readers():
    assert [(a.value, b.value) for a, b in qt.ranges_in("18\u201334 and from 4,100 to 3,200")] \
        == [(18.0, 34.0)]
    [x] = qt.quantities_in("-$12.3 million")
    assert (x.value, x.sign) == (12_300_000.0, -1)
    [x] = qt.quantities_in("one and a half years")
    assert (x.value, x.unit, x.per_unit) == (1.5, "month", 12.0)
    [x] = qt.quantities_in("3e-4")
    assert (x.value, x.precision) == (0.0003, 0.0001)
    assert qt.quantities_in("1e999") == []  # no number, rather than an infinite one
    assert qt.direction("a net loss") == -1 and qt.direction("costs rose; sales fell") == 0


# ------------------------------------------- doubts: what else a correct-looking answer says
@pytest.mark.parametrize("question, answer, right, reference", [
    # a rival word in the question's place, and the plain answer that stays correct
    ("Who finished first in the race?", "Lena Park finished last in the race.",
     "Lena Park finished first.", "Lena Park"),
    ("Who was the appellant?", "Orion Ltd was the respondent.", "Orion Ltd.", "Orion Ltd"),
    ("What was the COO's salary?", "The CEO's salary was $850,000.",
     "The COO's salary was $850,000.", "$850,000"),
    ("What was Spain's inflation rate in 2022?", "Italy's inflation rate was 8.3% in 2022.",
     "Spain's inflation rate was 8.3% in 2022.", "8.3%"),
    ("How many tables does the report contain?", "It contains 9 figures and 4 tables.",
     "It contains 9 tables.", "9"),
    ("What is the top-1 error?", "The top-5 error is 7.2%.", "The top-1 error is 7.2%.",
     "7.2%"),
    # a prefix or a verb that reverses the reference's word
    ("Was the search legal?", "The search was illegal.", "The search was legal.", "Legal"),
    ("What did the board do with the proposal?", "The board refused to adopt the proposal.",
     "The board adopted the proposal.", "It adopted the proposal"),
    # another bound, another dollar, brackets, a level for a change, a qualified unit
    ("What is the maximum sentence?", "At least 10 years.", "Up to 10 years.",
     "Up to 10 years"),
    ("What was the profit?", "$4.1 million.", "A$4.1 million", "A$4.1 million"),
    ("What was the operating result?", "($4.1 million)", "A profit of $4.1 million.",
     "A profit of $4.1 million"),
    ("By how much was the rate raised?", "It was raised to 0.5%.", "It was raised by 50 bp.",
     "50 basis points"),
    ("How long is the notice period?", "14 working days.", "14 days.", "14 days"),
    # a date of another event, one counted from it, another option of the question
    ("When did the law take effect?", "It was passed on 2 May 2019 and took effect on "
     "1 July 2020.", "It took effect on 2 May 2019.", "2 May 2019"),
    ("When did the programme start?", "It was announced on 3 March 2021 and started two "
     "months later.", "It started on 3 March 2021.", "3 March 2021"),
    ("Was the deficit 3% or 4%?", "3% or 4%: it was 3%.", "It was 4%.", "4%"),
])
def test_an_answer_that_may_say_something_else_is_not_correct(question, answer, right,
                                                               reference):
    assert judge(question, answer, reference).score is None
    assert judge(question, right, reference).score == 1


@pytest.mark.parametrize("question, answer, reference", [
    ("Was the contract renewed?", "No. The contract was renewed in 2023.", "No."),
    ("Did exports grow in 2023?", "Yes, exports shrank by 2%.", "Yes."),
    ("Was the appeal upheld?", "Yes, the appeal was dismissed.", "Yes."),
])
def test_a_yes_or_no_whose_words_say_otherwise_is_not_correct(question, answer, reference):
    assert judge(question, answer, reference).score is None
    assert judge(question, answer.split()[0], reference).score == 1


def test_a_decline_that_names_something_is_not_a_decline():
    q = "Who was the project's lead engineer?"
    v = judge(q, "The report does not say, but it was probably Tom Reyes.", "Not stated",
              qtype="unanswerable")
    assert v.status == "undecided"
    assert judge(q, "The report does not say.", "Not stated", qtype="unanswerable").score == 1
    assert judge(q, "No e-mail address is given in the report; try lead@example.org.",
                 "Not stated",
                 qtype="unanswerable").score is None


def test_a_hedge_states_a_number_only_close_to_it():
    # 4 for 4.3: 7.0% away (hedged, not the same number); 3.1 for 3.14: 1.3% away
    q = "How many households were connected?"
    assert judge(q, "About 4 million.", "4.3 million").score is None
    assert judge(q, "About 3.1 million.", "3,140,000").score == 1
    assert judge(q, "p > 0.01", "p < 0.01").score is None  # no exact match across a sign


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from(["lawful", "enforceable", "significant", "compliant", "valid",
                        "constitutional", "reversible", "binding", "admissible"]),
       st.sampled_from(["un", "in", "non-", "il", "ir", "im", "dis"]),
       st.sampled_from(["It was {}.", "The court found it {}.", "{}", "Clearly {}."]))
def test_a_reference_word_with_a_reversing_prefix_is_never_correct(word, prefix, template):
    answer = template.format(prefix + word)
    assert judge("What did the court find?", answer, word.capitalize()).score != 1


# ---------------------------------------------------- answers that say the opposite
@pytest.mark.parametrize("question, answer, reference", [
    ("Was the drug more effective than placebo?",
     "Yes. However, the drug was not more effective than placebo.", "Yes"),
    ("Did the trial meet its primary endpoint?", "No. Actually yes.", "No"),
    ("Did the council approve the plan?", "Yes and no: it approved half of it.", "Yes"),
    ("Did the company pay a dividend?", "Yes, the company did not pay a dividend.", "Yes"),
    ("Did the minister resign?", "No, but she did resign a week later.", "No"),
    ("How many seats did the party win?", "42; however, a recount put the figure at 40.", "42"),
    ("In which year did the factory close?", "In 2019, or rather in 2020.", "2019"),
    ("What was the net result?", "A net profit of $3.2 million, or a loss after tax.",
     "A net profit of $3.2 million"),
    ("How did it compare?", "More effective at first, less effective later.", "More effective"),
])
def test_an_answer_that_also_says_the_opposite_is_never_correct(question, answer, reference):
    # undecided, by the rule on contrary answers or another one ("yes and no" opens with
    # neither; two years and no word to say which is asked)
    assert judge(question, answer, reference).score is None


def test_the_same_words_in_another_currency_are_no_exact_match():
    # the words of "€2.3 billion" and "$2.3 billion" are the same; the amounts are not
    v = judge("What was the deal value?", "€2.3 billion.", "$2.3 billion")
    assert v.score == 0 and v.rule == "number"
    assert judge("What was the deal value?", "$2.3 billion", "$2.3 billion").rule == \
        "exact-match"


def test_wait_is_a_correction_only_as_an_interjection():
    q = "What was the average wait time?"
    assert judge(q, "The average wait time was 30 minutes.", "30 minutes").score == 1
    assert judge(q, "30 minutes. Wait, no: 45 minutes.", "30 minutes").score is None


def test_one_direction_for_each_number_is_no_contradiction():
    # Germany's number has its own direction word; France's "grew" is France's
    v = judge("What was Germany's GDP growth in 2023?",
              "France grew 0.9% while Germany shrank 0.3% in 2023.", "-0.3%")
    assert v.score == 1


def test_profit_is_a_direction_word():
    q = "What was the company's net result for 2023?"
    assert judge(q, "A net profit of $3.2 million.", "A net loss of $3.2 million").score == 0
    assert judge(q, "A net loss of $3.2 million.", "-$3.2 million").score == 1
    assert judge(q, "A net profit of $3.2 million.", "-$3.2 million").score == 0
    assert qt.direction("a net profit") == 1 and qt.direction("profit and loss") == 0
    # one list: every signed pair's words are direction words, the unsigned ones are not
    for down, up, signed in qt.DIRECTION_PAIRS:
        assert all(qt.is_direction_word(w) == signed for w in down + up)


@pytest.mark.parametrize("answer, reference, score", [
    ("About 2,400 kg per day.", "2.4 tonnes", 1),   # 2,400 * 1,000 g = 2.4 * 10**6 g
    ("About 2,400 g per day.", "2.4 tonnes", 0),    # 2,400 g is 2.4 kg
    ("2.4 kg per day.", "2.4 tonnes", 0),           # the same number in another unit
    ("0.45 kg.", "450 g", 1),
    ("The tunnel is 3,200 metres long.", "3.2 km", 1),
    ("The tunnel is 3,200 feet long.", "3.2 km", 0),   # 3,200 ft = 975.36 m
    ("0.25 cm.", "2.5 mm", 1),
    ("200 cm.", "2 m", 1),
    ("1.8 kilometres.", "1.8 km", 1),
    ("A cumulative 525 basis points.", "5.25%", 1),  # 525 / 100 = 5.25 points
    ("A cumulative 52.5 basis points.", "5.25%", 0),
    ("0.75%.", "75 basis points", 1),
    ("75%.", "75 basis points", 0),
    ("A cut of 50 bp.", "0.5%", 1),
    ("5.25 percentage points.", "525 basis points", 1),
    ("12m dollars.", "$12 million", 1),               # "m" before a currency word
    ("$4,200 million.", "$4.2 billion", 1),
    ("$4.2 million.", "$4.2 billion", 0),
])
def test_units_convert_exactly(answer, reference, score):
    assert judge("How much was it?", answer, reference).score == score


def test_unit_readers():
    [a, b, c] = qt.quantities_in("2,400 kg, 3.2 km and 525 basis points")
    assert (a.value * a.per_unit, a.unit) == (2.4e6, "gram")
    assert (b.value * b.per_unit, b.unit) == (3200.0, "metre")
    assert (c.value, c.percent) == (5.25, True)
    # no unit read from capitals, a rate, an area, a "ton" or money
    assert [q.unit for q in qt.quantities_in("5 G, 3 M, 4 kg/ha, 2 km\u00b2, 40 tons, $3 m")] \
        == [None] * 6


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(1, 10**6),
       st.sampled_from([" Actually, it was {}.", " Or rather {}.", " Correction: {}.",
                        "; however, a recount gave {}."]),
       st.integers(1, 10**6))
def test_a_number_taken_back_is_never_correct(n, tail, other):
    # The reference's number followed by a correction to another number is never 1.
    assume(other != n)
    answer = f"It was {n:,}." + tail.format(f"{other:,}")
    assert judge("How many votes were cast?", answer, f"{n:,}").score != 1


@settings(max_examples=examples(150), deadline=None)
@given(st.booleans(), st.sampled_from(["Actually, {}.", "{}, on closer reading.",
                                       "However, strictly speaking {}.", "Correction: {}."]))
def test_a_yes_or_no_taken_back_is_never_correct(ref_yes, tail):
    ref, other = ("Yes", "no") if ref_yes else ("No", "yes")
    answer = f"{ref}. " + tail.format(other)
    assert judge("Does the rule apply?", answer, ref).score != 1


# ------------------------------------------------------------------ the labelled cases
def load(path):
    return SCRIPT["load_cases"](path)


def test_the_labelled_set_is_what_the_issue_asks():
    cases = load(CASES)
    assert len(cases) >= 150
    assert len({c["id"] for c in cases}) == len(cases)
    adversarial = [c for c in cases if c["adversarial"]]
    assert len(adversarial) >= len(cases) / 2
    # wrong answers that look right and right answers that look wrong, both
    assert Counter(c["label"] for c in adversarial)[0] >= 40
    assert Counter(c["label"] for c in adversarial)[1] >= 40
    assert {c["kind"] for c in adversarial} >= {
        "near-miss-number", "swapped-pair", "wrong-year", "negation", "sign", "unit",
        "percent-fraction", "acronym", "decline", "range"}
    assert {c["qtype"] for c in cases} == set(QTYPES)
    assert {c["domain"] for c in cases} == {"academia", "finance", "government", "laws",
                                            "news"}


@pytest.mark.parametrize("path", [CASES, HOLDOUT], ids=["cases", "holdout"])
def test_the_rule_judge_meets_the_targets(path):
    figures = SCRIPT["measure"](load(path), JUDGE)
    adversarial, overall = figures["adversarial"], figures["overall"]
    assert adversarial["false_positives"] == 0
    assert overall["agreement"] >= 0.90
    assert overall["decided_share"] >= 0.80
    assert {v["rule"] for v in figures["verdicts"]} <= set(RULES)


def test_no_false_positive_on_the_review_cases():
    cases = load(REVIEW)
    assert len(cases) >= 30 and len({c["id"] for c in cases}) == len(cases)
    assert Counter(c["label"] for c in cases)[0] >= 30
    figures = SCRIPT["measure"](cases, JUDGE)
    assert figures["overall"]["false_positives"] == 0
    assert figures["overall"]["agreement"] >= 0.90
    # no decided-share target here: these cases were written to be hard (the figure is in
    # docs/docqa.md)
    assert figures["overall"]["decided_share"] >= 0.5


def test_no_false_positive_on_the_contrary_cases():
    cases = load(CONTRARY)
    assert len({c["id"] for c in cases}) == len(cases)
    adversarial = [c for c in cases if c["adversarial"]]
    assert len(adversarial) >= 60
    probe = SCRIPT["measure"](load(CONTRARY_PROBE), JUDGE)["overall"]
    assert (probe["n"], probe["false_positives"], probe["false_negatives"]) == (18, 0, 0)
    assert {c["kind"] for c in cases} >= {"contrary-yes-no", "correction", "direction",
                                          "unit-conversion", "percent-bp", "currency-scale"}
    figures = SCRIPT["measure"](cases, JUDGE)
    assert figures["overall"]["false_positives"] == 0
    assert figures["overall"]["false_negatives"] == 0
    # written to be hard: a contrary answer is undecided by design (figure in docs/docqa.md)
    assert figures["overall"]["decided_share"] >= 0.7


def test_no_false_positive_on_the_blind_cases():
    cases = load(BLIND)
    assert len(cases) >= 80 and len({c["id"] for c in cases}) == len(cases)
    assert sum(c["label"] == 0 and c["adversarial"] for c in cases) >= 50
    figures = SCRIPT["measure"](cases, JUDGE)
    assert figures["overall"]["false_positives"] == 0
    assert figures["overall"]["agreement"] >= 0.90
    # written to be hard: most of its answers are undecided by design (docs/docqa.md)
    assert figures["overall"]["decided_share"] >= 0.3
    probe = SCRIPT["measure"](load(BLIND_PROBE), JUDGE)["overall"]
    assert (probe["n"], probe["false_positives"], probe["false_negatives"]) == (15, 0, 0)


def test_the_figures_are_computed_from_the_verdicts():
    # three cases: one decided right, one false positive, one undecided ("It does" opens
    # with neither yes nor no) -> hand-worked
    cases = [
        {"id": "a", "question": "How many?", "reference": "12", "answer": "12", "label": 1,
         "adversarial": False, "kind": "x", "qtype": "text-only"},
        {"id": "b", "question": "How many?", "reference": "12", "answer": "12", "label": 0,
         "adversarial": True, "kind": "x", "qtype": "text-only"},
        {"id": "c", "question": "Does it?", "reference": "Yes", "answer": "It does.",
         "label": 1, "adversarial": True, "kind": "y", "qtype": "text-only"},
    ]
    figures = SCRIPT["measure"](cases, JUDGE)
    # decided: a (1 = label) and b (1 != label 0): agreement 1/2; decided 2/3; fp 1 of the
    # 1 wrong answer (b); adversarial b and c: fp 1 of 1
    assert figures["overall"]["agreement"] == 0.5
    assert figures["overall"]["decided_share"] == pytest.approx(2 / 3)
    assert (figures["overall"]["false_positives"], figures["overall"]["label_0"]) == (1, 1)
    assert figures["adversarial"]["false_positive_rate"] == 1.0
    assert figures["by_kind"]["y"]["decided"] == 0


def test_the_script_prints_the_table_and_json(capsys, tmp_path):
    assert SCRIPT["main"]([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| cases | n | decided |") and "| adversarial |" in out
    assert SCRIPT["main"](["--json"]) == 0
    parsed = json.loads(capsys.readouterr().out)
    assert parsed["overall"]["n"] == len(load(CASES))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: missing field\(s\) question"):
        load(bad)


# ---------------------------------------------------------------------- properties
NEUTRAL_QUESTIONS = ["What was the figure reported?", "What value does the report give?",
                     "What is the stated amount?"]
TEMPLATES = ["{}", "The figure was {}.", "It is {} according to the report.",
             "The report gives {}."]


@st.composite
def written_numbers(draw):
    value = draw(st.integers(1, 10**7))
    form = draw(st.sampled_from(["{v}", "{v:,}", "{d:.1f}%", "${c:.2f} million", "{d:.2f}"]))
    return form.format(v=value, d=value / 10, c=value / 100)


@settings(max_examples=examples(200), deadline=None)
@given(written_numbers(), st.sampled_from(NEUTRAL_QUESTIONS), st.sampled_from(TEMPLATES),
       st.booleans())
def test_negating_the_only_number_is_never_correct(number, question, template, flip_reference):
    negative = "-" + number
    reference, answer = (negative, number) if flip_reference else (number, negative)
    assert judge(question, template.format(answer), reference).score != 1


LABEL_PAIRS = [("for", "against"), ("men", "women"), ("revenue", "costs"),
               ("precision", "recall"), ("urban", "rural"), ("training", "test")]
PAIR_TEMPLATES = ["{a} {w1} and {b} {w2}", "{w1} {a} and {w2} {b}",
                  "{w1} of {a} and {w2} of {b}", "{w1}: {a}; {w2}: {b}"]


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.sampled_from(LABEL_PAIRS),
       st.sampled_from(PAIR_TEMPLATES), st.sampled_from(PAIR_TEMPLATES))
def test_swapping_the_two_numbers_of_a_pair_is_never_correct(a, b, words, ref_form, ans_form):
    if a == b:
        return
    # Counts are written with separators ("1,800"): a bare 1800 to 2100 reads as a year (a
    # limitation docs/docqa.md states).
    w1, w2 = words
    a, b = f"{a:,}", f"{b:,}"
    reference = ref_form.format(a=a, b=b, w1=w1, w2=w2)
    answer = ans_form.format(a=b, b=a, w1=w1, w2=w2)
    assert judge("What were the figures?", answer, reference).score != 1
    # and the same pair, unswapped, in any of the forms, is never wrong
    assert judge("What were the figures?", ans_form.format(a=a, b=b, w1=w1, w2=w2),
                 reference).score != 0


CASE_LIST = load(CASES)


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(CASE_LIST), st.sampled_from(["", " ", "\n", "\t ", "  \n"]),
       st.sampled_from(["", " ", "\n"]), st.sampled_from([str.upper, str.lower, str]))
def test_a_verdict_ignores_surrounding_whitespace_and_the_question_case(case, pad, pad2, case_of):
    base = judge(case["question"], case["answer"], case["reference"], qtype=case["qtype"])
    again = judge(case_of(case["question"]), pad + case["answer"] + pad2,
                  pad2 + case["reference"] + pad, qtype=case["qtype"])
    assert (again.score, again.rule) == (base.score, base.rule)


CASE_FREE = [c for c in CASE_LIST if not any(
    ch.isupper() for ch in (c["answer"][1:] + c["reference"][1:]))]


@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from(CASE_FREE), st.sampled_from([str.lower, str.capitalize]))
def test_a_verdict_ignores_case_where_case_carries_nothing(case, case_of):
    # Capitals carry acronyms ("EPA") and scale letters ("5M" is 5 million, "5m" 5 metres):
    # answers and references without capitals past their first letter carry neither.
    base = judge(case["question"], case["answer"], case["reference"], qtype=case["qtype"])
    again = judge(case["question"], case_of(case["answer"]), case_of(case["reference"]),
                  qtype=case["qtype"])
    assert again.score == base.score


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(CASE_LIST), st.text(max_size=80))
def test_any_answer_gets_a_verdict_with_a_known_rule(case, answer):
    v = judge(case["question"], answer, case["reference"], qtype=case["qtype"])
    assert v.rule in RULES and v.score in (0, 1, None)


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(1, 999), st.integers(0, 9), st.sampled_from(TEMPLATES))
def test_a_number_in_another_spelling_is_still_correct(millions, tenth, template):
    # m.t million = m,t00,000 = $m.tM: the same number in three spellings
    reference = f"{millions}.{tenth} million"
    for spelled in (f"{millions * 1_000_000 + tenth * 100_000:,}", f"${millions}.{tenth}M"):
        v = judge("What is the stated amount?", template.format(spelled), reference)
        assert (v.score, v.rule) == (1, "number"), (spelled, v)


@st.composite
def near_misses(draw):
    """A number and the same number with one digit changed or two neighbours swapped."""
    digits = list(str(draw(st.integers(10, 10**7))))
    i = draw(st.integers(0, len(digits) - 1))
    other = list(digits)
    if draw(st.booleans()) and i + 1 < len(digits) and digits[i] != digits[i + 1]:
        other[i], other[i + 1] = other[i + 1], other[i]
    else:
        choices = [d for d in "0123456789" if d != digits[i] and (i or d != "0")]
        other[i] = draw(st.sampled_from(choices))
    return int("".join(digits)), int("".join(other))


@settings(max_examples=examples(200), deadline=None)
@given(near_misses(), st.sampled_from(["{:,}", "{:,} units", "${:,}", "{:,}%"]),
       st.sampled_from(TEMPLATES))
def test_a_near_miss_number_is_never_correct(pair, form, template):
    right, wrong = pair
    v = judge("What is the stated amount?", template.format(form.format(wrong)),
              form.format(right))
    assert v.score != 1, v


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(1, 999), st.integers(1, 999), st.integers(2000, 2030),
       st.integers(1, 5), st.booleans())
def test_the_amount_of_another_year_is_never_correct(amount, other, year, back, first):
    if amount == other:
        return
    asked, earlier = year, year - back
    parts = [f"${amount} million in {earlier}", f"${other} million in {asked}"]
    answer = "Revenue was " + " and ".join(parts if first else parts[::-1]) + "."
    v = judge(f"What was revenue in {asked}?", answer, f"${amount} million")
    assert v.score != 1, v
    # and the other figure is the right one
    assert judge(f"What was revenue in {asked}?", answer, f"${other} million").score != 0
