r"""The rule judge: DocBench's three rules as deterministic text rules, no model.

Private module of :mod:`confcal.qa.docqa`, which re-exports :class:`RuleJudge`. It reads
text through :mod:`confcal.qa._text` and gives :class:`confcal.qa._verdicts.Verdict`\ s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._validation import check_positive_int, check_probability, is_real
from ..exceptions import ValidationError
from . import _text as qt
from ._verdicts import EMPTY_VERDICT, Verdict, answer_arg, qtype_arg, text_arg

# -------------------------------------------------------------------------- rule judge
_UNIT_WORDS = frozenset({
    # currencies, percent and scale words, hedges: words a number carries, not content
    "dollar", "dollars", "usd", "us", "eur", "euro", "euros", "pound", "pounds", "gbp",
    "yen", "jpy", "yuan", "rmb", "cny", "inr", "rupees", "percent", "per", "cent", "pct",
    "thousand", "thousands", "million", "millions", "billion", "billions", "trillion", "mn",
    "bn", "mln", "bln", "tn", "about", "around", "approximately", "approx", "roughly",
    "nearly", "almost", "over", "under", "more", "less", "than", "total", "some", "just",
    "exactly", "only",
})


def _fmt_quantities(quantities: Sequence[qt.Quantity]) -> str:
    return ", ".join(q.text for q in quantities) or "none"


@dataclass(frozen=True)
class _Facts:
    """The dates and numbers of a text, read once."""

    dates: qt.Dates
    plain_numbers: list[qt.Quantity]  # numbers outside the dates
    residue: str  # the text without its dates and numbers

    @classmethod
    def read(cls, text: str, dayfirst: bool) -> _Facts:
        dates = qt.dates_in(text, dayfirst=dayfirst)
        return cls(dates, qt.quantities_in(dates.rest), qt.strip_quantities(dates.rest))

    @property
    def numbers(self) -> list[qt.Quantity]:
        """The plain numbers and the year of every date (a year answers "which year")."""
        years = [qt.Quantity(float(d.year), False, d.isoformat()) for d in self.dates.full]
        years += [qt.Quantity(float(y), False, f"{y}-{m:02d}") for y, m in self.dates.months]
        return self.plain_numbers + years


@dataclass(frozen=True)
class RuleJudge:
    """A deterministic judge: DocBench's three rules as text rules, no model.

    The rules, in the order they are tried (each verdict names the one that decided, see
    :data:`RULES`):

    1. ``exact-match``: the answer equals the reference up to case, punctuation and
       articles: 1. ``empty-answer``: no answer: 0.
    2. ``unanswerable``: when ``qtype`` is ``"unanswerable"`` or the reference itself
       declines ("The document does not mention...", "Not stated"), a declining answer is
       1 and any other answer 0. A declining answer that also states dates or numbers the
       question does not is left undecided.
    3. ``yes-no``: when the reference opens with yes or no ("Yes, it does", "No.",
       "Correct"), the answer must open with the same; an answer with neither is
       undecided (but a decline of a "yes" question is 0).
    4. ``declined-answerable``: an answer that declines a question the reference answers
       is 0 (undecided when it states the reference's numbers anyway).
    5. Short references (at most ``max_short_words`` content words beyond the question):

       - ``date`` and ``number``: every date and number of the reference that the question
         does not already state must be in the answer: dates in any format
         :func:`confcal.parse_date` reads, at the reference's precision ("March 2024" is
         matched by any day of it); numbers with separators, scale words and percents
         ("5.5 million" = "5,500,000"; "12%" = "0.12" when the question asks for a share),
         equal when the more precise one rounds to the other as written ("5,512,000" is
         "5.5 million"; "2009" is not "2019") or within ``rel_tol``. A missing one is 0,
         or undecided when the answer states no date (no number beyond the question's)
         at all. When all are there
         but the reference also has words the answer lacks ("5 branches" vs "5 offices"),
         undecided.
       - ``contains-reference``: the answer has every content word of the reference: 1.
       - ``similarity``: 1 - normalized edit distance between the reference's content words
         and the closest run of answer words (ANLS-style): 1 at ``accept_similarity`` or
         above; 0 below ``reject_similarity`` when the answer is short too; else undecided.

       An answer with a negation the reference lacks ("not Jane Smith") is undecided
       where it would have been 1 by containment or similarity.
    6. ``long-answer``: a longer reference needs a judgment of meaning: undecided.

    Parameters
    ----------
    rel_tol : float, default 0.0
        Extra relative tolerance for numbers: |a - b| <= rel_tol * max(|a|, |b|) also
        matches. None by default: rounding to the written precision already accepts
        "about 5.5 million" for 5,478,921, and a relative tolerance cannot tell years
        apart (2009 is within 1% of 2019).
    accept_similarity, reject_similarity : float, default 0.9 and 0.5
        Similarity thresholds of the ``similarity`` rule (0.5 is ANLS's cut-off, below
        which ANLS scores 0).
    max_short_words : int, default 10
        A reference with more content words than this, beyond those of the question, is
        long.
    dayfirst : bool, default False
        Read an ambiguous 03/01/2024 as 3 January (False) or 1 March (True).

    Notes
    -----
    The rules read English. ``evidence`` is accepted for the shared call and not used:
    a rule judge compares with the reference answer only.

    Examples
    --------
    >>> judge = RuleJudge()
    >>> verdict = judge.judge("What was net income?", "5.5 million dollars", "$5,500,000")
    >>> verdict.score, verdict.rule
    (1, 'number')
    >>> verdict.reason
    'the reference states $5,500,000; the answer states 5.5 million'
    >>> judge.judge("Does the policy cover floods?", "No, it does not.", "Yes.")
    Verdict(score=0, rule='yes-no', reason='the reference says yes; the answer says no')
    >>> judge.judge("What is the CEO's salary?", "The report does not mention it.",
    ...             "Not mentioned in the document", qtype="unanswerable").score
    1
    >>> judge.judge("Why did sales fall?", "Because of the weather.",
    ...             "Sales fell because a new competitor cut prices in every region where "
    ...             "the company sells its main product line.").status
    'undecided'
    """

    rel_tol: float = 0.0
    accept_similarity: float = 0.9
    reject_similarity: float = 0.5
    max_short_words: int = 10
    dayfirst: bool = False

    def __post_init__(self) -> None:
        if not (is_real(self.rel_tol) and 0.0 <= float(self.rel_tol) < 1.0):
            raise ValidationError(f"rel_tol must be a number in [0, 1); found {self.rel_tol!r}")
        check_probability(self.accept_similarity, "accept_similarity", open_high=False)
        check_probability(self.reject_similarity, "reject_similarity", open_low=False)
        if not self.reject_similarity <= self.accept_similarity:
            raise ValidationError(
                f"reject_similarity must be <= accept_similarity; found "
                f"{self.reject_similarity!r} > {self.accept_similarity!r}")
        check_positive_int(self.max_short_words, "max_short_words", 1)
        if not isinstance(self.dayfirst, bool):
            raise ValidationError(f"dayfirst must be True or False; found {self.dayfirst!r}")

    def judge(self, question: str, answer: Any, reference: str, *, qtype: str | None = None,
              evidence: str | None = None) -> Verdict:
        """Judge one answer; see the class docstring for the rules.

        Parameters
        ----------
        question, reference : str
        answer : str or None
            None, NaN or "" is no answer.
        qtype : one of :data:`QTYPES`, optional
        evidence : str, optional
            Not used by the rules.

        Returns
        -------
        Verdict
        """
        question = text_arg(question, "question")
        reference = text_arg(reference, "reference")
        qtype = qtype_arg(qtype)
        text = answer_arg(answer)
        if text is None:
            return EMPTY_VERDICT
        if qt.words(text) == qt.words(reference):
            return Verdict(1, "exact-match", "the answer is the reference")
        ref_yes = qt.polarity(reference)
        if qtype == "unanswerable" or (ref_yes is None and qt.declines(reference)):
            return self._unanswerable(question, text)
        if ref_yes is not None:
            return self._yes_no(ref_yes, text)
        if qt.declines(text):
            return self._declined(question, text, reference)
        return self._short(question, text, reference)

    # -- the rules -------------------------------------------------------------------
    def _unanswerable(self, question: str, answer: str) -> Verdict:
        if not qt.declines(answer):
            return Verdict(0, "unanswerable", "the reference says the document does not "
                                              "contain the answer; the answer gives one")
        q = _Facts.read(question, self.dayfirst)
        a = _Facts.read(answer, self.dayfirst)
        extra = [x for x in a.numbers if not any(qt.close(x, y, self.rel_tol, False)
                                                 for y in q.numbers)]
        if extra:
            return Verdict(None, "unanswerable",
                           f"the answer declines but also states {_fmt_quantities(extra)}")
        return Verdict(1, "unanswerable", "the reference and the answer both decline")

    def _yes_no(self, ref_yes: bool, answer: str) -> Verdict:
        said = qt.polarity(answer)
        ref_word = "yes" if ref_yes else "no"
        if said is None:
            if qt.declines(answer) and ref_yes:
                return Verdict(0, "declined-answerable",
                               "the reference says yes; the answer declines")
            return Verdict(None, "yes-no",
                           f"the reference says {ref_word}; the answer opens with neither")
        return Verdict(int(said == ref_yes), "yes-no",
                       f"the reference says {ref_word}; the answer says "
                       f"{'yes' if said else 'no'}")

    def _declined(self, question: str, answer: str, reference: str) -> Verdict:
        verdict = self._key_values(question, answer, reference)
        if verdict is not None and verdict.score == 1:
            return Verdict(None, "declined-answerable",
                           "the answer declines but states the reference's key values")
        return Verdict(0, "declined-answerable",
                       "the reference answers the question; the answer declines")

    def _key_values(self, question: str, answer: str, reference: str) -> Verdict | None:
        """The date and number rules, or None when the reference states neither."""
        q = _Facts.read(question, self.dayfirst)
        r = _Facts.read(reference, self.dayfirst)
        if not (r.dates or r.plain_numbers):
            return None
        a = _Facts.read(answer, self.dayfirst)
        share = qt.share_question(question)
        full = [(i, True) for i in range(len(r.dates.full))]
        months = [(i, False) for i in range(len(r.dates.months))]
        # What the question already states is context, not the answer ("What was revenue
        # in 2023?" "Revenue in 2023 was $5.5M": the answer need not repeat 2023) -- unless
        # the question states them all ("2019 or 2020?"), when they are the answer.
        dates = [d for d in full + months if not q.dates.has(r.dates, *d)] or full + months
        beyond = [x for x in r.plain_numbers
                  if not any(qt.close(x, y, self.rel_tol, share) for y in q.numbers)]
        numbers = beyond or r.plain_numbers
        ref_dates = r.dates.describe()
        missing_dates = [ref_dates[i if is_full else len(r.dates.full) + i]
                         for i, is_full in dates if not a.dates.has(r.dates, i, is_full)]
        if missing_dates:
            if not a.dates:
                return Verdict(None, "date", f"the reference states {missing_dates[0]}; the "
                                             "answer states no date that can be read")
            return Verdict(0, "date", f"the reference states {', '.join(missing_dates)}; the "
                                      f"answer states {', '.join(a.dates.describe())}")
        missing = [x for x in numbers
                   if not any(qt.close(x, y, self.rel_tol, share) for y in a.numbers)]
        rule = "number" if numbers else "date"
        if missing:
            # An answer whose only numbers are the question's has not stated one of its own
            # ("revenue in 2023 grew strongly"): nothing to compare, so no verdict -- unless
            # the answer is to pick one of the question's numbers ("2019 or 2020?").
            own = a.numbers if not beyond else [
                y for y in a.numbers
                if not any(qt.close(y, x, self.rel_tol, share) for x in q.numbers)]
            if not own:
                return Verdict(None, "number", f"the reference states "
                                               f"{_fmt_quantities(missing)}; the answer states "
                                               "no number of its own that can be read")
            return Verdict(0, "number", f"the reference states {_fmt_quantities(missing)}; "
                                        f"the answer states {_fmt_quantities(a.numbers)}")
        question_words = frozenset(qt.words(question))
        answer_words = frozenset(qt.words(answer))
        residue = [w for w in qt.content_words(r.residue, question_words)
                   if w not in _UNIT_WORDS and w not in answer_words]
        if residue:
            return Verdict(None, rule, f"the {rule}s match but the answer does not say "
                                       f"{' '.join(residue)!r}")
        if rule == "number":
            matched = [next(y for y in a.numbers if qt.close(x, y, self.rel_tol, share))
                       for x in numbers]
            return Verdict(1, "number", f"the reference states {_fmt_quantities(numbers)}; "
                                        f"the answer states {_fmt_quantities(matched)}")
        return Verdict(1, "date", f"the reference states {', '.join(ref_dates)}; the answer "
                                  "states the same")

    def _short(self, question: str, answer: str, reference: str) -> Verdict:
        question_words = frozenset(qt.words(question))
        core = (qt.content_words(reference, question_words) or qt.content_words(reference)
                or qt.words(reference))
        if len(core) > self.max_short_words:
            ref_words, ans_words = qt.words(reference), qt.words(answer)
            k = len(ref_words)
            if any(ans_words[i:i + k] == ref_words for i in range(len(ans_words) - k + 1)):
                return Verdict(1, "contains-reference", "the answer contains the reference")
            return Verdict(None, "long-answer",
                           f"the reference has {len(core)} content words beyond the "
                           f"question (more than {self.max_short_words}): a judgment of "
                           "meaning is needed")
        verdict = self._key_values(question, answer, reference)
        if verdict is not None:
            return verdict
        # A negation the reference lacks can reverse a match ("it was not Jane Smith").
        flipped = qt.negated(answer) and not qt.negated(reference)
        answer_words = qt.words(answer)
        if set(core) <= set(answer_words):
            if flipped:
                return Verdict(None, "contains-reference", "the answer contains the "
                                                           "reference but also a negation")
            return Verdict(1, "contains-reference",
                           f"the answer contains {' '.join(core)!r}")
        answer_core = qt.content_words(answer, question_words) or answer_words
        score = qt.similarity(core, answer_core)
        seen = f"similarity {score:.2f} of {' '.join(core)!r} to the closest answer words"
        if score >= self.accept_similarity:
            if flipped:
                return Verdict(None, "similarity", f"{seen}, but the answer has a negation")
            return Verdict(1, "similarity", seen)
        if score < self.reject_similarity and len(answer_core) <= self.max_short_words:
            return Verdict(0, "similarity", seen)
        return Verdict(None, "similarity", seen)


