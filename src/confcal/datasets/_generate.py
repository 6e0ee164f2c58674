"""Generate the bundled demo corpus: synthetic FCC-style invoices and simulated extractions.

Run ``python -m confcal.datasets._generate`` to rewrite ``src/confcal/datasets/data/``, or
``python -m confcal.datasets._generate --out DIR`` to write the same files elsewhere. The
output is reproducible byte for byte: the test suite regenerates it into a temporary folder
and compares the bytes with the shipped files.

Everything here is **synthetic**. No real invoice, advertiser or agency is used; the names
are invented, and the "degraded variants" are simulated by raising error rates, not by
rendering and degrading images (the corpus holds no images).

What is simulated
-----------------
* 75 invoices in the :data:`confcal.scoring.presets.FCC_INVOICE` schema: agency, advertiser, payment
  terms (absent on some invoices), 5-40 line items (flight dates, air days, program, rate)
  and amounts that add up (gross = sum of rates, 15% agency commission, net = gross -
  commission), in cents so they are exact.
* Four tiers, ``clean`` and three degraded variants ``mild``, ``moderate``, ``high``; each
  tier raises the error rate of every extractor on every field.
* Four extractors whose confidence behaves like the families ConfBench compares (see
  ``MODELS``). Every extractor errs on its own draws, but all of them find the same
  invoices and the same cells hard (a shared per-invoice and per-cell difficulty).
* Errors a reader makes: OCR-garbled and confused text, digit swaps, dropped digits and
  shifted decimals, shifted and day/month-swapped dates, values left out (a null with a
  confidence), missed line items (FN rows without a confidence) and invented ones (a total
  row read as an item, a duplicated item; FA rows that keep their confidence). Correct
  values are often reformatted ("$1,250.00" for "1250.00", "10/07/2024" for "2024-10-07") or
  carry a harmless one-letter typo, which the comparators must see through.

Every intended error is checked to be an error under the FCC_INVOICE comparators and every
intended correct value to be correct, with a margin against the near-exact text threshold
0.9 (a wrong text is a near miss with similarity within [0.6, 0.85] -- WOA credits it, F1
does not, as in the paper -- or another value at <= 0.4; a harmless typo keeps >= 0.93;
amounts off by more than 1.5% against the 1% tolerance), so the
``sim-calibrated`` extractor's confidence is, up to line-item pairing and invented items,
the probability of being scored correct.

Reproducibility
---------------
Randomness comes only from :meth:`random.Random.random` seeded with strings, the one part of
the standard library whose sequence Python guarantees across versions (``randint``,
``choice`` and ``gauss`` are not guaranteed); integer draws, choices and normal variates are
built on it here. Each (invoice), (invoice, tier) and (invoice, tier, extractor) has its own
stream, so no unit's draws depend on the order of generation. JSON is written with fixed
separators and key order, gzip with a zero timestamp and no file name.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import io
import json
import math
import random
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

SEED = "confcal-demo-v1"
N_INVOICES = 75
DATA_DIR = Path(__file__).with_name("data")

TIERS: dict[str, dict[str, Any]] = {
    # error-logit offset of the tier, and the simulated degradation it stands for
    "clean": {"offset": -4.6, "missed_item": 0.004, "invented_item": 0.03,
              "degradations": []},
    "mild": {"offset": -3.8, "missed_item": 0.012, "invented_item": 0.07,
             "degradations": ["jpeg quality 75", "gaussian blur sigma 0.5"]},
    "moderate": {"offset": -2.9, "missed_item": 0.03, "invented_item": 0.14,
                 "degradations": ["jpeg quality 50", "gaussian blur sigma 1.0",
                                  "salt-and-pepper noise 1%", "rotation up to 1 degree"]},
    "high": {"offset": -1.9, "missed_item": 0.07, "invented_item": 0.28,
             "degradations": ["jpeg quality 30", "gaussian blur sigma 1.5",
                              "salt-and-pepper noise 3%", "rotation up to 3 degrees",
                              "fax-like binarization"]},
}

MODELS: dict[str, dict[str, Any]] = {
    "sim-calibrated": {
        "pipeline": "ocr+llm", "confidence_source": "calibrated probability",
        "form": "value", "offset": 0.0, "style": "plain",
        "about": "confidence is the probability of being right given the invoice, field and "
                 "tier (not the cell): well calibrated, moderate ranking",
    },
    "sim-overconfident": {
        "pipeline": "vlm", "confidence_source": "self-reported score",
        "form": "value", "offset": 0.5, "style": "display",
        "about": "says 0.93-0.999 whatever happens: overconfident, weak ranking",
    },
    "sim-verbalized": {
        "pipeline": "vlm", "confidence_source": "verbalized top-3",
        "form": "candidates", "offset": 0.2, "style": "display",
        "about": "verbalized top-K with coarse, tied probabilities 0.9 / 0.95 / 0.99; now "
                 "and then it gives a bare value without any confidence",
    },
    "sim-logprob": {
        "pipeline": "ocr+llm", "confidence_source": "token log-probability",
        "form": "value", "offset": -0.3, "style": "plain",
        "about": "a sharp function of the true probability of being right (the best "
                 "ranking), pushed towards 1: poorly calibrated",
    },
}

FIELD_OFFSET = {
    "Agency": 0.0, "Advertiser": 0.2, "GrossTotal": -0.3, "PaymentTerms": 0.3,
    "AgencyCommission": 0.2, "NetAmountDue": 0.0, "StartDate": -0.2, "EndDate": -0.1,
    "Days": 0.4, "Description": 0.3, "Rate": 0.0,
}
DOC_SCALE = 0.6  # invoice-level difficulty, shared by every tier and extractor
CELL_SCALE = 1.4  # cell-level difficulty (a smudge), shared by every extractor
OWN_SCALE = 1.0  # the extractor's own noise on a cell

AGENCIES = [
    "Blue Harbor Media", "Crossroads Media Buying", "Summit Political Strategies",
    "Granite State Media Group", "Red Mesa Communications", "Lakeshore Advertising Partners",
    "Pioneer Campaign Media", "Northstar Media Placement", "Capitol Square Strategies",
    "Tidewater Media Associates", "Prairie Wind Communications", "Silver Line Media LLC",
    "Keystone Buying Group", "Bayou Media Strategies", "Cascade Political Media",
    "Heartland Media Services", "Old Mill Media Partners", "Sierra Vista Media Group",
    "Great Lakes Placement Co.", "Harborview Advocacy Media",
]
FIRST_NAMES = ["Jane", "Marcus", "Elena", "Robert", "Priya", "Thomas", "Angela", "David",
               "Maria", "Kevin", "Laura", "Samuel", "Grace", "Daniel", "Rosa", "Victor"]
LAST_NAMES = ["Whitaker", "Delgado", "Okafor", "Brennan", "Lindqvist", "Hargrove", "Nakamura",
              "Castellanos", "Pruitt", "Abernathy", "Villanueva", "McAllister", "Sorensen",
              "Thibodeaux", "Kowalczyk", "Ashworth"]
OFFICES = ["Congress", "Senate", "Governor", "State Senate", "State Assembly", "Mayor",
           "County Commission", "Attorney General"]
ISSUE_COMMITTEES = [
    "Citizens for Safer Roads", "Protect Our Water PAC", "Yes on Measure 12",
    "Coalition for Affordable Housing", "No on Proposition 7", "Working Families Forward",
    "Taxpayers for Common Sense Action", "Friends of the State Parks",
]
PAYMENT_TERMS = ["Net 30", "Net 30 days", "Net 15", "Due upon receipt", "Cash in advance",
                 "Payment due prior to air"]
PROGRAMS = [  # (name, air time, typical rate in dollars)
    ("Early Morning News", "5A-6A", 180), ("Morning News", "6A-7A", 350),
    ("Good Day Live", "7A-9A", 420), ("Daytime Rotator", "9A-4P", 120),
    ("News at Noon", "12P-1230P", 260), ("Evening News", "5P-6P", 650),
    ("Evening News", "6P-630P", 900), ("Prime Access", "7P-8P", 1100),
    ("Primetime Rotator", "8P-11P", 1600), ("Late News", "11P-1135P", 800),
    ("Late Night", "1135P-1235A", 300), ("Weekend Morning News", "7A-9A", 280),
    ("Sunday Politics", "10A-11A", 450), ("College Football Pregame", "11A-12P", 1900),
    ("Local Sports Wrap", "1105P-1135P", 380), ("Game Show Block", "7P-8P", 1250),
]
WEEKDAYS = ["M", "Tu", "W", "Th", "F", "Sa", "Su"]
GRID = "MTWTFSS"
CONFUSABLE_DIGITS = {"0": "8", "1": "7", "3": "8", "5": "6", "6": "5", "7": "1", "8": "3",
                     "9": "4", "2": "7", "4": "9"}
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


# ------------------------------------------------------------------------- random draws
class _Stream:
    """Draws built on ``random.Random.random`` alone (its sequence is guaranteed stable)."""

    def __init__(self, *key: Any) -> None:
        self._random = random.Random("/".join(map(str, (SEED, *key)))).random

    def uniform(self, low: float = 0.0, high: float = 1.0) -> float:
        return low + (high - low) * self._random()

    def chance(self, p: float) -> bool:
        return self._random() < p

    def integer(self, low: int, high: int) -> int:
        """Uniform on low..high inclusive."""
        return low + min(int(self._random() * (high - low + 1)), high - low)

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.integer(0, len(items) - 1)]

    def normal(self) -> float:
        # Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]
        u, v = 1.0 - self._random(), self._random()
        return math.sqrt(-2.0 * math.log(u)) * math.cos(2.0 * math.pi * v)

    def shuffle(self, items: list[Any]) -> None:
        for i in range(len(items) - 1, 0, -1):  # Fisher-Yates
            j = self.integer(0, i)
            items[i], items[j] = items[j], items[i]


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


# E[sigmoid(a + s Z)], Z standard normal, by the midpoint rule on [-8, 8] with the normal
# density renormalized over the grid (the rule converges geometrically for smooth
# integrands: the error is far below the 4 decimals written), in plain
# Python so that no numpy routine, whose last bits may change between versions, enters
# the generated bytes.
_GRID = [-8.0 + (i + 0.5) * 16.0 / 160 for i in range(160)]
_DENSITY = [math.exp(-0.5 * z * z) for z in _GRID]
_TOTAL = math.fsum(_DENSITY)


@functools.cache  # one value per (invoice, tier, extractor, field)
def _mean_sigmoid(a: float, s: float) -> float:
    """E[sigmoid(a + s Z)] for Z ~ N(0, 1)."""
    return math.fsum(w * _sigmoid(a + s * z) for z, w in zip(_GRID, _DENSITY, strict=True)) / _TOTAL


# ------------------------------------------------------------------------ the invoices
def _cents(amount: int) -> str:
    return f"{amount // 100}.{amount % 100:02d}"


def _days_text(start: date, end: date, grid: bool) -> str:
    days = sorted({(start + timedelta(d)).weekday() for d in range((end - start).days + 1)})
    if grid:  # the seven-letter air pattern some stations print: "MTWTF--"
        return "".join(GRID[d] if d in days else "-" for d in range(7))
    if len(days) == 1:
        return WEEKDAYS[days[0]]
    return f"{WEEKDAYS[start.weekday()]}-{WEEKDAYS[end.weekday()]}"


def _advertiser(s: _Stream) -> str:
    if s.chance(0.3):
        return s.choice(ISSUE_COMMITTEES)
    name = f"{s.choice(FIRST_NAMES)} {s.choice(LAST_NAMES)}"
    office = s.choice(OFFICES)
    return s.choice([f"{name} for {office}", f"Committee to Elect {name}",
                     f"Friends of {name}"])


def make_invoice(index: int) -> dict[str, Any]:
    """The ground truth of invoice ``index`` (1-based)."""
    s = _Stream("invoice", index)
    # 5-40 items, most invoices short: 5 + 35 u^1.8 has mean ~17
    n_items = 5 + int(35 * s.uniform() ** 1.8 + 0.5)
    window = date(2024, s.choice([9, 10, 10, 11]), 1) + timedelta(s.integer(0, 9))
    grid = s.chance(0.35)
    upper = s.chance(0.5)
    items, gross = [], 0
    for _ in range(n_items):
        program, air, rate = s.choice(PROGRAMS)
        start = window + timedelta(s.integer(0, 20))
        end = start + timedelta(s.choice([0, 0, 2, 4, 4, 6]))
        dollars = max(25, int(rate * math.exp(0.35 * s.normal()) / 25 + 0.5) * 25)
        cents = dollars * 100 + (50 if s.chance(0.1) else 0)
        gross += cents
        description = f"{program} {air}"
        items.append({
            "StartDate": start.isoformat(),
            "EndDate": end.isoformat(),
            "Days": _days_text(start, end, grid),
            "Description": description.upper() if upper else description,
            "Rate": _cents(cents),
        })
    commission = (gross * 15 + 50) // 100  # 15% agency commission, rounded to the cent
    return {
        "Agency": s.choice(AGENCIES),
        "Advertiser": _advertiser(s),
        "GrossTotal": _cents(gross),
        "PaymentTerms": None if s.chance(0.12) else s.choice(PAYMENT_TERMS),
        "AgencyCommission": _cents(commission),
        "NetAmountDue": _cents(gross - commission),
        "LineItems": items,
    }


# ------------------------------------------------------------------- reading errors
def _similarity(a: str, b: str) -> float:
    """The FCC_INVOICE Text similarity on ASCII text: casefold, collapse whitespace."""
    return Levenshtein.normalized_similarity(" ".join(a.casefold().split()),
                                             " ".join(b.casefold().split()))


def _garble(s: _Stream, text: str, share: float) -> str:
    """OCR noise: replace a share of characters by ones absent from the text."""
    used = set(text.casefold())
    pool = [c for c in "0123456789#%&@*qxzjvk" if c not in used] or ["~"]
    return "".join(s.choice(pool) if ch != " " and s.chance(share) else ch for ch in text)


def near_miss(s: _Stream, truth: str) -> str | None:
    """A wrong value a few characters away: similarity within [0.6, 0.85].

    "Net 30" read as "Net 60": close in similarity (WOA gives it most of the credit) and
    wrong under the near-exact threshold 0.9, as the ConfBench paper's F1 counts it. Digits
    are replaced by other digits and letters by other letters, so the value still looks
    like one; None when the text is too short to land in the band.
    """
    positions = [i for i, ch in enumerate(truth) if ch.isalnum()]
    low, high = math.ceil(0.15 * len(truth)), min(math.floor(0.4 * len(truth)), len(positions))
    if low < 1 or low > high:
        return None
    chars = list(truth)
    picks = list(positions)
    s.shuffle(picks)
    for i in picks[: s.integer(low, high)]:
        pool = "0123456789" if chars[i].isdigit() else "abcdefghijklmnopqrstuvwxyz"
        pool = pool.replace(chars[i].lower(), "")
        new = s.choice(pool)
        chars[i] = new.upper() if chars[i].isupper() else new
    missed = "".join(chars)
    return missed if 0.6 <= _similarity(missed, truth) <= 0.85 else None


def wrong_text(s: _Stream, truth: str, others: Sequence[str]) -> str:
    """A text a scorer must call wrong: a near miss (similarity within [0.6, 0.85]) or
    another value (similarity <= 0.4), against the near-exact threshold 0.9."""
    kind = s.uniform()
    if kind < 0.75:  # a near miss, the error that WOA credits and F1 does not
        missed = near_miss(s, truth)
        if missed is not None:
            return missed
    if kind < 0.9 and others:  # another value of the same kind: a confusion
        for _ in range(3):
            other = str(s.choice(others))
            if _similarity(other, truth) <= 0.4:
                return other
    if kind < 0.95 and len(truth) >= 10:  # a cut-off read
        cut = truth[: max(1, len(truth) // 4)]
        if _similarity(cut, truth) <= 0.4:
            return cut
    for share in (0.7, 0.85, 1.0):
        garbled = _garble(s, truth, share)
        if _similarity(garbled, truth) <= 0.4:
            return garbled
    # every non-space character replaced by one absent from the text: no character aligns
    return _garble(s, truth.replace(" ", "x"), 1.01)


def close_text(s: _Stream, truth: str) -> str:
    """A harmless misreading: right under the near-exact threshold 0.9, with similarity
    >= 0.93 (a one-letter typo in fifteen characters or more), or a change of case."""
    if len(truth) >= 15 and s.chance(0.5):
        i = s.integer(0, len(truth) - 1)
        typo = truth[:i] + ("l" if truth[i] != "l" else "i") + truth[i + 1:]
        if _similarity(typo, truth) >= 0.93:
            return typo
    return truth.lower() if s.chance(0.5) else truth.upper()


def _differs(a: int, b: int) -> bool:
    """More than 1.5% apart (the FCC_INVOICE tolerance is 1%)."""
    return 200 * abs(a - b) > 3 * max(abs(a), abs(b))


def wrong_amount(s: _Stream, truth: int, others: Sequence[int]) -> int:
    """An amount in cents that a 1% tolerance rejects."""
    digits = str(truth // 100)
    tries: list[Callable[[], int]] = []
    if len(digits) >= 2:
        def swap() -> int:
            i = s.integer(0, len(digits) - 2)
            d = digits[:i] + digits[i + 1] + digits[i] + digits[i + 2:]
            return int(d) * 100 + truth % 100

        def drop() -> int:
            i = s.integer(0, len(digits) - 1)
            return int(digits[:i] + digits[i + 1:]) * 100 + truth % 100
        tries += [swap, drop]

    def ocr() -> int:
        d = digits[0]
        return int(CONFUSABLE_DIGITS[d] + digits[1:]) * 100 + truth % 100

    def shift() -> int:
        return truth * 10 if s.chance(0.5) else truth // 10

    def neighbour() -> int:
        return int(s.choice(others)) if others else truth * 10
    tries += [ocr, shift, neighbour]
    for _ in range(8):
        value = s.choice(tries)()
        if _differs(value, truth):
            return value
    return truth * 10 + 100  # ten times and a dollar: never within 1.5%


def wrong_date(s: _Stream, truth: date, other: date | None) -> tuple[date, bool]:
    """A different calendar day; True when it must be printed day-first (a swap)."""
    kind = s.uniform()
    if kind < 0.25 and truth.day <= 12 and truth.day != truth.month:
        return truth, True  # printed DD/MM, read MM/DD: another day
    if kind < 0.4 and other is not None and other != truth:
        return other, False
    if kind < 0.5 and (truth.month, truth.day) != (2, 29):
        return truth.replace(year=truth.year - 1), False
    shift = s.choice([-7, -3, -2, -1, 1, 1, 2, 3, 6, 7])
    return truth + timedelta(shift), False


def format_amount(s: _Stream, cents: int, style: str) -> Any:
    """Cents as a predicted amount; 'display' readers copy the printed form."""
    if style == "plain":
        return _cents(cents) if s.chance(0.8) else cents / 100
    form = s.uniform()
    dollars = f"{cents // 100:,}"
    if form < 0.5:
        return f"${dollars}.{cents % 100:02d}"
    if form < 0.8:
        return f"{dollars}.{cents % 100:02d}"
    return cents // 100 if cents % 100 == 0 else cents / 100


def format_date(s: _Stream, day: date, style: str, swapped: bool = False) -> str:
    if swapped:
        return f"{day.day:02d}/{day.month:02d}/{day.year}"
    form = s.uniform()
    if style == "plain" or form < 0.4:
        return day.isoformat()
    if form < 0.8:
        return f"{day.month:02d}/{day.day:02d}/{day.year}"
    return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


# --------------------------------------------------------------------- the extractors
class _Cell:
    """One leaf to predict: its kind, the truth, and the shared difficulty."""

    def __init__(self, field: str, kind: str, truth: Any, hardness: float) -> None:
        self.field, self.kind, self.truth, self.hardness = field, kind, truth, hardness


def _confidence(model: str, s: _Stream, known: float, full: float) -> float:
    """The extractor's confidence that its value is right.

    ``known`` is the error logit without the cell's own difficulty and the extractor's
    noise (what a calibrated reader can know), ``full`` the error logit itself.
    """
    if model == "sim-calibrated":
        sd = math.sqrt(CELL_SCALE ** 2 + OWN_SCALE ** 2)
        return 1.0 - _mean_sigmoid(known, sd)
    if model == "sim-overconfident":
        # a vague sense of the invoice's difficulty, blurred by noise, near the top
        p = 1.0 - _sigmoid(known + 1.2 * s.normal())
        return min(0.999, 0.93 + 0.07 * p ** 0.5 + 0.01 * s.uniform())
    if model == "sim-logprob":
        p = 1.0 - _sigmoid(full)
        return _sigmoid(3.0 * _logit(min(max(p, 1e-9), 1 - 1e-9)) + 3.0)
    # verbalized: the model's own sense of p, noisy, said in three coarse words
    p = 1.0 - _sigmoid(full + 0.6 * s.normal())
    return 0.99 if p > 0.97 else 0.95 if p > 0.88 else 0.9


def _leaf(model: str, s: _Stream, value: Any, confidence: float, alternatives: list[Any]
          ) -> Any:
    if MODELS[model]["form"] == "value":
        return {"value": value, "confidence": round(confidence, 4)}
    if s.chance(0.015):  # a bare value: this leaf reaches the table without a confidence
        return value
    # The top probability is the coarse word itself; the runners-up share what is left.
    alternatives = [alt for alt in alternatives if alt != value]
    rest = {0.99: [0.01], 0.95: [0.05], 0.9: [0.07, 0.03]}[confidence][: len(alternatives)]
    return {"candidates": [{"value": value, "probability": confidence}]
            + [{"value": alt, "probability": p} for alt, p in zip(alternatives, rest, strict=True)]}


def _predict_cell(model: str, s: _Stream, cell: _Cell, error: bool, context: dict[str, Any]
                  ) -> tuple[Any, list[Any]]:
    """(predicted value, alternative values for a top-K answer).

    A right value's runner-up is a plausible misreading, made only for the top-K form.
    """
    style = MODELS[model]["style"]
    topk = MODELS[model]["form"] == "candidates"
    truth = cell.truth
    if truth is None:  # nothing to read: a right answer is null, a wrong one invented
        invented = s.choice(PAYMENT_TERMS)
        return (invented, [None]) if error else (None, [invented])
    if error and s.chance(0.15):  # left out, but with a confidence: a confident wrong null
        return None, [truth]
    if cell.kind == "text":
        others = context["texts"].get(cell.field, [])
        if error:
            return wrong_text(s, truth, others), [truth]
        value = truth if s.chance(0.85) else close_text(s, truth)
        return value, [wrong_text(s, truth, others)] if topk else []
    if cell.kind == "amount":
        cents = round(float(truth) * 100)
        others = [a for a in context["amounts"] if a != cents]
        if error:
            return format_amount(s, wrong_amount(s, cents, others), style), [truth]
        value = format_amount(s, cents, style)
        return value, [format_amount(s, wrong_amount(s, cents, others), style)] if topk else []
    day = date.fromisoformat(truth)
    other = context.get("other_date")
    if error:
        wrong, swapped = wrong_date(s, day, other)
        return format_date(s, wrong, style, swapped), [truth]
    value = format_date(s, day, style)
    if not topk:
        return value, []
    wrong, swapped = wrong_date(s, day, other)
    return value, [format_date(s, wrong, style, swapped)]


def _error_logits(tier: str, model: str, field: str, doc_level: float, cell: float,
                  own: float) -> tuple[float, float]:
    known = TIERS[tier]["offset"] + MODELS[model]["offset"] + FIELD_OFFSET[field] + doc_level
    return known, known + cell + own


def predict_invoice(index: int, truth: dict[str, Any], tier: str, model: str
                    ) -> dict[str, Any]:
    """The prediction of ``model`` on invoice ``index`` at degradation ``tier``."""
    shared = _Stream("variant", index, tier)  # the degraded page, same for every extractor
    s = _Stream("prediction", index, tier, model)
    doc_level = DOC_SCALE * _Stream("invoice-difficulty", index).normal() + 0.02 * (
        len(truth["LineItems"]) - 17)
    items = truth["LineItems"]
    context: dict[str, Any] = {
        "texts": {
            # a confusion reads another name of the same kind, or the neighbouring field
            "Agency": AGENCIES + [truth["Advertiser"]],
            "Advertiser": ISSUE_COMMITTEES + [truth["Agency"]],
            "PaymentTerms": PAYMENT_TERMS,
            "Description": sorted({it["Description"] for it in items}),
            "Days": sorted({it["Days"] for it in items}),
        },
        "amounts": [round(float(truth[f]) * 100) for f in
                    ("GrossTotal", "AgencyCommission", "NetAmountDue")]
        + [round(float(it["Rate"]) * 100) for it in items],
    }

    def predict(field: str, kind: str, value: Any, hardness: float, extra: dict[str, Any]
                ) -> Any:
        known, full = _error_logits(tier, model, field, doc_level, CELL_SCALE * hardness,
                                    OWN_SCALE * s.normal())
        error = s.chance(_sigmoid(full))
        confidence = _confidence(model, s, known, full)
        predicted, alternatives = _predict_cell(model, s, _Cell(field, kind, value, hardness),
                                                error, {**context, **extra})
        return _leaf(model, s, predicted, confidence, alternatives)

    document: dict[str, Any] = {}
    for field, kind in (("Agency", "text"), ("Advertiser", "text"), ("GrossTotal", "amount"),
                        ("PaymentTerms", "text"), ("AgencyCommission", "amount"),
                        ("NetAmountDue", "amount")):
        document[field] = predict(field, kind, truth[field], shared.normal(), {})

    rates = TIERS[tier]
    predicted_items = []
    for item in items:
        hardness = [shared.normal() for _ in range(5)]
        if s.chance(rates["missed_item"] * (1.5 if MODELS[model]["pipeline"] == "vlm" else 1.0)):
            continue  # a missed line item: its truth cells become FN rows
        start, end = date.fromisoformat(item["StartDate"]), date.fromisoformat(item["EndDate"])
        predicted_items.append({
            "StartDate": predict("StartDate", "date", item["StartDate"], hardness[0],
                                 {"other_date": end}),
            "EndDate": predict("EndDate", "date", item["EndDate"], hardness[1],
                               {"other_date": start}),
            "Days": predict("Days", "text", item["Days"], hardness[2], {}),
            "Description": predict("Description", "text", item["Description"], hardness[3], {}),
            "Rate": predict("Rate", "amount", item["Rate"], hardness[4], {}),
        })
    while s.chance(rates["invented_item"]):
        predicted_items.append(_invented_item(s, model, truth))
    if MODELS[model]["pipeline"] == "vlm" and s.chance(0.2):
        s.shuffle(predicted_items)  # read out of order: matching must pair items anyway
    document["LineItems"] = predicted_items
    return document


def _invented_item(s: _Stream, model: str, truth: dict[str, Any]) -> dict[str, Any]:
    """A line item that is not on the invoice: a total row or a repeated item."""
    style = MODELS[model]["style"]
    items = truth["LineItems"]
    if s.chance(0.5):
        first = min(it["StartDate"] for it in items)
        last = max(it["EndDate"] for it in items)
        values = {"StartDate": first, "EndDate": last, "Days": "",
                  "Description": s.choice(["TOTAL", "Gross Amount", "Total Spots"]),
                  "Rate": format_amount(s, round(float(truth["GrossTotal"]) * 100), style)}
    else:
        source = s.choice(items)
        week = timedelta(7)
        values = {
            "StartDate": (date.fromisoformat(source["StartDate"]) + week).isoformat(),
            "EndDate": (date.fromisoformat(source["EndDate"]) + week).isoformat(),
            "Days": source["Days"], "Description": source["Description"],
            "Rate": format_amount(s, round(float(source["Rate"]) * 100), style),
        }
    # How sure each reader is of a row it made up: the calibrated reader is unsure, the
    # others as sure as of any row (a hallucinated row's tokens are likely ones).
    out: dict[str, Any] = {}
    for field, value in values.items():
        if value == "":
            out[field] = None
            continue
        if model == "sim-calibrated":
            confidence = s.uniform(0.01, 0.1)
        elif model == "sim-verbalized":
            confidence = s.choice([0.95, 0.99])
        else:
            confidence = s.uniform(0.95, 0.999)
        out[field] = _leaf(model, s, value, confidence, [None])
    return out


# ----------------------------------------------------------------------------- output
def _jsonl_gz(records: list[dict[str, Any]]) -> bytes:
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for r in records)
    buffer = io.BytesIO()
    # mtime=0 and no file name: the header holds nothing that changes between runs
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return buffer.getvalue()


def run_file(model: str, tier: str) -> str:
    """File name of one run's predictions, relative to the data folder."""
    return f"predictions/{model}__{tier}.jsonl.gz"


def build() -> dict[str, bytes]:
    """Every file of the corpus: relative path -> bytes."""
    doc_ids = [f"fcc-{i:03d}" for i in range(1, N_INVOICES + 1)]
    truths = [make_invoice(i) for i in range(1, N_INVOICES + 1)]
    files = {"truth.jsonl.gz": _jsonl_gz([{"doc_id": d, "document": t}
                                          for d, t in zip(doc_ids, truths, strict=True)])}
    runs = []
    for model, spec in MODELS.items():
        for tier in TIERS:
            records = [{"doc_id": d, "document": predict_invoice(i, t, tier, model)}
                       for i, (d, t) in enumerate(zip(doc_ids, truths, strict=True), start=1)]
            files[run_file(model, tier)] = _jsonl_gz(records)
            runs.append({"model": model, "tier": tier, "pipeline": spec["pipeline"],
                         "confidence_source": spec["confidence_source"],
                         "file": run_file(model, tier)})
    manifest = {
        "name": "confcal demo corpus",
        "synthetic": True,
        "description": (
            "Synthetic FCC-style political-advertising invoices and simulated extractions "
            "made by confcal.datasets._generate; no real document, advertiser or agency. "
            "Degraded tiers are simulated by higher error rates; there are no images."),
        "generator": "python -m confcal.datasets._generate",
        "seed": SEED,
        "schema": "confcal.scoring.presets.FCC_INVOICE",
        "documents": len(doc_ids),
        "tiers": {t: {"degradations": v["degradations"]} for t, v in TIERS.items()},
        "models": {m: {k: v[k] for k in ("pipeline", "confidence_source", "form", "about")}
                   for m, v in MODELS.items()},
        "truth": "truth.jsonl.gz",
        "runs": runs,
    }
    files["manifest.json"] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    return files


def write(out: Path) -> list[Path]:
    """Write the corpus into ``out``; returns the files written."""
    written = []
    for relative, data in build().items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m confcal.datasets._generate",
        description="Regenerate the synthetic demo corpus, byte for byte.")
    parser.add_argument("--out", type=Path, default=DATA_DIR,
                        help=f"folder to write (default: the package data, {DATA_DIR})")
    args = parser.parse_args(argv)
    written = write(args.out)
    size = sum(p.stat().st_size for p in written)
    print(f"wrote {len(written)} files, {size / 1e6:.2f} MB, to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
