"""Two-stage verbalized confidence: extract the values first, score them in a second call.

The decoupled method the ConfBench paper leaves to future work: call 1 asks for the
document's field values only (no confidence, so the extraction is not shaped by having to
state one); call 2, to the same or another model, receives the document's inputs and the
extracted values and answers, for each value, the probability that it is correct. The
probabilities attach to the values of call 1: a predicted document in the
``{"value": v, "confidence": p}`` form, as the log-probability strategy gives.

:func:`read_values` reads call 1's answer, :func:`scoring_request` builds call 2 and
:func:`attach_scores` reads its answer onto the values. :mod:`confcal.extras.extraction`
drives them (``strategy="two-stage"``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .._chat import ChatRequest
from .._validation import is_real
from ..calibration._json_scan import find_root, to_python
from ..exceptions import ValidationError
from ..scoring.schema import Field, Items, Schema

__all__ = ["SCORING_SYSTEM", "attach_scores", "read_json_answer", "read_values",
           "scoring_request"]

SCORING_SYSTEM = ("You check data extracted from business documents. Answer with one JSON "
                  "object and nothing else: no explanation, no reasoning, no code fence.")
"""The system prompt of the scoring call."""


def read_json_answer(text: str, what: str) -> dict[str, Any]:
    """The JSON object in a model's text (prose or a code fence around it is ignored).

    Raises ValidationError: no object, a repeated key, nesting beyond the reader's depth.
    """
    data = text.encode("utf-8", "surrogatepass")

    def where(offset: int) -> str:
        return f"character {len(data[:offset].decode('utf-8', 'ignore'))}"

    value = to_python(find_root(data, what, where), "")
    if not isinstance(value, dict):  # find_root returns an object node; be sure
        raise ValidationError(f"{what} must be a JSON object; found {type(value).__name__}")
    return value


def _scalar(value: Any, path: str) -> Any:
    if isinstance(value, (Mapping, list)):
        found = "an object" if isinstance(value, Mapping) else "an array"
        raise ValidationError(f"field {path} must be a scalar value (string, number, bool or "
                              f"null); found {found}")
    return value


def _walk(document: Mapping[str, Any], schema: Schema,
          leaf: Callable[[Any, str], Any], what: str) -> dict[str, Any]:
    """``document`` with each schema leaf replaced by ``leaf(value, path)``; others kept."""
    out: dict[str, Any] = {}
    for key, value in document.items():
        spec = schema.fields.get(key)
        if spec is None:
            out[key] = value  # not scored: passed through, the scorer counts it
        elif isinstance(spec, Field):
            out[key] = leaf(value, key)
        elif value is None:
            out[key] = None
        elif not isinstance(value, list):
            raise ValidationError(f"{what} field {key} must be a list of records (line items) "
                                  f"or null; found {type(value).__name__}")
        else:
            records = []
            for i, item in enumerate(value):
                path = f"{key}[{i}]"
                if not isinstance(item, Mapping):
                    raise ValidationError(f"{what} field {path} must be a record (an object); "
                                          f"found {type(item).__name__}")
                records.append({sub: leaf(v, f"{path}.{sub}") if sub in spec.fields else v
                                for sub, v in item.items()})
            out[key] = records
    return out


def read_values(text: str, schema: Schema) -> dict[str, Any]:
    """Call 1's answer: each schema field's value (a scalar, or line-item records).

    Examples
    --------
    >>> from confcal.scoring.comparators import Number, Text
    >>> schema = Schema({"Agency": Field(Text()), "LineItems": Items({"Rate": Field(Number())})})
    >>> read_values('{"Agency": "ACME", "LineItems": [{"Rate": 5}]}', schema)
    {'Agency': 'ACME', 'LineItems': [{'Rate': 5}]}
    """
    return _walk(read_json_answer(text, "answer"), schema, _scalar, "the answer's")


def _template(values: Mapping[str, Any], schema: Schema) -> str:
    return json.dumps(_walk(values, schema, lambda v, p: 0.0, "the values'"),
                      ensure_ascii=False)


def _scored_only(values: Mapping[str, Any], schema: Schema) -> dict[str, Any]:
    """The values the scoring call sees: schema fields only, in the schema's order."""
    out: dict[str, Any] = {}
    for key in schema.fields:
        if key not in values:
            continue
        spec, value = schema.fields[key], values[key]
        if isinstance(spec, Items) and isinstance(value, list):
            value = [{sub: r[sub] for sub in spec.fields if sub in r} for r in value]
        out[key] = value
    return out


def scoring_request(schema: Schema, values: Mapping[str, Any], *, field_lines: list[str],
                    inputs_text: list[str], images: tuple[bytes, ...],
                    max_tokens: int, sampling: Mapping[str, Any] | None = None
                    ) -> ChatRequest:
    """Call 2: the document's inputs and the extracted values; a probability per value.

    ``field_lines`` describe the fields (as call 1 did) and ``inputs_text`` the document
    (OCR lines); ``images`` are call 1's page images, so both calls see the same document.
    ``sampling`` holds the sampling parameters set on call 1 (checked there).
    """
    shown = _scored_only(values, schema)
    lines = [
        "These fields were extracted from the document below:", *field_lines, "",
        "The extracted values (null: the field was found absent from the document):",
        json.dumps(shown, ensure_ascii=False), "",
        ("For every extracted value, null included, give the probability (0.0 to 1.0) that "
         "it is correct: that it is the field's value on the document (for null: that the "
         "document does not contain the field). Judge each value on its own, against the "
         "document, whoever extracted it."),
        "",
        "Answer in exactly this form, with the same fields and the same number of line "
        "items, a probability in place of each value:",
        _template(shown, schema), "", *inputs_text, ""]
    return ChatRequest(system=SCORING_SYSTEM, text="\n".join(lines), images=images,
                       max_tokens=max_tokens, top_logprobs=0, **(sampling or {}))


def _refuse_extra(scores: Mapping[str, Any], shown: Mapping[str, Any], schema: Schema) -> None:
    """A probability for something not asked (a field not extracted, a field of a record
    that has none, a probability for a null list of line items) is an error, not ignored:
    an answer off the template may have shifted its probabilities onto the wrong values."""
    def extra(path: str, why: str) -> ValidationError:
        return ValidationError(f"the scoring answer must give probabilities only for the "
                               f"extracted values; found field {path}, {why}")

    for key, given in scores.items():
        if key not in shown:
            raise extra(key, "which was not extracted" if key in schema.fields
                        else "which is not a field of the schema")
        if isinstance(schema.fields[key], Items) and shown[key] is None and given is not None:
            raise extra(key, "whose line items were extracted as null (the template has "
                             "null there, no probability)")
        if isinstance(shown[key], list) and isinstance(given, list):
            for i, (record, asked) in enumerate(zip(given, shown[key], strict=False)):
                if isinstance(record, Mapping):
                    for sub in record:
                        if sub not in asked:
                            raise extra(f"{key}[{i}].{sub}", "which was not extracted in "
                                                             "that record")


def attach_scores(values: Mapping[str, Any], text: str, schema: Schema) -> dict[str, Any]:
    """Call 2's probabilities on call 1's values: ``{"value": v, "confidence": p}`` leaves.

    Every scored value needs a probability within [0, 1] at the same path (line items by
    position); a missing or invalid one, or one for a value that was not extracted, raises
    ValidationError naming the field.

    Examples
    --------
    >>> from confcal.scoring.comparators import Number, Text
    >>> schema = Schema({"Agency": Field(Text()), "LineItems": Items({"Rate": Field(Number())})})
    >>> values = {"Agency": "ACME", "LineItems": [{"Rate": 5}]}
    >>> attach_scores(values, '{"Agency": 0.9, "LineItems": [{"Rate": 0.25}]}', schema)
    {'Agency': {'value': 'ACME', 'confidence': 0.9}, 'LineItems': [{'Rate': {'value': 5, \
'confidence': 0.25}}]}
    """
    scores = read_json_answer(text, "the scoring answer")

    def probability(path: str) -> float:
        node: Any = scores
        for part in path.replace("]", "").replace("[", ".").split("."):
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise ValidationError(f"the scoring answer must give a probability for field "
                                      f"{path}; found none")
        if isinstance(node, bool) or not is_real(node) or not 0.0 <= float(node) <= 1.0:
            raise ValidationError(f"the scoring answer's field {path} must be a probability "
                                  f"within [0, 1]; found {node!r:.80}")
        return float(node)

    for key, spec in schema.fields.items():
        if isinstance(spec, Items) and isinstance(values.get(key), list):
            given = scores.get(key)
            n = len(values[key])
            if not isinstance(given, list) or len(given) != n:
                found = (f"{len(given)} records" if isinstance(given, list)
                         else f"a {type(given).__name__}")
                raise ValidationError(f"the scoring answer's field {key} must hold {n} line "
                                      f"item records, as extracted; found {found}")
    _refuse_extra(scores, _scored_only(values, schema), schema)
    return _walk(values, schema, lambda v, p: {"value": v, "confidence": probability(p)},
                 "the values'")
