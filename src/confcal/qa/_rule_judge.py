r"""The rule judge: DocBench's three rules as deterministic text rules, no model.

Private module of :mod:`confcal.qa.docqa`, which re-exports :class:`RuleJudge`. It reads
text through :mod:`confcal.qa._text`, leaves the rules about numbers to
:mod:`confcal.qa._number_rules` and gives :class:`confcal.qa._verdicts.Verdict`\ s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein

from .._validation import check_positive_int, check_probability, is_real
from ..exceptions import ValidationError
from . import _text as qt
from ._doubts import decline_names, doubt
from ._names import contrasted, names_in
from ._number_rules import Facts, NumberCase, fmt_quantities, read_numbers
from ._verdicts import EMPTY_VERDICT, Verdict, answer_arg, qtype_arg, text_arg

# -------------------------------------------------------------------------- rule judge
_ACRONYM_SKIP = frozenset({"of", "and", "for", "the", "on", "in", "to", "de", "a", "an", "&"})
_CAPS_RE = re.compile(r"\b[A-Z]{2,8}\b")
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _spelled_out(acronym: str, answer: str) -> bool:
    """Does the answer spell out ``acronym`` in capitalised words ("Environmental
    Protection Agency" for "EPA"; "of", "and", "the", ... skipped)?"""
    spelled = [w for w in _NAME_RE.findall(answer) if w.casefold() not in _ACRONYM_SKIP]
    k = len(acronym)
    return any(all(w[0].isupper() for w in spelled[i:i + k])
               and "".join(w[0] for w in spelled[i:i + k]).upper() == acronym
               for i in range(len(spelled) - k + 1))


def _acronym_words(reference: str, answer: str) -> set[str]:
    """The casefolded acronyms of the reference (its initials, the one it puts in
    brackets, the reference itself when it is one) and, for an acronym reference, the
    words of every run of the answer that spells it out."""
    reference, answer = qt.prepare(reference), qt.prepare(answer)
    bare = re.sub(r"\([^)]*\)", " ", reference)
    names = [w for w in _NAME_RE.findall(bare) if w.casefold() not in _ACRONYM_SKIP]
    found = {"".join(w[0] for w in names).casefold()}
    found |= {a.casefold() for a in re.findall(r"\(([A-Z]{2,8})\)", reference)}
    if len(names) == 1 and _CAPS_RE.fullmatch(names[0]):
        found.add(names[0].casefold())
        spelled = [w for w in _NAME_RE.findall(answer) if w.casefold() not in _ACRONYM_SKIP]
        k = len(names[0])
        for i in range(len(spelled) - k + 1):
            run = spelled[i:i + k]
            if "".join(w[0] for w in run).upper() == names[0]:
                found |= {w.casefold() for w in run}
    return found


def _acronym(reference: str, answer: str) -> str:
    """Does the answer give the reference's acronym ("initials"), or spell out the
    reference acronym ("spelled")? "" for neither.

    "EPA" for "Environmental Protection Agency" (initials of every word but "of", "and",
    "for", "the", ...), "BERT" for "... Transformers (BERT)": "initials"; "Environmental
    Protection Agency" (capitalised words) for "EPA": "spelled". The acronym must be
    written in capitals.
    """
    reference, answer = qt.prepare(reference), qt.prepare(answer)
    # An answer in capitals throughout ("THE FTC") says nothing by its capitals.
    shouting = len(answer.split()) > 1 and not re.search(r"[a-z]", answer)
    answer_caps = set() if shouting else set(_CAPS_RE.findall(answer))
    given = set(re.findall(r"\(([A-Z]{2,8})\)", reference))  # "... (BERT)"
    if given & answer_caps:
        return "initials"
    bare = re.sub(r"\([^)]*\)", " ", reference)
    names = [w for w in _NAME_RE.findall(bare) if w.casefold() not in _ACRONYM_SKIP]
    if len(names) >= 2:  # the answer gives the initials of the reference's words
        return ("initials" if all(w[0].isupper() for w in names)
                and "".join(w[0] for w in names).upper() in answer_caps else "")
    if len(names) == 1 and _CAPS_RE.fullmatch(names[0]):  # the reference is the acronym
        return "spelled" if _spelled_out(names[0], answer) else ""
    return ""


def _comparisons(text: str) -> list[str]:
    """The comparison signs of a text ("p < 0.05" is not "p > 0.05")."""
    return re.findall(r"[<>\u2264\u2265]", text)


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


def _rivals(question: str, answer: str, reference: str, *, acronym: bool = False
            ) -> list[str]:
    """For a reference that is a name ("Yann LeCun", "Paris", "Transformer"), the other
    names of the answer: capitalised words the question and the reference do not have
    ("Yoshua Bengio", "London", "LSTM"), any of which may be what the answer gives.

    With ``acronym`` (the answer names the reference by its acronym), the reference's
    acronym and the words of a run that spells out an acronym reference are no rivals;
    "Marketing" in "AMA (American Marketing Association)" for "American Medical
    Association" is one."""
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
    if acronym:
        known |= _acronym_words(reference, answer)
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
         matched by any day of it); numbers with separators, scale words, percents,
         basis points, durations, masses and lengths ("5.5 million" = "5,500,000"; "24
         months" = "2 years"; "2,400 kg" = "2.4 tonnes"; "525 basis points" = "5.25%";
         units convert only when both sides write one of the same dimension; "12%" = "0.12"
         when the question asks for a share or the fraction has three significant digits,
         "12.4%" = "0.124"). Equal as written is a match; a reference that rounds the
         answer ("5.5 million" for "5,512,000", or within 1%) too; an answer that rounds the
         reference only when it says so ("about 62%" for 61.8%) or puts a count into a scale
         word ("2.3 million" for 2,314,562): "4.3%" for 4.25% is undecided. A missing one is
         0 (undecided when the answer states no date, or no number beyond the question's,
         at all, or states it a hundredfold, as points). Then, on the numbers found:

         - ``sign``: a written minus or plus, or words around the number ("a loss", "fell",
           "a deficit", "below") or in the question, must agree: "-3.5%" answered "3.5%"
           in a text with no word of direction is 0; answered "revenue rose 2% while
           operating income moved 3.5%", undecided.
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
         Technology") or the acronym the reference puts in brackets: 1 (undecided when it
         also names something else). Capitalised words that spell out an acronym
         reference are undecided: what the acronym stands for is not in the rules.
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

    An answer that any rule but ``exact-match`` calls correct is undecided instead when it
    also says the opposite: a correction ("actually", "in fact", "or rather", ...), words
    from both sides of one pair of :data:`confcal.qa._text.DIRECTION_PAIRS` (for numbers,
    among the words of the answer's number that states the reference's), and for a yes/no
    reference both a yes and a no, a yes followed by a negation the question and the
    reference lack, or a contrast after the opening word ("Yes. However, ..."); for other
    references, a contrast followed by a number the reference and the question do not
    state. It is undecided too when it may say something else
    (:func:`confcal.qa._doubts.doubt`): the question restated with a rival word in the
    clause of the reference ("came second" for who won, "the CFO's" for the CEO's), a
    direction or rival word against the question's after a yes or no, or the question's
    claim after a no; a reversing prefix or verb ("unconstitutional", "failed to
    uphold"); a number with another bound, in another dollar, in brackets, as a level for
    a change in points, with a word before its unit or in a table; another date or one
    counted from it; another of the question's options. A decline that names something
    the question does not is undecided.

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

    See Also
    --------
    LLMJudge : a model as the judge.
    CascadeJudge : the rule judge first, a model for what it leaves undecided.
    judge_records : runs a judge over records.

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
    >>> judge.judge("Does the policy cover floods?", "Yes. Actually, no.", "Yes.").status
    'undecided'
    >>> judge.judge("How much waste was collected?", "About 2,400 kg.", "2.4 tonnes").score
    1
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
        # Words drop percent signs, a minus before a currency and the currency sign: "0.1%"
        # and "0.1", "-$5" and "$5", or "€2.3 billion" and "$2.3 billion" are the same
        # words, not the same number.
        if qt.words(text) == qt.words(reference) and _comparisons(text) == _comparisons(
                reference) and (
                [(x.percent, x.sign, x.currency) for x in qt.quantities_in(text)]
                == [(x.percent, x.sign, x.currency) for x in qt.quantities_in(reference)]):
            return Verdict(1, "exact-match", "the answer is the reference")
        ref_yes = qt.polarity(reference)
        if qtype == "unanswerable" or (ref_yes is None and qt.declines(reference)):
            return self._unanswerable(question, text)
        if ref_yes is not None:
            verdict = self._yes_no(ref_yes, text)
        elif qt.declines(text):
            return self._declined(question, text, reference)
        else:
            verdict = self._short(question, text, reference)
        if verdict.score == 1:
            taken_back = _contrary(question, text, reference, ref_yes)
            taken_back = taken_back or doubt(question, text, reference, ref_yes,
                                             verdict.rule, self.dayfirst)
            if taken_back:
                return Verdict(None, verdict.rule, f"{verdict.reason}, but {taken_back}")
        return verdict

    # -- the rules -------------------------------------------------------------------
    def _unanswerable(self, question: str, answer: str) -> Verdict:
        if not qt.declines(answer):
            return Verdict(0, "unanswerable", "the reference says the document does not "
                                              "contain the answer; the answer gives one")
        q = Facts.read(question, self.dayfirst)
        a = Facts.read(answer, self.dayfirst)
        extra = [x for x in a.numbers if not any(qt.close(x, y, self.rel_tol, False)
                                                 for y in q.numbers)]
        if extra:
            return Verdict(None, "unanswerable",
                           f"the answer declines but also states {fmt_quantities(extra)}")
        named = decline_names(question, answer)
        if named:
            return Verdict(None, "unanswerable", named)
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
        q = Facts.read(question, self.dayfirst)
        r = Facts.read(reference, self.dayfirst)
        if not (r.dates or r.plain_numbers):
            return None
        a = Facts.read(answer, self.dayfirst)
        verdict = _date_rule(q, r, a)
        if verdict is not None:
            return verdict
        case = NumberCase.of(q, r, a, rel_tol=self.rel_tol, share=qt.share_question(question))
        matched: list[qt.Quantity] = []
        if case.numbers:
            outcome = read_numbers(case)
            if isinstance(outcome, Verdict):
                return outcome
            matched = outcome
        return _key_values_said(question, answer, r, case.numbers, matched)

    def _short(self, question: str, answer: str, reference: str) -> Verdict:
        question_words = frozenset(qt.words(question))
        core = (qt.content_words(reference, question_words) or qt.content_words(reference)
                or qt.words(reference))
        if len(core) > self.max_short_words:
            return self._long(core, answer, reference)
        verdict = self._key_values(question, answer, reference)
        if verdict is not None:
            return verdict
        # A negation the reference lacks can reverse a match ("it was not Jane Smith").
        flipped = qt.negated(answer) and not qt.negated(reference)
        besides = _besides(question, answer, reference)
        verdict = _negation(question_words, answer, reference)
        if verdict is not None:
            return verdict
        acronym = _acronym(reference, answer)
        if acronym == "spelled":
            # Any capitalised words with its initials spell an acronym out ("Executive
            # Council of Brussels" for "ECB"): what it stands for is not in the rules.
            return Verdict(None, "acronym", "the answer's capitalised words have the "
                                            "reference's initials; what the acronym stands "
                                            "for is not known to the rules")
        if acronym:
            if flipped:
                return Verdict(None, "acronym", "the answer names the reference by its "
                                                "acronym but also has a negation")
            others = _rivals(question, answer, reference, acronym=True)
            if others:
                return Verdict(None, "acronym", "the answer names the reference by its "
                                                f"acronym but also names {others[0]!r}")
            return Verdict(1, "acronym", "the answer names the reference by its acronym "
                                         "or spells out the reference's acronym")
        if set(core) <= set(qt.words(answer)):
            return _contains(core, flipped, besides)
        return self._similarity(core, answer, question_words, flipped, besides)

    def _long(self, core: Sequence[str], answer: str, reference: str) -> Verdict:
        """A long reference: 1 when the answer contains it word for word, else undecided."""
        ref_words, ans_words = qt.words(reference), qt.words(answer)
        k = len(ref_words)
        if any(ans_words[i:i + k] == ref_words for i in range(len(ans_words) - k + 1)):
            return Verdict(1, "contains-reference", "the answer contains the reference")
        return Verdict(None, "long-answer",
                       f"the reference has {len(core)} content words beyond the "
                       f"question (more than {self.max_short_words}): a judgment of "
                       "meaning is needed")

    def _similarity(self, core: Sequence[str], answer: str, question_words: frozenset[str],
                    flipped: bool, besides: str) -> Verdict:
        """The ``similarity`` rule (ANLS-style), undecided where a 1 has a negation or a
        rival beside it."""
        answer_core = qt.content_words(answer, question_words) or qt.words(answer)
        score = qt.similarity(list(core), answer_core)
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


def _contrary(question: str, answer: str, reference: str, ref_yes: bool | None) -> str:
    """Why an answer the rules would call correct also says the opposite, or "".

    Both sides of a pair of direction words or a correction (:func:`qt.contrary`); for a
    yes/no reference, both a yes and a no, a "yes" followed by a negation the question and
    the reference lack ("Yes, the company did not pay"), or a contrast after the opening
    word ("Yes. However, ..."); for other references, a contrast followed by a number that
    is not the reference's ("42 seats; however, a recount put it at 40").
    """
    # A number's direction words are its own ("France grew 0.9% while Germany shrank
    # 0.3%" says one thing of each): for numbers, the words bound to the answer's numbers
    # that state the reference's are read, one number at a time.
    known = qt.quantities_in(reference)
    share = qt.share_question(question)
    reason = qt.contrary(answer, reference, pairs=not known)
    if reason is not None:
        return reason
    if known:
        reason = _number_directions(answer, reference, known, share)
        if reason:
            return reason
    if ref_yes is not None:
        return _contrary_yes_no(question, answer, reference, ref_yes)
    tail = qt.after_contrast(answer)
    if tail:
        stated = known + qt.quantities_in(question)
        other = [x for x in qt.quantities_in(tail)
                 if not any(qt.close(x, y, 0.0, share) for y in stated)]
        if other:
            return f"after a contrast it states {other[0].text}"
    return ""


def _number_directions(answer: str, reference: str, known: list[Any], share: bool) -> str:
    """Opposed direction words bound to an answer's number that states the reference's."""
    # "=fell" marks "fell to" (a level) in a number's words: a direction word all the same
    ref_stems = {stem.lstrip("=") for b in qt.bind(reference) for stem in b.labels}
    for b in qt.bind(answer):
        if not any(qt.close(b.quantity, y, 0.0, share) for y in known):
            continue
        both = qt.opposed({stem.lstrip("=") for stem in b.labels}, ref_stems)
        if both is not None:
            return f"it says both {both[0]!r} and {both[1]!r} of {b.quantity.text}"
    return ""


def _contrary_yes_no(question: str, answer: str, reference: str, ref_yes: bool) -> str:
    """Why a yes/no answer also says the opposite, or ""."""
    if len(qt.polarities_said(answer)) == 2:
        return "it says both yes and no"
    rest = qt.prepare(answer).split(None, 1)[1:]
    if (ref_yes and rest and qt.negated(rest[0]) and not qt.negated(question)
            and not qt.negated(reference)):
        return "it negates the yes it opens with"
    if qt.after_contrast(answer) and not qt.after_contrast(reference):
        return "it sets a contrast against the opening yes or no"
    return ""


def _date_rule(q: Facts, r: Facts, a: Facts) -> Verdict | None:
    """``date``: every date of the reference the question does not state (all of them when
    it states them all) must be in the answer, at the reference's precision.

    A missing one is 0, undecided when the answer states no date at all; None when none
    is missing.
    """
    full = [(i, True) for i in range(len(r.dates.full))]
    months = [(i, False) for i in range(len(r.dates.months))]
    dates = [d for d in full + months if not q.dates.has(r.dates, *d)] or full + months
    ref_dates = r.dates.describe()
    missing = [ref_dates[i if is_full else len(r.dates.full) + i]
               for i, is_full in dates if not a.dates.has(r.dates, i, is_full)]
    if not missing:
        return None
    if not a.dates:
        return Verdict(None, "date", f"the reference states {missing[0]}; the answer states "
                                     "no date that can be read")
    return Verdict(0, "date", f"the reference states {', '.join(missing)}; the answer "
                              f"states {', '.join(a.dates.describe())}")


def _key_values_said(question: str, answer: str, r: Facts, numbers: Sequence[qt.Quantity],
                     matched: Sequence[qt.Quantity]) -> Verdict:
    """The dates and numbers match: 1, or undecided when the reference also has words
    the answer lacks ("5 branches" vs "5 offices")."""
    rule = "number" if numbers else "date"
    question_words = frozenset(qt.words(question))
    answer_words = frozenset(qt.words(answer))
    residue = [w for w in qt.content_words(r.residue, question_words)
               if w not in _UNIT_WORDS and w not in answer_words
               and not qt.is_direction_word(w)]
    if residue:
        return Verdict(None, rule, f"the {rule}s match but the answer does not say "
                                   f"{' '.join(residue)!r}")
    if rule == "number":
        return Verdict(1, "number", f"the reference states {fmt_quantities(numbers)}; the "
                                    f"answer states {fmt_quantities(matched)}")
    return Verdict(1, "date", f"the reference states {', '.join(r.dates.describe())}; the "
                              "answer states the same")


def _besides(question: str, answer: str, reference: str) -> str:
    """What else the answer does beside the reference, as a reason's words, or "".

    A contrast the reference lacks ("an LSTM rather than a Transformer") or a name
    beside the reference's that may be the one the answer gives ("moved from Paris to
    London") can reverse a match.
    """
    contrast = contrasted(answer) and not contrasted(reference)
    rivals = _rivals(question, answer, reference)
    return (f"also names {' '.join(rivals[:3])!r}" if rivals else
            "also sets it against something else" if contrast else "")


def _contains(core: Sequence[str], flipped: bool, besides: str) -> Verdict:
    """``contains-reference``: 1, undecided with a negation or a rival beside it."""
    if flipped:
        return Verdict(None, "contains-reference", "the answer contains the reference but "
                                                   "also a negation")
    if besides:
        return Verdict(None, "contains-reference",
                       f"the answer contains {' '.join(core)!r} but {besides}")
    return Verdict(1, "contains-reference", f"the answer contains {' '.join(core)!r}")
