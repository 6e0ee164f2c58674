"""What to score and how: fields, line-item lists and the schema that holds them.

A :class:`Schema` maps top-level field names to a :class:`Field` (one value compared by a
comparator) or an :class:`Items` (a list of records, such as invoice line items, whose
sub-fields are :class:`Field` objects). Schemas are frozen, and can be written to and read
from JSON so that the command line and other languages share one definition.

Default thresholds (``Field(threshold=None)``) come from the comparator's
``default_threshold``:

* ``Number``, ``Date``, ``Exact``: 1.0. They are binary (similarity 0 or 1), so any
  threshold in (0, 1] means "equal" / "within tolerance"; 1.0 says so plainly.
* ``Text``: 0.9, the ConfBench paper's near-exact acceptance (F1 "counts only exact or
  near-exact matches"): after normalization at most one edit per ten characters, none in a
  short value. The lenient ANLS cut-off 0.5, the threshold stickler-eval 1.0.0 applies, is
  :data:`confcal.scoring.comparators.ANLS_THRESHOLD`, to be asked for explicitly.

A custom comparator (any callable ``(truth, prediction) -> float``) has no default: give
its field an explicit ``threshold``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from dataclasses import fields as dataclass_fields
from typing import Any

from .._files import read_json_object
from .._validation import MAX_WEIGHT, MIN_WEIGHT, WEIGHT_RULE, is_real
from ..exceptions import ValidationError
from .comparators import Comparator, Date, Exact, Number, Text

__all__ = ["Field", "Items", "Schema"]

_COMPARATOR_TYPES: dict[str, type] = {"Text": Text, "Exact": Exact, "Number": Number, "Date": Date}
_FORMAT = "confcal.schema"
_VERSION = 1
_NAME = re.compile(r"[A-Za-z0-9._-]+")


def _check_name(name: Any, where: str) -> None:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{where} names must be non-empty strings; found {name!r}")


@dataclass(frozen=True)
class Field:
    """One scored value: a comparator, the similarity needed to count as correct, a weight.

    Parameters
    ----------
    comparator : Comparator
        ``Text()``, ``Exact()``, ``Number()``, ``Date()`` or any callable
        ``(truth, prediction) -> float`` in [0, 1].
    threshold : float in [0, 1], optional
        A pair of present values with ``similarity >= threshold`` is a TP, otherwise an FD.
        Defaults to the comparator's ``default_threshold`` (module docstring); required for
        a custom comparator.
    weight : float in [1e-100, 1e100], default 1.0
        Weight of this field's entities in WOA (the ``weight`` column of the entity table).

    See Also
    --------
    Schema : holds the fields.
    Text : the default text comparator.

    Examples
    --------
    >>> Field(Text()).threshold
    0.9
    >>> Field(Number(rel_tol=0.02), weight=2.0)
    Field(comparator=Number(rel_tol=0.02, abs_tol=0.0, decimal='.'), threshold=1.0, weight=2.0)
    >>> Field(lambda t, p: float(t == p))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: threshold must be given for a comparator without a
    default_threshold; found comparator <function <lambda> at ...>
    """

    comparator: Comparator
    _: KW_ONLY
    threshold: float | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not callable(self.comparator):
            raise ValidationError(
                "comparator must be callable as (truth, prediction) -> float; "
                f"found {self.comparator!r}"
            )
        threshold = self.threshold
        if threshold is None:
            threshold = getattr(self.comparator, "default_threshold", None)
            if threshold is None:
                raise ValidationError(
                    "threshold must be given for a comparator without a default_threshold; "
                    f"found comparator {self.comparator!r}"
                )
        if not is_real(threshold) or not 0.0 <= float(threshold) <= 1.0:
            raise ValidationError(f"threshold must be a number within [0, 1]; found {threshold!r}")
        if not is_real(self.weight) or not MIN_WEIGHT <= float(self.weight) <= MAX_WEIGHT:
            raise ValidationError(f"weight must be a number {WEIGHT_RULE}; found "
                                  f"{self.weight!r}")
        object.__setattr__(self, "threshold", float(threshold))
        object.__setattr__(self, "weight", float(self.weight))


@dataclass(frozen=True)
class Items:
    """A list of records (line items) matched one-to-one before their sub-fields are scored.

    Truth and predicted items are paired by ``scipy.optimize.linear_sum_assignment``,
    maximizing the total item similarity: the weighted mean (sub-field weights) of the
    sub-field similarities. A pair whose item similarity is below ``match_threshold`` is
    not allowed: its items stay unpaired (truth item -> FN rows, predicted item -> FA rows
    that keep their confidence). See :func:`confcal.scoring.matching.match_items`.

    Parameters
    ----------
    fields : mapping of str to Field
        The sub-fields of one record, in the order their rows appear in the entity table.
    match_threshold : float in [0, 1], default 0.0
        Minimum item similarity for two items to be paired. With 0.0 every item of the
        shorter list is paired.
    weight : float in [1e-100, 1e100], default 1.0
        Multiplies the sub-field weights in the entity table's ``weight`` column.

    See Also
    --------
    match_items : how the items are paired.
    Schema : holds them.

    Examples
    --------
    >>> items = Items({"Description": Field(Text()), "Rate": Field(Number())}, match_threshold=0.5)
    >>> list(items.fields), items.match_threshold
    (['Description', 'Rate'], 0.5)
    """

    fields: Mapping[str, Field]
    _: KW_ONLY
    match_threshold: float = 0.0
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.fields, Mapping):
            raise ValidationError(
                f"fields must be a mapping of sub-field names to Field; found {self.fields!r}"
            )
        if len(self.fields) == 0:
            raise ValidationError("fields must not be empty; found 0 sub-fields")
        for name, spec in self.fields.items():
            _check_name(name, "Items sub-field")
            if isinstance(spec, Items):
                raise ValidationError(
                    f"Items sub-field {name!r} must be a Field; found Items (nested lists are "
                    "not supported)"
                )
            if not isinstance(spec, Field):
                raise ValidationError(f"Items sub-field {name!r} must be a Field; found {spec!r}")
        if not is_real(self.match_threshold) or not 0.0 <= float(self.match_threshold) <= 1.0:
            raise ValidationError(
                f"match_threshold must be a number within [0, 1]; found {self.match_threshold!r}"
            )
        if not is_real(self.weight) or not MIN_WEIGHT <= float(self.weight) <= MAX_WEIGHT:
            raise ValidationError(f"weight must be a number {WEIGHT_RULE}; found "
                                  f"{self.weight!r}")
        object.__setattr__(self, "fields", dict(self.fields))
        object.__setattr__(self, "match_threshold", float(self.match_threshold))
        object.__setattr__(self, "weight", float(self.weight))


@dataclass(frozen=True)
class Schema:
    """The fields to score, by top-level name.

    Parameters
    ----------
    fields : mapping of str to Field or Items
    name : str, optional
        A short name shown in signatures (``"fcc-invoice"``); letters, digits, ``.``, ``_``
        and ``-``. The :attr:`digest`, not the name, tells two schemas apart.

    Attributes
    ----------
    entity_fields : tuple of str
        The names used in the entity table's ``field`` column, in schema order: a top-level
        field by its name (``"Agency"``), a line-item sub-field as ``"<items>.<sub-field>"``
        (``"LineItems.Rate"``), with the item indices in ``truth_index``/``pred_index``.

    See Also
    --------
    Field : one document field.
    Items : a list of line items.
    fcc_invoice : the ConfBench schema.
    score_documents : scores documents against a schema.

    Examples
    --------
    >>> schema = Schema({
    ...     "Agency": Field(Text()),
    ...     "LineItems": Items({"Rate": Field(Number()), "StartDate": Field(Date())}),
    ... })
    >>> schema.entity_fields
    ('Agency', 'LineItems.Rate', 'LineItems.StartDate')
    >>> Schema.from_json(schema.to_json()) == schema
    True
    """

    fields: Mapping[str, Field | Items]
    _: KW_ONLY
    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is not None and (
            not isinstance(self.name, str) or not _NAME.fullmatch(self.name)
        ):
            raise ValidationError(
                "name must be a non-empty string of letters, digits, '.', '_' and '-'; "
                f"found {self.name!r}")
        if not isinstance(self.fields, Mapping):
            raise ValidationError(
                f"fields must be a mapping of field names to Field or Items; found {self.fields!r}"
            )
        if len(self.fields) == 0:
            raise ValidationError("fields must not be empty; found 0 fields")
        names: list[str] = []
        for name, spec in self.fields.items():
            _check_name(name, "Schema field")
            if isinstance(spec, Items):
                names.extend(f"{name}.{sub}" for sub in spec.fields)
            elif isinstance(spec, Field):
                names.append(name)
            else:
                raise ValidationError(
                    f"Schema field {name!r} must be a Field or Items; found {spec!r}"
                )
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise ValidationError(
                "entity field names must be unique; found "
                f"{dup!r} both as a top-level field and as a line-item sub-field"
            )
        object.__setattr__(self, "fields", dict(self.fields))
        object.__setattr__(self, "_entity_fields", tuple(names))

    @property
    def entity_fields(self) -> tuple[str, ...]:
        """Entity-table field names in schema order (see the class docstring)."""
        return self._entity_fields  # type: ignore[attr-defined, no-any-return]

    @property
    def digest(self) -> str:
        """12 hex digits of SHA-256 over every comparator, threshold, weight and match
        threshold, in field order (the name is not part of it).

        Two schemas that score alike have the same digest; a change to any setting changes
        it. A custom comparator (no JSON form) enters by its module, qualified name and
        ``repr``: the digest then names the callable, not what it computes
        (:attr:`has_custom_comparators`).

        >>> Schema({"Total": Field(Number())}).digest == Schema({"Total": Field(Number())}).digest
        True
        >>> loose = Schema({"Total": Field(Number(rel_tol=0.02))})
        >>> Schema({"Total": Field(Number())}).digest == loose.digest
        False
        """
        text = json.dumps(self._description(), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=True)
        # sort_keys orders the keys inside each field; the field order itself is kept by
        # listing the fields as pairs.
        return hashlib.sha256(text.encode("ascii")).hexdigest()[:12]

    @property
    def has_custom_comparators(self) -> bool:
        """True when a field uses a comparator other than the four built-in ones."""
        return any(d.get("custom", False) for d in _leaf_descriptions(self._description()))

    def _description(self) -> list[Any]:
        return [[name, _items_description(spec) if isinstance(spec, Items)
                 else _field_description(spec)] for name, spec in self.fields.items()]

    # ------------------------------------------------------------------ JSON

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict; thresholds are written resolved.

        Raises
        ------
        ValidationError
            If a field uses a custom comparator, which cannot be written to JSON.
        """
        out: dict[str, Any] = {"format": _FORMAT, "version": _VERSION}
        if self.name is not None:
            out["name"] = self.name
        return {
            **out,
            "fields": {
                name: _items_to_dict(name, spec)
                if isinstance(spec, Items)
                else _field_to_dict(name, spec)
                for name, spec in self.fields.items()
            },
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The schema as a JSON string (:meth:`to_dict`).

        Examples
        --------
        >>> print(Schema({"Total": Field(Number())}).to_json())
        {
          "format": "confcal.schema",
          "version": 1,
          "fields": {
            "Total": {
              "kind": "field",
              "comparator": {
                "type": "Number",
                "rel_tol": 0.01,
                "abs_tol": 0.0,
                "decimal": "."
              },
              "threshold": 1.0,
              "weight": 1.0
            }
          }
        }
        """
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schema:
        """Read a schema written by :meth:`to_dict`; every key is checked (typos raise).

        A :class:`~confcal.exceptions.ValidationError` names the JSON path
        (``schema.fields.Agency.kind must be ...``); its ``field`` attribute holds the path
        within the schema object (``fields.Agency.kind``; None for the object itself).
        """
        where = "schema"
        _check_keys(data, where, required={"fields"}, optional={"format", "version", "name"})
        if data.get("format", _FORMAT) != _FORMAT:
            raise ValidationError(f"{where}.format must be {_FORMAT!r}; found {data['format']!r}",
                                  field="format")
        if data.get("version", _VERSION) != _VERSION:
            raise ValidationError(f"{where}.version must be {_VERSION}; found {data['version']!r}",
                                  field="version")
        raw = data["fields"]
        if not isinstance(raw, Mapping):
            raise ValidationError(f"{where}.fields must be an object; found {raw!r}",
                                  field="fields")
        out: dict[str, Field | Items] = {}
        for name, spec in raw.items():
            path = f"{where}.fields.{name}"
            if not isinstance(spec, Mapping):
                raise ValidationError(f"{path} must be an object; found {spec!r}",
                                      field=_field_path(path))
            kind = spec.get("kind")
            if kind == "field":
                out[name] = _field_from_dict(spec, path)
            elif kind == "items":
                out[name] = _items_from_dict(spec, path)
            else:
                raise ValidationError(f"{path}.kind must be one of 'field', 'items'; "
                                      f"found {kind!r}",
                                      field=_field_path(f"{path}.kind"))
        return _wrap(lambda: cls(out, name=data.get("name")), where)

    @classmethod
    def from_json(cls, text: str) -> Schema:
        """Read a schema written by :meth:`to_json`.

        Errors are those of :meth:`from_dict`; invalid JSON has the ``line`` attribute set
        (the line of ``text``).
        """
        return cls.from_dict(read_json_object(text, where="text"))


def _comparator_description(comparator: Any) -> dict[str, Any]:
    kind = next((k for k, t in _COMPARATOR_TYPES.items() if type(comparator) is t), None)
    if kind is not None:
        return _comparator_to_dict("", comparator)
    named = comparator if hasattr(comparator, "__qualname__") else type(comparator)
    return {"type": "custom", "custom": True,
            "name": f"{getattr(named, '__module__', '?')}.{named.__qualname__}",
            "repr": repr(comparator)}


def _field_description(spec: Field) -> dict[str, Any]:
    return {"comparator": _comparator_description(spec.comparator),
            "threshold": spec.threshold, "weight": spec.weight}


def _items_description(spec: Items) -> dict[str, Any]:
    return {"fields": [[sub, _field_description(f)] for sub, f in spec.fields.items()],
            "match_threshold": spec.match_threshold, "weight": spec.weight}


def _leaf_descriptions(description: list[Any]) -> list[dict[str, Any]]:
    """The comparator descriptions of a schema description, line-item sub-fields included."""
    out: list[dict[str, Any]] = []
    for _, spec in description:
        subs = [f for _, f in spec["fields"]] if "fields" in spec else [spec]
        out.extend(f["comparator"] for f in subs)
    return out


def _field_path(where: str) -> str | None:
    """The ``field`` of an error at a JSON path this module built: ``schema.fields.Agency``
    -> ``fields.Agency``, relative to the schema object (None for the object itself)."""
    return where.split(".", 1)[1] if "." in where else None


def _wrap(build: Any, where: str) -> Any:
    """Run a constructor, prefixing its validation message with the JSON path."""
    try:
        return build()
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc}", field=_field_path(where)) from None


def _check_keys(data: Mapping[str, Any], where: str, *, required: set[str],
                optional: set[str]) -> None:
    missing = sorted(required - set(data))
    if missing:
        raise ValidationError(f"{where} must have the keys {missing}; found {sorted(data)}",
                              field=_field_path(where))
    unknown = sorted(set(data) - required - optional)
    if unknown:
        allowed = sorted(required | optional)
        raise ValidationError(f"{where} keys must be among {allowed}; found unknown {unknown}",
                              field=_field_path(where))


def _comparator_to_dict(field_name: str, comparator: Any) -> dict[str, Any]:
    kind = next((k for k, t in _COMPARATOR_TYPES.items() if type(comparator) is t), None)
    if kind is None:
        raise ValidationError(
            f"field {field_name!r}: comparator must be one of {list(_COMPARATOR_TYPES)} to be "
            f"written to JSON; found {comparator!r}"
        )
    params = {f.name: getattr(comparator, f.name) for f in dataclass_fields(comparator)}
    return {"type": kind, **params}


def _field_to_dict(name: str, spec: Field) -> dict[str, Any]:
    return {
        "kind": "field",
        "comparator": _comparator_to_dict(name, spec.comparator),
        "threshold": spec.threshold,
        "weight": spec.weight,
    }


def _items_to_dict(name: str, spec: Items) -> dict[str, Any]:
    return {
        "kind": "items",
        "fields": {sub: _field_to_dict(f"{name}.{sub}", f) for sub, f in spec.fields.items()},
        "match_threshold": spec.match_threshold,
        "weight": spec.weight,
    }


def _comparator_from_dict(data: Any, where: str) -> Any:
    if not isinstance(data, Mapping):
        raise ValidationError(f"{where} must be an object; found {data!r}",
                              field=_field_path(where))
    kind = data.get("type")
    if kind not in _COMPARATOR_TYPES:
        raise ValidationError(
            f"{where}.type must be one of {', '.join(map(repr, _COMPARATOR_TYPES))}; "
            f"found {kind!r}",
            field=_field_path(f"{where}.type"),
        )
    cls = _COMPARATOR_TYPES[kind]
    params = {k: v for k, v in data.items() if k != "type"}
    allowed = {f.name for f in dataclass_fields(cls)}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValidationError(
            f"{where} parameters of {kind} must be among {sorted(allowed)}; "
            f"found unknown {unknown}",
            field=_field_path(where),
        )
    return _wrap(lambda: cls(**params), where)


def _field_from_dict(data: Mapping[str, Any], where: str) -> Field:
    _check_keys(data, where, required={"kind", "comparator"}, optional={"threshold", "weight"})
    comparator = _comparator_from_dict(data["comparator"], f"{where}.comparator")
    kwargs = {k: data[k] for k in ("threshold", "weight") if k in data}
    return _wrap(lambda: Field(comparator, **kwargs), where)  # type: ignore[no-any-return]


def _items_from_dict(data: Mapping[str, Any], where: str) -> Items:
    _check_keys(data, where, required={"kind", "fields"}, optional={"match_threshold", "weight"})
    raw = data["fields"]
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where}.fields must be an object; found {raw!r}",
                              field=_field_path(f"{where}.fields"))
    subs: dict[str, Field] = {}
    for sub, spec in raw.items():
        path = f"{where}.fields.{sub}"
        if not isinstance(spec, Mapping):
            raise ValidationError(f"{path} must be an object; found {spec!r}",
                                  field=_field_path(path))
        if spec.get("kind") != "field":
            raise ValidationError(f"{path}.kind must be 'field'; found {spec.get('kind')!r}",
                                  field=_field_path(f"{path}.kind"))
        subs[sub] = _field_from_dict(spec, path)
    kwargs = {k: data[k] for k in ("match_threshold", "weight") if k in data}
    return _wrap(lambda: Items(subs, **kwargs), where)  # type: ignore[no-any-return]
