"""Pipeline specs: phases of (augmentation_name, params) steps, and their checks."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ...exceptions import ValidationError
from .._optional import require

__all__ = ["EXTRA", "MEASURED_TIERS", "NESTING", "PHASES", "SEVERITIES", "PipelineSpec", "Step",
           "check_name", "require_augment"]

PHASES: tuple[str, ...] = ("ink", "paper", "post")
"""The phases of a pipeline, in the order Augraphy runs them."""

SEVERITIES: tuple[str, ...] = ("none", "mild", "moderate", "high")
"""Phase severities, from least to most; a pipeline's intended tier is its highest."""

MEASURED_TIERS: tuple[str, ...] = ("mild", "moderate", "high")
"""Tiers by measured accuracy drop: mild < 0.05, moderate 0.05 to 0.10, high > 0.10."""

EXTRA = "augment"
NESTING = frozenset({"OneOf", "AugmentationSequence"})
_DOC_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def require_augment(module: str) -> Any:
    """Import an optional dependency, naming the extra that installs it when missing."""
    return require(module, user="confcal.extras.augment", extra=EXTRA)


# ---------------------------------------------------------------------------------------
# specs
# ---------------------------------------------------------------------------------------
Step = tuple[str, Mapping[str, Any]]


def _freeze_steps(steps: Any, where: str) -> tuple[Step, ...]:
    """Validate a list of (augmentation_name, params) pairs and freeze it."""
    if isinstance(steps, (str, bytes, Mapping)) or not isinstance(steps, Iterable):
        raise ValidationError(f"{where} must be a list of (augmentation_name, params) pairs; "
                              f"found {steps!r:.80}")
    out: list[Step] = []
    for i, step in enumerate(steps):
        at = f"{where}[{i}]"
        if not isinstance(step, (tuple, list)) or len(step) != 2:
            raise ValidationError(f"{at} must be an (augmentation_name, params) pair; "
                                  f"found {step!r:.80}")
        name, params = step
        if not isinstance(name, str) or not name.isidentifier():
            raise ValidationError(f"{at} must start with an Augraphy class name; found {name!r}")
        if not isinstance(params, Mapping):
            raise ValidationError(f"{at} ({name}) params must be a mapping of keyword "
                                  f"parameters; found {params!r:.80}")
        bad = [k for k in params if not isinstance(k, str) or not k.isidentifier()]
        if bad:
            raise ValidationError(f"{at} ({name}) parameter names must be identifiers; "
                                  f"found {bad[0]!r}")
        params = dict(params)
        if name in NESTING:
            if "augmentations" not in params:
                raise ValidationError(f"{at} ({name}) must have an 'augmentations' list of "
                                      "(augmentation_name, params) pairs; found none")
            params["augmentations"] = _freeze_steps(params["augmentations"],
                                                    f"{at}.augmentations")
        out.append((name, MappingProxyType(params)))
    return tuple(out)


def check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not _DOC_ID.fullmatch(name):
        raise ValidationError(f"{what} must be a non-empty string of letters, digits, '.', "
                              f"'_' or '-' (it names files); found {name!r}")
    return name


@dataclass(frozen=True)
class PipelineSpec(Mapping[str, tuple[Step, ...]]):
    """A named degradation pipeline: three phases of Augraphy steps and what they mean.

    It is a mapping ``{"ink": steps, "paper": steps, "post": steps}`` (iterating gives the
    phases), so it can be passed wherever a plain spec can, and unpacked to make a variant.

    Parameters
    ----------
    name : str
        Letters, digits, ``.``, ``_``, ``-`` (it names files and the ``pipeline`` column).
    ink, paper, post : sequence of (str, mapping)
        ``(augmentation_name, params)`` steps of each phase.
    severity : mapping of str to str, optional
        Per phase, one of :data:`SEVERITIES`; defaults to ``"none"`` for an empty phase and
        ``"moderate"`` otherwise.
    effect : str
        The real-world effect the pipeline imitates, in one line.
    based_on : str, optional
        The Augraphy function the pipeline was derived from.
    measured_tier : str, optional
        The tier its measured OCR accuracy drop falls in (one of ``"mild"`` (< 0.05),
        ``"moderate"`` (0.05 to 0.10), ``"high"`` (> 0.10)); ``None`` when not measured.
        The registry's come from ``benchmarks/bench_degradation.py``.

    Examples
    --------
    >>> spec = PipelineSpec("grey", post=[("Brightness", {"brightness_range": (0.8, 0.9)})],
    ...                     severity={"post": "mild"}, effect="a dim scan")
    >>> spec["post"][0][0], spec.tier, sorted(spec)
    ('Brightness', 'mild', ['ink', 'paper', 'post'])
    >>> from confcal.extras.augment import PIPELINES
    >>> PIPELINES["stains"].effect
    'coffee and water stains on the paper'
    >>> PIPELINES["custom12"].intended_tier, PIPELINES["custom12"].tier
    ('moderate', 'moderate')
    """

    name: str
    # any sequence of steps; stored as a tuple of (name, read-only params) pairs
    ink: Sequence[Any] = ()
    paper: Sequence[Any] = ()
    post: Sequence[Any] = ()
    severity: Mapping[str, str] = field(default_factory=dict)
    effect: str = ""
    based_on: str | None = None
    measured_tier: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "name")
        for phase in PHASES:
            object.__setattr__(self, phase, _freeze_steps(getattr(self, phase),
                                                          f"pipeline {self.name!r}, {phase}"))
        if not isinstance(self.severity, Mapping):
            raise ValidationError(f"severity must be a mapping phase -> severity; found "
                                  f"{self.severity!r}")
        unknown = [p for p in self.severity if p not in PHASES]
        if unknown:
            raise ValidationError(f"severity phases must be among {list(PHASES)}; found "
                                  f"{unknown[0]!r}")
        severity = {}
        for phase in PHASES:
            default = "moderate" if getattr(self, phase) else "none"
            value = self.severity.get(phase, default)
            if value not in SEVERITIES:
                raise ValidationError(f"severity of phase {phase!r} must be one of "
                                      f"{list(SEVERITIES)}; found {value!r}")
            severity[phase] = value
        object.__setattr__(self, "severity", MappingProxyType(severity))
        if not isinstance(self.effect, str):
            raise ValidationError(f"effect must be a string; found {self.effect!r}")
        if self.measured_tier is not None and self.measured_tier not in MEASURED_TIERS:
            raise ValidationError(f"measured_tier must be one of {list(MEASURED_TIERS)} or "
                                  f"None; found {self.measured_tier!r}")

    def __getitem__(self, phase: str) -> tuple[Step, ...]:
        if phase not in PHASES:
            raise KeyError(phase)
        return getattr(self, phase)  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(PHASES)

    def __len__(self) -> int:
        return len(PHASES)

    __hash__ = None  # type: ignore[assignment]  # params are mutable mappings' views

    @property
    def intended_tier(self) -> str:
        """The highest phase severity (``"none"`` for an empty pipeline): the design intent."""
        return max(self.severity.values(), key=SEVERITIES.index)

    @property
    def tier(self) -> str:
        """The measured tier when there is one, else :attr:`intended_tier`."""
        return self.measured_tier if self.measured_tier is not None else self.intended_tier

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict (steps as ``[name, params]`` lists)."""
        return {"name": self.name, "ink": _steps_json(self.ink),
                "paper": _steps_json(self.paper), "post": _steps_json(self.post),
                "severity": dict(self.severity), "effect": self.effect,
                "based_on": self.based_on, "measured_tier": self.measured_tier}


def _steps_json(steps: Sequence[Step]) -> list[Any]:
    def value(v: Any) -> Any:
        if isinstance(v, tuple) and v and isinstance(v[0], tuple) and len(v[0]) == 2 \
                and isinstance(v[0][1], Mapping):
            return _steps_json(v)
        if isinstance(v, (tuple, list)):
            return [value(x) for x in v]
        if isinstance(v, np.generic):
            return v.item()
        return v

    return [[name, {k: value(v) for k, v in params.items()}] for name, params in steps]


