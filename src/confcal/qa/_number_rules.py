r"""The rule judge's number rules: how an answer's numbers must state the reference's.

Private module of :mod:`confcal.qa._rule_judge`. Each text is read once into
:class:`Facts`; a :class:`NumberCase` holds the question's, the reference's and the
answer's facts and the reference numbers the answer must state. :func:`stated_numbers`
finds, for each of them, the answer's numbers that state it (:class:`Candidates`); then
every rule of :data:`NUMBER_RULES` (a :class:`NumberRule`) in turn gives a verdict, or
passes the candidates on, perhaps fewer of them. :func:`read_numbers` runs it all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol

from . import _text as qt
from ._names import names_in
from ._verdicts import Verdict

__all__ = [
    "NUMBER_RULES",
    "Candidates",
    "Facts",
    "NumberCase",
    "NumberRule",
    "answer_rounds",
    "asked_entity_rule",
    "doubt_rule",
    "fmt_quantities",
    "missing_rule",
    "pair_order_rule",
    "range_rule",
    "read_numbers",
    "reference_rounds",
    "sign_rule",
    "stated_numbers",
    "year_rule",
]


# ------------------------------------------------------------------------ the facts
@dataclass(frozen=True)
class Facts:
    """The dates and numbers of a text, read once."""

    dates: qt.Dates
    plain_numbers: list[qt.Quantity]  # numbers outside the dates
    residue: str  # the text without its dates and numbers
    bound: list[qt.Bound]  # every number (dates' years too) with the words next to it
    text: str

    @classmethod
    def read(cls, text: str, dayfirst: bool) -> Facts:
        text = qt.prepare(text)
        dates = qt.dates_in(text, dayfirst=dayfirst)
        with_years = qt.dates_in(text, dayfirst=dayfirst, keep_years=True).rest
        return cls(dates, qt.quantities_in(dates.rest), qt.strip_quantities(dates.rest),
                   qt.bind(with_years), text)

    @property
    def numbers(self) -> list[qt.Quantity]:
        """The plain numbers and the year of every date (a year answers "which year")."""
        years = [qt.Quantity(float(d.year), False, d.isoformat()) for d in self.dates.full]
        years += [qt.Quantity(float(y), False, f"{y}-{m:02d}") for y, m in self.dates.months]
        return self.plain_numbers + years

    def bound_of(self, numbers: Sequence[qt.Quantity]) -> list[qt.Bound | None]:
        """The context of each of ``numbers`` (plain numbers of this text, in order)."""
        found: list[qt.Bound | None] = []
        j = 0
        for x in numbers:
            k = next((i for i in range(j, len(self.bound))
                      if self.bound[i].quantity == x), None)
            found.append(None if k is None else self.bound[k])
            j = j if k is None else k + 1
        return found


def fmt_quantities(quantities: Sequence[qt.Quantity]) -> str:
    """Numbers as a verdict's reason names them: as written, "none" for none."""
    # a currency named by a word after the number ("3 million euros") is not in its text
    return ", ".join(
        q.text + (f" ({next(iter(q.currency))})" if q.currency and len(q.currency) == 1
                  and not re.search(r"[$\u20ac\u00a3\u00a5\u20b9]|[A-Z]{3}", q.text) else "")
        for q in quantities) or "none"


@dataclass(frozen=True)
class NumberCase:
    """What the number rules compare: three texts' facts and the numbers to find.

    ``numbers`` are the reference numbers the answer must state, in the reference's
    order; ``beyond`` says whether they are those beyond the question's (else they are
    all the reference's, the question stating every one); ``share`` whether the question
    asks for a share (12% and 0.12 then state the same); ``rel_tol`` the judge's extra
    relative tolerance.
    """

    question: Facts
    reference: Facts
    answer: Facts
    numbers: tuple[qt.Quantity, ...]
    beyond: bool
    share: bool
    rel_tol: float = 0.0

    @classmethod
    def of(cls, question: Facts, reference: Facts, answer: Facts, *, rel_tol: float,
           share: bool) -> NumberCase:
        """The case of the reference's plain numbers the question does not already state.

        What the question states is context, not the answer ("What was revenue in 2023?"
        "Revenue in 2023 was $5.5M": the answer need not repeat 2023) -- unless the
        question states them all ("2019 or 2020?"), when they are the answer.
        """
        beyond = tuple(x for x in reference.plain_numbers
                       if not any(qt.close(x, y, rel_tol, share) for y in question.numbers))
        return cls(question, reference, answer, beyond or tuple(reference.plain_numbers),
                   bool(beyond), share, rel_tol)

    @cached_property
    def reference_bound(self) -> list[qt.Bound | None]:
        """The words and years of each of ``numbers`` in the reference."""
        return self.reference.bound_of(self.numbers)


@dataclass(frozen=True)
class Candidates:
    """For each reference number, in order, the answer's numbers that may state it.

    ``doubts`` are the reasons, found on the way, not to call a match correct (the first
    is given when every other rule holds).
    """

    found: tuple[tuple[qt.Bound, ...], ...]
    doubts: tuple[str, ...] = ()


class NumberRule(Protocol):
    """One rule about the reference's numbers: a verdict, or the candidates it leaves."""

    def __call__(self, case: NumberCase, candidates: Candidates, /
                 ) -> Verdict | Candidates: ...


# ------------------------------------------------------------------- stating a number
def reference_rounds(x: qt.Quantity, kinds: Sequence[tuple[str | None, qt.Bound]]
                     ) -> str | None:
    """A doubt when the reference states ``x`` more coarsely than every answer number
    stating it, at a precision below a thousand and by more than 1% of it.

    ``kinds`` pairs each answer number with how it states ``x`` (:func:`confcal.qa._text
    .compare`). "5.5 million" for 5,512,000 is the same number; "4%" for 4.4% may not be.
    """
    stating = [b for kind, b in kinds if kind in ("same", "rounded")]
    away = [b for kind, b in kinds if kind == "rounded" and x.precision < 1e3
            and abs(x.value - b.quantity.value) > 0.01 * x.value]
    if away and len(away) == len(stating):
        return (f"{x.text} (the answer states {away[0].quantity.text}, more precisely than "
                "the reference and not the same)")
    return None


def answer_rounds(x: qt.Quantity, rounding: Sequence[qt.Bound]
                  ) -> tuple[list[qt.Bound], str | None]:
    """The answer numbers that state ``x`` by rounding it, and a doubt when none says so.

    ``rounding`` are the answer numbers coarser than ``x`` that it rounds to ("4.3%" for
    4.25%). Those that say they round -- a hedge before them, within 5% of ``x`` ("about
    62%" for 61.8%, not "about 3 million" for 3.2 million), or a count put into a scale
    word ("2.3 million" for 2,314,562) -- state it; else all of them do, with the doubt
    that the answer drops digits without saying so.
    """
    # A hedge says the answer rounds, not how far: "about 3 million" is not 3.2 million
    # (6% away), "nearly 2 million" not 1.6 million; within 5% it states the number.
    said = [b for b in rounding if (b.hedged and abs(b.quantity.value - x.value)
                                    <= 0.05 * abs(x.value)) or (
        b.quantity.precision >= 1e3 > x.precision and b.quantity.precision > 1)]
    if said:
        return said, None
    if rounding:
        return list(rounding), (f"{x.text} (the answer rounds it to "
                                f"{rounding[0].quantity.text} without saying so)")
    return [], None


def stated_numbers(case: NumberCase) -> Candidates:
    """For each reference number, the answer's numbers that state it.

    An answer number states a reference number when the two are equal at the finer
    precision, or the reference rounds it (:func:`reference_rounds` notes a doubt). Where
    none does, the answer numbers that round it and state no other reference number do
    (:func:`answer_rounds`).
    """
    kinds = [[(qt.compare(x, b.quantity, case.rel_tol, case.share), b)
              for b in case.answer.bound] for x in case.numbers]
    found = [[b for kind, b in row if kind in ("same", "rounded")] for row in kinds]
    used = {b.index for bs in found for b in bs}
    doubts: list[str] = []
    for i, x in enumerate(case.numbers):
        doubt = reference_rounds(x, kinds[i])
        if not found[i]:
            found[i], doubt = answer_rounds(x, [b for kind, b in kinds[i] if kind == "coarser"
                                                and b.index not in used])
        if doubt is not None:
            doubts.append(doubt)
    return Candidates(tuple(tuple(bs) for bs in found), tuple(doubts))


# ------------------------------------------------------------------------- the rules
def _hundredfold(x: qt.Quantity, y: qt.Quantity) -> bool:
    """Is ``y`` ``x`` a hundredfold or a hundredth (points of a share), neither a percent?"""
    return not (x.percent or y.percent) and any(
        abs(y.value * f - x.value) <= 1e-9 * x.value + min(x.precision, y.precision * f) / 2
        for f in (100.0, 0.01))


def missing_rule(case: NumberCase, candidates: Candidates) -> Verdict | Candidates:
    """``number``: every reference number must be stated by the answer.

    A reference number that no answer number states is 0; undecided when the answer
    states no number of its own (none beyond the question's, where the reference's are
    beyond it: "revenue in 2023 grew strongly" has nothing to compare), or states one a
    hundredfold or a hundredth (perhaps points of a share).
    """
    missing = [x for x, bs in zip(case.numbers, candidates.found, strict=True) if not bs]
    if not missing:
        return candidates
    answer_numbers = [b.quantity for b in case.answer.bound]
    own = answer_numbers if not case.beyond else [
        y for y in answer_numbers
        if not any(qt.close(y, x, case.rel_tol, case.share) for x in case.question.numbers)]
    if not own:
        return Verdict(None, "number", f"the reference states {fmt_quantities(missing)}; the "
                                       "answer states no number of its own that can be read")
    hundredfold = next((y for x in missing for y in own if _hundredfold(x, y)), None)
    if hundredfold is not None:
        return Verdict(None, "number", f"the reference states {missing[0].text}; the answer "
                                       f"states {hundredfold.text}, perhaps as points of a "
                                       "share")
    return Verdict(0, "number", f"the reference states {fmt_quantities(missing)}; the "
                                f"answer states {fmt_quantities(own)}")


_SIGN_NAMES = {-1: "negative", 0: "no sign", 1: "positive"}


def _sign_of(q: qt.Quantity, bound: qt.Bound | None, question_direction: int
             ) -> tuple[int, str]:
    """The sign a text gives a number: written, worded around it, or the question's."""
    if q.sign:
        return q.sign, "written"
    if bound is not None and bound.direction:
        return bound.direction, "worded"
    if question_direction:
        return question_direction, "question"
    return 0, "none"


def _signs_agree(ref: tuple[int, str], ans: tuple[int, str], ref_text: str,
                 answer_text: str) -> bool | None:
    """True, False (opposite signs) or None (cannot tell)."""
    (sr, kr), (sa, ka) = ref, ans
    if sr == sa or (sr >= 0 and sa >= 0):
        return True
    if sr and sa:
        return False
    # One side negative, the other unsigned: a written minus against a text with no word
    # of direction at all is a dropped sign ("-3.5%" answered "3.5%"); against a text with
    # such words elsewhere ("revenue rose 2% while operating income moved 3.5%") the sign
    # may be phrased some other way.
    kind, plain_text = (kr, answer_text) if sr else (ka, ref_text)
    if kind == "written" and not any(qt.is_direction_word(w) for w in qt.words(plain_text)):
        return False
    return None


def sign_rule(case: NumberCase, candidates: Candidates) -> Verdict | Candidates:
    """``sign``: the answer's number must have the reference number's sign.

    A sign is written (a minus or plus), worded around the number ("a loss", "fell", "a
    deficit", "below") or, failing both, the question's. Opposite signs are 0; a written
    minus against an unsigned number in a text with no word of direction at all is a
    dropped sign, 0 ("-3.5%" answered "3.5%" or "changed by 3.5%"); against an unsigned
    number in a text with words of direction that are not the number's ("revenue rose 2%
    while operating income moved 3.5%"), undecided. The candidates left are those whose
    sign agrees.
    """
    q_direction = qt.direction(case.question.text)
    found = list(candidates.found)
    for i, x in enumerate(case.numbers):
        ref_sign = _sign_of(x, case.reference_bound[i], q_direction)
        agree = [(b, _signs_agree(ref_sign, _sign_of(b.quantity, b, q_direction),
                                  case.reference.text, case.answer.text)) for b in found[i]]
        if not any(ok for _, ok in agree):
            b = found[i][0]
            answer_sign = _SIGN_NAMES[_sign_of(b.quantity, b, q_direction)[0]]
            stated = f"the reference states {x.text} ({_SIGN_NAMES[ref_sign[0]]})"
            if all(ok is False for _, ok in agree):
                return Verdict(0, "sign", f"{stated}; the answer states {b.quantity.text} "
                                          f"({answer_sign})")
            return Verdict(None, "sign", f"{stated}; the answer does not say whether "
                                         f"{b.quantity.text} is negative")
        found[i] = tuple(b for b, ok in agree if ok)
    return replace(candidates, found=tuple(found))


def _years(years: Iterable[int]) -> str:
    return " and ".join(str(y) for y in sorted(years)) or "no year"


def year_rule(case: NumberCase, candidates: Candidates) -> Verdict | Candidates:
    """``year``: a number must be given for the year the reference or the question names.

    The year written next to the reference number, else the question's years, is the
    one asked; an answer number written next to other years only ("$4.2 billion in 2022"
    when 2023 is asked) is 0 when no candidate fits. A number that is itself a year, or
    one with no year asked, is not checked. The candidates left are those that fit.
    """
    question_years = {int(b.quantity.value) for b in case.question.bound if b.quantity.is_year}
    found = list(candidates.found)
    for i, x in enumerate(case.numbers):
        bound = case.reference_bound[i]
        asked = set(bound.years) if bound is not None and bound.years else question_years
        if x.is_year or not asked:
            continue
        fitting = tuple(b for b in found[i] if not b.years or b.years & asked)
        if not fitting:
            b = found[i][0]
            return Verdict(0, "year", f"the reference states {x.text} for {_years(asked)}; "
                                      f"the answer states {b.quantity.text} for "
                                      f"{_years(b.years)}")
        found[i] = fitting
    return replace(candidates, found=tuple(found))


def range_rule(case: NumberCase, candidates: Candidates) -> Verdict | Candidates:
    """``range``: a number is not one end of a range ("3,000 to 5,000" for 5,000): 0.

    A range is accepted only when its other end states another reference number (the
    reference gives the range too).
    """
    stating = {b for bs in candidates.found for b in bs}
    for x, bs in zip(case.numbers, candidates.found, strict=True):
        for b in bs:
            if b.range_with is None:
                continue
            other = case.answer.bound[b.range_with]
            if other not in stating:
                low, high = (b, other) if b.index < other.index else (other, b)
                return Verdict(0, "range", f"the reference states {x.text}; the answer "
                                           f"states the range {low.quantity.text} to "
                                           f"{high.quantity.text}")
    return candidates


def _labels(bound: qt.Bound | None) -> frozenset[str]:
    """A number's words and years, as one set of labels."""
    if bound is None:
        return frozenset()
    return bound.labels | frozenset(f"y{y}" for y in bound.years)


def _all_but(sets: Sequence[frozenset[str]], i: int) -> frozenset[str]:
    return frozenset().union(*(s for j, s in enumerate(sets) if j != i))


def _most_shared(bounds: Sequence[qt.Bound], words: frozenset[str]) -> qt.Bound:
    """The (first) number with most of ``words`` among its labels."""
    return max(bounds, key=lambda b: len(_labels(b) & words))


def pair_order_rule(case: NumberCase, candidates: Candidates) -> Verdict | Candidates:
    """``pair-order``: several numbers must each keep their own words.

    Each reference number's own words are those no other reference number has; the
    answer number that shares most of them stands for it. One that has none of its own
    words but another's ("48 for and 52 against" for "52 for and 48 against") is 0; an
    order other than the reference's whose words do not confirm every number is
    undecided. Applies when the reference has two or more different numbers.
    """
    if len({x.value for x in case.numbers}) < 2:
        return candidates
    labels = [_labels(b) for b in case.reference_bound]
    own = [labels[i] - _all_but(labels, i) for i in range(len(labels))]
    chosen = [_most_shared(bs, mine) for bs, mine in zip(candidates.found, own, strict=True)]
    confirmed = []
    for i, b in enumerate(chosen):
        words, others = _labels(b), _all_but(own, i)
        if not words & own[i] and words & others:
            return Verdict(0, "pair-order",
                           f"the reference states {case.numbers[i].text} with "
                           f"{', '.join(sorted(own[i])) or 'no words of its own'}; the "
                           f"answer states it with {', '.join(sorted(words & others))}")
        confirmed.append(bool(words & own[i]) and not words & others)
    order = [b.index for b in chosen]
    if order == sorted(order) or all(confirmed):
        return candidates
    return Verdict(None, "pair-order", "the answer states the reference's numbers in "
                                       "another order, and their words do not say which "
                                       "is which")


# Question words that name no entity: which number answers "What was the total revenue in
# fiscal 2023?" is told by "revenue", not by "total" or "fiscal".
_GENERIC = frozenset(qt.stem(w) for w in (
    "what", "which", "how", "many", "much", "number", "total", "amount", "value", "year",
    "fiscal", "fy", "quarter", "reported", "report", "document", "paper", "according",
    "table", "figure", "chart", "did", "does", "do", "was", "were", "is", "are", "the",
    "of", "in", "for", "and", "to", "on", "at", "by", "with", "give", "state", "stated",
))


def _competes(case: NumberCase, x: qt.Quantity, b: qt.Bound, years: set[int]) -> bool:
    """Could the answer's number ``b`` be what the question asks instead of ``x``?

    It must be a number of the same kind (a year, a percent, a duration of the same
    dimension, or none of these), not for a year other than the question's ("$1 million
    in 1999 and $2 million in 2000" for 2000), and not one the question states itself.
    """
    q = b.quantity
    if (q.is_year, q.percent, q.unit) != (x.is_year, x.percent, x.unit):
        return False
    if years and b.years and not b.years & years:
        return False
    return not any(qt.close(q, y, case.rel_tol, case.share) for y in case.question.numbers)


def _change_for_a_level(case: NumberCase, x: qt.Quantity, found: Sequence[qt.Bound],
                        others: Sequence[qt.Bound]) -> Verdict | None:
    """Undecided when a level is asked and the answer gives the reference's number as a
    change, another as a level ("R&D spending rose 18% to 12% of revenue" for 18%)."""
    bound = case.reference_bound[0]
    ref_change = bound is not None and bound.direction != 0
    levels = [b for b in others if not b.direction]
    if (levels and not ref_change and not qt.direction(case.question.text)
            and all(b.direction for b in found)):
        return Verdict(None, "asked-entity",
                       f"the answer states {x.text} as a change and "
                       f"{levels[0].quantity.text} as a level; the question asks for a level")
    return None


def _whose_number(case: NumberCase, x: qt.Quantity, found: Sequence[qt.Bound],
                  others: Sequence[qt.Bound]) -> Verdict | None:
    """None when the reference's number has more of the question's words than any other
    (and no other has a name of the question it lacks); else 0 when it has none of them
    and another has some, undecided otherwise."""
    asked = frozenset(qt.stem(w) for w in qt.content_words(case.question.text)) - _GENERIC
    mine = max(len(b.labels & asked) for b in found)
    theirs = max(len(b.labels & asked) for b in others)
    # More of the question's words next to the reference's number is not enough when
    # another number has a name the question asks about that it lacks: the topic is
    # said once, next to the first number ("the unemployment rate was 4.1% nationally,
    # while Texas recorded 3.9%" for Texas).
    own = frozenset().union(*(b.labels for b in found))
    named = frozenset(qt.stem(w) for w in names_in(case.question.text)) - _GENERIC
    if mine > theirs and not any(b.labels & named - own for b in others):
        return None
    best = max(others, key=lambda b: len(b.labels & asked))
    if mine == 0 and theirs > 0:
        return Verdict(0, "asked-entity",
                       f"the answer states {x.text} for "
                       f"{' '.join(sorted(found[0].labels)) or 'something else'}, and "
                       f"{best.quantity.text} for "
                       f"{' '.join(sorted(best.labels & asked))}, which the question asks")
    return Verdict(None, "asked-entity", f"the answer states {x.text} and also "
                                         f"{best.quantity.text}; its words do not say "
                                         "which one the question asks for")


def asked_entity_rule(case: NumberCase, candidates: Candidates) -> Verdict | Candidates:
    """``asked-entity``: one number asked for, and the answer states others of its kind:
    the reference's must be the one with the question's words.

    Given for something else ("France grew 0.9% while Germany shrank 0.3%" answered for
    France, Germany asked) it is 0; undecided when the words do not tell, when another
    number has a name of the question that the reference's lacks, or when the reference's
    is given as a change and another as a level and neither the question nor the
    reference speaks of a change. Applies when the reference has one number (perhaps
    written more than once).
    """
    if len({x.value for x in case.numbers}) >= 2:
        return candidates
    x, found = case.numbers[0], candidates.found[0]
    taken = {b.index for b in found}
    years = {int(b.quantity.value) for b in case.question.bound if b.quantity.is_year}
    others = [b for b in case.answer.bound
              if b.index not in taken and _competes(case, x, b, years)]
    if not others:
        return candidates
    verdict = _change_for_a_level(case, x, found, others)
    if verdict is None:
        verdict = _whose_number(case, x, found, others)
    return candidates if verdict is None else verdict


def doubt_rule(case: NumberCase, candidates: Candidates) -> Verdict | Candidates:
    """``number``: when every other rule holds, a doubt found on the way (a rounding
    the answer does not say it makes, or a reference coarser than a differing answer)
    leaves the answer undecided."""
    if candidates.doubts:
        return Verdict(None, "number", f"the reference states {candidates.doubts[0]}")
    return candidates


NUMBER_RULES: tuple[NumberRule, ...] = (missing_rule, sign_rule, year_rule, range_rule,
                                        pair_order_rule, asked_entity_rule, doubt_rule)
"""The number rules in the order they are tried; the first verdict decides."""


def read_numbers(case: NumberCase) -> Verdict | list[qt.Quantity]:
    """Every number rule: a verdict, or when they all hold the answer's numbers that
    state the reference's (one for each, in order).

    Examples
    --------
    >>> def case(question, reference, answer):
    ...     q, r, a = (Facts.read(t, dayfirst=False) for t in (question, reference, answer))
    ...     return NumberCase.of(q, r, a, rel_tol=0.0, share=qt.share_question(question))
    >>> [x.text for x in read_numbers(case("What was net income?", "$5,500,000",
    ...                                     "5.5 million dollars"))]
    ['5.5 million']
    >>> read_numbers(case("What was the change?", "-3.5%", "3.5%")).rule
    'sign'
    """
    candidates = stated_numbers(case)
    for rule in NUMBER_RULES:
        outcome = rule(case, candidates)
        if isinstance(outcome, Verdict):
            return outcome
        candidates = outcome
    return [bs[0].quantity for bs in candidates.found]
