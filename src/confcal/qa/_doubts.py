"""Doubts that keep the rule judge from calling an answer correct: what else it says.

Private module of :mod:`confcal.qa.docqa`. Each function reads an answer that a rule would
call correct and returns why it may still be wrong, or "" when nothing is seen; the judge
then leaves the answer undecided. None of them makes an answer wrong.
"""

from __future__ import annotations

import re

from . import _text as qt
from ._names import names_in

# Words of a question that ask rather than say what is asked about.
_ASKING = frozenset(qt.stem(w) for w in (
    "many", "much", "long", "often", "far", "old", "kind", "type", "give", "list", "name",
    "exact", "exactly", "value", "amount", "number", "did", "does", "do", "can",
    "could", "would", "should", "will", "reported", "state", "stated", "according", "any",
    "also", "not", "no",
))
_CLAUSE_RE = re.compile(r"[.:](?!\d)|[;!?\n|]|,\s|\s-\s|"
                        r"\b(?:and|while|whereas|but|however|although)\b", re.IGNORECASE)
_SENTENCE_RE = re.compile(r"[.:](?!\d)|[;!?\n|]")
# A name with a number ("top-1", "ResNet-50", "GPT-4", "Tier 2")
_NUMBERED_RE = re.compile(r"\b([A-Za-z][A-Za-z]*)[- ]?(\d+(?:\.\d+)?)\b")
_NUMBERED_NAMES = frozenset({"top", "tier", "phase", "stage", "level", "class", "grade",
                             "type", "round", "step", "gpt", "llama", "resnet", "vit", "bert",
                             "article", "section", "rule", "schedule", "chapter", "part",
                             "figure", "table", "q", "h", "fy"})


def _stems(text: str) -> set[str]:
    """Stems of the content words of a text, numbers left out."""
    return {qt.stem(w) for w in qt.content_words(text) if not w[0].isdigit()
            and not w.lstrip("-")[:1].isdigit()}


# Words that exclude one another: two different words of one group name different things
# of the same kind (a rank, a party to a case, an officer, ...).
RIVAL_GROUPS: tuple[frozenset[str], ...] = tuple(frozenset(qt.stem(w) for w in g) for g in (
    ("best", "worst", "highest", "lowest", "largest", "smallest", "biggest", "most", "least",
     "first", "last", "second", "third", "top", "bottom", "maximum", "minimum", "higher",
     "lower", "better", "worse", "greater", "smaller", "larger", "won", "win", "winner",
     "lost", "loser", "runner"),
    ("plaintiff", "defendant", "claimant", "respondent", "appellant", "petitioner",
     "prosecution", "defence", "defense"),
    ("buyer", "seller", "vendor", "purchaser", "acquirer", "target"),
    ("lender", "borrower", "creditor", "debtor"),
    ("debt", "cash"), ("asset", "assets", "liability", "liabilities"),
    ("strength", "strengths", "limitation", "limitations", "weakness", "weaknesses",
     "advantage", "disadvantage"),
    ("ceo", "cfo", "coo", "cto", "chair", "chairman", "chairwoman", "president", "secretary",
     "treasurer"),
    ("table", "tables", "figure", "figures", "chart", "charts", "page", "pages", "section",
     "sections", "appendix", "appendices", "equation", "equations"),
    ("approved", "rejected", "passed", "vetoed", "defeated"),
    ("completed", "cancelled", "canceled", "abandoned", "called", "terminated", "withdrawn",
     "postponed", "suspended"),
    ("upheld", "overturned", "reversed", "quashed", "dismissed"),
    ("guilty", "acquitted", "innocent"),
    ("diluted", "basic"), ("gross", "net"), ("nominal", "real"),
    ("statutory", "effective"), ("before", "after"), ("pre", "post"),
))


_NOT_SUPERLATIVE = frozenset({
    "interest", "forest", "harvest", "protest", "contest", "request", "suggest", "invest",
    "honest", "modest", "manifest", "digest", "arrest", "chest", "guest", "nest", "west",
    "rest", "test", "pest", "vest", "attest", "detest", "conquest", "inquest", "behest",
})


def _superlative(word: str) -> bool:
    """A superlative ("fastest", "slowest", "latest"), as far as a suffix tells."""
    return len(word) >= 6 and word.endswith("est") and word not in _NOT_SUPERLATIVE


def _rivals(dropped: set[str], added: set[str], names: set[str]) -> tuple[str, str] | None:
    """A dropped word and an added word that name different things of one kind: both in
    one of :data:`RIVAL_GROUPS`, both superlatives ("fastest" for "slowest"), or both
    names (``names``: the stems of the question's and the answer's capitalised words)."""
    for d in sorted(dropped):
        for a in sorted(added):
            if (_names_rival(d, a, names) or _superlative(d) and _superlative(a)
                    or any(d in g and a in g for g in RIVAL_GROUPS)):
                return d, a
    return None


def _names_rival(d: str, a: str, names: set[str]) -> bool:
    """Two names of at least three letters neither of which begins the other ("Germany"
    and "France"; not "En" and "English")."""
    return (d in names and a in names and min(len(d), len(a)) >= 3
            and not a.startswith(d) and not d.startswith(a))


_CAPITALISED_RE = re.compile(r"\b[A-Z][\w'-]*")


def _states_reference(clause: str, reference: str, share: bool) -> bool:
    """Does the clause state the reference: one of its numbers, or for a reference with
    none, one of its content words?"""
    numbers = qt.quantities_in(reference)
    if numbers:
        return any(qt.close(x, y, 0.0, share) for x in qt.quantities_in(clause)
                   for y in numbers)
    return bool(set(qt.content_words(reference)) & set(qt.words(clause)))


def restated_otherwise(question: str, answer: str, reference: str) -> str:
    """The answer restates the question around the reference but with a rival word.

    In the clause of the answer that states the reference, or for a reference without
    numbers in its sentence too ("Daniel Kim came second in the 2022 election" for "Who
    won the 2022 election?"), a word of the question is missing ("won") and a word of the
    same kind that neither the question nor the reference has takes its place ("second"):
    the answer says something else of the reference than what was asked ("the lowest
    growth" for the highest, "the plaintiff" for the defendant, "the CFO's pay" for the
    CEO's, "Germany" for "France"). Returns the two words as a reason, or "".
    """
    asked = _stems(question) - _ASKING
    ref = _stems(reference)
    # the answer's capitalised words, a sentence's first too ("Germany's economy grew")
    names = {qt.stem(w) for n in names_in(question) + _CAPITALISED_RE.findall(answer)
             for w in qt.words(n)}
    text = qt.prepare(answer)
    pieces = _CLAUSE_RE.split(text)
    if not qt.quantities_in(reference):  # a name's sentence too ("X was shortlisted but
        pieces += _SENTENCE_RE.split(text)  # lost the tender"); a number's words are bound
    for clause in pieces:
        if not _states_reference(clause, reference, qt.share_question(question)):
            continue
        said = _stems(qt.strip_quantities(clause))  # "EUR 3 million" is the number's
        pair = _rivals(asked - ref - said, said - asked - ref, names) or _other_numbered(
            question, clause, reference)
        if pair:
            return f"it says {pair[1]!r} where the question says {pair[0]!r}"
    return ""


def _numbered(text: str) -> set[tuple[str, str]]:
    return {(m.group(1).casefold(), m.group(2)) for m in _NUMBERED_RE.finditer(text)
            if m.group(1).casefold() in _NUMBERED_NAMES}


def _other_numbered(question: str, clause: str, reference: str) -> tuple[str, str] | None:
    """The question's numbered name ("top-1") said with another number in the clause
    ("top-5"), the reference having neither."""
    asked, said, ref = _numbered(question), _numbered(clause), _numbered(reference)
    for name, n in sorted(asked - said - ref):
        other = sorted(m for k, m in said - asked - ref if k == name)
        if other:
            return f"{name}-{n}", f"{name}-{other[0]}"
    return None


_PREPOSITION_RE = re.compile(r"\b(?:in|on|at|by|for|of|from|during|between|after|before|"
                             r"since|until|over|under|with|within|to)\b", re.IGNORECASE)


def no_restates_question(question: str, answer: str) -> str:
    """For a "no" reference: the answer opens with no but then says, with no negation,
    what the question asks ("No. The bill was rejected 52-48" for "Was the bill rejected
    by the Senate?", "No. She was replaced by the CFO" for "Was the CEO replaced during
    the year?"): the question's claim is its words before the first preposition, and the
    answer says its last word and at least half of them."""
    rest = qt.prepare(answer).split(None, 1)[1:]
    if not rest or qt.negated(rest[0]):
        return ""
    claim = [qt.stem(w) for w in qt.content_words(_PREPOSITION_RE.split(question)[0])
             if qt.stem(w) not in _ASKING]
    said = set(claim) & _stems(rest[0])
    if claim and claim[-1] in said and 2 * len(said) >= len(set(claim)):
        return "after the no it says what the question asks"
    return ""


def yes_no_rival(question: str, answer: str) -> str:
    """A yes or no whose words put a rival of the question's word in its place ("Yes, it
    was called off" for "Was the merger completed?")."""
    asked, said = _stems(question) - _ASKING, _stems(answer)
    pair = _rivals(asked - said, said - asked, set())
    return f"it says {pair[1]!r} where the question says {pair[0]!r}" if pair else ""


def against_question(question: str, answer: str, reference: str) -> str:
    """The answer has a direction word whose opposite the question has and the answer
    lacks ("Yes, revenue decreased" for "Did revenue increase?")."""
    said = {qt.stem(w) for w in qt.words(answer)}
    asked = {qt.stem(w) for w in qt.words(question)}
    ref = {qt.stem(w) for w in qt.words(reference)}
    # any down word of any pair is against any up word ("cut" against "increase")
    downs = {qt.stem(w) for down, _, _ in qt.DIRECTION_PAIRS for w in down}
    ups = {qt.stem(w) for _, up, _ in qt.DIRECTION_PAIRS for w in up}
    for mine, theirs in ((downs, ups), (ups, downs)):
        if said & mine and asked & theirs and not said & theirs and not ref & mine:
            return (f"it says {sorted(said & mine)[0]!r} where the question says "
                    f"{sorted(asked & theirs)[0]!r}")
    return ""


_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non")
_FAILED_RE = re.compile(r"\b(?:fail(?:ed|s)?|declin(?:ed|es)|refus(?:ed|es)|unable|"
                        r"ceased|stopped)\s+to\b", re.IGNORECASE)


def reversed_word(answer: str, reference: str) -> str:
    """A word of the reference with a negating prefix ("unconstitutional" for
    "constitutional", "non-compliant", "insignificant"), or a verb that says it did not
    happen ("failed to uphold", "declined to renew"), that the reference lacks."""
    ref_words = set(qt.words(reference))
    answer_words = qt.words(answer)
    for i, w in enumerate(answer_words):
        if w in ref_words:
            if i and answer_words[i - 1] == "non" and "non" not in ref_words:
                return f"it says 'non-{w}'"
            continue
        for p in _PREFIXES:
            if w.startswith(p) and len(w) - len(p) >= 4 and w[len(p):] in ref_words:
                return f"it says {w!r} where the reference says {w[len(p):]!r}"
    m = _FAILED_RE.search(qt.prepare(answer))
    if m and not _FAILED_RE.search(qt.prepare(reference)):
        return f"it says {' '.join(m.group(0).split())!r}"
    return ""


_UPPER = r"(?:<|=<|<=|\u2264|\b(?:up\s+to|at\s+most|no\s+more\s+than|not\s+more\s+than|" \
         r"less\s+than|fewer\s+than|under|below|a\s+maximum\s+of|maximum\s+of|max\.?))"
_LOWER = r"(?:>|>=|=>|\u2265|\b(?:at\s+least|no\s+less\s+than|not\s+less\s+than|" \
         r"no\s+fewer\s+than|more\s+than|over|above|exceeding|in\s+excess\s+of|" \
         r"a\s+minimum\s+of|minimum\s+of|min\.?))"
_TAIL = r"\s*(?:[A-Z]{0,2}[$\u20ac\u00a3\u00a5\u20b9]\s*)?$"
_UPPER_RE = re.compile(_UPPER + _TAIL, re.IGNORECASE)
_LOWER_RE = re.compile(_LOWER + _TAIL, re.IGNORECASE)


def _bound_before(text: str, start: int) -> str:
    head = text[max(0, start - 40):start]
    return "upper" if _UPPER_RE.search(head) else "lower" if _LOWER_RE.search(head) else ""


_ASKED_UPPER_RE = re.compile(r"\b(?:maximum|max|most|upper\s+limit|cap|ceiling)\b", re.I)
_ASKED_LOWER_RE = re.compile(r"\b(?:minimum|min|least|lower\s+limit|floor)\b", re.I)


def _asked_bound(question: str) -> str:
    """The bound a question asks for ("What is the maximum fine?": upper), or ""."""
    upper, lower = _ASKED_UPPER_RE.search(question), _ASKED_LOWER_RE.search(question)
    return "upper" if upper and not lower else "lower" if lower and not upper else ""


def bounds_differ(question: str, answer: str, reference: str) -> str:
    """A number of the reference stated by the answer with another bound: "at least
    $5,000" for "up to $5,000", "p > 0.05" for "p < 0.05", "under 18" for the minimum age
    18 (a question's "maximum" or "minimum" is the reference's bound when it writes
    none). A bound on one side only ("at least 312" for 312) is no doubt."""
    share = qt.share_question(question)
    answer_text, ref_text = qt.prepare(answer), qt.prepare(reference)
    asked = _asked_bound(question)
    ref = [(q, _bound_before(ref_text, s) or asked) for q, s, _ in qt.quantity_spans(ref_text)]
    for q, s, _ in qt.quantity_spans(answer_text):
        mine = _bound_before(answer_text, s)
        for y, theirs in ref:
            if qt.close(q, y, 0.0, share) and mine and theirs and mine != theirs:
                said = {"upper": "at most", "lower": "at least", "": "exactly"}
                return (f"it gives {q.text} as {said[mine]} where the reference gives "
                        f"{said[theirs]}")
    return ""


def other_dollar(question: str, answer: str, reference: str) -> str:
    """A reference amount in one currency the answer writes with a sign of several ("$2.3
    billion" for "HK$2.3 billion": "$" may be any dollar; a bare "$" is read as the US
    dollar's)."""
    share = qt.share_question(question)
    ref = qt.quantities_in(reference)
    for x in qt.quantities_in(answer):
        for y in ref:
            if (x.currency and y.currency and y.currency < x.currency
                    and y.currency != {"USD"} and qt.close(x, y, 0.0, share)):
                return f"its {x.text} may be another currency than {y.text}"
    return ""


def bracketed_amount(answer: str, reference: str) -> str:
    """An amount of the answer written in brackets by itself ("($3.2 million)",
    "$(3.2) million"), which accounts read as negative, for a reference that writes no
    brackets around it."""
    text = qt.prepare(answer)
    if re.search(r"\(\s*[$\u20ac\u00a3\u00a5]?\s*\d", qt.prepare(reference)):
        return ""
    for q, start, end in qt.quantity_spans(text):
        before, after = text[:start].rstrip(), text[end:].lstrip()
        if re.search(r"\(\s*[$\u20ac\u00a3\u00a5]?$", before) and re.match(
                r"(?:[a-z]+\s*)?\)", after):
            return f"it writes {q.text} in brackets, as accounts write a negative amount"
    return ""


_LEVEL_RE = re.compile(r"\b(?:to|at|of)\s*$", re.IGNORECASE)


def points_for_a_level(question: str, answer: str, reference: str) -> str:
    """A reference change in basis or percentage points that the answer gives as a level
    ("cut the rate to 0.25%" for 25 basis points)."""
    if not re.search(r"basis\s+points?|\bbps?\b|percentage\s+points?", reference, re.I):
        return ""
    share = qt.share_question(question)
    ref = qt.quantities_in(reference)
    text = qt.prepare(answer)
    for q, start, _ in qt.quantity_spans(text):
        if _LEVEL_RE.search(text[max(0, start - 6):start]) and any(
                qt.close(q, y, 0.0, share) for y in ref):
            return f"it gives {q.text} as a level, the reference a change"
    return ""


_QUALIFIED_RE = re.compile(
    r"\b(\d[\d,.]*)\s+(?!and\b|or\b|to\b)([a-z]+)\s+(days?|weeks?|months?|years?|hours?|"
    r"minutes?|kg|km|tonnes?|metres?|meters?|miles?)\b", re.IGNORECASE)


def qualified_unit(answer: str, reference: str) -> str:
    """A word between the answer's number and the reference's unit that the reference
    lacks ("30 business days" for 30 days, "5 nautical miles")."""
    ref_words = set(qt.words(reference))
    for m in _QUALIFIED_RE.finditer(qt.prepare(answer)):
        if m.group(2).casefold() not in ref_words and m.group(1) in qt.prepare(reference):
            return f"it says {m.group(0)!r}"
    return ""


_SHIFTED_RE = re.compile(r"\b(?:days?|weeks?|months?|years?|quarters?)\s+(?:later|earlier|"
                         r"after|afterwards|before|on|prior|thereafter)\b", re.IGNORECASE)


def shifted_date(answer: str, reference: str) -> str:
    """A date answered with a period counted from it ("announced on January 1, 2024 and
    in force six months later"): the date asked for may be the shifted one."""
    m = _SHIFTED_RE.search(qt.prepare(answer))
    if m and not _SHIFTED_RE.search(qt.prepare(reference)):
        return f"it counts {' '.join(m.group(0).split())!r} from a date"
    return ""


def tabled(question: str, answer: str, reference: str) -> str:
    """An answer laid out as a table that states numbers besides the reference's: which
    number is in which row and column is not read."""
    if sum("|" in line for line in answer.splitlines()) < 2:
        return ""
    share = qt.share_question(question)
    ref = qt.quantities_in(reference) + qt.quantities_in(question)
    other = [x for x in qt.quantities_in(answer)
             if not any(qt.close(x, y, 0.0, share) for y in ref)]
    return f"it is a table that also states {other[0].text}" if other else ""


_CONTACT_RE = re.compile(r"\S+@\S+\.\w+|https?://\S+|www\.\S+", re.IGNORECASE)


def decline_names(question: str, answer: str) -> str:
    """A declining answer that also names something the question does not (a name, an
    e-mail address, a web address): it may answer after all ("The report does not mention
    any auditor other than KPMG")."""
    known = set(qt.words(question))
    named = [w for w in names_in(answer) if not set(qt.words(w)) <= known]
    if named:
        return f"the answer declines but also names {named[0]!r}"
    m = _CONTACT_RE.search(answer)
    if m:
        return f"the answer declines but also gives {m.group(0)!r}"
    return ""


def other_dates(question: str, answer: str, reference: str, dayfirst: bool) -> str:
    """The answer states dates besides the reference's and the question's: the
    reference's may be given for another event ("signed in May 2020 and in force from June
    2021" for when it came into force)."""
    said = set(qt.dates_in(answer, dayfirst=dayfirst).describe())
    known = (set(qt.dates_in(reference, dayfirst=dayfirst).describe())
             | set(qt.dates_in(question, dayfirst=dayfirst).describe()))
    other = sorted(d for d in said - known
                   if not any(k.startswith(d) or d.startswith(k) for k in known))
    # a year by itself too ("began in June 2015; it opened in 2018")
    years = {k[:4] for k in known} | {x.text for x in qt.quantities_in(question) if x.is_year}
    other += sorted(x.text for x in qt.quantities_in(qt.dates_in(answer).rest)
                    if x.is_year and x.text not in years)
    return f"it also states {other[0]}" if other else ""


def other_option(question: str, answer: str, reference: str) -> str:
    """The question offers numbers to choose from ("2015 or 2016?"), the reference is one
    of them and the answer states another too ("2015 or 2016: it was 2015")."""
    asked = qt.quantities_in(question)
    ref = qt.quantities_in(reference)
    if not asked or not ref or not all(any(qt.close(y, x, 0.0, False) for x in asked)
                                       for y in ref):
        return ""
    for x in qt.quantities_in(answer):
        if not any(qt.close(x, y, 0.0, False) for y in ref) and any(
                qt.close(x, z, 0.0, False) for z in asked):
            return f"it also states {x.text}, another of the question's"
    return ""


def doubt(question: str, answer: str, reference: str, ref_yes: bool | None, rule: str,
          dayfirst: bool = False) -> str:
    """Why an answer a rule calls correct (``rule``) may say something else, or "".

    For a yes/no reference: a direction word against the question's, and after a "no"
    the question's claim said again. For other references: a reference word reversed by a
    prefix or a verb, a number with another bound, another date (for ``date``), another
    of the question's options, or the question restated around the reference with other
    words.

    >>> doubt("Who won the race?", "Lena Park came second.", "Lena Park", None, "contains")
    "it says 'second' where the question says 'won'"
    >>> doubt("Who won the race?", "Lena Park won.", "Lena Park", None, "contains")
    ''
    >>> doubt("Was the bill rejected?", "No. It was rejected 52-48.", "No", False, "yes-no")
    'after the no it says what the question asks'
    """
    if ref_yes is not None:
        return (against_question(question, answer, reference)
                or yes_no_rival(question, answer)
                or ("" if ref_yes else no_restates_question(question, answer)))
    return (reversed_word(answer, reference)
            or bounds_differ(question, answer, reference)
            or other_dollar(question, answer, reference)
            or bracketed_amount(answer, reference)
            or points_for_a_level(question, answer, reference)
            or qualified_unit(answer, reference)
            or tabled(question, answer, reference)
            or (shifted_date(answer, reference) if rule == "date" else "")
            or (other_dates(question, answer, reference, dayfirst) if rule == "date" else "")
            or other_option(question, answer, reference)
            or restated_otherwise(question, answer, reference))
