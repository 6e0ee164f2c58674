r"""The rule judge: DocBench's three rules as deterministic text rules, no model.

Private module of :mod:`confcal.qa.docqa`, which re-exports :class:`RuleJudge`. It reads
text through :mod:`confcal.qa._text` and gives :class:`confcal.qa._verdicts.Verdict`\ s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein

from .._validation import check_positive_int, check_probability, is_real
from ..exceptions import ValidationError
from . import _text as qt
from ._names import contrasted, names_in
from ._verdicts import EMPTY_VERDICT, Verdict, answer_arg, qtype_arg, text_arg

# -------------------------------------------------------------------------- rule judge
_ACRONYM_SKIP = frozenset({"of", "and", "for", "the", "on", "in", "to", "de", "a", "an", "&"})
_CAPS_RE = re.compile(r"\b[A-Z]{2,8}\b")
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _acronym(reference: str, answer: str) -> bool:
    """Does the answer give the reference's acronym, or spell out the reference acronym?

    "EPA" for "Environmental Protection Agency" (initials of every word but "of", "and",
    "for", "the", ...), "BERT" for "... Transformers (BERT)", and "Environmental Protection
    Agency" (capitalised words) for "EPA". The acronym must be written in capitals.
    """
    reference, answer = qt.prepare(reference), qt.prepare(answer)
    # An answer in capitals throughout ("THE FTC") says nothing by its capitals.
    shouting = len(answer.split()) > 1 and not re.search(r"[a-z]", answer)
    answer_caps = set() if shouting else set(_CAPS_RE.findall(answer))
    given = set(re.findall(r"\(([A-Z]{2,8})\)", reference))  # "... (BERT)"
    if given & answer_caps:
        return True
    bare = re.sub(r"\([^)]*\)", " ", reference)
    names = [w for w in _NAME_RE.findall(bare) if w.casefold() not in _ACRONYM_SKIP]
    if len(names) >= 2 and all(w[0].isupper() for w in names):
        if "".join(w[0] for w in names).upper() in answer_caps:
            return True
    if len(names) == 1 and _CAPS_RE.fullmatch(names[0]):  # the reference is the acronym
        acronym = names[0]
        spelled = [w for w in _NAME_RE.findall(answer) if w.casefold() not in _ACRONYM_SKIP]
        k = len(acronym)
        return any(all(w[0].isupper() for w in spelled[i:i + k])
                   and "".join(w[0] for w in spelled[i:i + k]).upper() == acronym
                   for i in range(len(spelled) - k + 1))
    return False


def _negation(question_words: frozenset[str], answer: str, reference: str) -> Verdict | None:
    """0 for the reference negated ("was not rejected" for "was rejected") or un-negated
    ("has been extended" for "has not been extended"); None otherwise."""
    def plain(words: Sequence[str]) -> list[str]:
        return [w for w in words if w not in qt.NEGATIONS]
    ref_negated, answer_negated = qt.negated(reference), qt.negated(answer)
    if ref_negated == answer_negated:
        return None
    if plain(qt.words(answer)) == plain(qt.words(reference)):
        return Verdict(0, "negation", "the answer is the reference with its sense reversed "
                                      "by a negation")
    core = plain(qt.content_words(reference, question_words))
    if ref_negated and core and set(core) <= set(qt.words(answer)):
        return Verdict(0, "negation", f"the reference says {' '.join(core)!r} did not hold; "
                                      "the answer says it did")
    return None


_PLACE = r"[A-Z]\w*(?:\s+[A-Z]\w*)*"


def _rivals(question: str, answer: str, reference: str) -> list[str]:
    """For a reference that is a name ("Yann LeCun", "Paris", "Transformer"), the other
    names of the answer: capitalised words the question and the reference do not have
    ("Yoshua Bengio", "London", "LSTM"), any of which may be what the answer gives."""
    names = [w for w in _NAME_RE.findall(qt.prepare(reference))
             if w.casefold() not in _ACRONYM_SKIP]
    if not names or not all(w[0].isupper() for w in names):
        return []
    known = set(qt.words(question)) | set(qt.words(reference))
    # A place written beside the reference ("Geneva, Switzerland", "Amsterdam, the
    # Netherlands") says where it is, not something else.
    ref = r"(?i:" + r"\s+".join(re.escape(w) for w in qt.prepare(reference).split()) + ")"
    for m in re.finditer(rf"\b{ref},\s*(?:the\s+)?({_PLACE})|({_PLACE}),\s*(?:the\s+)?{ref}\b",
                         qt.prepare(answer)):
        known |= set(qt.words(m.group(1) or m.group(2)))
    # a spelling of the reference's own name ("Jane Smyth" for "Jane Smith") is no rival
    return [w for w in dict.fromkeys(names_in(answer)) if w not in known
            and not any(Levenshtein.normalized_similarity(w, k) >= 0.75 for k in known)]


_UNIT_WORDS = frozenset({
    # currencies, percent and scale words, hedges: words a number carries, not content
    "dollar", "dollars", "usd", "us", "eur", "euro", "euros", "pound", "pounds", "gbp",
    "yen", "jpy", "yuan", "rmb", "cny", "inr", "rupees", "percent", "per", "cent", "pct",
    "thousand", "thousands", "million", "millions", "billion", "billions", "trillion", "mn",
    "bn", "mln", "bln", "tn", "about", "around", "approximately", "approx", "roughly",
    "nearly", "almost", "over", "under", "more", "less", "than", "total", "some", "just",
    "exactly", "only",
    # durations (compared as quantities) and the words of a range (checked as one)
    "year", "years", "month", "months", "week", "weeks", "day", "days", "quarter",
    "quarters", "hour", "hours", "minute", "minutes", "between", "from", "through",
    "range", "ranging",
})


def _fmt_quantities(quantities: Sequence[qt.Quantity]) -> str:
    # a currency named by a word after the number ("3 million euros") is not in its text
    return ", ".join(
        q.text + (f" ({next(iter(q.currency))})" if q.currency and len(q.currency) == 1
                  and not re.search(r"[$\u20ac\u00a3\u00a5\u20b9]|[A-Z]{3}", q.text) else "")
        for q in quantities) or "none"


_SIGN_NAMES = {-1: "negative", 0: "no sign", 1: "positive"}


def _years(years: Iterable[int]) -> str:
    return " and ".join(str(y) for y in sorted(years)) or "no year"


def _labels(bound: qt.Bound | None) -> frozenset[str]:
    """A number's words and years, as one set of labels."""
    if bound is None:
        return frozenset()
    return bound.labels | frozenset(f"y{y}" for y in bound.years)


@dataclass(frozen=True)
class _Facts:
    """The dates and numbers of a text, read once."""

    dates: qt.Dates
    plain_numbers: list[qt.Quantity]  # numbers outside the dates
    residue: str  # the text without its dates and numbers
    bound: list[qt.Bound]  # every number (dates' years too) with the words next to it
    text: str

    @classmethod
    def read(cls, text: str, dayfirst: bool) -> _Facts:
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


# Question words that name no entity: which number answers "What was the total revenue in
# fiscal 2023?" is told by "revenue", not by "total" or "fiscal".
_GENERIC = frozenset(qt.stem(w) for w in (
    "what", "which", "how", "many", "much", "number", "total", "amount", "value", "year",
    "fiscal", "fy", "quarter", "reported", "report", "document", "paper", "according",
    "table", "figure", "chart", "did", "does", "do", "was", "were", "is", "are", "the",
    "of", "in", "for", "and", "to", "on", "at", "by", "with", "give", "state", "stated",
))


def _sign_of(q: qt.Quantity, bound: qt.Bound | None, question_direction: int) -> tuple[int, str]:
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
    # such words ("changed", "moved") it may be phrased some other way.
    kind, plain_text = (kr, answer_text) if sr else (ka, ref_text)
    if kind == "written" and not any(qt.is_direction_word(w) for w in qt.words(plain_text)):
        return False
    return None


@dataclass(frozen=True)
class RuleJudge:
    """A deterministic judge: DocBench's three rules as text rules, no model.

    The rules, in the order they are tried (each verdict names the one that decided, see
    :data:`RULES`):

    1. ``exact-match``: the answer equals the reference up to case, punctuation and
       articles: 1. ``empty-answer``: no answer: 0.
    2. ``unanswerable``: when ``qtype`` is ``"unanswerable"`` or the reference itself
       declines ("The document does not mention...", "Not stated"), a declining answer
       ("There is no email address in the paper", the forms are listed in docs/docqa.md) is
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
         matched by any day of it); numbers with separators, scale words, percents and
         durations ("5.5 million" = "5,500,000"; "24 months" = "2 years"; "12%" = "0.12"
         when the question asks for a share or the fraction has three significant digits,
         "12.4%" = "0.124"). Equal as written is a match; a reference that rounds the
         answer ("5.5 million" for "5,512,000", or within 1%) too; an answer that rounds the
         reference only when it says so ("about 62%" for 61.8%) or puts a count into a scale
         word ("2.3 million" for 2,314,562): "4.3%" for 4.25% is undecided. A missing one is
         0 (undecided when the answer states no date, or no number beyond the question's,
         at all, or states it a hundredfold, as points). Then, on the numbers found:

         - ``sign``: a written minus or plus, or words around the number ("a loss", "fell",
           "a deficit", "below") or in the question, must agree: "-3.5%" answered "3.5%"
           in a text with no word of direction is 0; answered "changed by 3.5%", undecided.
         - ``year``: a number given for another year than the one the reference or the
           question names ("$4.2 billion in 2022" when 2023 is asked) is 0.
         - ``range``: a number answered with a range ("3,000 to 5,000" for 5,000) is 0.
         - ``pair-order``: several numbers must keep their own words: "48 for and 52
           against" for "52 for and 48 against" is 0; another order whose words do not say
           which is which is undecided.
         - ``asked-entity``: one number asked for, and the answer states others: the
           reference's must be the one with the question's words ("France grew 0.9% while
           Germany shrank 0.3%" for Germany's growth); given for something else it is 0,
           and undecided when the words do not tell, when another number has a name of the
           question that the reference's lacks ("4.1% nationally, while Texas recorded
           3.9%" for Texas), or when the reference's is given as a change and another as a
           level and neither the question nor the reference speaks of a change.

         Amounts in different currencies written as signs, codes or words ("$3 million"
         for "EUR 3 million", "3 million pounds" for "3 million euros") never match.

         When all hold but the reference also has words the answer lacks ("5 branches" vs
         "5 offices"), undecided.
       - ``negation``: the reference with its sense reversed ("The amendment was not
         rejected" for "The amendment was rejected"; "has been extended" for "has not been
         extended"): 0.
       - ``acronym``: the answer gives the reference's initials in capitals ("EPA" for
         "Environmental Protection Agency", "MIT" for "Massachusetts Institute of
         Technology") or the acronym the reference puts in brackets, or spells out an
         acronym reference in capitalised words: 1.
       - ``contains-reference``: the answer has every content word of the reference: 1.
       - ``similarity``: 1 - normalized edit distance between the reference's content words
         and the closest run of answer words (ANLS-style): 1 at ``accept_similarity`` or
         above; 0 below ``reject_similarity`` when the answer is short too; else undecided.

       An answer with a negation the reference lacks ("not Jane Smith") is undecided
       where it would have been 1 by acronym, containment or similarity; so is, where
       containment or similarity would have said 1, one with a contrast ("rather than",
       "instead of") and, for a name reference, one that also names what the question and
       the reference do not ("moved from Paris to London" for Paris; "Geneva, Switzerland"
       is no rival).
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
        # Words drop percent signs and a minus before a currency: "0.1%" and "0.1", or
        # "-$5" and "$5", are the same words, not the same number.
        if qt.words(text) == qt.words(reference) and (
                [(x.percent, x.sign) for x in qt.quantities_in(text)]
                == [(x.percent, x.sign) for x in qt.quantities_in(reference)]):
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
        rule = "number" if numbers else "date"
        matched: list[qt.Quantity] = []
        if numbers:
            verdict = self._numbers(q, r, a, numbers, bool(beyond), share)
            if isinstance(verdict, Verdict):
                return verdict
            matched = verdict
        question_words = frozenset(qt.words(question))
        answer_words = frozenset(qt.words(answer))
        residue = [w for w in qt.content_words(r.residue, question_words)
                   if w not in _UNIT_WORDS and w not in answer_words
                   and not qt.is_direction_word(w)]
        if residue:
            return Verdict(None, rule, f"the {rule}s match but the answer does not say "
                                       f"{' '.join(residue)!r}")
        if rule == "number":
            return Verdict(1, "number", f"the reference states {_fmt_quantities(numbers)}; "
                                        f"the answer states {_fmt_quantities(matched)}")
        return Verdict(1, "date", f"the reference states {', '.join(ref_dates)}; the answer "
                                  "states the same")

    def _numbers(self, q: _Facts, r: _Facts, a: _Facts, numbers: list[qt.Quantity],
                 beyond: bool, share: bool) -> Verdict | list[qt.Quantity]:
        """Every rule about the reference's numbers: a verdict, or when they all hold the
        answer's numbers that state the reference's."""
        pool = a.bound
        found: list[list[qt.Bound]] = []  # per reference number, the answer's that state it
        coarse: list[list[qt.Bound]] = []  # ... that round it (the answer is less precise)
        for x in numbers:
            kinds = [(qt.compare(x, b.quantity, self.rel_tol, share), b) for b in pool]
            found.append([b for k, b in kinds if k in ("same", "rounded")])
            coarse.append([b for k, b in kinds if k == "coarser"])
        used = {b.index for bs in found for b in bs}
        unsure: list[str] = []
        for i, x in enumerate(numbers):
            # The reference rounds: "5.5 million" for 5,512,000 is the same number; "4%"
            # for 4.4% may not be.
            rounded = [b for b in found[i] if qt.compare(x, b.quantity, self.rel_tol, share)
                       == "rounded" and x.precision < 1e3
                       and abs(x.value - b.quantity.value) > 0.01 * x.value]
            if rounded and len(rounded) == len(found[i]):
                unsure.append(f"{x.text} (the answer states {rounded[0].quantity.text}, more "
                              "precisely than the reference and not the same)")
            if found[i]:
                continue
            rounding = [b for b in coarse[i] if b.index not in used]
            # The answer rounds: "4.3%" for 4.25% drops a digit; "about 62%" for 61.8% or
            # "2.3 million" for 2,314,562 says it rounds.
            said = [b for b in rounding if b.hedged or (
                b.quantity.precision >= 1e3 > x.precision and b.quantity.precision > 1)]
            if said:
                found[i] = said
            elif rounding:
                unsure.append(f"{x.text} (the answer rounds it to "
                              f"{rounding[0].quantity.text} without saying so)")
                found[i] = rounding
        missing = [x for x, bs in zip(numbers, found, strict=True) if not bs]
        if missing:
            # An answer whose only numbers are the question's has not stated one of its own
            # ("revenue in 2023 grew strongly"): nothing to compare, so no verdict -- unless
            # the answer is to pick one of the question's numbers ("2019 or 2020?").
            answer_numbers = [b.quantity for b in pool]
            own = answer_numbers if not beyond else [
                y for y in answer_numbers
                if not any(qt.close(y, x, self.rel_tol, share) for x in q.numbers)]
            if not own:
                return Verdict(None, "number", f"the reference states "
                                               f"{_fmt_quantities(missing)}; the answer states "
                                               "no number of its own that can be read")
            hundredfold = [y for x in missing for y in own if not (x.percent or y.percent)
                           and any(abs(y.value * f - x.value) <= 1e-9 * x.value + min(
                               x.precision, y.precision * f) / 2 for f in (100.0, 0.01))]
            if hundredfold:
                return Verdict(None, "number", f"the reference states {missing[0].text}; the "
                                               f"answer states {hundredfold[0].text}, perhaps "
                                               "as points of a share")
            return Verdict(0, "number", f"the reference states {_fmt_quantities(missing)}; "
                                        f"the answer states {_fmt_quantities(own)}")
        ref_bound = r.bound_of(numbers)
        q_direction = qt.direction(q.text)
        # Signs: "-3.5%" is not "3.5%", a loss is not a profit.
        for i, x in enumerate(numbers):
            ref_sign = _sign_of(x, ref_bound[i], q_direction)
            agree = [(b, _signs_agree(ref_sign, _sign_of(b.quantity, b, q_direction),
                                      r.text, a.text)) for b in found[i]]
            if not any(ok for _, ok in agree):
                b = found[i][0]
                answer_sign = _sign_of(b.quantity, b, q_direction)[0]
                if all(ok is False for _, ok in agree):
                    return Verdict(0, "sign", f"the reference states {x.text} "
                                              f"({_SIGN_NAMES[ref_sign[0]]}); the answer "
                                              f"states {b.quantity.text} "
                                              f"({_SIGN_NAMES[answer_sign]})")
                return Verdict(None, "sign", f"the reference states {x.text} "
                                             f"({_SIGN_NAMES[ref_sign[0]]}); the answer does "
                                             f"not say whether {b.quantity.text} is negative")
            found[i] = [b for b, ok in agree if ok]
        # Years: the right amount for another year is wrong.
        question_years = {int(y.value) for y in (b.quantity for b in q.bound) if y.is_year}
        for i, x in enumerate(numbers):
            rb = ref_bound[i]
            asked = set(rb.years) if rb is not None and rb.years else question_years
            if x.is_year or not asked:
                continue
            fitting = [b for b in found[i] if not b.years or b.years & asked]
            if not fitting:
                b = found[i][0]
                return Verdict(0, "year", f"the reference states {x.text} for "
                                          f"{_years(asked)}; the answer states "
                                          f"{b.quantity.text} for {_years(b.years)}")
            found[i] = fitting
        # Ranges: one end of a range is not the number, nor the number a range.
        for i, x in enumerate(numbers):
            for b in found[i]:
                if b.range_with is None:
                    continue
                other = pool[b.range_with]
                if not any(other in bs for bs in found):
                    return Verdict(0, "range", f"the reference states {x.text}; the answer "
                                               f"states the range {b.quantity.text} to "
                                               f"{other.quantity.text}"
                                   if b.index < other.index else
                                   f"the reference states {x.text}; the answer states the "
                                   f"range {other.quantity.text} to {b.quantity.text}")
        if len({x.value for x in numbers}) >= 2:
            verdict = self._pairs(numbers, ref_bound, found)
        else:
            verdict = self._asked_entity(q, a, numbers[0], found[0], share,
                                         ref_bound[0] is not None and ref_bound[0].direction != 0)
        if verdict is not None:
            return verdict
        if unsure:
            return Verdict(None, "number", f"the reference states {unsure[0]}")
        return [bs[0].quantity for bs in found]

    def _pairs(self, numbers: list[qt.Quantity], ref_bound: list[qt.Bound | None],
               found: list[list[qt.Bound]]) -> Verdict | None:
        """Several numbers: each must keep its own words ("52 for and 48 against")."""
        labels = [_labels(b) for b in ref_bound]
        own = [labels[i] - frozenset().union(*(labels[j] for j in range(len(labels))
                                                if j != i)) for i in range(len(labels))]

        def fit(i: int) -> qt.Bound:  # the answer's number with most of i's own words
            return max(found[i], key=lambda b: len(_labels(b) & own[i]))

        chosen = [fit(i) for i in range(len(found))]
        confirmed = []
        for i, b in enumerate(chosen):
            words = _labels(b)
            others = frozenset().union(*(own[j] for j in range(len(own)) if j != i))
            if not words & own[i] and words & others:
                return Verdict(0, "pair-order",
                               f"the reference states {numbers[i].text} with "
                               f"{', '.join(sorted(own[i])) or 'no words of its own'}; the "
                               f"answer states it with {', '.join(sorted(words & others))}")
            confirmed.append(bool(words & own[i]) and not words & others)
        order = [b.index for b in chosen]
        if order == sorted(order) or all(confirmed):
            return None
        return Verdict(None, "pair-order", "the answer states the reference's numbers in "
                                           "another order, and their words do not say which "
                                           "is which")

    def _asked_entity(self, q: _Facts, a: _Facts, x: qt.Quantity, found: list[qt.Bound],
                      share: bool, ref_change: bool) -> Verdict | None:
        """One number asked for: the answer's must belong to what the question names (and
        be a change only when the question or the reference speaks of one)."""
        taken = {b.index for b in found}
        years = {int(b.quantity.value) for b in q.bound if b.quantity.is_year}
        # A number given for a year the question does not ask ("$1 million in 1999 and $2
        # million in 2000" for 2000) competes with none.
        others = [b for b in a.bound if b.index not in taken
                  and b.quantity.is_year == x.is_year
                  and b.quantity.percent == x.percent and b.quantity.unit == x.unit
                  and not (years and b.years and not b.years & years)
                  and not any(qt.close(b.quantity, y, self.rel_tol, share) for y in q.numbers)]
        if not others:
            return None
        # A level asked, and the answer gives the reference's number as a change and another
        # as a level ("R&D spending rose 18% to 12% of revenue" for the share, 18%).
        levels = [b for b in others if not b.direction]
        if (levels and not ref_change and not qt.direction(q.text)
                and all(b.direction for b in found)):
            return Verdict(None, "asked-entity",
                           f"the answer states {x.text} as a change and "
                           f"{levels[0].quantity.text} as a level; the question asks for a "
                           "level")
        asked = frozenset(qt.stem(w) for w in qt.content_words(q.text)) - _GENERIC
        mine = max(len(b.labels & asked) for b in found)
        theirs = max(len(b.labels & asked) for b in others)
        # More of the question's words next to the reference's number is not enough when
        # another number has a name the question asks about that it lacks: the topic is
        # said once, next to the first number ("the unemployment rate was 4.1% nationally,
        # while Texas recorded 3.9%" for Texas).
        own = frozenset().union(*(b.labels for b in found))
        named = frozenset(qt.stem(w) for w in names_in(q.text)) - _GENERIC
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
        # ... and so can a contrast ("an LSTM rather than a Transformer"), and a name beside
        # the reference's may be the one the answer gives ("moved from Paris to London").
        contrast = contrasted(answer) and not contrasted(reference)
        rivals = _rivals(question, answer, reference)
        besides = (f"also names {' '.join(rivals[:3])!r}" if rivals else
                   "also sets it against something else" if contrast else "")
        answer_words = qt.words(answer)
        verdict = _negation(question_words, answer, reference)
        if verdict is not None:
            return verdict
        if _acronym(reference, answer):
            if flipped:
                return Verdict(None, "acronym", "the answer names the reference by its "
                                                "acronym but also has a negation")
            return Verdict(1, "acronym", "the answer names the reference by its acronym "
                                         "or spells out the reference's acronym")
        if set(core) <= set(answer_words):
            if flipped:
                return Verdict(None, "contains-reference", "the answer contains the "
                                                           "reference but also a negation")
            if besides:
                return Verdict(None, "contains-reference",
                               f"the answer contains {' '.join(core)!r} but {besides}")
            return Verdict(1, "contains-reference",
                           f"the answer contains {' '.join(core)!r}")
        answer_core = qt.content_words(answer, question_words) or answer_words
        score = qt.similarity(core, answer_core)
        seen = f"similarity {score:.2f} of {' '.join(core)!r} to the closest answer words"
        if score >= self.accept_similarity:
            if flipped:
                return Verdict(None, "similarity", f"{seen}, but the answer has a negation")
            if besides:
                return Verdict(None, "similarity", f"{seen}, but the answer {besides}")
            return Verdict(1, "similarity", seen)
        if score < self.reject_similarity and len(answer_core) <= self.max_short_words:
            return Verdict(0, "similarity", seen)
        return Verdict(None, "similarity", seen)


