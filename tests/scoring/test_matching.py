"""Line-item matching: optimal (brute force for up to 6 items), thresholded, validated."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal._validation import is_missing
from confcal.exceptions import ValidationError
from confcal.scoring.comparators import Date, Number, Text
from confcal.scoring.matching import match_items
from confcal.scoring.predictions import parse_prediction
from confcal.scoring.schema import Field, Items

FIELDS = {"Description": Field(Text()), "Rate": Field(Number()), "Start": Field(Date())}


def brute_force_best_total(truths, preds, fields, match_threshold):
    """Slow, obviously correct reference: the best total item similarity over every
    one-to-one pairing that only uses pairs with similarity >= match_threshold.

    Item similarity is computed with the scalar comparators, pair by pair, over the cells
    where at least one side has a value (0.0 when there is none). Padding the matrix to
    square with zero-gain dummies makes "every pairing of up to min(m, n) items" the same as
    "every permutation"; a disallowed pair contributes nothing, exactly as if it were left
    unpaired.
    """
    def item_similarity(t, p):
        total = weight = 0.0
        for name, f in fields.items():
            truth, pred = t.get(name), parse_prediction(p.get(name)).value
            if is_missing(truth) and is_missing(pred):
                continue  # two empty cells carry no evidence
            total += f.weight * f.comparator(truth, pred)
            weight += f.weight
        return total / weight if weight else 0.0

    size = max(len(truths), len(preds))
    gain = np.zeros((size, size))
    for i, t in enumerate(truths):
        for j, p in enumerate(preds):
            s = item_similarity(t, p)
            gain[i, j] = s if s >= match_threshold else 0.0
    best = max((sum(gain[i, perm[i]] for i in range(size))
                for perm in itertools.permutations(range(size))), default=0.0)
    return best, item_similarity


def check_valid(result, m, n, match_threshold):
    truth_seen = [i for i, _, _ in result if i is not None]
    pred_seen = [j for _, j, _ in result if j is not None]
    assert sorted(truth_seen) == list(range(m))  # every truth item exactly once
    assert sorted(pred_seen) == list(range(n))  # every predicted item exactly once
    for i, j, s in result:
        if i is not None and j is not None:
            assert s >= match_threshold
        else:
            assert s == 0.0


# ---------------------------------------------------------------- examples


def test_shuffled_items_are_paired_back():
    truths = [{"Description": f"Program {k}", "Rate": 100 * k, "Start": f"2024-03-0{k}"}
              for k in range(1, 6)]
    order = [3, 0, 4, 1, 2]
    preds = [truths[k] for k in order]
    result = match_items(truths, preds, FIELDS)
    assert result == [(i, order.index(i), 1.0) for i in range(5)]


def test_unequal_lengths_leave_items_unpaired():
    truths = [{"Description": "News", "Rate": 10}, {"Description": "Sports", "Rate": 20}]
    preds = [{"Description": "Sports", "Rate": 20}]
    assert match_items(truths, preds, FIELDS) == [(1, 0, 1.0), (0, None, 0.0)]
    assert match_items(preds, truths, FIELDS) == [(0, 1, 1.0), (None, 0, 0.0)]


def test_empty_lists():
    assert match_items([], [], FIELDS) == []
    assert match_items([{"Rate": 1}], [], FIELDS) == [(0, None, 0.0)]
    assert match_items([], [{"Rate": 1}], FIELDS) == [(None, 0, 0.0)]


def test_default_threshold_pairs_every_item_of_the_shorter_list():
    # With match_threshold=0.0 (the default) even an all-different pair is paired.
    result = match_items([{"Description": "abc", "Rate": 1}], [{"Description": "xyz", "Rate": 9}],
                         FIELDS)
    # Description 0, Rate 0; Start empty on both sides is no evidence: (0 + 0) / 2 = 0
    assert result == [(0, 0, 0.0)]


def test_pairs_below_match_threshold_stay_unpaired():
    truths = [{"Description": "abc", "Rate": 1}]
    preds = [{"Description": "xyz", "Rate": 9}]
    assert match_items(truths, preds, FIELDS, match_threshold=0.5) == [
        (0, None, 0.0), (None, 0, 0.0)]
    assert match_items(truths, preds, Items(FIELDS, match_threshold=0.5)) == [
        (0, None, 0.0), (None, 0, 0.0)]
    # an explicit argument overrides the Items setting
    assert len(match_items(truths, preds, Items(FIELDS, match_threshold=0.5),
                           match_threshold=0.0)) == 1


def table_fields(table):
    """One sub-field 'id' whose similarity is read from a table: full control of the matrix."""
    return {"id": Field(lambda t, p: table[t][p], threshold=0.5)}


def test_threshold_is_applied_before_optimizing_not_after():
    # A-X 0.6 + B-Y 0.45 = 1.05 is the unconstrained optimum, but B-Y is below 0.5 and would
    # be dropped, keeping 0.6. Pairing A-Y 0.52 + B-X 0.52 keeps 1.04: the better result.
    table = {"A": {"X": 0.6, "Y": 0.52}, "B": {"X": 0.52, "Y": 0.45}}
    truths, preds = [{"id": "A"}, {"id": "B"}], [{"id": "X"}, {"id": "Y"}]
    result = match_items(truths, preds, table_fields(table), match_threshold=0.5)
    assert result == [(0, 1, 0.52), (1, 0, 0.52)]


def test_weights_decide_the_item_similarity():
    fields = {"Description": Field(Text(), weight=3.0), "Rate": Field(Number())}
    # description equal (1.0, weight 3), rate different (0.0, weight 1): 3/4
    result = match_items([{"Description": "News", "Rate": 1}], [{"Description": "News", "Rate": 5}],
                         fields)
    assert result == [(0, 0, 0.75)]


def test_predicted_leaves_are_unwrapped():
    truths = [{"Description": "News", "Rate": 10}]
    preds = [{"Description": {"candidates": [{"value": "Sports", "probability": 0.3},
                                             {"value": "News", "probability": 0.7}]},
              "Rate": {"value": "$10.00", "confidence": 0.9}}]
    assert match_items(truths, preds, FIELDS) == [(0, 0, 1.0)]


def test_match_items_validation():
    with pytest.raises(ValidationError, match=r"pred_items\[1\] must be a mapping of sub-fields; "
                                              r"found 'oops'"):
        match_items([], [{"Rate": 1}, "oops"], FIELDS)
    with pytest.raises(ValidationError, match=r"pred_items\[0\]\.Rate: confidence must be a number "
                                              r"within \[0, 1\]; found 1\.5"):
        match_items([], [{"Rate": {"value": 1, "confidence": 1.5}}], FIELDS)
    with pytest.raises(ValidationError,
                       match=r"truth_items\[0\]\.Rate: truth value must be a string, number, "
                             r"bool, date or missing; found a dict"):
        match_items([{"Rate": {"value": 1}}], [], FIELDS)
    with pytest.raises(ValidationError, match="truth_items must be a list of items"):
        match_items({"Rate": 1}, [], FIELDS)
    with pytest.raises(ValidationError, match="fields must be Items or a mapping"):
        match_items([], [], [Field(Text())])
    with pytest.raises(ValidationError, match=r"match_threshold must be a number within \[0, 1\]"):
        match_items([], [], FIELDS, match_threshold=-1)



class _OutOfRange:
    """A comparator that breaks the [0, 1] contract, to see how its error is named."""

    default_threshold = 1.0

    def __call__(self, truth, prediction):
        return 2.0


def test_a_comparator_error_names_the_sub_field_not_an_item():
    # the scorer names the comparator's field "items.Rate"; match_items has no field "items"
    with pytest.raises(ValidationError, match=r"^field Rate: comparator .* must return a number "
                                              r"within \[0, 1\]; found 2\.0") as info:
        match_items([{"Rate": 1}], [{"Rate": 2}], {"Rate": Field(_OutOfRange())})
    assert info.value.field == "field Rate"

# ----------------------------------------------------- optimality property

words = st.sampled_from(["News", "News at 6", "Late Show", "Late Night", "Sports", "Weather", None])
rates = st.one_of(st.none(), st.sampled_from([100, 101, "$100.00", 250, "250", "N/A"]))
starts = st.one_of(st.none(), st.sampled_from(["2024-03-01", "03/01/2024", "2024-03-02", "TBD"]))
items = st.fixed_dictionaries({"Description": words, "Rate": rates, "Start": starts})
leaves = st.fixed_dictionaries({
    "Description": words.map(lambda v: {"value": v, "confidence": 0.5}),
    "Rate": rates,
    "Start": starts,
})


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(items, max_size=6), st.lists(st.one_of(items, leaves), max_size=6),
       st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]),
       st.sampled_from([(1.0, 1.0, 1.0), (2.0, 1.0, 0.5)]))
def test_matching_is_optimal_against_brute_force(truths, preds, match_threshold, weights):
    fields = {name: Field(f.comparator, weight=w)
              for (name, f), w in zip(FIELDS.items(), weights, strict=True)}
    result = match_items(truths, preds, fields, match_threshold=match_threshold)
    check_valid(result, len(truths), len(preds), match_threshold)
    best, item_similarity = brute_force_best_total(truths, preds, fields, match_threshold)
    assert sum(s for _, _, s in result) == pytest.approx(best, abs=1e-9)
    for i, j, s in result:
        if i is not None and j is not None:
            assert s == pytest.approx(item_similarity(truths[i], preds[j]), abs=1e-12)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.lists(st.floats(0, 1), min_size=6, max_size=6), min_size=1, max_size=6),
       st.integers(0, 6), st.floats(0, 1))
def test_matching_is_optimal_on_arbitrary_matrices(rows, n, match_threshold):
    # Every similarity matrix is reachable through a table comparator.
    table = {i: {j: rows[i][j] for j in range(6)} for i in range(len(rows))}
    truths, preds = [{"id": i} for i in range(len(rows))], [{"id": j} for j in range(n)]
    fields = table_fields(table)
    result = match_items(truths, preds, fields, match_threshold=match_threshold)
    check_valid(result, len(truths), n, match_threshold)
    best, _ = brute_force_best_total(truths, preds, fields, match_threshold)
    assert sum(s for _, _, s in result) == pytest.approx(best, abs=1e-9)
