"""confcal.calibration.confidence: log-probability aggregation, value-token alignment, top-K
parsing."""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal.calibration.confidence import (
    ProbabilitySumWarning,
    aggregate_logprobs,
    confidences_from_logprobs,
    parse_topk,
    value_token_spans,
)
from confcal.exceptions import UndefinedMetricWarning, ValidationError
from confcal.scoring import score_documents
from confcal.scoring.comparators import Number, Text
from confcal.scoring.schema import Field, Items, Schema

L = math.log

SCHEMA = Schema({
    "Agency": Field(Text()),
    "GrossTotal": Field(Number()),
    "PaymentTerms": Field(Text()),
    "LineItems": Items({"Description": Field(Text()), "Rate": Field(Number())}),
})

# ---------------------------------------------------------------------------------------
# fixtures: real-looking tokenizations of JSON answers
# ---------------------------------------------------------------------------------------
# Word-piece style, as a chat model streams text pieces. The answer:
# {"Agency": "ACME Media", "GrossTotal": 1234.50, "Paid": true, "PaymentTerms": null,
#  "LineItems": [{"Description": "News at 6", "Rate": 150.00},
#                {"Description": "The \"Late\" Show", "Rate": 75}]}
WORDPIECE = [
    '{"', 'Agency', '":', ' "', 'AC', 'ME', ' Media', '",',                    # 0-7
    ' "', 'Gross', 'Total', '":', ' 12', '34', '.', '50', ',',                 # 8-16
    ' "', 'Paid', '":', ' true', ',',                                          # 17-21
    ' "', 'Payment', 'Terms', '":', ' null', ',',                              # 22-27
    ' "', 'Line', 'Items', '":', ' [{"', 'Description', '":', ' "', 'News',    # 28-36
    ' at', ' 6', '",', ' "', 'Rate', '":', ' 150', '.', '00', '},',            # 37-46
    ' {"', 'Description', '":', ' "', 'The', ' \\"', 'Late', '\\"', ' Show',   # 47-55
    '",', ' "', 'Rate', '":', ' 75', '}]}',                                    # 56-61
]

# Byte-level BPE (GPT-2 style): 'Ġ' is a space, 'Ċ' a newline, 'Ã©' the UTF-8 bytes of 'é'.
# Token 6 straddles the closing quote ('ĠMedia",'), token 11 the colon and opening quote,
# token 26 the colon and a minus sign; an end-of-text token follows the JSON.
# {"Agency": "Café Media",\n "Advertiser":"Bob's",  "LineItems": [{"Rate": 150},
#  {"Rate":-2.5e3}]}<|endoftext|>
BYTE_LEVEL = [
    '{"', 'Agency', '":', 'Ġ"', 'Caf', 'Ã©', 'ĠMedia",', 'Ċ',                 # 0-7
    'Ġ"', 'Advert', 'iser', '":"', 'Bob', "'s", '",',                         # 8-14
    'ĠĠ"', 'Line', 'Items', '":', 'Ġ[{"', 'Rate', '":', 'Ġ150', '},',          # 15-23
    'Ġ{"', 'Rate', '":-', '2', '.', '5', 'e', '3', '}]}', '<|endoftext|>',     # 24-33
]

# SentencePiece: '▁' is a space, '<0x0A>' a byte-fallback newline; the answer is wrapped in
# a code fence; token 3 holds the opening quote and the value's first characters.
SENTENCEPIECE = ['```', 'json', '<0x0A>', '{"', 'Agency', '":', '▁"AC', 'ME', '▁Media', '"',
                 '}', '<0x0A>', '```']


def test_fixtures_spell_the_answers_they_claim():
    text = "".join(WORDPIECE)
    assert json.loads(text)["LineItems"][1]["Description"] == 'The "Late" Show'
    from confcal.calibration.confidence import BYTE_LEVEL_ALPHABET

    raw = bytes(BYTE_LEVEL_ALPHABET[ch] for t in BYTE_LEVEL for ch in t).decode("utf-8")
    assert raw.endswith("<|endoftext|>")
    assert json.loads(raw[: -len("<|endoftext|>")])["Agency"] == "Café Media"


# ---------------------------------------------------------------------------------------
# aggregate_logprobs
# ---------------------------------------------------------------------------------------
def test_first_is_the_probability_of_the_first_token():
    assert aggregate_logprobs([L(0.9), L(0.1), L(0.5)]) == pytest.approx(0.9, abs=1e-15)
    assert aggregate_logprobs([-math.inf, 0.0]) == 0.0  # exp(-inf)


def test_mean_is_the_geometric_mean_of_token_probabilities():
    # exp((log 0.5 + log 0.8 + log 0.2) / 3) = (0.5 * 0.8 * 0.2)^(1/3) = 0.08^(1/3)
    got = aggregate_logprobs([L(0.5), L(0.8), L(0.2)], method="mean")
    assert got == pytest.approx(0.08 ** (1 / 3), rel=1e-14)
    assert aggregate_logprobs([0.0, 0.0], method="mean") == 1.0


def test_margin_uses_the_top_two_at_the_first_position():
    # p1 = 0.6, p2 = 0.3 (order of top2 does not matter): (0.6 - 0.3) / 0.9 = 1/3.
    # The value's own tokens do not enter: the second token's 0.1 is ignored.
    for top in ([L(0.6), L(0.3)], [L(0.3), L(0.05), L(0.6)],
                {"AC": L(0.6), "A": L(0.3)},
                [{"token": "AC", "logprob": L(0.6)}, {"token": "A", "logprob": L(0.3)}]):
        got = aggregate_logprobs([L(0.6), L(0.1)], method="margin", top2=top)
        assert got == pytest.approx(1 / 3, rel=1e-14)
    # a sure first token: (1 - 0) / (1 + 0) = 1; a coin flip: 0
    assert aggregate_logprobs([0.0], method="margin", top2=[0.0, -math.inf]) == 1.0
    assert aggregate_logprobs([L(0.5)], method="margin", top2=[L(0.5), L(0.5)]) == 0.0


def test_margin_of_two_impossible_tokens_is_undefined():
    with pytest.warns(UndefinedMetricWarning, match="margin is undefined"):
        assert math.isnan(aggregate_logprobs([0.0], method="margin",
                                             top2=[-math.inf, -math.inf]))


@pytest.mark.parametrize("kwargs, match", [
    ({"token_logprobs": [-0.1, 0.5]},
     r"token_logprobs must be log-probabilities \(numbers <= 0, not NaN\); found 1 value "
     r"breaking it, first at index 1 \(0.5\)"),
    ({"token_logprobs": [-0.1, float("nan"), float("nan")]},
     r"found 2 values breaking it, first at index 1 \(nan\)"),
    ({"token_logprobs": []}, r"token_logprobs must not be empty; found 0 values"),
    ({"token_logprobs": "abc"}, r"token_logprobs must be a sequence of log-probabilities"),
    ({"token_logprobs": [True, False]}, r"token_logprobs must be numbers"),
    ({"token_logprobs": [-0.1], "method": "max"},
     r"method must be one of 'first', 'mean', 'margin'; found 'max'"),
    ({"token_logprobs": [-0.1], "method": "margin"}, r"top2 must be given for method='margin'"),
    ({"token_logprobs": [-0.1], "method": "margin", "top2": [-0.1]},
     r"top2 must hold at least 2 log-probabilities .*; found 1"),
    ({"token_logprobs": [-0.1], "top2": [-0.1, 0.2]},
     r"top2 must be log-probabilities .* first at index 1 \(0.2\)"),
])
def test_aggregate_rejects_bad_input(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        aggregate_logprobs(**kwargs)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.floats(-50, 0), min_size=1, max_size=20),
       st.lists(st.floats(-50, 0), min_size=2, max_size=5))
def test_aggregates_are_probabilities_and_mean_lies_between_extremes(lp, top):
    p = np.exp(np.array(lp))
    first = aggregate_logprobs(lp)
    mean = aggregate_logprobs(lp, method="mean")
    margin = aggregate_logprobs(lp, method="margin", top2=top)
    assert 0.0 <= first <= 1.0 and 0.0 <= margin <= 1.0
    assert p.min() * (1 - 1e-12) <= mean <= p.max() * (1 + 1e-12)
    assert isinstance(first, float) and isinstance(mean, float) and isinstance(margin, float)


# ---------------------------------------------------------------------------------------
# value_token_spans
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, occurrence, expected", [
    ("Agency", 0, [4, 5, 6]),                 # 'AC', 'ME', ' Media'; not ' "' nor '",'
    ("GrossTotal", 0, [12, 13, 14, 15]),      # ' 12', '34', '.', '50'
    ("Paid", 0, [20]),                        # ' true'
    ("PaymentTerms", 0, []),                  # null: no value tokens
    ("LineItems.Description", 0, [36, 37, 38]),
    ("LineItems.Rate", 0, [43, 44, 45]),      # ' 150', '.', '00'
    ("LineItems.Description", 1, [51, 52, 53, 54, 55]),  # escaped quotes are content
    ("LineItems.Rate", 1, [60]),
    ("Rate", 1, [60]),                        # bare sub-field: the one list that has it
])
def test_wordpiece_spans(key, occurrence, expected):
    assert value_token_spans(WORDPIECE, key, occurrence=occurrence) == expected
    assert value_token_spans(WORDPIECE, key, occurrence=occurrence,
                             token_style="text") == expected


@pytest.mark.parametrize("key, occurrence, expected", [
    ("Agency", 0, [4, 5, 6]),        # 'Caf', 'Ã©' (é's two bytes), 'ĠMedia",' (split quote)
    ("Advertiser", 0, [12, 13]),     # '":"' holds no content; "'s" does
    ("LineItems.Rate", 0, [22]),
    ("LineItems.Rate", 1, [26, 27, 28, 29, 30, 31]),  # '":-' holds the minus sign
])
def test_byte_level_spans(key, occurrence, expected):
    assert value_token_spans(BYTE_LEVEL, key, occurrence=occurrence) == expected
    assert value_token_spans(BYTE_LEVEL, key, occurrence=occurrence,
                             token_style="byte-level") == expected


def test_sentencepiece_spans_and_a_token_holding_the_opening_quote():
    assert value_token_spans(SENTENCEPIECE, "Agency") == [6, 7, 8]  # '▁"AC', 'ME', '▁Media'


def test_a_value_split_inside_a_multibyte_character():
    # 'é' is bytes C3 A9: byte-level BPE may put them in different tokens; both count
    tokens = ['{"', 'a', '":"', 'Caf', 'Ã', '©', '"}']
    assert value_token_spans(tokens, "a", token_style="byte-level") == [3, 4, 5]


def test_empty_string_and_empty_tokens():
    # "" is missing like null; an empty token (a special token decoding to nothing) inside
    # a value holds no byte of it and is not one of its tokens
    assert value_token_spans(['{"a": ""}'], "a") == []
    assert value_token_spans(['{"a": "x', '', 'y"}'], "a") == [0, 2]


def test_whole_answer_in_one_token_and_nested_values():
    tokens = ['{"a": [1, 2], "b": {"c": 3}}']
    assert value_token_spans(tokens, "a") == [0]
    assert value_token_spans(tokens, "b") == [0]


def test_prose_braces_before_the_answer_are_skipped():
    tokens = ["Use", " {braces}", " here:", ' {"a":', ' 1}']
    assert value_token_spans(tokens, "a") == [4]


@pytest.mark.parametrize("tokens, key, occurrence, match", [
    (['{"a": "b'], "a", 0,
     r"tokens must contain a valid JSON object; the object starting at tokens\[0\] breaks "
     r"at tokens\[0\]: the string that starts there is not terminated"),
    (['{"a": 1,', '}'], "a", 0, r"breaks at tokens\[1\]: a quoted key was expected"),
    (["no json here"], "a", 0, r"tokens must contain a JSON object; found no '\{'"),
    (['{"a": 1, "a": 2}'], "a", 0, r"field a must appear once in its object; found it 2 times"),
    (['{"a": 1}'], "b", 0, r"key 'b' must be a top-level key of the answer.*found top-level "
                           r"keys \['a'\]"),
    (['{"a": 1}'], "a", 1, r"occurrence must be 0 for the top-level key 'a'; found 1"),
    (WORDPIECE, "LineItems.Rate", 2,
     r"occurrence must index a record of LineItems \(2 records\); found 2"),
    (['{"L": [{"x": 1}, {"r": 2}]}'], "L.r", 0,
     r"field L\[0\] must have the key 'r'; found keys \['x'\]"),
    (['{"L": [{"r": 1}], "M": [{"r": 2}]}'], "r", 0, r"key 'r' is ambiguous"),
    (['{"L": 3}'], "L.r", 0, r"field L must be a list of records .* found a JSON number"),
    ([], "a", 0, r"tokens must not be empty"),
    ("{}", "a", 0, r"tokens must be a sequence of strings"),
    (['{"a":', 1], "a", 0, r"tokens must be strings; found 1 that are not, first at index 1"),
])
def test_value_token_spans_errors(tokens, key, occurrence, match):
    with pytest.raises(ValidationError, match=match):
        value_token_spans(tokens, key, occurrence=occurrence)


def test_unknown_byte_level_character_is_named():
    with pytest.raises(ValidationError, match=r"tokens\[1\] must use the byte-level alphabet"):
        value_token_spans(['{"a":', '▲1}'], "a", token_style="byte-level")


def test_bad_options():
    with pytest.raises(ValidationError, match="token_style must be one of"):
        value_token_spans(WORDPIECE, "Agency", token_style="wordpiece")
    with pytest.raises(ValidationError, match=r"occurrence must be an integer >= 0; found -1"):
        value_token_spans(WORDPIECE, "Agency", occurrence=-1)


# A property: random JSON objects cut into random tokens, at the byte level (so multi-byte
# characters get split too), checked against the byte ranges recorded while writing the JSON.
_SCALARS = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8),
    st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(), st.none())


def _to_byte_level(piece: bytes) -> str:
    from confcal.calibration.confidence import BYTE_LEVEL_ALPHABET

    encoder = {b: ch for ch, b in BYTE_LEVEL_ALPHABET.items()}
    return "".join(encoder[b] for b in piece)


@settings(max_examples=examples(100), deadline=None)
@given(values=st.dictionaries(st.text("abcxyz_", min_size=1, max_size=5), _SCALARS,
                              min_size=1, max_size=5),
       cuts=st.lists(st.integers(0, 400), max_size=40), style=st.sampled_from(["text", "bpe"]))
def test_spans_match_recorded_byte_ranges(values, cuts, style):
    parts, ranges, pos = [b"{"], {}, 1
    for i, (key, value) in enumerate(values.items()):
        head = (", " if i else "") + json.dumps(key) + ": "
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        start = pos + len(head.encode())
        if isinstance(value, str):  # the content between the quotes
            ranges[key] = (start + 1, start + len(body) - 1)
        elif value is None:
            ranges[key] = (start, start)  # no value tokens
        else:
            ranges[key] = (start, start + len(body))
        parts += [head.encode(), body]
        pos = start + len(body)
    data = b"".join(parts) + b"}"
    if style == "text":  # cut between characters
        text = data.decode("utf-8")
        char_cuts = sorted({c for c in cuts if c < len(text)} | {0, len(text)})
        pieces = [text[a:b].encode("utf-8") for a, b in itertools.pairwise(char_cuts)]
        tokens = [p.decode("utf-8") for p in pieces]
    else:  # cut anywhere, even inside a character
        byte_cuts = sorted({c for c in cuts if c < len(data)} | {0, len(data)})
        pieces = [data[a:b] for a, b in itertools.pairwise(byte_cuts)]
        tokens = [_to_byte_level(p) for p in pieces]
    bounds = np.cumsum([0] + [len(p) for p in pieces])
    for key, (lo, hi) in ranges.items():
        # null and "" have an empty range, so no token intersects it
        expected = [i for i in range(len(pieces)) if bounds[i] < hi and bounds[i + 1] > lo
                    and lo < hi]
        got = value_token_spans(tokens, key, token_style="byte-level" if style == "bpe"
                                else "text")
        assert got == expected, (key, tokens)


# ---------------------------------------------------------------------------------------
# confidences_from_logprobs
# ---------------------------------------------------------------------------------------
def _wordpiece_logprobs() -> list[float]:
    lp = [0.0] * len(WORDPIECE)
    lp[4], lp[5], lp[6] = L(0.5), L(0.8), L(0.2)          # Agency
    lp[12], lp[13], lp[14], lp[15] = L(0.9), L(0.5), 0.0, L(0.5)  # GrossTotal
    lp[43], lp[44], lp[45] = L(0.7), 0.0, 0.0             # Rate 0
    lp[60] = L(0.3)                                         # Rate 1
    return lp


def test_confidences_first():
    doc = confidences_from_logprobs(WORDPIECE, _wordpiece_logprobs(), SCHEMA)
    assert list(doc) == ["Agency", "GrossTotal", "Paid", "PaymentTerms", "LineItems"]
    assert doc["Agency"]["value"] == "ACME Media"
    assert doc["Agency"]["confidence"] == pytest.approx(0.5)       # first token 'AC'
    assert doc["GrossTotal"] == {"value": 1234.5, "confidence": pytest.approx(0.9)}
    assert doc["Paid"] is True                       # not in the schema: passed through
    assert doc["PaymentTerms"] == {"value": None, "confidence": None}  # null
    items = doc["LineItems"]
    assert items[0]["Description"] == {"value": "News at 6", "confidence": 1.0}
    assert items[0]["Rate"] == {"value": 150.0, "confidence": pytest.approx(0.7)}
    assert items[1]["Description"]["value"] == 'The "Late" Show'
    assert items[1]["Rate"] == {"value": 75, "confidence": pytest.approx(0.3)}


def test_confidences_mean_and_margin():
    lp = _wordpiece_logprobs()
    doc = confidences_from_logprobs(WORDPIECE, lp, SCHEMA, method="mean")
    # Agency: (0.5 * 0.8 * 0.2)^(1/3); GrossTotal: (0.9 * 0.5 * 1 * 0.5)^(1/4) = 0.225^(1/4)
    assert doc["Agency"]["confidence"] == pytest.approx(0.08 ** (1 / 3), rel=1e-13)
    assert doc["GrossTotal"]["confidence"] == pytest.approx(0.225 ** 0.25, rel=1e-13)
    top: list = [None] * len(WORDPIECE)
    top[4] = {"AC": L(0.5), "AB": L(0.3), "A": L(0.1)}   # (0.5 - 0.3) / 0.8 = 0.25
    top[12] = [L(0.9), L(0.05)]                          # (0.9 - 0.05) / 0.95
    top[36] = top[43] = top[51] = top[60] = [0.0, -math.inf]  # sure: 1.0
    doc = confidences_from_logprobs(WORDPIECE, lp, SCHEMA, method="margin", top_logprobs=top)
    assert doc["Agency"]["confidence"] == pytest.approx(0.25, rel=1e-13)
    assert doc["GrossTotal"]["confidence"] == pytest.approx(0.85 / 0.95, rel=1e-13)
    assert doc["LineItems"][1]["Rate"]["confidence"] == 1.0


def test_confidences_byte_level_and_sentencepiece():
    schema = Schema({"Agency": Field(Text()), "Advertiser": Field(Text()),
                     "LineItems": Items({"Rate": Field(Number())})})
    lp = [-0.01 * i for i in range(len(BYTE_LEVEL))]
    doc = confidences_from_logprobs(BYTE_LEVEL, lp, schema)
    assert doc["Agency"] == {"value": "Café Media", "confidence": pytest.approx(math.exp(-0.04))}
    assert doc["Advertiser"]["value"] == "Bob's"
    assert doc["LineItems"][1]["Rate"] == {"value": -2500.0,
                                           "confidence": pytest.approx(math.exp(-0.26))}
    doc = confidences_from_logprobs(SENTENCEPIECE, [L(0.5)] * len(SENTENCEPIECE),
                                    Schema({"Agency": Field(Text())}))
    assert doc == {"Agency": {"value": "ACME Media", "confidence": pytest.approx(0.5)}}


def test_confidences_feed_score_documents():
    doc = confidences_from_logprobs(WORDPIECE, _wordpiece_logprobs(), SCHEMA)
    truth = {"Agency": "ACME Media", "GrossTotal": "1,234.50", "PaymentTerms": "Net 30",
             "LineItems": [{"Description": "News at 6", "Rate": "150"},
                           {"Description": 'The "Late" Show', "Rate": "80"}]}
    result = score_documents(SCHEMA, {"d": truth}, {"d": doc})
    _, confidence, n_without = result.to_calibration()
    # PaymentTerms has no confidence (null); the other 6 leaves do
    assert n_without == 1 and len(confidence) == 6
    assert result.counts["unknown_fields"] == 1  # "Paid"


@pytest.mark.parametrize("kwargs, match", [
    ({"token_logprobs": [0.0] * 3}, r"tokens, token_logprobs must have the same length; "
                                    r"tokens has 62 and token_logprobs has 3"),
    ({"method": "margin"}, r"top_logprobs must be given for method='margin'; found None"),
    ({"method": "margin", "top_logprobs": [None] * len(WORDPIECE)},
     r"field Agency: top_logprobs\[4\] \(the value's first token\) must hold the top "
     r"alternatives for method='margin'; found None"),
    ({"top_logprobs": [None] * 2}, r"tokens, top_logprobs must have the same length"),
    ({"top_logprobs": {"a": 1}}, r"top_logprobs must be a sequence with one entry per token"),
    ({"schema": {"Agency": Field(Text())}}, r"schema must be a confcal Schema; found dict"),
])
def test_confidences_errors(kwargs, match):
    args = {"tokens": WORDPIECE, "token_logprobs": [0.0] * len(WORDPIECE), "schema": SCHEMA,
            **kwargs}
    with pytest.raises(ValidationError, match=match):
        confidences_from_logprobs(args.pop("tokens"), args.pop("token_logprobs"),
                                  args.pop("schema"), **args)


@pytest.mark.parametrize("answer, match", [
    ('{"Agency": ["A", "B"]}', r"field Agency must be a scalar .*; found a JSON array"),
    ('{"LineItems": {"Rate": 1}}', r"field LineItems must be a list of records .* found a "
                                   r"JSON object"),
    ('{"LineItems": [1]}', r"field LineItems\[0\] must be a record"),
    ('{"LineItems": [{"Rate": 1, "Rate": 2}]}', r"field LineItems\[0\].Rate must appear once"),
    ('{"Agency": "a", "Agency": "b"}', r"field Agency must appear once in its object"),
])
def test_confidences_malformed_answers_name_the_field(answer, match):
    tokens = list(answer)  # one character per token
    with pytest.raises(ValidationError, match=match):
        confidences_from_logprobs(tokens, [0.0] * len(tokens), SCHEMA)


def test_confidences_keep_null_items_and_unknown_sub_fields():
    answer = '{"LineItems": [{"Rate": 5, "Note": [1, 2]}], "Extra": {"k": null}}'
    doc = confidences_from_logprobs(list(answer), [L(0.5)] * len(answer), SCHEMA)
    assert doc == {"LineItems": [{"Rate": {"value": 5, "confidence": pytest.approx(0.5)},
                                  "Note": [1, 2]}], "Extra": {"k": None}}
    answer = '{"LineItems": null}'
    assert confidences_from_logprobs(list(answer), [0.0] * len(answer), SCHEMA) == {
        "LineItems": None}


# ---------------------------------------------------------------------------------------
# parse_topk
# ---------------------------------------------------------------------------------------
TOPK_TEXT = """Sure. Here are my top candidates:
```json
{"Agency": [{"value": "ACME Media", "probability": 0.7},
            {"value": "ACME", "probability": 0.2},
            {"value": "Acme Media Inc", "probability": 0.1}],
 "GrossTotal": {"candidates": [{"value": "1,234.50", "probability": 0.95}]},
 "PaymentTerms": null,
 "Notes": "not in the schema",
 "LineItems": [{"Description": [{"value": "News at 6", "probability": 0.6},
                                {"value": null, "probability": 0.3}],
                "Rate": [{"value": 150, "probability": 0.9}]}]}
```
Let me know if you need more."""


def test_parse_topk_text_with_fence_and_prose():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0.7 + 0.2 + 0.1 = 1.0000000000000002: no warning
        doc = parse_topk(TOPK_TEXT, SCHEMA)
    assert doc["Agency"]["candidates"][1] == {"value": "ACME", "probability": 0.2}
    assert len(doc["Agency"]["candidates"]) == 3
    assert doc["GrossTotal"] == {"candidates": [{"value": "1,234.50", "probability": 0.95}]}
    assert doc["PaymentTerms"] is None
    assert doc["Notes"] == "not in the schema"
    assert doc["LineItems"][0]["Description"]["candidates"][1] == {"value": None,
                                                                   "probability": 0.3}
    # the parsed document scores: the best candidate is the prediction
    truth = {"Agency": "ACME Media", "GrossTotal": "1234.5", "PaymentTerms": "Net 30",
             "LineItems": [{"Description": "News at 6", "Rate": "150.00"}]}
    entities = score_documents(SCHEMA, {"d": truth}, {"d": doc}).entities
    assert entities.set_index("field").loc["Agency", "confidence"] == 0.7


def test_parse_topk_accepts_a_dict_and_keeps_order():
    answer = json.loads(TOPK_TEXT.split("```json\n")[1].split("```")[0])
    assert parse_topk(answer, SCHEMA) == parse_topk(TOPK_TEXT, SCHEMA)


def test_parse_topk_counts_sums_above_one_in_one_warning():
    answer = {"Agency": [{"value": "A", "probability": 0.8}, {"value": "B", "probability": 0.5}],
              "GrossTotal": [{"value": 1, "probability": 0.5}],
              "LineItems": [{"Rate": [{"value": 1, "probability": 0.9},
                                      {"value": 2, "probability": 0.9}]}]}
    # 0.8 + 0.5 = 1.3 and 0.9 + 0.9 = 1.8 exceed 1; 3 fields with candidates in all
    with pytest.warns(ProbabilitySumWarning,
                      match=r"sum above 1 in 2 of 3 fields \(first: Agency, sum 1.3\); kept"):
        doc = parse_topk(answer, SCHEMA)
    assert doc["Agency"]["candidates"][1]["probability"] == 0.5  # kept as given


@pytest.mark.parametrize("answer, kwargs, match", [
    ({"Agency": [{"value": "A", "probability": 1.2}]}, {},
     r"field Agency, candidates\[0\].probability must be a number within \[0, 1\]; found 1.2"),
    ({"Agency": [{"value": "A", "probability": "0.8"}]}, {},
     r"probability must be a number within \[0, 1\]; found '0.8'"),
    ({"Agency": [{"value": "A", "probability": True}]}, {}, r"found True"),
    ({"Agency": [{"value": "A", "probability": float("nan")}]}, {}, r"found nan"),
    ({"LineItems": [{"Rate": [{"value": 1, "probability": 0.5}]},
                    {"Rate": [{"value": 1, "prob": 0.5}]}]}, {},
     r"field LineItems\[1\].Rate, candidates\[0\] must be an object with exactly the keys "
     r"'probability', 'value'; found keys \['prob', 'value'\]"),
    ({"Agency": [{"value": str(i), "probability": 0.1} for i in range(5)]}, {},
     r"field Agency must have 1 to k=4 candidates; found 5"),
    ({"Agency": [{"value": "A", "probability": 0.5}] * 3}, {"k": 2},
     r"must have 1 to k=2 candidates; found 3"),
    ({"Agency": []}, {}, r"field Agency must have 1 to k=4 candidates; found 0"),
    ({"Agency": "ACME"}, {}, r"field Agency must be a list of candidates"),
    ({"Agency": {"value": "A", "probability": 0.5}}, {},
     r"field Agency must be a list of candidates or \{'candidates': \[...\]\}"),
    ({"Agency": [{"value": ["A"], "probability": 0.5}]}, {},
     r"candidates\[0\].value must be a scalar"),
    ({"LineItems": {"Rate": []}}, {}, r"field LineItems must be a list of records"),
    ({"LineItems": ["x"]}, {}, r"field LineItems\[0\] must be a record"),
    ("no json at all", {}, r"answer must contain a JSON object"),
    ('```json\n{"Agency": [{"value": "A", "probability": 0.5}]\n```', {},
     r"answer must contain a valid JSON object; the object starting at character 8 breaks "
     r"at character 56: .,. or .}. was expected; found .`."),
    ('{"Agency": null, "Agency": null}', {}, r"Agency must appear once in its object"),
    (42, {}, r"answer must be the model's text or a parsed JSON object; found int"),
    ({}, {"k": 0}, r"k must be an integer >= 1; found 0"),
])
def test_parse_topk_errors_name_the_field(answer, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        parse_topk(answer, SCHEMA, **kwargs)


def test_docs_examples_run():
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "confidence.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.DOTALL)
    assert len(blocks) == 4
    for block in blocks:
        exec(compile(block, str(doc), "exec"), {})  # noqa: S102 - the docs' own examples
