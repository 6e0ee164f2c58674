"""The 20 ConfBench pipelines (8 on Augraphy's archetypes, 12 custom) and spec lookup."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from ...exceptions import ValidationError
from ._specs import PHASES, PipelineSpec, Step

__all__ = ["MEASURED", "PIPELINES", "as_spec"]

# The tier each pipeline's OCR word-accuracy drop fell in, pooled over every page design,
# page and seed of benchmarks/bench_degradation.py (mild < 0.05, moderate 0.05 to 0.10,
# high > 0.10). `python benchmarks/bench_degradation.py --write-tiers` rewrites the block
# between the two markers from its own measurement.
# --- measured tiers: begin
MEASURED: Mapping[str, str] = MappingProxyType({
    "archetype1": "high",
    "archetype2": "high",
    "archetype3": "high",
    "archetype4": "moderate",
    "archetype5": "high",
    "archetype6": "moderate",
    "archetype7": "moderate",
    "archetype10": "mild",
    "bleed_through": "mild",
    "ink_mottling": "mild",
    "low_ink": "mild",
    "custom22": "moderate",
    "stains": "mild",
    "watermark": "mild",
    "custom15": "mild",
    "bindings": "moderate",
    "skew_jpeg": "mild",
    "shadow_lighting": "mild",
    "custom12": "moderate",
    "fax_letterpress": "moderate",
})
# --- measured tiers: end


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
                  # archetype: 1000 points x 500 clusters (outside); 300 x 300 (inside)
                  # left a ruled 150 dpi page 0.32 of its words; pulled to 150 x 150
                  ("Letterpress", {"n_samples": (150, 150), "n_clusters": (150, 150),
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
                             # archetype: 3-5 px (outside)
                             "markup_thickness_range": (2, 3), "markup_type": "underline",
                             "markup_color": (0, 0, 0), "single_word_mode": False,
                             "large_word_mode": False, "repetitions": 1}),
                 # archetype: intensity 0.9 (outside)
                 ("InkBleed", {"intensity_range": (0.6, 0.6), "kernel_size": (3, 3),
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
                             # archetype: 0.5 (outside)
                             noise_concentration=(0.3, 0.3), edge_effect=1),
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
            # archetype: intensity 0.9 (outside); at 0.6 with a 7 px kernel the strokes of
            # a 150 dpi monospace page ran together: 0.17 of its words read
            ink=[("InkBleed", {"intensity_range": (0.4, 0.4), "kernel_size": (5, 5),
                               "severity": (0.3, 0.3)})],
            paper=[_photocopy(noise_type=1, noise_side="all", noise_iteration=(1, 1),
                              noise_size=(1, 1), noise_value=(110, 110),
                              # archetype: concentration 0.3-0.4 (outside)
                              noise_sparsity=(0.1, 0.1), noise_concentration=(0.2, 0.3),
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
                 # archetype: severity 1.0 (outside); at 0.6 (the envelope's edge) the
                 # strokes of a ruled 150 dpi page ran together: 0.35 of its words read
                 ("InkBleed", {"intensity_range": (0.3, 0.4), "kernel_size": (3, 3),
                               "severity": (0.3, 0.3)}),
                 # the archetype's two BadPhotoCopy steps (near-black noise_type 2 speckle)
                 # are dropped: they cover most of the page, leaving Tesseract 0.04-0.48
                 # of the words whatever their concentration (benchmarks/README.md)
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
            paper=[("Letterpress", {"n_samples": (200, 300), "n_clusters": (300, 400),
                                    "std_range": (500, 500), "value_range": (245, 255),
                                    "value_threshold_range": (128, 128), "blur": 0})],
            post=[("Dithering", {"dither": "ordered", "order": (4, 4)}),
                  ("InkBleed", {"intensity_range": (0.1, 0.2), "kernel_size": (3, 3),
                                "severity": (0.2, 0.2)}),
                  ("Geometric", {"rotate_range": (-1, -1), "randomize": 0}),
                  _FAX,
                  _photocopy(noise_type=1, noise_side="none", noise_iteration=(2, 3),
                             noise_size=(1, 4), noise_value=(0, 0), noise_sparsity=(0.99, 0.99),
                             noise_concentration=(0.01, 0.01))]),
        PipelineSpec(
            "archetype7", based_on="augraphy.pipeline_archetype7",
            effect="a speckled, bold fax rotated by a degree",
            severity={"ink": "mild", "paper": "mild", "post": "moderate"},
            ink=[("Geometric", {"padding": [0, 0, 0, 0.025], "randomize": 0})],
            paper=[_photocopy(noise_type=1, noise_side="none", noise_iteration=(2, 3),
                              noise_size=(4, 8), noise_value=(0, 5),
                              noise_sparsity=(0.99, 0.99), noise_concentration=(0.01, 0.01))],
            # archetype: ink bleed 0.6 x 0.6 left 0.15 of the words of a ruled serif page
            post=[_FAX,
                  ("InkBleed", {"intensity_range": (0.3, 0.3), "kernel_size": (3, 3),
                                "severity": (0.3, 0.3)}),
                  _photocopy(noise_type=2, noise_side="all", noise_iteration=(2, 2),
                             noise_size=(2, 3), noise_value=(0, 5), noise_sparsity=(0.05, 0.05),
                             noise_concentration=(0.1, 0.1)),
                  ("Geometric", {"rotate_range": (1, 1), "randomize": 0})]),
        PipelineSpec(
            "archetype10", based_on="augraphy.pipeline_archetype10",
            effect="a letterpress page with dropouts, faxed to black and white",
            severity={"ink": "high", "paper": "none", "post": "moderate"},
            ink=[_photocopy(noise_type=1, noise_side="none", noise_iteration=(2, 3),
                            noise_size=(1, 7), noise_value=(0, 1), noise_sparsity=(0.99, 0.99),
                            noise_concentration=(0.01, 0.01)),
                 ("Letterpress", {"n_samples": (200, 300), "n_clusters": (300, 400),
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
            "ink_mottling",
            effect="uneven ink density inside the characters, the ink spreading at their edges",
            severity={"ink": "mild"},
            # InkMottling alone only lightens the ink pixels, by at most its alpha (< 0.3)
            # times a mid grey: at alpha 0.1-0.25 it changed the benchmark pages (2-7% ink)
            # by 0.22-1.99 grey levels on average. Coarser blotches at the alpha's edge and
            # ink run into the paper around each stroke change every one by at least 2
            ink=[("InkMottling", {"ink_mottling_alpha_range": (0.25, 0.29),
                                  "ink_mottling_noise_scale_range": (3, 5),
                                  "ink_mottling_gaussian_kernel_range": (5, 9)}),
                 ("InkBleed", {"intensity_range": (0.5, 0.6), "kernel_size": (5, 5),
                               "severity": (0.4, 0.5)})]),
        PipelineSpec(
            "low_ink", effect="a printer running out of ink: faded streaks through the text",
            severity={"ink": "moderate"},
            # 10 random and 4 periodic streaks left a ruled 150 dpi page 0.49 of its words
            ink=[("LowInkRandomLines", {"count_range": (6, 6), "use_consistent_lines": False,
                                        "noise_probability": 0.2}),
                 ("LowInkPeriodicLines", {"count_range": (2, 2), "period_range": (16, 32),
                                          "use_consistent_lines": False,
                                          "noise_probability": 0.1})]),
        PipelineSpec(
            # the paper's Custom22: dithering in the ink phase, a dot-matrix post phase, high
            "custom22",
            effect="an ordered-halftone printout reprinted on a dot-matrix printer",
            severity={"ink": "high", "post": "high"},
            ink=[("Dithering", {"dither": "ordered", "order": (3, 3)})],
            # 3 px dots (Augraphy's least), a 3 px median and no blur. A 5 px median smears
            # 150 dpi strokes away: it left Tesseract 0.07 of the words on a 150 dpi page
            # (0.81 on the 200 dpi demo invoices); 5 px dots, 0.39. Pulled to where every
            # benchmark page keeps 0.6 of its words
            post=[("DotMatrix", {"dot_matrix_shape": "circle",
                                 "dot_matrix_dot_width_range": (3, 3),
                                 "dot_matrix_dot_height_range": (3, 3),
                                 "dot_matrix_min_width_range": (1, 2),
                                 "dot_matrix_max_width_range": (150, 200),
                                 "dot_matrix_min_height_range": (1, 2),
                                 "dot_matrix_max_height_range": (150, 200),
                                 "dot_matrix_min_area_range": (10, 20),
                                 "dot_matrix_max_area_range": (2000, 5000),
                                 "dot_matrix_median_kernel_value_range": (3, 3),
                                 "dot_matrix_gaussian_kernel_value_range": (1, 1),
                                 "dot_matrix_rotate_value_range": (0, 0)})]),
        PipelineSpec(
            "stains", effect="coffee and water stains on the paper",
            severity={"paper": "moderate"},
            # "random" draws severe stains now and then, which leave Tesseract a third of
            # the words on a rendered invoice; rough stains are as visible and readable
            paper=[("Stains", {"stains_type": "rough_stains", "stains_blend_method": "darken",
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
            # the paper's Custom15: moiré on colored paper, in the paper phase only, mild
            "custom15",
            effect="a form on colored paper with a moiré pattern in the paper itself",
            severity={"paper": "mild"},
            paper=[("ColorPaper", {"hue_range": (0, 255), "saturation_range": (10, 40)}),
                   ("Moire", {"moire_density": (15, 20), "moire_blend_method": "normal",
                              "moire_blend_alpha": 0.1})]),
        PipelineSpec(
            "bindings", effect="punch holes, staples or clips along the binding edge",
            severity={"post": "mild"},
            post=[("BindingsAndFasteners", {"overlay_types": "darken",
                                            "effect_type": "random", "width_range": "random",
                                            "height_range": "random",
                                            "angle_range": (-30, 30), "ntimes": (3, 5),
                                            "nscales": (2.5, 3.0), "edge": "left",
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
            # the paper's Custom12: dirty-drum streaks with roller marks, in the post phase
            # only, moderate: horizontal and vertical bands over the text that hide glyphs
            # here and there without making the page illegible
            "custom12",
            effect="a photocopier with a dirty drum and rollers bands the page both ways",
            severity={"post": "moderate"},
            # grey streaks, few and light: at line_concentration 0.1 and noise values
            # 64-128 in one direction Tesseract lost 0.23 of the words over the benchmark
            # pages (high); at 0.05 and 128-192 in both, 0.036 (mild)
            post=[("DirtyDrum", {"line_width_range": (1, 2), "line_concentration": 0.05,
                                 "direction": 2, "noise_intensity": 0.3,
                                 "noise_value": (96, 160), "ksize": (3, 3), "sigmaX": 0}),
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
    return {spec.name: replace(spec, measured_tier=MEASURED[spec.name]) for spec in specs}


PIPELINES: Mapping[str, PipelineSpec] = MappingProxyType(_registry())
"""The 20 ConfBench pipelines by name: 8 ``archetype*`` and 12 custom (module docstring)."""


def as_spec(pipeline: Any, what: str = "pipeline") -> PipelineSpec:
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

