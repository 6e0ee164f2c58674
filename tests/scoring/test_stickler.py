"""conventions="stickler-1.0": stickler-eval 1.0.0's counts, labels and calibration pairs.

Two kinds of test: toy cases, one per stickler rule, whose expected values are worked out
by hand in comments; and a comparison with stickler-eval 1.0.0 itself, run in its own
virtual environment (``CONFCAL_STICKLER_PYTHON``, else ``/tmp/stickler-venv/bin/python``)
on edge-case documents, which must give identical counts and calibration pairs.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from _optional import missing, need_module
from confcal import ValidationError
from confcal.scoring import score_documents, score_documents_iter
from confcal.scoring._stickler import assign, read_number
from confcal.scoring.comparators import Exact
from confcal.scoring.predictions import parse_prediction
from confcal.scoring.presets import FCC_INVOICE
from confcal.scoring.schema import Field, Schema

STICKLER = "stickler-1.0"
WORKER = Path(__file__).resolve().parents[1] / "_stickler_worker.py"
ITEM_FIELDS = ("StartDate", "EndDate", "Days", "Description", "Rate")


def c(value: Any, confidence: float) -> dict[str, Any]:
    return {"value": value, "confidence": confidence}


def score(truth: dict[str, Any], pred: dict[str, Any], schema: Schema = FCC_INVOICE) -> Any:
    return score_documents(schema, {"d": truth}, {"d": pred}, conventions=STICKLER)


def row(result: Any, field: str, i: int = 0) -> Any:
    rows = result.entities[result.entities["field"] == field]
    return rows.iloc[i]


# ------------------------------------------------------------------ toy cases


def test_numeric_parser_readings() -> None:
    # Parentheses negate, then everything but digits, "." and "-" is deleted: "1e3" keeps
    # "13", "12%" keeps "12"; "1.2.3" and "abc" leave no number.
    assert [read_number(v) for v in ("$1,234.50", "(12.00)", "12%", "1e3", "abc", "1.2.3",
                                     "-")] == [
        Decimal("1234.50"), Decimal("-12.00"), Decimal("12"), Decimal("13"), None, None, None]
    # "1e3" is 13 for stickler: against a truth of 1000 it is an FD, against 13 a TP.
    result = score({"GrossTotal": "1000", "NetAmountDue": "13"},
                   {"GrossTotal": c("1e3", 0.9), "NetAmountDue": c("1e3", 0.8)})
    assert row(result, "GrossTotal").outcome == "FD"
    assert row(result, "NetAmountDue").outcome == "TP"
    # A number against text with no number: similarity 0, FD (confcal compares text).
    assert row(score({"GrossTotal": "N/A"}, {"GrossTotal": "n/a"}), "GrossTotal").outcome == "FD"


def test_relative_tolerance_is_relative_to_the_truth() -> None:
    # |100 - 101| / 100 = 0.01 <= 0.01: TP; |101 - 100| / 101 = 0.0099 <= 0.01: TP;
    # |100 - 101.01| / 100 = 0.0101: FD, while 101.01 vs 100 gives 1.01 / 101.01 = 0.009999: TP.
    cases = [("100", "101", "TP"), ("101", "100", "TP"), ("100", "101.01", "FD"),
             ("101.01", "100", "TP")]
    for truth, pred, expected in cases:
        assert row(score({"GrossTotal": truth}, {"GrossTotal": pred}),
                   "GrossTotal").outcome == expected


def test_truth_zero_uses_the_tolerance_as_an_absolute_bound() -> None:
    # Truth 0: |p| <= 0.01 matches (a relative difference would divide by zero), so 0.009
    # and 0.01 are TP and 0.02 an FD; a truth of 0.02 with prediction 0 is relative:
    # |0.02 - 0| / 0.02 = 1 > 0.01, FD.
    cases = [("0", "0.009", "TP"), ("0.00", "$0.01", "TP"), ("0", "0.02", "FD"), ("0.02", "0",
                                                                                  "FD")]
    for truth, pred, expected in cases:
        assert row(score({"GrossTotal": truth}, {"GrossTotal": pred}),
                   "GrossTotal").outcome == expected


def test_both_missing_leaves() -> None:
    # None/None and ""/"" are TN and correct; ""/None and None/"" are TN in the counts and
    # incorrect in calibration (a None on exactly one side is always a miss).
    result = score({"Agency": None, "Advertiser": "", "PaymentTerms": "", "GrossTotal": None},
                   {"Agency": c(None, 0.1), "Advertiser": c("", 0.2), "PaymentTerms": c(None, 0.3),
                    "GrossTotal": c("", 0.4)})
    got = {f: (row(result, f).outcome, bool(row(result, f).correct))
           for f in ("Agency", "Advertiser", "PaymentTerms", "GrossTotal")}
    assert got == {"Agency": ("TN", True), "Advertiser": ("TN", True),
                   "PaymentTerms": ("TN", False), "GrossTotal": ("TN", False)}
    correct, confidence, _ = result.to_calibration()  # schema order: GrossTotal first
    assert list(zip(correct.tolist(), confidence.tolist(), strict=True)) == [
        (True, 0.1), (True, 0.2), (False, 0.4), (False, 0.3)]
    # Whitespace is a value at the top level ("  " vs "x": FD) ...
    assert row(score({"Agency": "  "}, {"Agency": "x"}), "Agency").outcome == "FD"
    # ... and an empty list on both sides is one TN, with no row.
    result = score({"LineItems": []}, {"LineItems": None})
    assert result.counts["TN"] == 7 and len(result.entities) == 6
    assert result.counts["whole_item_outcomes"] == 1


def _item(**cells: Any) -> dict[str, Any]:
    return {k: cells.get(k) for k in ITEM_FIELDS}


def test_nested_sub_threshold_scores_are_zeroed() -> None:
    # "Late Show" vs "Late Shaw tonight": 1 substitution + 8 insertions in 17, 1 - 9/17 =
    # 0.47 < 0.5. A line-item FD has its score zeroed; a top-level FD keeps it.
    truth = {"LineItems": [_item(StartDate="2024-01-01", Rate="5", Description="Late Show")]}
    pred = {"LineItems": [_item(StartDate="2024-01-01", Rate="5", Description="Late Shaw tonight")]}
    result = score(truth, pred)
    # Item similarity: StartDate 1, Rate 1, Description 8/17 over 3 sub-fields (EndDate and
    # Days are empty on both sides and left out): (2 + 8/17) / 3 = 0.82 >= 0.7, scored.
    description = row(result, "LineItems.Description")
    assert (description.outcome, description.similarity, bool(description.correct)) == ("FD", 0.0,
                                                                                        False)
    top = row(score({"Agency": "Late Show"}, {"Agency": "Late Shaw tonight"}), "Agency")
    assert (top.outcome, top.similarity) == ("FD", 1 - 9 / 17)
    # At the cut: 4 substitutions in 8 is 0.5 >= 0.5, a TP with score 0.5.
    top = row(score({"Agency": "abcdefgh"}, {"Agency": "abcdwxyz"}), "Agency")
    assert (top.outcome, top.similarity) == ("TP", 0.5)


def test_gated_pairs_drop_their_sub_fields() -> None:
    t1 = _item(Description="News at 6", Rate="600", StartDate="2024-03-01")
    t2 = _item(Description="Late Show", Rate="100", StartDate="2024-03-05")
    p1 = {**_item(Description=c("News at 6", 0.9), Rate=c("600", 0.8)), "StartDate": c("03/01/2024",
                                                                                       0.7)}
    # Late Show vs Late Shaw: 1 - 1/9; Rate 100 vs 250: 0; StartDate 2024-03-05 vs 03/06/2024: 0:
    # (0.889 + 0 + 0) / 3 = 0.296 < 0.7: gated.
    p2 = {**_item(Description=c("Late Shaw", 0.6), Rate=c("250", 0.5)), "StartDate": c("03/06/2024",
                                                                                       0.4)}
    result = score({"LineItems": [t1, t2]}, {"LineItems": [p2, p1]})
    items = result.entities[result.entities["field"].astype(str).str.startswith("LineItems.")]
    # Only the pair (0, 1) is scored, leaf by leaf: 3 TP and 2 TN; the gated pair has no rows.
    assert items[["truth_index", "pred_index"]].drop_duplicates().values.tolist() == [[0, 1]]
    assert sorted(items.outcome.astype(str)) == ["TN", "TN", "TP", "TP", "TP"]
    assert result.counts["excluded_by_conventions"] == 5
    # The calibration pairs: the six TN top-level rows have no confidence; 0.7, 0.9, 0.8 left.
    assert result.to_calibration()[1].tolist() == [0.7, 0.9, 0.8]
    # With no pair above 0.7 the list is counted by items: one FD for the gated pair, one FN
    # for the unpaired truth item, and no leaf rows at all.
    result = score({"LineItems": [t1, t2]}, {"LineItems": [p2]})
    assert result.counts["FD"] == 1 and result.counts["FN"] == 1
    assert result.counts["whole_item_outcomes"] == 2
    assert not result.entities["field"].astype(str).str.startswith("LineItems.").any()


def test_text_is_accepted_at_stickler_threshold_whatever_the_schema() -> None:
    # FCC_INVOICE may accept text near-exactly; the stickler model accepts at 0.5.
    result = score({"Agency": "Net 30"}, {"Agency": "Net 60"})  # 1 - 1/6 = 0.83
    assert (row(result, "Agency").outcome, row(result, "Agency").threshold) == ("TP", 0.5)


def test_format_characters_are_characters_for_stickler() -> None:
    # stickler reads text with strip and lower only: "ACME\u200bMedia" vs "ACMEMedia" is
    # one insertion in 10 characters, 0.9; the default deletes the U+200B first: 1.0
    truth, pred = {"Agency": "ACMEMedia"}, {"Agency": c("ACME\u200bMedia", 0.5)}
    assert row(score(truth, pred), "Agency").similarity == pytest.approx(0.9)
    default = score_documents(FCC_INVOICE, {"d": truth}, {"d": pred})
    assert row(default, "Agency").similarity == 1.0


def test_equally_good_pairings_resolve_as_munkres_does() -> None:
    # The smallest case where the solver's tie rule shows: items A and C differ in one
    # Description character, B in everything; truth [A, A, B, B], prediction [C, B, C, A],
    # every leaf of predicted item j with confidence 0.1 * (j + 1). Both truth A's are as
    # close to C (twice) as to A, so several pairings are equally good; stickler-eval pairs
    # the predictions carrying 0.2, 0.3 and 0.4 (the 0.1 item is left out), where the
    # first-minimum rule of the small-problem solver pairs 0.1, 0.2 and 0.4.
    a = _item(StartDate="2024-03-01", EndDate="2024-03-07", Days="M-F",
              Description="News at 5", Rate="$100.00")
    b = _item(StartDate="2024-03-02", EndDate="2024-03-09", Days="Sa",
              Description="Late Show", Rate="$250.00")
    c_ = dict(a, Description="News at 6")
    pred = [{k: c(v, (j + 1) / 10) for k, v in item.items()}
            for j, item in enumerate([c_, b, c_, a])]
    result = score({"LineItems": [a, a, b, b]}, {"LineItems": pred})
    _, confidence, _ = result.to_calibration()
    assert set(np.round(confidence, 6).tolist()) == {0.2, 0.3, 0.4}


def _tie_matrices(seed: int, count: int) -> list[np.ndarray]:
    """Similarity matrices up to 8 x 8 with exact and near ties: all equal, few distinct
    values, duplicated rows and columns, and values a few units in the last place apart."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(count):
        r, k = (int(x) for x in rng.integers(1, 9, size=2))
        kind = t % 4
        if kind == 0:
            sim = np.full((r, k), float(rng.choice([0.0, 0.5, 0.7, 1.0])))
        elif kind == 1:
            sim = rng.choice([0.2, 0.5, 0.8, 1.0], size=(r, k))
        elif kind == 2:
            sim = np.clip(rng.choice([0.6, 0.8], size=(r, k))
                          + rng.choice([0.0, 1e-16, 2e-16, -1e-16], size=(r, k)), 0.0, 1.0)
        else:
            base = rng.choice([0.3, 0.6, 0.9, 1.0], size=(3, 3))
            sim = base[rng.integers(0, 3, size=r)][:, rng.integers(0, 3, size=k)]
        out.append(sim)
    return out


def test_assign_agrees_with_munkres_on_ties() -> None:
    munkres = need_module("munkres")
    solver = munkres.Munkres()
    differ = [(sim.shape, sim.tolist()) for sim in _tie_matrices(11, 2000)
              if sorted(assign(sim)) != sorted(map(tuple, solver.compute((1.0 - sim).tolist())))]
    assert not differ, (len(differ), differ[:2])


def test_conventions_is_validated() -> None:
    with pytest.raises(ValidationError, match=r"conventions must be one of \['confcal', "
                       r"'stickler-1.0'\]; found 'stickler'"):
        score_documents(FCC_INVOICE, {"d": {}}, {}, conventions="stickler")
    with pytest.raises(ValidationError, match="conventions must be one of"):
        score_documents_iter(FCC_INVOICE, [], conventions=None)  # type: ignore[arg-type]
    schema = Schema({"Code": Field(Exact())})
    with pytest.raises(ValidationError, match="needs a Text, Number or Date comparator"):
        score_documents(schema, {"d": {}}, {}, conventions=STICKLER, allow_empty=True)


def test_streaming_equals_one_call() -> None:
    docs = _edge_documents()[:12]
    whole = score_documents(FCC_INVOICE, [(d, t) for d, t, _ in docs],
                            [(d, p) for d, _, p in docs], conventions=STICKLER)
    chunks = list(score_documents_iter(FCC_INVOICE, docs, chunk_size=5, conventions=STICKLER))
    total = Counter()
    for chunk in chunks:
        total.update(chunk.counts)
    assert dict(total) == whole.counts
    assert sum(len(ch.entities) for ch in chunks) == len(whole.entities)


def test_cli_conventions(tmp_path: Path, capsys: Any) -> None:
    from confcal.cli import main
    from confcal.scoring.io import read_entities

    docs = _edge_documents()[:6]
    truth, pred = tmp_path / "t.jsonl", tmp_path / "p.jsonl"
    truth.write_text("".join(json.dumps({"doc_id": d, "document": t}) + "\n" for d, t, _ in docs))
    pred.write_text("".join(json.dumps({"doc_id": d, "document": p}) + "\n" for d, _, p in docs))
    out = tmp_path / "e.csv"
    assert main(["score", "--schema", "fcc-invoice", "--truth", str(truth), "--pred", str(pred),
                 "--conventions", STICKLER, "-o", str(out)]) == 0
    expected = score_documents(FCC_INVOICE, [(d, t) for d, t, _ in docs],
                               [(d, p) for d, _, p in docs], conventions=STICKLER)
    assert len(read_entities(out)) == len(expected.entities)
    assert "conventions:stickler-1.0" in capsys.readouterr().out


def test_default_is_unchanged() -> None:
    truth, pred = {"GrossTotal": "1000"}, {"GrossTotal": "1e3"}
    assert score_documents(FCC_INVOICE, {"d": truth}, {"d": pred}).counts == score_documents(
        FCC_INVOICE, {"d": truth}, {"d": pred}, conventions="confcal").counts


# ----------------------------------------------------- agreement with stickler


def _edge_documents() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(doc_id, truth, prediction) edge cases, in confcal's input form; every value a string
    or None, as the stickler models declare."""
    rng = random.Random(7)
    conf = iter(np.round(np.linspace(0.31, 0.99, 5000), 4).tolist())

    def leaf(value: Any) -> Any:
        return {"value": value, "confidence": next(conf)}

    def items(*rows: dict[str, Any]) -> list[dict[str, Any]]:
        return [dict(r) for r in rows]

    base_items = [
        _item(StartDate="2024-03-01", EndDate="2024-03-07", Days="M-F", Description="News at 6",
              Rate="$600.00"),
        _item(StartDate="2024-03-02", EndDate="2024-03-09", Days="Sa", Description="Late Show",
              Rate="$1,234.50"),
        _item(StartDate="2024-03-04", EndDate="2024-03-10", Days="M-Su", Description="Weather",
              Rate="(12.00)"),
    ]
    base = {"Agency": "Buying Time LLC", "Advertiser": "Vote Yes on 3", "GrossTotal": "$1,846.50",
            "PaymentTerms": "Net 30", "AgencyCommission": "$276.98", "NetAmountDue": "$1,569.52",
            "LineItems": base_items}

    def with_leaves(doc: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in doc.items():
            if key == "LineItems":
                out[key] = value if value is None else [
                    {k: leaf(v) for k, v in item.items()} for item in value]
            else:
                out[key] = leaf(value)
        return out

    docs: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def add(truth: dict[str, Any], pred: dict[str, Any], confident: bool = True) -> None:
        docs.append((f"e{len(docs):03d}", truth, with_leaves(pred) if confident else pred))

    def edit(**changes: Any) -> dict[str, Any]:
        return {**base, **changes}

    def item_edit(i: int, **changes: Any) -> list[dict[str, Any]]:
        rows = [dict(r) for r in base_items]
        rows[i].update(changes)
        return rows

    add(base, base)  # identical
    add(base, edit(Agency="Buying Tme LLC", Advertiser="Vote Yes on 8"))  # typos
    add(base, edit(Agency="Buying", Advertiser="Vote"))  # near the 0.5 cut
    add(base, edit(Agency="Buying Time", PaymentTerms="Net"))  # 11/15 and 3/6 = 0.5
    add(base, edit(PaymentTerms="Net 3"))
    add(base, edit(GrossTotal="1846.5", AgencyCommission="276.98", NetAmountDue="1,569.52"))
    add(base, edit(GrossTotal="1e3", AgencyCommission="12%", NetAmountDue="abc"))
    add(base, edit(GrossTotal="", AgencyCommission=None, NetAmountDue="(1,569.52)"))
    add(edit(GrossTotal="0", AgencyCommission="0.00", NetAmountDue="0"),
        edit(GrossTotal="0.009", AgencyCommission="$0.01", NetAmountDue="0.02"))
    huge = "1" + "0" * 400  # beyond the float range: equal, and 1 apart, in Decimal
    add(edit(GrossTotal=huge, AgencyCommission=huge, NetAmountDue="-" + huge),
        edit(GrossTotal=huge, AgencyCommission=huge[:-1] + "1", NetAmountDue="-" + huge))
    add(edit(GrossTotal="0.00", AgencyCommission="0", NetAmountDue="100"),
        edit(GrossTotal="0", AgencyCommission="-0.005", NetAmountDue="101"))
    add(edit(GrossTotal="100", AgencyCommission="101.01", NetAmountDue="1,000"),
        edit(GrossTotal="101.01", AgencyCommission="100", NetAmountDue="1010.00"))
    add(edit(GrossTotal="1.2.3", AgencyCommission="12%", NetAmountDue="$-5"),
        edit(GrossTotal="1.2.3", AgencyCommission="0.12", NetAmountDue="-5"))
    add(edit(Agency=None, Advertiser="", PaymentTerms="", GrossTotal=None),
        edit(Agency=None, Advertiser="", PaymentTerms=None, GrossTotal=""))
    add(edit(Agency="x", Advertiser="  ", PaymentTerms=None),
        edit(Agency=None, Advertiser=None, PaymentTerms="  "))
    add(edit(Agency=None, Advertiser=None), edit(Agency="ACME", Advertiser="Friends of Jane"))
    add(base, {k: v for k, v in base.items() if k not in ("Agency", "GrossTotal")})  # keys absent
    # dates in several formats, and unparseable ones
    add(base, edit(LineItems=item_edit(0, StartDate="03/01/2024", EndDate="March 7, 2024")))
    add(base, edit(LineItems=item_edit(0, StartDate="1 Mar 2024", EndDate="2024-03-07T00:00:00")))
    add(base, edit(LineItems=item_edit(0, StartDate="01/03/2024", EndDate="7 March")))
    add(base, edit(LineItems=item_edit(0, StartDate="TBD", EndDate="March 2024")))
    add(base, edit(LineItems=item_edit(0, StartDate="2024-03-01 to 2024-03-07",
                                       EndDate="2024/03/07")))
    add(edit(LineItems=item_edit(1, StartDate="2024-03-01 - 2024-03-07")),
        edit(LineItems=item_edit(1, StartDate="2024-03-02 - 2024-03-09")))
    add(edit(LineItems=item_edit(2, StartDate="abc", EndDate="")),
        edit(LineItems=item_edit(2, StartDate="abc", EndDate=None)))
    add(base, edit(LineItems=item_edit(1, StartDate="20240302", EndDate="Mar 9 2024")))
    # line items: missing, extra, shuffled, empty cells
    add(base, edit(LineItems=base_items[:2]))  # a truth item missing
    add(base, edit(LineItems=base_items + [_item(Description="Jeopardy", Rate="$40.00",
                                                    StartDate="2024-04-01")]))  # an extra one
    add(base, edit(LineItems=[base_items[2], base_items[0], base_items[1]]))  # shuffled
    add(base, edit(LineItems=[]))
    add(base, edit(LineItems=None))
    add(edit(LineItems=[]), base)
    add(edit(LineItems=None), edit(LineItems=[]))
    add(edit(LineItems=[_item()]), edit(LineItems=[_item()]))  # all-empty cells
    add(edit(LineItems=[_item(), base_items[0]]), edit(LineItems=[base_items[0], _item(Days="")]))
    add(edit(LineItems=[_item(Days="  ")]), edit(LineItems=[_item(Days=None)]))
    # pairs just below and above 0.7
    add(base, edit(LineItems=item_edit(0, Days="Sa", Description="News at 9")))
    add(base, edit(LineItems=item_edit(0, Days="Sa", Rate="$700.00", EndDate="2024-03-08")))
    add(base, edit(LineItems=item_edit(0, Days="Su", Rate="$700.00", Description="News")))
    add(base, edit(LineItems=item_edit(1, StartDate="2024-03-03", EndDate="2024-03-10",
                                       Days="Su")))
    add(base, edit(LineItems=[_item(StartDate="2024-03-01", Description="News", Rate="600")]))
    add(edit(LineItems=[_item(StartDate="2024-03-01", Description="News", Rate="600")]),
        edit(LineItems=[_item(StartDate="2024-03-02", Description="Nows", Rate="600")]))
    add(edit(LineItems=[_item(Description="abcdefghij", Rate="5")]),
        edit(LineItems=[_item(Description="abcdefgxyz", Rate="5", Days="M")]))
    # no pair passes the gate: the list is counted by items
    add(base, edit(LineItems=[_item(Description="zzz", Rate="1", Days="Q")]))
    add(edit(LineItems=base_items[:1]), edit(LineItems=[_item(Description="zzz"), _item(Rate="9")]))
    # whitespace and case
    add(base, edit(Agency="  buying   TIME llc ", Advertiser="VOTE YES ON 3"))
    # predictions without confidence on some leaves, and a missing prediction document
    add(base, {**with_leaves(edit(Agency="Buying Time")), "Advertiser": "Vote Yes on 3"},
        confident=False)
    # duplicate items (ties in the assignment)
    add(edit(LineItems=[base_items[0], base_items[0]]), edit(LineItems=[base_items[0]]))
    add(edit(LineItems=[base_items[0], dict(base_items[0], Rate="$601.00")]),
        edit(LineItems=[dict(base_items[0], Rate="$601.00"), base_items[0]]))
    # many equal items: which predicted duplicate pairs with which truth follows the
    # assignment solver's tie rule, and decides which confidences are paired
    pool = [_item(Days="x", Rate="1"), _item(Days="y", Rate="2"), _item(Description="x")]
    for _ in range(12):
        add(edit(LineItems=[dict(rng.choice(pool)) for _ in range(rng.randrange(1, 8))]),
            edit(LineItems=[dict(rng.choice(pool)) for _ in range(rng.randrange(1, 8))]))
    # equally good pairings up to 8 x 8: the same item everywhere, and near-duplicates one
    # character apart (their similarities tie or differ in the last digits)
    same = base_items[0]
    for n_truth, n_pred in ((4, 4), (8, 8), (5, 8), (8, 3)):
        add(edit(LineItems=[dict(same) for _ in range(n_truth)]),
            edit(LineItems=[dict(same) for _ in range(n_pred)]))
    # the shape of the smallest case where the solvers' tie rules part: truth items drawn
    # from {A, B} with repeats, predictions from {A, B, C} (C is A one character off)
    a = dict(same, Description="News at 5", Rate="$100.00")
    b = base_items[1]
    c_ = dict(a, Description="News at 6")
    add(edit(LineItems=[a, a, b, b]), edit(LineItems=[c_, b, c_, a]))
    for _ in range(40):
        add(edit(LineItems=[dict(rng.choice([a, b])) for _ in range(rng.randrange(4, 9))]),
            edit(LineItems=[dict(rng.choice([a, b, c_])) for _ in range(rng.randrange(4, 9))]))
    # random perturbations of everything at once
    words = ["News at 6", "Late Show", "Weather", "Jeopardy", "Today", "Evening News"]
    for _ in range(40):
        n_truth = rng.randrange(0, 5)
        truth_items = [
            _item(StartDate=rng.choice(["2024-03-0" + str(d) for d in range(1, 10)] + [None, ""]),
                  EndDate=rng.choice(["2024-03-1" + str(d) for d in range(0, 5)] + [None]),
                  Days=rng.choice(["M-F", "Sa", "Su", "M-Su", None, ""]),
                  Description=rng.choice(words + [None]),
                  Rate=rng.choice(["$600.00", "100", "0", "0.00", "(12.00)", "1,234.50", None]))
            for _ in range(n_truth)]
        pred_items = []
        for item in truth_items:
            if rng.random() < 0.15:
                continue
            new = dict(item)
            for key in ITEM_FIELDS:
                r = rng.random()
                if r < 0.1:
                    new[key] = None
                elif r < 0.15:
                    new[key] = ""
                elif r < 0.3 and isinstance(new[key], str) and new[key]:
                    s = new[key]
                    i = rng.randrange(len(s))
                    new[key] = s[:i] + rng.choice("abcxyz019") + s[i + 1:]
            pred_items.append(new)
        if rng.random() < 0.4:
            pred_items.append(_item(Description=rng.choice(words), Rate=rng.choice(["5", "600"]),
                                    StartDate="2024-03-01"))
        rng.shuffle(pred_items)
        truth = edit(LineItems=truth_items,
                     GrossTotal=rng.choice(["$1,846.50", "0", "0.00", "", None]),
                     Agency=rng.choice(["Buying Time LLC", "", None]))
        pred = edit(LineItems=pred_items,
                    GrossTotal=rng.choice(["1846.5", "1,900", "0.001", "1e3", "", None]),
                    Agency=rng.choice(["Buying Time LLC", "Buying Tim", "", None, "BT"]))
        add(truth, pred)
    return docs


def _to_stickler(value: Any) -> Any:
    """A confcal predicted document in stickler's rich-value form."""
    if isinstance(value, dict) and not ({"value", "confidence", "candidates"} & value.keys()):
        return {k: _to_stickler(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_stickler(v) for v in value]
    parsed = parse_prediction(value)
    if parsed.confidence is None:
        return parsed.value
    return {"_value": parsed.value, "_confidence": parsed.confidence}


def _stickler_python() -> str:
    python = os.environ.get("CONFCAL_STICKLER_PYTHON", "/tmp/stickler-venv/bin/python")
    if not Path(python).exists():
        missing(f"needs stickler-eval: no stickler-eval python at {python} (set "
                "CONFCAL_STICKLER_PYTHON, or create /tmp/stickler-venv with "
                "stickler-eval==1.0.0 as .ci/run does)")
    probe = subprocess.run([python, "-c", "import stickler; print(stickler.__version__)"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0 or probe.stdout.strip() != "1.0.0":
        found = probe.stdout.strip() or probe.stderr[-200:]
        missing(f"needs stickler-eval 1.0.0 in {python} ({found})")
    return python


def _run_stickler(docs: list[tuple[str, dict[str, Any], dict[str, Any]]], tmp_path: Path) -> Any:
    python = _stickler_python()
    path = tmp_path / "docs.json"
    path.write_text(json.dumps({"docs": [
        {"id": d, "truth": t, "prediction": _to_stickler(p)} for d, t, p in docs]}))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([python, str(WORKER), str(path)], capture_output=True, text=True,
                          env=env, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _confcal_pairs(entities: Any) -> list[tuple[str, bool, float]]:
    """(stickler field path, correct, confidence) of every row with a confidence."""
    out = []
    for r in entities.itertuples():
        if np.isnan(r.confidence):
            continue
        field = str(r.field)
        if "." in field:
            items, sub = field.split(".", 1)
            field = f"{items}[{int(r.pred_index)}].{sub}"
        out.append((field, bool(r.correct), float(r.confidence)))
    return sorted(out)


def test_agrees_with_stickler_eval(tmp_path: Path) -> None:
    docs = _edge_documents()
    assert len(docs) >= 40
    reference = {d["id"]: d for d in _run_stickler(docs, tmp_path)["docs"]}
    result = score_documents(FCC_INVOICE, [(d, t) for d, t, _ in docs],
                             [(d, p) for d, _, p in docs], conventions=STICKLER)
    mismatches = []
    for doc_id, truth, pred in docs:
        ours = score_documents(FCC_INVOICE, {doc_id: truth}, {doc_id: pred}, conventions=STICKLER)
        counts = {k: ours.counts[k] for k in ("TP", "FD", "FA", "FN", "TN")}
        pairs = _confcal_pairs(ours.entities)
        theirs = reference[doc_id]
        their_pairs = sorted((k, bool(m), float(conf)) for k, m, conf, _ in theirs["pairs"])
        if counts != theirs["counts"] or pairs != their_pairs:
            mismatches.append((doc_id, counts, theirs["counts"],
                               sorted(set(pairs) ^ set(their_pairs))))
    assert not mismatches, mismatches[:5]
    # The corpus in one call gives the sums of the documents.
    total = Counter()
    for d in reference.values():
        total.update(d["counts"])
    assert {k: result.counts[k] for k in total} == dict(total)
    correct, confidence, _ = result.to_calibration()
    assert len(confidence) == sum(len(d["pairs"]) for d in reference.values())
