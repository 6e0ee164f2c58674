"""Document degradation pipelines inside an OCR-safe envelope (Augraphy).

ConfBench builds its benchmark by degrading clean invoices with 20 Augraphy pipelines and
asking how much a model's confidence still means on the degraded pages. This module holds
those pipelines and runs them reproducibly:

* :data:`PIPELINES`: 20 named :class:`PipelineSpec` objects, 8 built on Augraphy's
  ``pipeline_archetype*`` functions with their parameters pulled inside the envelope and
  12 custom ones (bleed-through, ink mottling, low ink, dithering with dot matrix, stains,
  watermark, moiré on colored paper, bindings, skew with JPEG, shadow with a lighting
  gradient, dirty drum with rollers, fax with letterpress). Each has ink, paper and post
  phases, a severity per phase and a one-line real-world effect.
* :func:`make_pipeline` builds an ``augraphy.AugraphyPipeline`` from a spec after checking
  it against the OCR-safe envelope (:data:`ENVELOPE`).
* :func:`degrade` degrades one page: the same seed gives the same pixels, in any process.
* :func:`degrade_corpus` degrades many pages with many pipelines and writes each variant
  with its metadata next to it.

A spec is a mapping ``{"ink": [...], "paper": [...], "post": [...]}`` whose phases list
``(augmentation_name, params)`` pairs: an Augraphy class name and its keyword parameters.
``("OneOf", {"augmentations": [...], "p": 0.5})`` and ``("AugmentationSequence",
{"augmentations": [...]})`` nest steps. Every :class:`PipelineSpec` is such a mapping, so a
variant is ``{**PIPELINES["stains"], "post": [("Jpeg", {"quality_range": (80, 90)})]}``.

Install with the ``augment`` extra (augraphy, opencv-python-headless, pillow, tqdm). This
module imports without them; the functions that need them raise an ImportError naming
the extra.

Notes
-----
**The OCR-safe envelope** (checked by :func:`make_pipeline` on every parameter, Augraphy's
default included when the spec leaves it out):

==================  ============================================  ==========================
limit               read from                                     rule
==================  ============================================  ==========================
rotation            ``Geometric.rotate_range``,                   within ±5 degrees
                    ``PageBorder.page_rotation_angle_range``
                    (``Geometric(randomize=1)`` rotates ±10)
jpeg_quality        ``Jpeg.quality_range``                        70 to 95
brightness          ``Brightness.brightness_range``,              0.7 to 1.3
                    ``ColorShift.color_shift_brightness_range``,
                    ``BrightnessTexturize.texturize_range``
blur_radius         ``DepthSimulatedBlur`` ellipse semi-axes (px); at most 200 px
                    Gaussian kernel sizes k, read as the radius
                    (k - 1) / 2 (``ShadowCast``, ``ReflectedLight``,
                    ``BadPhotoCopy``, ``BleedThrough``, ...)
blur_iterations     ``DepthSimulatedBlur.blur_iteration_range``,  fewer than 8
                    ``ShadowCast.shadow_iterations_range``,
                    ``ColorShift.color_shift_iterations``
overlay_alpha       alpha/opacity of what is laid over the page:  below 0.3
                    ``BleedThrough``, ``InkMottling``, ``Moire``,
                    ``Stains``, ``LCDScreenPattern``,
                    ``PatternGenerator``, ``ShadowCast`` opacity,
                    ``LightingGradient`` (1 - transparency)
==================  ============================================  ==========================

A range is checked at both ends; a value that is not a number (``"random"``, or ``None``
for ``LightingGradient.transparency``, which Augraphy then draws from 0.5-0.85) cannot be
shown to be inside and is a violation. Two augmentations are refused whatever
``allow_unsafe`` says, because they download: ``Scribbles`` (fonts) and
``BindingsAndFasteners(use_figshare_library=1)`` (images).

**Reproducibility.** :func:`degrade` seeds Python's ``random``, NumPy's global generator,
OpenCV's generator and numba's own generators (jitted code draws from numba's state, not
NumPy's) with the seed itself, so seed 0 is a seed (``AugraphyPipeline(random_seed=0)``
would ignore it), and only then builds the pipeline, so that ``OneOf`` draws its choice
(at construction) from the seeded state. Numba's parallel loops run on one thread during
the call. Each call runs in a fresh temporary working directory: Augraphy writes
``./augraphy_cache`` there, and ``BleedThrough``, ``PageBorder`` and ``BookBinding`` read
their "other pages" from it, so a variant never depends on (or shows) pages degraded
before it. Calls are serialised by a lock: the seeded generators and the working
directory belong to the whole process.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import inspect
import json
import os
import random
import re
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from .._files import atomic_write, read_json_object
from .._validation import check_seed, is_real
from ..exceptions import ValidationError
from ._optional import progress, require

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ENVELOPE",
    "PHASES",
    "PIPELINES",
    "SEVERITIES",
    "EnvelopeError",
    "OCRSafeEnvelope",
    "PipelineSpec",
    "degrade",
    "degrade_corpus",
    "make_pipeline",
]

PHASES: tuple[str, ...] = ("ink", "paper", "post")
"""The phases of a pipeline, in the order Augraphy runs them."""

SEVERITIES: tuple[str, ...] = ("none", "mild", "moderate", "high")
"""Phase severities, from least to most; a pipeline's tier is its highest phase severity."""

_EXTRA = "augment"
_NESTING = frozenset({"OneOf", "AugmentationSequence"})
# Augraphy refuses pages below 30 x 30 pixels.
_MIN_SIDE = 30
_SEED_LIMIT = 2**31  # cv2.setRNGSeed takes a C int
_DOC_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_LOCK = threading.RLock()


def _require(module: str) -> Any:
    """Import an optional dependency, naming the extra that installs it when missing."""
    return require(module, user="confcal.extras.augment", extra=_EXTRA)


# ---------------------------------------------------------------------------------------
# the envelope
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OCRSafeEnvelope:
    """The limits inside which a degraded page stays readable by OCR (module Notes).

    Attributes
    ----------
    max_rotation : float
        Degrees either way (inclusive).
    jpeg_quality : tuple of int
        Lowest and highest JPEG quality (inclusive).
    brightness : tuple of float
        Lowest and highest brightness factor (inclusive).
    max_blur_radius : float
        Pixels (inclusive).
    blur_iterations_below : int
        Blur iterations must be fewer than this.
    overlay_alpha_below : float
        The alpha of anything laid over the page must be below this.

    Examples
    --------
    >>> ENVELOPE.jpeg_quality, ENVELOPE.blur_iterations_below
    ((70, 95), 8)
    """

    max_rotation: float = 5.0
    jpeg_quality: tuple[int, int] = (70, 95)
    brightness: tuple[float, float] = (0.7, 1.3)
    max_blur_radius: float = 200.0
    blur_iterations_below: int = 8
    overlay_alpha_below: float = 0.3

    def rule(self, limit: str) -> str:
        """The rule of one limit, in words (used in error messages)."""
        return {
            "rotation": f"within ±{self.max_rotation:g} degrees",
            "jpeg_quality": f"within [{self.jpeg_quality[0]}, {self.jpeg_quality[1]}]",
            "brightness": f"within [{self.brightness[0]:g}, {self.brightness[1]:g}]",
            "blur_radius": f"at most {self.max_blur_radius:g} px",
            "blur_iterations": f"fewer than {self.blur_iterations_below}",
            "overlay_alpha": f"below {self.overlay_alpha_below:g}",
        }[limit]

    def holds(self, limit: str, value: float) -> bool:
        """True when one number is inside one limit."""
        if limit == "rotation":
            return abs(value) <= self.max_rotation
        if limit == "jpeg_quality":
            return self.jpeg_quality[0] <= value <= self.jpeg_quality[1]
        if limit == "brightness":
            return self.brightness[0] <= value <= self.brightness[1]
        if limit == "blur_radius":
            return value <= self.max_blur_radius
        if limit == "blur_iterations":
            return value < self.blur_iterations_below
        if limit == "overlay_alpha":
            return value < self.overlay_alpha_below
        raise KeyError(limit)


ENVELOPE = OCRSafeEnvelope()
"""The ConfBench OCR-safe envelope (module Notes)."""


def _identity(value: Any) -> Any:
    return value


def _kernel_radius(value: Any) -> Any:
    # a k x k kernel reaches (k - 1) / 2 pixels from its centre
    return _map_numbers(value, lambda k: (k - 1) / 2)


def _one_minus(value: Any) -> Any:
    # LightingGradient blends V * transparency + light * (1 - transparency): the light's
    # alpha is 1 - transparency
    return _map_numbers(value, lambda t: 1 - t)


def _map_numbers(value: Any, fn: Any) -> Any:
    if is_real(value):
        return fn(float(value))
    if isinstance(value, (tuple, list)) and value and all(is_real(v) for v in value):
        return type(value)(fn(float(v)) for v in value)
    return value


# (augmentation, parameter) -> (limit, how the parameter reads as that limit's quantity)
_RULES: dict[str, tuple[tuple[str, str, Any], ...]] = {
    "Geometric": (("rotate_range", "rotation", _identity),),
    "PageBorder": (("page_rotation_angle_range", "rotation", _identity),),
    "Jpeg": (("quality_range", "jpeg_quality", _identity),),
    "Brightness": (("brightness_range", "brightness", _identity),),
    "BrightnessTexturize": (("texturize_range", "brightness", _identity),),
    "ColorShift": (
        ("color_shift_brightness_range", "brightness", _identity),
        ("color_shift_iterations", "blur_iterations", _identity),
        ("color_shift_gaussian_kernel_range", "blur_radius", _kernel_radius),
    ),
    "DepthSimulatedBlur": (
        # cv2.ellipse takes semi-axes: these are radii already
        ("blur_major_axes_length_range", "blur_radius", _identity),
        ("blur_minor_axes_length_range", "blur_radius", _identity),
        ("blur_iteration_range", "blur_iterations", _identity),
    ),
    "ShadowCast": (
        ("shadow_blur_kernel_range", "blur_radius", _kernel_radius),
        ("shadow_iterations_range", "blur_iterations", _identity),
        ("shadow_opacity_range", "overlay_alpha", _identity),
    ),
    "ReflectedLight": (
        ("reflected_light_gaussian_kernel_size_range", "blur_radius", _kernel_radius),
    ),
    "BadPhotoCopy": (("blur_noise_kernel", "blur_radius", _kernel_radius),),
    "BleedThrough": (
        ("ksize", "blur_radius", _kernel_radius),
        ("alpha", "overlay_alpha", _identity),
    ),
    "InkShifter": (("blur_kernel_size", "blur_radius", _kernel_radius),),
    "DoubleExposure": (("gaussian_kernel_range", "blur_radius", _kernel_radius),),
    "DirtyDrum": (("ksize", "blur_radius", _kernel_radius),),
    "NoisyLines": (("noisy_lines_gaussian_kernel_value_range", "blur_radius", _kernel_radius),),
    "DotMatrix": (("dot_matrix_gaussian_kernel_value_range", "blur_radius", _kernel_radius),),
    "InkMottling": (
        ("ink_mottling_gaussian_kernel_range", "blur_radius", _kernel_radius),
        ("ink_mottling_alpha_range", "overlay_alpha", _identity),
    ),
    "Moire": (("moire_blend_alpha", "overlay_alpha", _identity),),
    "Stains": (("stains_blend_alpha", "overlay_alpha", _identity),),
    "LCDScreenPattern": (("pattern_overlay_alpha", "overlay_alpha", _identity),),
    "PatternGenerator": (("alpha_range", "overlay_alpha", _identity),),
    "LightingGradient": (("transparency", "overlay_alpha", _one_minus),),
}
_GEOMETRIC_RANDOM_ROTATION = (-10.0, 10.0)  # what Geometric(randomize=1) sets rotate_range to


class EnvelopeError(ValidationError):
    """A pipeline leaves the OCR-safe envelope; ``violations`` lists every breach.

    Each violation is a dict with the keys ``pipeline, phase, path, augmentation,
    parameter, limit, rule, value``.
    """

    def __init__(self, message: str, violations: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.violations = violations


def _numbers(value: Any) -> list[float] | None:
    """The numbers a parameter value holds (a scalar or a range); None if it holds others."""
    if is_real(value):
        return [float(value)]
    if isinstance(value, (tuple, list)) and value and all(is_real(v) for v in value):
        return [float(v) for v in value]
    return None


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
        if name in _NESTING:
            if "augmentations" not in params:
                raise ValidationError(f"{at} ({name}) must have an 'augmentations' list of "
                                      "(augmentation_name, params) pairs; found none")
            params["augmentations"] = _freeze_steps(params["augmentations"],
                                                    f"{at}.augmentations")
        out.append((name, MappingProxyType(params)))
    return tuple(out)


def _check_name(name: Any, what: str) -> str:
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

    Examples
    --------
    >>> spec = PipelineSpec("grey", post=[("Brightness", {"brightness_range": (0.8, 0.9)})],
    ...                     severity={"post": "mild"}, effect="a dim scan")
    >>> spec["post"][0][0], spec.tier, sorted(spec)
    ('Brightness', 'mild', ['ink', 'paper', 'post'])
    >>> PIPELINES["stains"].effect
    'coffee and water stains on the paper'
    """

    name: str
    # any sequence of steps; stored as a tuple of (name, read-only params) pairs
    ink: Sequence[Any] = ()
    paper: Sequence[Any] = ()
    post: Sequence[Any] = ()
    severity: Mapping[str, str] = field(default_factory=dict)
    effect: str = ""
    based_on: str | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
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
    def tier(self) -> str:
        """The highest phase severity (``"none"`` for an empty pipeline)."""
        return max(self.severity.values(), key=SEVERITIES.index)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict (steps as ``[name, params]`` lists)."""
        return {"name": self.name, "ink": _steps_json(self.ink),
                "paper": _steps_json(self.paper), "post": _steps_json(self.post),
                "severity": dict(self.severity), "effect": self.effect,
                "based_on": self.based_on}


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


def _as_spec(pipeline: Any, what: str = "pipeline") -> PipelineSpec:
    """A registry name, a PipelineSpec or a plain phase mapping, as a PipelineSpec."""
    if isinstance(pipeline, PipelineSpec):
        return pipeline
    if isinstance(pipeline, str):
        if pipeline not in PIPELINES:
            raise ValidationError(f"{what} must be one of the {len(PIPELINES)} names in "
                                  f"PIPELINES or a spec; found {pipeline!r}")
        return PIPELINES[pipeline]
    if isinstance(pipeline, Mapping):
        unknown = [k for k in pipeline if k not in PHASES]
        if unknown:
            raise ValidationError(f"{what} spec keys must be among {list(PHASES)}; found "
                                  f"{unknown[0]!r}")
        return PipelineSpec("custom", **{p: pipeline.get(p, ()) for p in PHASES})
    raise ValidationError(
        f"{what} must be a name in PIPELINES, a PipelineSpec or a mapping "
        f"{{'ink': [...], 'paper': [...], 'post': [...]}}; found {type(pipeline).__name__}"
        + (" (a built pipeline has drawn its OneOf choices already: pass its spec, so that "
           "degrade builds it under the seed)" if type(pipeline).__name__ == "AugraphyPipeline"
           else ""))


# ---------------------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------------------
def _photocopy(**params: Any) -> Step:
    # BadPhotoCopy with every random switch pinned, as Augraphy's archetypes write it
    base = {"blur_noise": 0, "wave_pattern": 0, "edge_effect": 0}
    return ("BadPhotoCopy", {**base, **params})


_FAX = ("Faxify", {"monochrome": 1, "monochrome_method": "threshold_otsu", "halftone": 0})


def _registry() -> dict[str, PipelineSpec]:
    specs = [
        # --- built on Augraphy's archetypes: Scribbles removed (it downloads fonts),
        # parameters outside the envelope pulled to its edge, and crops/translations that
        # would move text off the page dropped.
        PipelineSpec(
            "archetype1", based_on="augraphy.pipeline_archetype1",
            effect="a hole-punched page photocopied and faxed, washed out by the fax",
            severity={"ink": "mild", "paper": "mild", "post": "high"},
            ink=[("Geometric", {"padding": [0, 0, 0.05, 0], "randomize": 0}),
                 ("BindingsAndFasteners", {"overlay_types": "darken",
                                           "effect_type": "punch_holes",
                                           "width_range": "random", "height_range": "random",
                                           "ntimes": (3, 3), "nscales": (1.0, 1.0),
                                           # archetype: (0.01, 0.01), a fraction of the page
                                           # that reaches random.randint as a float
                                           # (deprecated since Python 3.10); in pixels here
                                           "edge": "top", "edge_offset": (10, 10)}),
                 ("InkBleed", {"intensity_range": (0.1, 0.2), "kernel_size": (3, 3),
                               "severity": (0.2, 0.2)})],
            paper=[("PageBorder", {"page_border_width_height": (0, 2),
                                   "page_border_color": (0, 0, 0),
                                   "page_border_background_color": (0, 0, 0),
                                   "page_numbers": 1, "page_rotation_angle_range": (0, 0),
                                   "curve_frequency": (2, 8), "curve_height": (2, 4),
                                   "curve_length_one_side": (50, 100),
                                   "same_page_border": 0})],
            post=[("Geometric", {"rotate_range": (-1, -1), "randomize": 0}),
                  _FAX,
                  # archetype: brightness 2.0 (outside); pulled to the envelope's 1.3
                  ("Brightness", {"brightness_range": (1.3, 1.3), "min_brightness": 1,
                                  "min_brightness_value": (50, 50)}),
                  ("Gamma", {"gamma_range": (1.5, 1.5)}),
                  ("Letterpress", {"n_samples": (1000, 1000), "n_clusters": (500, 500),
                                   "std_range": (400, 400), "value_range": (200, 255),
                                   "value_threshold_range": (255, 255), "blur": 0}),
                  _photocopy(noise_type=5, noise_side="bottom", noise_iteration=(1, 1),
                             noise_size=(5, 7), noise_value=(64, 128),
                             noise_sparsity=(0.2, 0.2), noise_concentration=(0.2, 0.2)),
                  _photocopy(noise_type=1, noise_side="none", noise_iteration=(2, 3),
                             noise_size=(1, 4), noise_value=(0, 64),
                             noise_sparsity=(0.5, 0.6), noise_concentration=(0.01, 0.01))]),
        PipelineSpec(
            "archetype2", based_on="augraphy.pipeline_archetype2",
            effect="an underlined, clipped and hole-punched copy with glare from a lamp",
            severity={"ink": "mild", "paper": "mild", "post": "high"},
            ink=[("Markup", {"num_lines_range": (3, 4), "markup_length_range": (0.5, 1),
                             "markup_thickness_range": (3, 5), "markup_type": "underline",
                             "markup_color": (0, 0, 0), "single_word_mode": False,
                             "large_word_mode": False, "repetitions": 1}),
                 ("InkBleed", {"intensity_range": (0.9, 0.9), "kernel_size": (3, 3),
                               "severity": (0.1, 0.2)})],
            paper=[("BindingsAndFasteners", {"overlay_types": "darken",
                                             "effect_type": "punch_holes",
                                             "width_range": "random",
                                             "height_range": "random", "ntimes": (3, 3),
                                             "nscales": (1, 1), "edge": "left",
                                             "edge_offset": (40, 40)}),
                   ("PageBorder", {"page_border_width_height": (5, 0),
                                   "page_border_color": (0, 0, 0),
                                   "page_border_background_color": (0, 0, 0),
                                   "page_numbers": 2, "page_rotation_angle_range": (0, 0)})],
            post=[_photocopy(noise_type=5, noise_side="top", noise_iteration=(1, 1),
                             noise_size=(1, 1), noise_value=(0, 15), noise_sparsity=(0.5, 0.5),
                             noise_concentration=(0.5, 0.5), edge_effect=1),
                  _photocopy(noise_type=1, noise_side="bottom", noise_iteration=(2, 3),
                             noise_size=(3, 4), noise_value=(0, 15), noise_sparsity=(0.2, 0.2),
                             noise_concentration=(0.1, 0.1)),
                  ("Geometric", {"rotate_range": (2, 2), "randomize": 0}),
                  ("BindingsAndFasteners", {"overlay_types": "darken",
                                            "effect_type": "triangle_clips",
                                            "width_range": "random", "height_range": "random",
                                            "ntimes": (5, 5), "nscales": (0.5, 0.5),
                                            "edge": "right", "edge_offset": (0, 0)}),
                  ("ReflectedLight", {"reflected_light_smoothness": 0.1,
                                      "reflected_light_internal_radius_range": (0.1, 0.1),
                                      "reflected_light_external_radius_range": (0.4, 0.4),
                                      "reflected_light_minor_major_ratio_range": (0.9, 1.0),
                                      "reflected_light_color": (255, 255, 255),
                                      "reflected_light_internal_max_brightness_range":
                                          (0.25, 0.25),
                                      "reflected_light_external_max_brightness_range":
                                          (0.25, 0.25),
                                      "reflected_light_location": (0.6, 0.2),
                                      "reflected_light_ellipse_angle_range": (0, 360),
                                      "reflected_light_gaussian_kernel_size_range":
                                          (210, 310)})]),
        PipelineSpec(
            "archetype3", based_on="augraphy.pipeline_archetype3",
            effect="a grainy photocopy under a side lamp, bleeding through, saved as JPEG",
            severity={"ink": "mild", "paper": "moderate", "post": "high"},
            ink=[("InkBleed", {"intensity_range": (0.9, 0.9), "kernel_size": (7, 7),
                               "severity": (0.3, 0.3)})],
            paper=[_photocopy(noise_type=1, noise_side="all", noise_iteration=(1, 1),
                              noise_size=(1, 1), noise_value=(110, 110),
                              noise_sparsity=(0.1, 0.1), noise_concentration=(0.3, 0.4),
                              blur_noise=1, blur_noise_kernel=(31, 31)),
                   _photocopy(noise_type=1, noise_side="all", noise_iteration=(1, 1),
                              noise_size=(1, 1), noise_value=(40, 50),
                              noise_sparsity=(0.1, 0.1), noise_concentration=(0.3, 0.3),
                              blur_noise=1)],
            post=[_photocopy(noise_type=5, noise_side="right", noise_iteration=(2, 2),
                             noise_size=(5, 7), noise_value=(100, 120),
                             noise_sparsity=(0.2, 0.2), noise_concentration=(0.1, 0.1)),
                  ("LightingGradient", {"light_position": (800, 2000), "direction": 0,
                                        "max_brightness": 255, "min_brightness": 25,
                                        "mode": "gaussian", "transparency": 0.75}),
                  ("BleedThrough", {"intensity_range": (0.01, 0.02), "color_range": (0, 10),
                                    "ksize": (7, 7), "sigmaX": 0, "alpha": 0.2,
                                    "offsets": (10, 20)}),
                  ("Geometric", {"rotate_range": (2, 2), "randomize": 0}),
                  ("SubtleNoise", {"p": 1}),
                  # archetype: Augraphy's default quality 25-95 (outside)
                  ("Jpeg", {"quality_range": (70, 95), "p": 1})]),
        PipelineSpec(
            "archetype4", based_on="augraphy.pipeline_archetype4",
            effect="a hole-punched page faxed with a black margin and speckle",
            severity={"ink": "mild", "paper": "mild", "post": "moderate"},
            # the archetype's 12% crop of the ink layer is dropped: it cuts text off
            ink=[("BindingsAndFasteners", {"overlay_types": "darken",
                                           "effect_type": "punch_holes",
                                           "width_range": "random", "height_range": "random",
                                           "ntimes": (3, 3), "nscales": (1.0, 1.0),
                                           "edge": "left", "edge_offset": (10, 10)}),
                 ("InkBleed", {"intensity_range": (0.5, 0.5), "kernel_size": (3, 3),
                               "severity": (0.5, 0.5)})],
            paper=[("Geometric", {"padding": [0, 0, 0.03, 0.05], "padding_type": "fill",
                                  "padding_value": (0, 0, 0), "randomize": 0})],
            post=[_FAX,
                  ("Geometric", {"rotate_range": (-1, -1), "padding": [0, 0.05, 0, 0],
                                 "randomize": 0}),
                  _photocopy(noise_type=1, noise_side="all", noise_iteration=(1, 1),
                             noise_size=(5, 7), noise_value=(0, 64), noise_sparsity=(0.9, 0.9),
                             noise_concentration=(0.01, 0.01), blur_noise_kernel=(5, 5)),
                  _photocopy(noise_type=5, noise_side="top_left", noise_iteration=(1, 1),
                             noise_size=(3, 3), noise_value=(0, 64), noise_sparsity=(0.3, 0.3),
                             noise_concentration=(0.1, 0.1), blur_noise_kernel=(5, 5))]),
        PipelineSpec(
            "archetype5", based_on="augraphy.pipeline_archetype5",
            effect="a heavily inked fax, slightly rotated, with a clipped bottom edge",
            severity={"ink": "high", "paper": "mild", "post": "mild"},
            ink=[_FAX,
                 ("InkBleed", {"intensity_range": (0.3, 0.4), "kernel_size": (3, 3),
                               "severity": (1.0, 1.0)}),
                 _photocopy(noise_type=2, noise_side="right", noise_iteration=(3, 3),
                            noise_size=(1, 3), noise_value=(0, 1), noise_sparsity=(0.99, 0.99),
                            noise_concentration=(0.3, 0.3), edge_effect=1),
                 _photocopy(noise_type=2, noise_side="left", noise_iteration=(2, 2),
                            noise_size=(1, 2), noise_value=(0, 1), noise_sparsity=(0.7, 0.7),
                            noise_concentration=(0.1, 0.1), edge_effect=1),
                 ("Geometric", {"padding": [0, 0.02, 0, 0], "randomize": 0})],
            paper=[("Geometric", {"padding": [0, 4, 0, 5], "padding_type": "fill",
                                  "padding_value": (0, 0, 0), "randomize": 0})],
            post=[("Geometric", {"rotate_range": (-2, -2), "randomize": 0}),
                  ("Geometric", {"translation": (0.02, -0.05), "randomize": 0}),
                  ("BindingsAndFasteners", {"overlay_types": "min",
                                            "effect_type": "triangle_clips",
                                            "width_range": "random", "height_range": "random",
                                            "angle_range": (270, 270), "ntimes": (2, 2),
                                            "nscales": (1.5, 1.5), "edge": "bottom",
                                            "edge_offset": (20, 20)})]),
        PipelineSpec(
            "archetype6", based_on="augraphy.pipeline_archetype6",
            effect="a struck-through, letterpressed page dithered and faxed",
            severity={"ink": "mild", "paper": "mild", "post": "high"},
            ink=[("Markup", {"num_lines_range": (2, 2), "markup_length_range": (0.4, 0.4),
                             "markup_thickness_range": (2, 3), "markup_type": "strikethrough",
                             "markup_color": (0, 0, 0), "single_word_mode": False,
                             "large_word_mode": False})],
            paper=[("Letterpress", {"n_samples": (200, 300), "n_clusters": (500, 680),
                                    "std_range": (500, 500), "value_range": (245, 255),
                                    "value_threshold_range": (128, 128), "blur": 0})],
            post=[("Dithering", {"dither": "ordered", "order": (4, 4)}),
                  ("InkBleed", {"intensity_range": (0.1, 0.2), "kernel_size": (3, 3),
                                "severity": (0.2, 0.2)}),
                  ("Geometric", {"rotate_range": (-1, -1), "randomize": 0}),
                  _FAX,
                  _photocopy(noise_type=1, noise_side="none", noise_iteration=(4, 5),
                             noise_size=(1, 4), noise_value=(0, 0), noise_sparsity=(0.99, 0.99),
                             noise_concentration=(0.01, 0.01))]),
        PipelineSpec(
            "archetype7", based_on="augraphy.pipeline_archetype7",
            effect="a speckled, bold fax rotated by a degree",
            severity={"ink": "mild", "paper": "mild", "post": "moderate"},
            ink=[("Geometric", {"padding": [0, 0, 0, 0.025], "randomize": 0})],
            paper=[_photocopy(noise_type=1, noise_side="none", noise_iteration=(4, 5),
                              noise_size=(4, 8), noise_value=(0, 5),
                              noise_sparsity=(0.99, 0.99), noise_concentration=(0.01, 0.01))],
            post=[_FAX,
                  ("InkBleed", {"intensity_range": (0.6, 0.6), "kernel_size": (3, 3),
                                "severity": (0.8, 0.8)}),
                  _photocopy(noise_type=2, noise_side="all", noise_iteration=(2, 2),
                             noise_size=(2, 3), noise_value=(0, 5), noise_sparsity=(0.05, 0.05),
                             noise_concentration=(0.1, 0.1)),
                  ("Geometric", {"rotate_range": (1, 1), "randomize": 0})]),
        PipelineSpec(
            "archetype10", based_on="augraphy.pipeline_archetype10",
            effect="a letterpress page with dropouts, faxed to black and white",
            severity={"ink": "high", "paper": "none", "post": "moderate"},
            ink=[_photocopy(noise_type=1, noise_side="none", noise_iteration=(6, 8),
                            noise_size=(1, 7), noise_value=(0, 1), noise_sparsity=(0.99, 0.99),
                            noise_concentration=(0.01, 0.01)),
                 ("Letterpress", {"n_samples": (200, 300), "n_clusters": (500, 680),
                                  "std_range": (2500, 2500), "value_range": (245, 255),
                                  "value_threshold_range": (128, 128), "blur": 1})],
            post=[_FAX]),
        # --- custom pipelines
        PipelineSpec(
            "bleed_through", effect="ink from the back of thin paper shows through",
            severity={"ink": "moderate"},
            ink=[("BleedThrough", {"intensity_range": (0.1, 0.3), "color_range": (32, 224),
                                   "ksize": (17, 17), "sigmaX": 1, "alpha": 0.2,
                                   "offsets": (10, 20)})]),
        PipelineSpec(
            "ink_mottling", effect="uneven ink density inside the characters",
            severity={"ink": "mild"},
            ink=[("InkMottling", {"ink_mottling_alpha_range": (0.1, 0.25),
                                  "ink_mottling_noise_scale_range": (2, 3),
                                  "ink_mottling_gaussian_kernel_range": (3, 5)})]),
        PipelineSpec(
            "low_ink", effect="a printer running out of ink: faded streaks through the text",
            severity={"ink": "moderate"},
            ink=[("LowInkRandomLines", {"count_range": (5, 10), "use_consistent_lines": True,
                                        "noise_probability": 0.1}),
                 ("LowInkPeriodicLines", {"count_range": (2, 4), "period_range": (16, 32),
                                          "use_consistent_lines": False,
                                          "noise_probability": 0.1})]),
        PipelineSpec(
            "dithering_dot_matrix",
            effect="a dot-matrix printout reproduced through an ordered halftone",
            severity={"ink": "moderate", "post": "moderate"},
            ink=[("DotMatrix", {"dot_matrix_shape": "circle",
                                "dot_matrix_dot_width_range": (3, 3),
                                "dot_matrix_dot_height_range": (3, 3),
                                "dot_matrix_min_width_range": (1, 2),
                                "dot_matrix_max_width_range": (150, 200),
                                "dot_matrix_min_height_range": (1, 2),
                                "dot_matrix_max_height_range": (150, 200),
                                "dot_matrix_min_area_range": (10, 20),
                                "dot_matrix_max_area_range": (2000, 5000),
                                "dot_matrix_median_kernel_value_range": (29, 29),
                                "dot_matrix_gaussian_kernel_value_range": (1, 3),
                                "dot_matrix_rotate_value_range": (0, 0)})],
            post=[("Dithering", {"dither": "ordered", "order": (3, 4)})]),
        PipelineSpec(
            "stains", effect="coffee and water stains on the paper",
            severity={"paper": "moderate"},
            paper=[("Stains", {"stains_type": "random", "stains_blend_method": "darken",
                               "stains_blend_alpha": 0.25})]),
        PipelineSpec(
            "watermark", effect="a large grey stamp printed across the page",
            severity={"paper": "mild"},
            paper=[("WaterMark", {"watermark_word": "CONFIDENTIAL",
                                  "watermark_font_size": (10, 15),
                                  "watermark_font_thickness": (20, 25),
                                  "watermark_rotation": (0, 360),
                                  "watermark_location": "center",
                                  "watermark_color": (200, 200, 200),
                                  "watermark_method": "darken"})]),
        PipelineSpec(
            "moire_colored_paper",
            effect="a form on colored paper photographed off a screen (moiré fringes)",
            severity={"paper": "mild", "post": "moderate"},
            paper=[("ColorPaper", {"hue_range": (0, 255), "saturation_range": (10, 40)})],
            post=[("Moire", {"moire_density": (15, 20), "moire_blend_method": "normal",
                             "moire_blend_alpha": 0.1})]),
        PipelineSpec(
            "bindings", effect="punch holes, staples or clips along the binding edge",
            severity={"post": "mild"},
            post=[("BindingsAndFasteners", {"overlay_types": "darken",
                                            "effect_type": "random", "width_range": "random",
                                            "height_range": "random",
                                            "angle_range": (-30, 30), "ntimes": (2, 4),
                                            "nscales": (1.0, 1.0), "edge": "left",
                                            "edge_offset": (5, 20),
                                            "use_figshare_library": 0})]),
        PipelineSpec(
            "skew_jpeg", effect="a page scanned a few degrees askew and saved as a JPEG",
            severity={"post": "moderate"},
            post=[("Geometric", {"rotate_range": (-3, 3), "randomize": 0}),
                  ("Jpeg", {"quality_range": (70, 85)})]),
        PipelineSpec(
            "shadow_lighting",
            effect="a phone photo with a hand's shadow and light falling off across the page",
            severity={"post": "moderate"},
            post=[("ShadowCast", {"shadow_side": "random", "shadow_vertices_range": (1, 20),
                                  "shadow_width_range": (0.3, 0.8),
                                  "shadow_height_range": (0.3, 0.8),
                                  "shadow_color": (0, 0, 0),
                                  "shadow_opacity_range": (0.1, 0.25),
                                  "shadow_iterations_range": (1, 2),
                                  "shadow_blur_kernel_range": (101, 301)}),
                  ("LightingGradient", {"light_position": None, "direction": None,
                                        "max_brightness": 255, "min_brightness": 0,
                                        "mode": "gaussian", "transparency": 0.8})]),
        PipelineSpec(
            "dirty_drum_rollers",
            effect="a photocopier with a dirty drum and rollers streaks the page",
            severity={"post": "moderate"},
            post=[("DirtyDrum", {"line_width_range": (1, 4), "line_concentration": 0.1,
                                 "direction": -1, "noise_intensity": 0.5,
                                 "noise_value": (0, 30), "ksize": (3, 3), "sigmaX": 0}),
                  ("DirtyRollers", {"line_width_range": (8, 12), "scanline_type": 0})]),
        PipelineSpec(
            "fax_letterpress", effect="a letterpress-printed page sent by fax",
            severity={"ink": "mild", "post": "moderate"},
            ink=[("Letterpress", {"n_samples": (200, 400), "n_clusters": (200, 400),
                                  "std_range": (500, 2000), "value_range": (200, 255),
                                  "value_threshold_range": (128, 128), "blur": 1})],
            post=[("Faxify", {"scale_range": (1.0, 1.0), "monochrome": 1,
                              "monochrome_method": "threshold_otsu", "halftone": 0})]),
    ]
    return {spec.name: spec for spec in specs}


PIPELINES: Mapping[str, PipelineSpec] = MappingProxyType(_registry())
"""The 20 ConfBench pipelines by name: 8 ``archetype*`` and 12 custom (module docstring)."""


# ---------------------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------------------
@functools.cache
def _parameters(name: str) -> MappingProxyType[str, Any]:
    """Keyword parameters and defaults of an Augraphy augmentation class."""
    augraphy = _require("augraphy")
    cls = getattr(augraphy, name, None)
    base = augraphy.Augmentation
    if not (inspect.isclass(cls) and issubclass(cls, base)):
        known = sorted(n for n in dir(augraphy) if inspect.isclass(getattr(augraphy, n))
                       and issubclass(getattr(augraphy, n), base))
        raise ValidationError(f"augmentation must be an Augraphy augmentation class name "
                              f"(one of {', '.join(known)}); found {name!r}")
    signature = inspect.signature(cls.__init__)
    return MappingProxyType({
        p.name: p.default for p in signature.parameters.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)})


def _violations(spec: PipelineSpec) -> list[dict[str, Any]]:
    """Every parameter (given or Augraphy's default) outside the envelope."""
    found: list[dict[str, Any]] = []

    def visit(steps: tuple[Step, ...], phase: str, where: str) -> None:
        for i, (name, params) in enumerate(steps):
            path = f"{where}[{i}]"
            defaults = _parameters(name)
            unknown = [k for k in params if k not in defaults]
            if unknown:
                raise ValidationError(
                    f"pipeline {spec.name!r}, {path} ({name}): parameter {unknown[0]!r} must "
                    f"be one of {name}'s parameters ({', '.join(defaults)})")
            if name in _NESTING:
                visit(params["augmentations"], phase, f"{path}.augmentations")
                continue
            effective = {**defaults, **params}
            breaches: list[tuple[str, str, Any]] = []
            if name == "Geometric" and effective.get("randomize"):
                breaches.append(("randomize", "rotation",
                                 "randomize=1 (rotation drawn within ±10)"))
            for parameter, limit, read in _RULES.get(name, ()):
                value = effective.get(parameter, inspect.Parameter.empty)
                if value is inspect.Parameter.empty:
                    continue  # a parameter this Augraphy version does not have
                numbers = _numbers(read(value))
                if numbers is None or not all(ENVELOPE.holds(limit, v) for v in numbers):
                    breaches.append((parameter, limit, value))
            found.extend({"pipeline": spec.name, "phase": phase, "path": path,
                          "augmentation": name, "parameter": parameter, "limit": limit,
                          "rule": ENVELOPE.rule(limit), "value": value}
                         for parameter, limit, value in breaches)

    for phase in PHASES:
        visit(spec[phase], phase, phase)
    return found


def _downloads(spec: PipelineSpec) -> str | None:
    """Why the spec would download something, or None."""
    def visit(steps: tuple[Step, ...], where: str) -> str | None:
        for i, (name, params) in enumerate(steps):
            path = f"{where}[{i}]"
            if name == "Scribbles":
                return f"{path} is Scribbles, which fetches fonts from the internet"
            if name == "BindingsAndFasteners" and params.get("use_figshare_library"):
                return (f"{path} is BindingsAndFasteners with use_figshare_library set, "
                        "which downloads images")
            if name in _NESTING:
                reason = visit(params["augmentations"], f"{path}.augmentations")
                if reason:
                    return reason
        return None

    for phase in PHASES:
        reason = visit(spec[phase], phase)
        if reason:
            return reason
    return None


def _check(spec: PipelineSpec, allow_unsafe: bool) -> None:
    if not isinstance(allow_unsafe, bool):
        raise ValidationError(f"allow_unsafe must be True or False; found {allow_unsafe!r}")
    reason = _downloads(spec)
    if reason:
        raise ValidationError(f"pipeline {spec.name!r} must not download anything; {reason} "
                              "(refused even with allow_unsafe=True)")
    violations = _violations(spec)
    if violations and not allow_unsafe:
        v = violations[0]
        more = f"{len(violations)} violations, first" if len(violations) > 1 else "1 violation"
        raise EnvelopeError(
            f"pipeline {v['pipeline']!r} must stay inside the OCR-safe envelope; found {more}: "
            f"phase {v['phase']!r}, {v['path']} {v['augmentation']}.{v['parameter']}: "
            f"{v['limit']} must be {v['rule']}; found {v['value']!r} "
            "(pass allow_unsafe=True to build it anyway)", violations)


def _instantiate(steps: tuple[Step, ...]) -> list[Any]:
    augraphy = _require("augraphy")
    built = []
    for name, params in steps:
        # copies: Augraphy mutates some parameters in place (BadPhotoCopy's lists)
        kwargs = {k: copy.deepcopy(v) for k, v in params.items() if k != "augmentations"}
        if name in _NESTING:
            kwargs["augmentations"] = _instantiate(params["augmentations"])
        built.append(getattr(augraphy, name)(**kwargs))
    return built


def make_pipeline(spec: Any, *, allow_unsafe: bool = False) -> Any:
    """Build an ``augraphy.AugraphyPipeline`` from a spec checked against the envelope.

    Parameters
    ----------
    spec : str, PipelineSpec or mapping
        A name in :data:`PIPELINES`, a :class:`PipelineSpec`, or a mapping
        ``{"ink": [...], "paper": [...], "post": [...]}`` of ``(augmentation_name,
        params)`` steps (any phase may be left out).
    allow_unsafe : bool, default False
        Build a pipeline outside the OCR-safe envelope instead of raising.

    Returns
    -------
    augraphy.AugraphyPipeline

    Raises
    ------
    EnvelopeError
        A parameter (or the Augraphy default of one left out) is outside the envelope; the
        message names the pipeline, phase, step, augmentation, parameter, limit and value
        of the first breach and counts the rest; ``violations`` lists them all.
    ValidationError
        A malformed spec, an unknown augmentation or parameter, or an augmentation that
        downloads (``Scribbles``; ``BindingsAndFasteners(use_figshare_library=1)``), even
        with ``allow_unsafe=True``.
    ImportError
        Without the ``augment`` extra.

    Notes
    -----
    Augmentations draw some choices when they are constructed (``OneOf`` picks its
    branch), from Python's global ``random`` state. For reproducible pixels use
    :func:`degrade`, which seeds every generator and then builds the pipeline.

    Examples
    --------
    >>> pipeline = make_pipeline("skew_jpeg")  # doctest: +SKIP
    >>> make_pipeline({"post": [("Jpeg", {"quality_range": (25, 95)})]})  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    confcal.extras.augment.EnvelopeError: pipeline 'custom' must stay inside the OCR-safe envelope;
    found 1 violation: phase 'post', post[0] Jpeg.quality_range: jpeg_quality must be within [70,
    95]; found (25, 95) (pass allow_unsafe=True to build it anyway)
    """
    spec = _as_spec(spec, "spec")
    _check(spec, allow_unsafe)
    augraphy = _require("augraphy")
    return augraphy.AugraphyPipeline(
        ink_phase=_instantiate(spec.ink), paper_phase=_instantiate(spec.paper),
        post_phase=_instantiate(spec.post),
        # Augraphy's default 0.3 is not below the overlay limit; the default "ink_to_paper"
        # blend does not read it, but nothing in a built pipeline sits outside the envelope
        overlay_alpha=0.25)


# ---------------------------------------------------------------------------------------
# degrading
# ---------------------------------------------------------------------------------------
@functools.cache
def _numba_seeder() -> Any:
    numba = _require("numba")

    @numba.njit(cache=False)
    def seed(value: int) -> None:  # pragma: no cover - compiled
        # numba keeps its own generators for `random` and `np.random` (per thread);
        # seeding from Python would only reach the interpreter's
        random.seed(value)
        np.random.seed(value)

    return seed


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """Seed every generator Augraphy draws from; restore Python's and NumPy's afterwards."""
    cv2 = _require("cv2")
    numba = _require("numba")
    py_state, np_state = random.getstate(), np.random.get_state()
    threads = numba.get_num_threads()
    try:
        # parallel loops would draw from worker threads' own, unseeded generators
        numba.set_num_threads(1)
        random.seed(seed)
        np.random.seed(seed)
        cv2.setRNGSeed(seed)
        _numba_seeder()(seed)
        yield
    finally:
        numba.set_num_threads(threads)
        random.setstate(py_state)
        np.random.set_state(np_state)


@contextlib.contextmanager
def _scratch_directory() -> Iterator[Path]:
    """Run in a fresh temporary working directory, removed afterwards."""
    previous = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="confcal-augment-") as scratch:
        os.chdir(scratch)
        try:
            yield Path(scratch)
        finally:
            os.chdir(previous)


def _from_pil(image: Any) -> tuple[np.ndarray, str]:
    mode = image.mode
    if mode not in ("L", "RGB", "RGBA"):
        raise ValidationError(f"image must be a PIL image in mode 'L', 'RGB' or 'RGBA'; "
                              f"found mode {mode!r}")
    array = np.asarray(image)
    if mode == "RGB":
        array = array[:, :, ::-1]  # OpenCV order: Augraphy's colors are BGR
    elif mode == "RGBA":
        array = array[:, :, [2, 1, 0, 3]]
    return np.ascontiguousarray(array), mode


def _check_image(image: Any, name: str = "image") -> tuple[np.ndarray, str | None]:
    """A uint8 BGR(A)/gray array and the PIL mode to return (None for an array input)."""
    if type(image).__module__.startswith("PIL."):
        array, mode = _from_pil(image)
    elif isinstance(image, np.ndarray):
        array, mode = image, None
    else:
        raise ValidationError(f"{name} must be a numpy array (OpenCV's BGR order) or a PIL "
                              f"image; found {type(image).__name__}")
    if array.dtype != np.uint8:
        raise ValidationError(f"{name} must hold uint8 pixels; found dtype {array.dtype}")
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if not (array.ndim == 2 or (array.ndim == 3 and array.shape[2] in (3, 4))):
        raise ValidationError(f"{name} must be (height, width) gray or (height, width, 3|4) "
                              f"color; found shape {array.shape}")
    if min(array.shape[:2]) < _MIN_SIDE:
        raise ValidationError(f"{name} must be at least {_MIN_SIDE} x {_MIN_SIDE} pixels "
                              f"(Augraphy's minimum); found {array.shape[1]} x {array.shape[0]}")
    return array, mode


def _match(output: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The output with the input's size and channel count (and alpha)."""
    cv2 = _require("cv2")
    if output.ndim == 3 and output.shape[2] == 1:
        output = output[:, :, 0]
    if output.shape[:2] != like.shape[:2]:
        # Geometric padding and Faxify scaling change the page size; the caller's page keeps
        # its size (and its words their place) by scaling back to it
        output = cv2.resize(output, (like.shape[1], like.shape[0]), interpolation=cv2.INTER_AREA)
    channels = 1 if like.ndim == 2 else like.shape[2]
    have = 1 if output.ndim == 2 else output.shape[2]
    if channels == 1 and have != 1:
        output = cv2.cvtColor(output, cv2.COLOR_BGR2GRAY if have == 3 else cv2.COLOR_BGRA2GRAY)
    elif channels == 3 and have != 3:
        output = cv2.cvtColor(output, cv2.COLOR_GRAY2BGR if have == 1 else cv2.COLOR_BGRA2BGR)
    elif channels == 4:
        color = {1: lambda o: cv2.cvtColor(o, cv2.COLOR_GRAY2BGR), 3: lambda o: o,
                 4: lambda o: o[:, :, :3]}[have](output)
        # the input's alpha, unchanged: degradations act on what is printed, not on the
        # caller's cut-out
        output = np.dstack([color, like[:, :, 3]])
    return np.ascontiguousarray(output, dtype=np.uint8)


def _degrade_array(array: np.ndarray, spec: PipelineSpec, seed: int,
                   allow_unsafe: bool) -> np.ndarray:
    _check(spec, allow_unsafe)  # before any state is touched
    with _LOCK, _scratch_directory(), _seeded(seed):
        pipeline = make_pipeline(spec, allow_unsafe=allow_unsafe)
        output = pipeline.augment(array.copy())["output"]
    return _match(np.asarray(output), array)


def degrade(image: Any, pipeline: Any, *, seed: int, allow_unsafe: bool = False) -> Any:
    """Degrade one page with one pipeline; the same seed gives the same pixels.

    Parameters
    ----------
    image : numpy.ndarray or PIL.Image.Image
        uint8 pixels, at least 30 x 30: a ``(height, width)`` gray array or a
        ``(height, width, 3|4)`` array in OpenCV's BGR(A) order (as ``cv2.imread`` gives),
        or a PIL image in mode ``L``, ``RGB`` or ``RGBA``.
    pipeline : str, PipelineSpec or mapping
        A name in :data:`PIPELINES` or a spec (see :func:`make_pipeline`). Not a built
        ``AugraphyPipeline``: it would have drawn its ``OneOf`` choices already.
    seed : int in [0, 2**31)
        Seeds every generator involved (module Notes); 0 is a seed like any other.
    allow_unsafe : bool, default False
        See :func:`make_pipeline`.

    Returns
    -------
    numpy.ndarray or PIL.Image.Image
        The degraded page, of the input's type, size and channel count (and PIL mode).

    Raises
    ------
    EnvelopeError, ValidationError, ImportError
        As :func:`make_pipeline`; an image of another type, dtype, shape or below 30 px.

    Notes
    -----
    Augraphy prints the ink onto a three-channel paper, so a gray page comes back
    converted to gray, a transparent page gets its own alpha channel back unchanged, and
    a page whose size a step changed (padding, fax scaling) is scaled back to the input's
    size with area interpolation. Python's and NumPy's global
    random states are restored afterwards; OpenCV's and numba's are left seeded.

    Examples
    --------
    >>> import numpy as np
    >>> page = np.full((150, 200), 255, dtype=np.uint8)
    >>> page[60:70, 20:180] = 0                      # a line of "text"
    >>> out = degrade(page, "skew_jpeg", seed=7)     # doctest: +SKIP
    >>> out.shape, out.dtype                         # doctest: +SKIP
    ((150, 200), dtype('uint8'))
    >>> bool((degrade(page, "skew_jpeg", seed=7) == out).all())  # doctest: +SKIP
    True
    """
    array, mode = _check_image(image)
    spec = _as_spec(pipeline)
    seed = check_seed(seed, optional=False, limit=_SEED_LIMIT)
    output = _degrade_array(array, spec, seed, allow_unsafe)
    if mode is None:
        return output
    from PIL import Image

    if mode == "RGB":
        output = output[:, :, ::-1]
    elif mode == "RGBA":
        output = output[:, :, [2, 1, 0, 3]]
    return Image.fromarray(np.ascontiguousarray(output), mode=mode)


def _variant_seed(seed: int, doc_id: str, pipeline: str) -> int:
    """A per-variant seed that is the same in every process (no salted hash())."""
    digest = hashlib.blake2b(f"{seed}\0{doc_id}\0{pipeline}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % _SEED_LIMIT


def _spec_digest(spec: PipelineSpec) -> str:
    text = json.dumps(spec.to_dict(), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def _load_source(value: Any, doc_id: str) -> tuple[np.ndarray, str | None]:
    """A page for the corpus: an array, a PIL image or an image file path."""
    if isinstance(value, (str, os.PathLike)):
        cv2 = _require("cv2")
        path = Path(value)
        array = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if array is None:
            raise ValidationError(f"images[{doc_id!r}] must be a readable image file; found "
                                  f"{str(path)!r}, which OpenCV cannot read")
        checked, _ = _check_image(array, f"images[{doc_id!r}]")
        return checked, str(path)
    checked, _ = _check_image(value, f"images[{doc_id!r}]")
    return checked, None


def _corpus_items(images: Any) -> list[tuple[str, Any]]:
    if isinstance(images, Mapping):
        items = list(images.items())
    elif isinstance(images, (str, bytes, os.PathLike)) or not isinstance(images, Iterable):
        raise ValidationError("images must be a mapping doc_id -> image (array, PIL image or "
                              f"file path) or a list of file paths; found {type(images).__name__}")
    else:
        items = []
        for i, value in enumerate(images):
            if not isinstance(value, (str, os.PathLike)):
                raise ValidationError(f"images given as a list must be file paths (the file "
                                      f"name's stem is the doc id); found "
                                      f"{type(value).__name__} at position {i}")
            items.append((Path(value).stem, value))
    if not items:
        raise ValidationError("images must not be empty; found 0 pages")
    seen: dict[str, int] = {}
    for i, (doc_id, _) in enumerate(items):
        _check_name(doc_id, f"doc id at position {i}")
        if doc_id in seen:
            raise ValidationError(f"images must not repeat a doc id; found {doc_id!r} at "
                                  f"positions {seen[doc_id]} and {i}")
        seen[doc_id] = i
    return items


def _corpus_pipelines(pipelines: Any, baseline: str | None) -> list[PipelineSpec]:
    if isinstance(pipelines, Mapping):
        specs = []
        for name, spec in pipelines.items():
            s = _as_spec(spec, f"pipelines[{name!r}]")
            if s.name != name:
                s = PipelineSpec(_check_name(name, "pipeline name"), ink=s.ink,
                                 paper=s.paper, post=s.post, severity=s.severity,
                                 effect=s.effect, based_on=s.based_on)
            specs.append(s)
    elif isinstance(pipelines, (str, bytes)) or not isinstance(pipelines, Iterable):
        raise ValidationError("pipelines must be a list of names in PIPELINES / "
                              "PipelineSpec objects or a mapping name -> spec; found "
                              f"{type(pipelines).__name__}")
    else:
        specs = [_as_spec(p, f"pipelines[{i}]") for i, p in enumerate(pipelines)]
    if not specs:
        raise ValidationError("pipelines must not be empty; found 0 pipelines")
    names = [s.name for s in specs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ValidationError(f"pipelines must have distinct names; found {dup!r} twice")
    if baseline is not None and baseline in names:
        raise ValidationError(f"pipelines must not use the baseline's name {baseline!r} "
                              "(the undegraded page is written under it)")
    return specs


def degrade_corpus(images: Any, pipelines: Any, *, seed: int, out_dir: str | os.PathLike[str],
                   baseline: str | None = "original", allow_unsafe: bool = False,
                   progress: bool = True) -> pd.DataFrame:
    """Degrade every page with every pipeline; write each variant with its metadata.

    Parameters
    ----------
    images : mapping of str to image, or sequence of paths
        doc_id -> page (array, PIL image or image file path), or image file paths whose
        stem is the doc id. Doc ids name files: letters, digits, ``.``, ``_``, ``-``.
    pipelines : sequence or mapping
        Names in :data:`PIPELINES` or :class:`PipelineSpec` objects, or a mapping
        name -> spec.
    seed : int in [0, 2**31)
        The corpus seed. Each variant is degraded with its own seed derived from
        ``(seed, doc_id, pipeline)`` (recorded as ``variant_seed``), so a variant does not
        depend on which other pages or pipelines are in the run.
    out_dir : path
        ``<out_dir>/<pipeline>/<doc_id>.png`` and ``<doc_id>.json`` beside it.
    baseline : str or None, default "original"
        The pipeline name under which the undegraded page is written too (tier
        ``"original"``), the baseline of :func:`confcal.report.degradation.degradation_tiers`;
        None to skip it.
    allow_unsafe : bool, default False
        See :func:`make_pipeline`.
    progress : bool, default True
        Show a tqdm progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per variant: ``doc_id, pipeline, tier, path, metadata_path, variant_seed,
        reused``. ``tier`` is the pipeline's nominal severity (:attr:`PipelineSpec.tier`);
        the measured tier comes from the accuracy drop
        (:func:`~confcal.report.degradation.degradation_tiers`).

    Notes
    -----
    The metadata JSON holds ``doc_id, source (the input path or null), source_sha256,
    pipeline, tier, severity, effect, based_on, seed, variant_seed, spec, spec_sha256,
    image, width, height, channels, augraphy_version``. Every pipeline is checked before
    the first page is degraded. A run that is interrupted resumes: a variant whose
    metadata already records the same source, spec and seeds is kept (``reused``); one
    that records anything else is an error, never silently overwritten.

    Examples
    --------
    >>> import numpy as np
    >>> pages = {"inv-1": np.full((150, 200, 3), 255, dtype=np.uint8)}
    >>> table = degrade_corpus(pages, ["stains", "skew_jpeg"], seed=0,
    ...                        out_dir="corpus", progress=False)  # doctest: +SKIP
    >>> table[["doc_id", "pipeline", "tier"]]                     # doctest: +SKIP
      doc_id   pipeline      tier
    0  inv-1   original  original
    1  inv-1     stains  moderate
    2  inv-1  skew_jpeg  moderate
    """
    import pandas as pd

    items = _corpus_items(images)
    if baseline is not None:
        _check_name(baseline, "baseline")
    specs = _corpus_pipelines(pipelines, baseline)
    seed = check_seed(seed, optional=False, limit=_SEED_LIMIT)
    if not isinstance(progress, bool):
        raise ValidationError(f"progress must be True or False; found {progress!r}")
    for checked in specs:
        _check(checked, allow_unsafe)  # every pipeline, before any page is degraded
    cv2 = _require("cv2")
    augraphy_version = _version("augraphy")
    out = Path(out_dir)
    variants: list[PipelineSpec | None] = [None] if baseline is not None else []
    variants.extend(specs)
    jobs = [(doc_id, value, spec) for doc_id, value in items for spec in variants]
    bar = _progress(len(jobs), "degrading", progress)
    rows = []
    sources: dict[str, tuple[np.ndarray, str | None, str]] = {}
    try:
        for doc_id, value, spec in jobs:
            if doc_id not in sources:
                array, source = _load_source(value, doc_id)
                sources.clear()  # one page in memory at a time
                sources[doc_id] = (array, source, hashlib.sha256(array.tobytes()).hexdigest()
                                   + f":{array.shape}")
            array, source, source_digest = sources[doc_id]
            name = baseline if spec is None else spec.name
            assert name is not None
            variant_seed = _variant_seed(seed, doc_id, name)
            folder = out / name
            image_path, meta_path = folder / f"{doc_id}.png", folder / f"{doc_id}.json"
            meta = {
                "doc_id": doc_id, "source": source, "source_sha256": source_digest,
                "pipeline": name,
                "tier": "original" if spec is None else spec.tier,
                "severity": None if spec is None else dict(spec.severity),
                "effect": "the undegraded page" if spec is None else spec.effect,
                "based_on": None if spec is None else spec.based_on,
                "seed": seed, "variant_seed": variant_seed,
                "spec": None if spec is None else spec.to_dict(),
                "spec_sha256": None if spec is None else _spec_digest(spec),
                "image": image_path.name, "width": int(array.shape[1]),
                "height": int(array.shape[0]),
                "channels": 1 if array.ndim == 2 else int(array.shape[2]),
                "augraphy_version": augraphy_version,
            }
            reused = _reusable(meta_path, image_path, meta)
            if not reused:
                output = array if spec is None else _degrade_array(array, spec, variant_seed,
                                                                   allow_unsafe)
                folder.mkdir(parents=True, exist_ok=True)
                # a partial file from an interrupted run must never look like a finished one
                atomic_write(image_path, _encode_png(cv2, output, image_path))
                atomic_write(meta_path, json.dumps(meta, indent=2, default=repr) + "\n")
            rows.append({"doc_id": doc_id, "pipeline": name, "tier": meta["tier"],
                         "path": str(image_path), "metadata_path": str(meta_path),
                         "variant_seed": variant_seed, "reused": reused})
            bar.update(1)
    finally:
        bar.close()
    return pd.DataFrame(rows, columns=["doc_id", "pipeline", "tier", "path", "metadata_path",
                                       "variant_seed", "reused"])


def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _reusable(meta_path: Path, image_path: Path, meta: dict[str, Any]) -> bool:
    """True when a finished variant with the same inputs is on disk; raise on a conflict."""
    if not meta_path.exists() and not image_path.exists():
        return False
    if not meta_path.exists():
        raise ValidationError(f"out_dir must not hold an image without its metadata; found "
                              f"{str(image_path)!r} without {meta_path.name!r}")
    try:
        raw = meta_path.read_bytes()
    except OSError as exc:
        raise ValidationError(f"out_dir metadata {str(meta_path)!r} must be readable JSON; "
                              f"found {exc}", source=meta_path) from None
    old = read_json_object(raw, where=f"out_dir metadata {str(meta_path)!r}", source=meta_path)
    keys = ("source_sha256", "pipeline", "seed", "variant_seed", "spec_sha256")
    differ = [k for k in keys if old.get(k) != meta[k]]
    if differ:
        raise ValidationError(
            f"out_dir must not hold another run's variant at {str(image_path)!r}; its "
            f"metadata differs in {differ} (use a new out_dir or remove the old files)")
    return image_path.exists()


def _encode_png(cv2: Any, image: np.ndarray, path: Path) -> bytes:
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise OSError(f"OpenCV could not encode {path} as PNG")
    return bytes(data)


def _progress(total: int, desc: str, enabled: bool) -> Any:
    return progress(total, desc, enabled, unit="page", user="confcal.extras.augment",
                    extra=_EXTRA)
