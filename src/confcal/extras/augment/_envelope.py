"""The OCR-safe envelope: every parameter family that can erase text, bounded and checked."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..._validation import is_real
from ...exceptions import ValidationError
from ._specs import NESTING, PHASES, PipelineSpec, Step, require_augment

__all__ = ["ENVELOPE", "LIMITS", "ENVELOPE_RULES", "EnvelopeError", "OCRSafeEnvelope",
           "augmentation_parameters", "check_spec", "envelope_violations"]


@dataclass(frozen=True)
class OCRSafeEnvelope:
    """The limits inside which a degraded page stays readable by OCR (module Notes).

    Every limit is a closed interval ``(low, high)`` of one quantity, except
    ``blur_iterations`` and ``overlay_alpha``, whose upper end is open (fewer than 8
    iterations, alpha below 0.3).

    Attributes
    ----------
    max_rotation : float
        Degrees either way.
    jpeg_quality, brightness, gamma : tuple
        Lowest and highest JPEG quality, brightness factor and gamma.
    max_blur_radius : float
        Pixels reached by a Gaussian (or ellipse) blur.
    blur_iterations_below : int
        Blur iterations must be fewer than this.
    overlay_alpha_below : float
        The alpha of anything laid over the page must be below this.
    max_noise_concentration : float
        ``BadPhotoCopy.noise_concentration``: the share of the noise mask that is dark.
    max_noise_iterations : int
        ``BadPhotoCopy.noise_iteration``: how many times the noise is grown.
    max_ink_spread : float
        ``InkBleed`` intensity and severity: how far ink runs into the paper.
    max_dot_size : float
        ``DotMatrix`` dot width and height in pixels.
    max_filter_radius : float
        Median kernels (``DotMatrix``) read as their radius (k - 1) / 2, pixels.
    max_dither_order : int
        ``Dithering.order`` of an ordered dither.
    max_dropouts : int
        ``Letterpress`` clusters and points per cluster.
    max_streaks : int
        Lines drawn through the text (``LowInk*Lines.count_range``,
        ``Markup.num_lines_range``).
    max_stroke_width : float
        Width in pixels of the lines drawn through the text (``Markup``, ``DirtyDrum``).
    fax_scale : tuple of float
        ``Faxify.scale_range``: the fax's downscaling factor.
    geometric_scale : tuple of float
        ``Geometric.scale``: the page's resampling factor (scaled back by ``degrade``).
    max_translation : float
        ``Geometric.translation``: the shift either way, as a fraction of the page (a value
        of 1 or more, which Augraphy reads as pixels, is outside).
    max_subtle_noise : float
        ``SubtleNoise.subtle_range``: the largest change of a pixel's value.

    ``Geometric``'s mirroring (``fliplr``, ``flipud``) and ``crop`` are refused outright:
    a mirrored page has no readable word, a crop cuts text off.

    Examples
    --------
    >>> ENVELOPE.jpeg_quality, ENVELOPE.blur_iterations_below, ENVELOPE.gamma
    ((70, 95), 8, (0.67, 1.5))
    """

    max_rotation: float = 5.0
    jpeg_quality: tuple[int, int] = (70, 95)
    brightness: tuple[float, float] = (0.7, 1.3)
    gamma: tuple[float, float] = (0.67, 1.5)
    max_blur_radius: float = 200.0
    blur_iterations_below: int = 8
    overlay_alpha_below: float = 0.3
    max_noise_concentration: float = 0.3
    max_noise_iterations: int = 3
    max_ink_spread: float = 0.6
    max_dot_size: float = 5.0
    max_filter_radius: float = 4.0
    max_dither_order: int = 4
    max_dropouts: int = 400
    max_streaks: int = 10
    max_stroke_width: float = 4.0
    fax_scale: tuple[float, float] = (1.0, 1.5)
    geometric_scale: tuple[float, float] = (0.5, 2.0)
    max_translation: float = 0.05
    max_subtle_noise: float = 80.0

    def bounds(self, limit: str) -> tuple[float, float, bool]:
        """(low, high, high end open) of one limit."""
        closed = {
            "rotation": (-self.max_rotation, self.max_rotation),
            "jpeg_quality": self.jpeg_quality, "brightness": self.brightness,
            "gamma": self.gamma, "blur_radius": (0.0, self.max_blur_radius),
            "noise_concentration": (0.0, self.max_noise_concentration),
            "noise_iterations": (0.0, self.max_noise_iterations),
            "ink_spread": (0.0, self.max_ink_spread), "dot_size": (0.0, self.max_dot_size),
            "filter_radius": (0.0, self.max_filter_radius),
            "dither_order": (0.0, self.max_dither_order),
            "dropouts": (0.0, self.max_dropouts), "streaks": (0.0, self.max_streaks),
            "stroke_width": (0.0, self.max_stroke_width), "fax_scale": self.fax_scale,
            "geometric_scale": self.geometric_scale,
            "translation": (-self.max_translation, self.max_translation),
            "subtle_noise": (0.0, self.max_subtle_noise),
            "mirror": (0.0, 0.0), "crop": (0.0, 0.0),
        }
        if limit in closed:
            low, high = closed[limit]
            return float(low), float(high), False
        if limit == "blur_iterations":
            return 0.0, float(self.blur_iterations_below), True
        if limit == "overlay_alpha":
            return 0.0, self.overlay_alpha_below, True
        raise KeyError(limit)

    def rule(self, limit: str) -> str:
        """The rule of one limit, in words (used in error messages)."""
        low, high, open_high = self.bounds(limit)
        if limit == "rotation":
            return f"within ±{high:g} degrees"
        if limit == "translation":
            return f"within ±{high:g} of the page"
        if limit in ("mirror", "crop"):
            return "off (0)" if limit == "mirror" else "empty ()"
        if open_high:
            return f"below {high:g}" if limit == "overlay_alpha" else f"fewer than {high:g}"
        if low == 0.0:
            return f"at most {high:g}" + (" px" if limit in _PIXELS else "")
        return f"within [{low:g}, {high:g}]"

    def holds(self, limit: str, value: float) -> bool:
        """True when one number is inside one limit."""
        low, high, open_high = self.bounds(limit)
        if limit in ("blur_radius", "blur_iterations", "overlay_alpha"):
            low = -float("inf")  # these were checked from above only
        return low <= value < high if open_high else low <= value <= high


_PIXELS = frozenset({"blur_radius", "dot_size", "filter_radius", "stroke_width"})

ENVELOPE = OCRSafeEnvelope()
"""The ConfBench OCR-safe envelope (module Notes)."""

LIMITS: tuple[str, ...] = (
    "rotation", "jpeg_quality", "brightness", "gamma", "blur_radius", "blur_iterations",
    "overlay_alpha", "noise_concentration", "noise_iterations", "ink_spread", "dot_size",
    "filter_radius", "dither_order", "dropouts", "streaks", "stroke_width", "fax_scale",
    "geometric_scale", "translation", "subtle_noise", "mirror", "crop")
"""Every limit of the envelope, by name."""


def _identity(value: Any) -> Any:
    return value


def _map_numbers(value: Any, fn: Any) -> Any:
    if is_real(value):
        return fn(float(value))
    if isinstance(value, (tuple, list)) and value and all(is_real(v) for v in value):
        return type(value)(fn(float(v)) for v in value)
    return value


def _kernel_radius(value: Any) -> Any:
    # a k x k kernel reaches (k - 1) / 2 pixels from its centre
    return _map_numbers(value, lambda k: (k - 1) / 2)


def _crop_extent(value: Any) -> Any:
    # no crop is an empty tuple (Augraphy's default); any crop box is outside
    if isinstance(value, (tuple, list)) and not value:
        return 0.0
    if value is None:
        return 0.0
    return value


def _one_minus(value: Any) -> Any:
    # LightingGradient blends V * transparency + light * (1 - transparency): the light's
    # alpha is 1 - transparency
    return _map_numbers(value, lambda t: 1 - t)


# augmentation -> ((parameter, limit, how the parameter reads as that limit's quantity), ...)
ENVELOPE_RULES: MappingProxyType[str, tuple[tuple[str, str, Any], ...]] = MappingProxyType({
    "Geometric": (
        ("rotate_range", "rotation", _identity),
        ("scale", "geometric_scale", _identity),
        ("translation", "translation", _identity),
        ("fliplr", "mirror", _identity),
        ("flipud", "mirror", _identity),
        ("crop", "crop", _crop_extent),
    ),
    "SubtleNoise": (("subtle_range", "subtle_noise", _identity),),
    "PageBorder": (("page_rotation_angle_range", "rotation", _identity),),
    "Jpeg": (("quality_range", "jpeg_quality", _identity),),
    "Brightness": (("brightness_range", "brightness", _identity),),
    "BrightnessTexturize": (("texturize_range", "brightness", _identity),),
    "Gamma": (("gamma_range", "gamma", _identity),),
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
    "BadPhotoCopy": (
        ("blur_noise_kernel", "blur_radius", _kernel_radius),
        ("noise_concentration", "noise_concentration", _identity),
        ("noise_iteration", "noise_iterations", _identity),
    ),
    "BleedThrough": (
        ("ksize", "blur_radius", _kernel_radius),
        ("alpha", "overlay_alpha", _identity),
    ),
    "InkBleed": (
        ("intensity_range", "ink_spread", _identity),
        ("severity", "ink_spread", _identity),
    ),
    "InkShifter": (("blur_kernel_size", "blur_radius", _kernel_radius),),
    "DoubleExposure": (("gaussian_kernel_range", "blur_radius", _kernel_radius),),
    "DirtyDrum": (
        ("ksize", "blur_radius", _kernel_radius),
        ("line_width_range", "stroke_width", _identity),
    ),
    "NoisyLines": (("noisy_lines_gaussian_kernel_value_range", "blur_radius", _kernel_radius),),
    "DotMatrix": (
        ("dot_matrix_gaussian_kernel_value_range", "blur_radius", _kernel_radius),
        ("dot_matrix_dot_width_range", "dot_size", _identity),
        ("dot_matrix_dot_height_range", "dot_size", _identity),
        ("dot_matrix_median_kernel_value_range", "filter_radius", _kernel_radius),
    ),
    "Dithering": (("order", "dither_order", _identity),),
    "Letterpress": (
        ("n_samples", "dropouts", _identity),
        ("n_clusters", "dropouts", _identity),
    ),
    "LowInkRandomLines": (("count_range", "streaks", _identity),),
    "LowInkPeriodicLines": (("count_range", "streaks", _identity),),
    "Markup": (
        ("num_lines_range", "streaks", _identity),
        ("markup_thickness_range", "stroke_width", _identity),
    ),
    "Faxify": (("scale_range", "fax_scale", _identity),),
    "InkMottling": (
        ("ink_mottling_gaussian_kernel_range", "blur_radius", _kernel_radius),
        ("ink_mottling_alpha_range", "overlay_alpha", _identity),
    ),
    "Moire": (("moire_blend_alpha", "overlay_alpha", _identity),),
    "Stains": (("stains_blend_alpha", "overlay_alpha", _identity),),
    "LCDScreenPattern": (("pattern_overlay_alpha", "overlay_alpha", _identity),),
    "PatternGenerator": (("alpha_range", "overlay_alpha", _identity),),
    "LightingGradient": (("transparency", "overlay_alpha", _one_minus),),
})
"""The parameters each limit reads, per Augraphy augmentation."""


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


@functools.cache
def augmentation_parameters(name: str) -> MappingProxyType[str, Any]:
    """Keyword parameters and defaults of an Augraphy augmentation class."""
    augraphy = require_augment("augraphy")
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


def envelope_violations(spec: PipelineSpec) -> list[dict[str, Any]]:
    """Every parameter (given or Augraphy's default) outside the envelope."""
    found: list[dict[str, Any]] = []

    def visit(steps: tuple[Step, ...], phase: str, where: str) -> None:
        for i, (name, params) in enumerate(steps):
            path = f"{where}[{i}]"
            defaults = augmentation_parameters(name)
            unknown = [k for k in params if k not in defaults]
            if unknown:
                raise ValidationError(
                    f"pipeline {spec.name!r}, {path} ({name}): parameter {unknown[0]!r} must "
                    f"be one of {name}'s parameters ({', '.join(defaults)})")
            if name in NESTING:
                visit(params["augmentations"], phase, f"{path}.augmentations")
                continue
            effective = {**defaults, **params}
            breaches: list[tuple[str, str, Any]] = []
            if name == "Geometric" and effective.get("randomize"):
                breaches.append(("randomize", "rotation",
                                 "randomize=1 (rotation drawn within ±10)"))
            for parameter, limit, read in ENVELOPE_RULES.get(name, ()):
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
            if name in NESTING:
                reason = visit(params["augmentations"], f"{path}.augmentations")
                if reason:
                    return reason
        return None

    for phase in PHASES:
        reason = visit(spec[phase], phase)
        if reason:
            return reason
    return None


def check_spec(spec: PipelineSpec, allow_unsafe: bool) -> None:
    """Refuse a spec that downloads, or (unless ``allow_unsafe``) leaves the envelope."""
    if not isinstance(allow_unsafe, bool):
        raise ValidationError(f"allow_unsafe must be True or False; found {allow_unsafe!r}")
    reason = _downloads(spec)
    if reason:
        raise ValidationError(f"pipeline {spec.name!r} must not download anything; {reason} "
                              "(refused even with allow_unsafe=True)")
    violations = envelope_violations(spec)
    if violations and not allow_unsafe:
        v = violations[0]
        more = f"{len(violations)} violations, first" if len(violations) > 1 else "1 violation"
        raise EnvelopeError(
            f"pipeline {v['pipeline']!r} must stay inside the OCR-safe envelope; found {more}: "
            f"phase {v['phase']!r}, {v['path']} {v['augmentation']}.{v['parameter']}: "
            f"{v['limit']} must be {v['rule']}; found {v['value']!r} "
            "(pass allow_unsafe=True to build it anyway)", violations)
