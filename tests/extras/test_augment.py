"""confcal.extras.augment: the 20 pipelines, the OCR-safe envelope, reproducible degradation.

Tests that run Augraphy skip cleanly without the ``augment`` extra; the registry and spec
checks that do not need it always run. Pages are tiny (200 x 150) to keep this file fast.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

import confcal
from _optional import need_module
from confcal.exceptions import ValidationError
from confcal.extras.augment import (
    ENVELOPE,
    ENVELOPE_RULES,
    LIMITS,
    PHASES,
    PIPELINES,
    SEVERITIES,
    EnvelopeError,
    PipelineSpec,
    degrade,
    degrade_corpus,
    make_pipeline,
)
from confcal.extras.augment._registry import MEASURED
from confcal.extras.augment._specs import MEASURED_TIERS

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "degradation.json"
BENCHMARK = ROOT / "benchmarks" / "bench_degradation.py"
REGISTRY = ROOT / "src" / "confcal" / "extras" / "augment" / "_registry.py"


@pytest.fixture
def augraphy():
    return need_module("augraphy")


def _page(channels: int = 3) -> np.ndarray:
    """A 200 x 150 white page with a few dark bars standing in for lines of text."""
    page = np.full((150, 200, 3), 255, dtype=np.uint8)
    for top in range(15, 140, 18):
        for left in range(10, 180, 28):
            page[top:top + 7, left:left + 20] = 20
    if channels == 1:
        return np.ascontiguousarray(page[:, :, 0])
    if channels == 4:
        alpha = np.full((150, 200, 1), 255, dtype=np.uint8)
        alpha[:10] = 0  # a transparent strip the degradation must keep
        return np.concatenate([page, alpha], axis=2)
    return page


def _steps(spec: PipelineSpec):
    """Every (name, params) step of a spec, nested ones included."""
    stack = [step for phase in PHASES for step in spec[phase]]
    while stack:
        name, params = stack.pop()
        yield name, params
        if "augmentations" in params:
            stack.extend(params["augmentations"])


# ------------------------------------------------------------------ registry (no Augraphy)
def test_registry_holds_8_archetype_and_12_custom_pipelines():
    assert len(PIPELINES) == 20
    archetypes = [s for s in PIPELINES.values() if s.based_on]
    assert len(archetypes) == 8
    assert all(s.based_on.startswith("augraphy.pipeline_archetype") for s in archetypes)
    for name, spec in PIPELINES.items():
        assert spec.name == name
        assert set(spec.severity) == set(PHASES)
        assert all(v in SEVERITIES for v in spec.severity.values())
        # an empty phase has no severity, a filled one has some
        assert all((spec.severity[p] == "none") == (not spec[p]) for p in PHASES), name
        assert spec.effect and "\n" not in spec.effect
        assert spec.intended_tier in SEVERITIES[1:]
        # every registered pipeline was measured, and its tier is the measured one
        assert spec.measured_tier in MEASURED_TIERS and spec.tier == spec.measured_tier
        assert all(n != "Scribbles" for n, _ in _steps(spec))  # it downloads fonts


def test_custom_pipelines_cover_the_effects_the_protocol_names():
    used = {name for spec in PIPELINES.values() if not spec.based_on for name, _ in _steps(spec)}
    assert {"BleedThrough", "InkMottling", "LowInkRandomLines", "LowInkPeriodicLines",
            "Dithering", "DotMatrix", "Stains", "WaterMark", "ColorPaper", "Moire",
            "BindingsAndFasteners", "Jpeg", "ShadowCast", "LightingGradient", "DirtyDrum",
            "DirtyRollers", "Geometric", "Faxify", "Letterpress"} <= used


def test_a_spec_is_a_mapping_of_phases():
    spec = PIPELINES["custom15"]
    assert list(spec) == ["ink", "paper", "post"] and spec["ink"] == ()
    variant = {**spec, "post": [("Jpeg", {"quality_range": (80, 90)})]}
    assert variant["paper"] == spec.paper
    assert json.loads(json.dumps(spec.to_dict()))["paper"][1][0] == "Moire"


def test_the_paper_s_pipelines_go_by_the_paper_s_names():
    # Custom15: moiré on colored paper, in the paper phase only, mild
    custom15 = PIPELINES["custom15"]
    assert [n for n, _ in custom15.paper] == ["ColorPaper", "Moire"]
    assert custom15.ink == () and custom15.post == ()
    assert custom15.intended_tier == custom15.tier == "mild"
    # Custom12: dirty-drum streaks with roller marks, post phase only, moderate
    custom12 = PIPELINES["custom12"]
    assert custom12.ink == () and custom12.paper == ()
    assert [n for n, _ in custom12.post] == ["DirtyDrum", "DirtyRollers"]
    assert custom12.post[0][1]["direction"] == 2  # vertical and horizontal bands
    assert custom12.intended_tier == custom12.tier == "moderate"
    # Custom22: dithering in the ink phase, a dot-matrix post phase, high by intent; the
    # dot matrix that keeps 150 dpi pages above the floor measures moderate pooled
    custom22 = PIPELINES["custom22"]
    assert [n for n, _ in custom22.ink] == ["Dithering"] and custom22.paper == ()
    assert [n for n, _ in custom22.post] == ["DotMatrix"]
    assert custom22.intended_tier == "high" and custom22.tier == "moderate"
    # names other than the registry's are unknown, whatever they once were
    for other in ("moire_colored_paper", "dithering_dot_matrix", "dirty_drum_rollers"):
        with pytest.raises(ValidationError, match=f"must be one of the 20 names in PIPELINES "
                                                  f"or a spec; found {other!r}"):
            degrade(_page(), other, seed=0)


@pytest.mark.parametrize("spec, message", [
    ({"ink": [("Jpeg",)]}, r"ink\[0\] must be an \(augmentation_name, params\) pair"),
    ({"ink": [("Jpeg", [("quality_range", (80, 90))])]},
     r"ink\[0\] \(Jpeg\) params must be a mapping"),
    ({"pre": []}, "spec keys must be among"),
    ({"post": [("OneOf", {"p": 1})]}, r"post\[0\] \(OneOf\) must have an 'augmentations' list"),
    (42, "spec must be a name in PIPELINES, a PipelineSpec or a mapping"),
    ("no_such_pipeline", "spec must be one of the 20 names in PIPELINES"),
])
def test_malformed_specs_are_named(spec, message):
    with pytest.raises(ValidationError, match=message):
        make_pipeline(spec)


def test_the_registry_s_measured_tiers_are_the_benchmark_s():
    # benchmarks/bench_degradation.py writes its full run to this file, and
    # --write-tiers rewrites the registry's block from the same run
    results = json.loads(RESULTS.read_text())
    assert {name: r["tier"] for name, r in results["pipelines"].items()} == dict(MEASURED)
    assert list(results["pipelines"]) == list(PIPELINES)
    assert {name: r["intended_tier"] for name, r in results["pipelines"].items()} == {
        name: spec.intended_tier for name, spec in PIPELINES.items()}
    # the run covered several designs, three seeds each, and held the floor everywhere
    assert len(results["pages"]) >= 4 and len(results["seeds"]) >= 3
    for name, r in results["pipelines"].items():
        assert set(r["designs"]) == set(results["pages"]), name
        for design in r["designs"].values():
            assert design["min_acc"] >= results["floor"], name
            # a visible change: of the page, or of the part a local effect confines to
            kind = results["local"].get(name, ["page"])[0]
            if kind == "ink":
                assert design["ink_mad"] >= results["min_ink_mad"], name
            else:
                assert design["mad" if kind == "page" else "edge_mad"] >= results["min_mad"]
            assert len(design["pages"]) == len(results["seeds"]) * len(
                {p["invoice"] for p in design["pages"]})
    # the tier is the drop read by the paper's rule
    for r in results["pipelines"].values():
        drop = round(r["drop"], 12)
        assert r["tier"] == ("mild" if drop < 0.05 else "moderate" if drop <= 0.10 else "high")
    counts = {t: sum(v == t for v in MEASURED.values()) for t in MEASURED_TIERS}
    assert min(counts.values()) >= 3, counts


def test_the_benchmark_rewrites_the_measured_tier_block(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_degradation", BENCHMARK)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def parts(text):
        head, rest = text.split("# --- measured tiers: begin\n")
        block, tail = rest.split("# --- measured tiers: end\n")
        return head, block, tail

    registry = tmp_path / "_registry.py"
    registry.write_text(REGISTRY.read_text())
    tiers = {name: ("mild", "moderate", "high")[i % 3] for i, name in enumerate(PIPELINES)}
    bench.write_tiers(tiers, registry)
    head, block, tail = parts(registry.read_text())
    old_head, _, old_tail = parts(REGISTRY.read_text())
    assert (head, tail) == (old_head, old_tail)  # nothing outside the block moves
    namespace: dict = {}
    exec(block, {"Mapping": dict, "MappingProxyType": dict}, namespace)
    assert namespace["MEASURED"] == tiers


def test_page_designs_scale_and_name_their_font():
    from confcal.extras.augment import FONTS, PAGE_DESIGNS, InvoiceLayout

    small = InvoiceLayout.at_dpi(150, font="mono")
    # 200 dpi -> 150 dpi: every size times 0.75, rounded (30 x 0.75 = 22.5 -> 22)
    assert (small.width, small.height, small.font_size, small.line_height) == (1275, 1650,
                                                                               22, 36)
    assert small.columns == (75, 240, 398, 540, 1035) and small.font == "mono"
    assert set(FONTS) == {"sans", "serif", "mono"}
    assert {d.font for d in PAGE_DESIGNS.values()} == set(FONTS)
    assert {d.ruled for d in PAGE_DESIGNS.values()} == {True, False}
    assert {d.width for d in PAGE_DESIGNS.values()} == {1700, 1275}
    with pytest.raises(ValidationError, match="font must be one of"):
        InvoiceLayout(font="comic")
    for dpi in (True, 10, float("nan")):
        with pytest.raises(ValidationError, match="dpi must be a number in"):
            InvoiceLayout.at_dpi(dpi)


def test_a_ruled_table_draws_its_rules():
    need_module("augraphy")  # the augment extra: pillow and matplotlib's fonts
    from confcal.datasets._generate import make_invoice
    from confcal.extras.augment import InvoiceLayout, render_invoice

    invoice = make_invoice(9)  # 6 line items: 8 horizontal rules (header, rows, bottom)
    plain = np.asarray(render_invoice(invoice)) < 128
    ruled = np.asarray(render_invoice(invoice, layout=InvoiceLayout(ruled=True))) < 128
    # a rule is a dark run across most of the table's width: none on the open table

    def full_rows(dark):
        return int((dark[:, 100:1600].mean(axis=1) > 0.9).sum())

    assert full_rows(plain) == 0
    assert full_rows(ruled) == 2 * (len(invoice["LineItems"]) + 2)  # 2 px each
    assert ruled.sum() > plain.sum()


def test_a_measured_tier_must_be_a_tier():
    with pytest.raises(ValidationError, match="measured_tier must be one of"):
        PipelineSpec("x", post=[("Jpeg", {})], measured_tier="severe")
    spec = PipelineSpec("x", post=[("Jpeg", {})], severity={"post": "high"})
    assert spec.measured_tier is None and spec.tier == spec.intended_tier == "high"


def test_severity_must_be_a_known_word():
    with pytest.raises(ValidationError, match="severity of phase 'post' must be one of"):
        PipelineSpec("x", post=[("Jpeg", {})], severity={"post": "catastrophic"})
    with pytest.raises(ValidationError, match="name must be a non-empty string of letters"):
        PipelineSpec("two words")


def test_the_module_imports_without_augraphy_and_names_the_extra():
    # a child process where importing augraphy, cv2 or numba fails, as without the extra
    code = textwrap.dedent("""
        import sys
        for name in ("augraphy", "cv2", "numba"):
            sys.modules[name] = None
        import numpy as np
        import confcal.extras.augment as augment
        print(len(augment.PIPELINES))
        try:
            augment.degrade(np.full((40, 40), 255, np.uint8), "stains", seed=0)
        except ImportError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    lines = out.stdout.splitlines()
    assert lines[0] == "20"
    assert "pip install -e '.[augment]'" in lines[1]


# ------------------------------------------------------------------------------ envelope
@pytest.mark.parametrize("step, parameter, limit, rule", [
    (("Geometric", {"rotate_range": (-6, 0)}), "rotate_range", "rotation", "within ±5 degrees"),
    (("Geometric", {"randomize": 1}), "randomize", "rotation", "within ±5 degrees"),
    (("PageBorder", {"page_rotation_angle_range": (-3, 8)}), "page_rotation_angle_range",
     "rotation", "within ±5 degrees"),
    (("Jpeg", {"quality_range": (60, 90)}), "quality_range", "jpeg_quality",
     r"within \[70, 95\]"),
    (("Jpeg", {}), "quality_range", "jpeg_quality", r"within \[70, 95\]"),  # default 25-95
    (("Brightness", {"brightness_range": (0.8, 1.4)}), "brightness_range", "brightness",
     r"within \[0.7, 1.3\]"),
    (("ShadowCast", {"shadow_opacity_range": (0.1, 0.2),
                     "shadow_blur_kernel_range": (101, 403)}),  # radius (403 - 1) / 2 = 201
     "shadow_blur_kernel_range", "blur_radius", "at most 200 px"),
    (("DepthSimulatedBlur", {"blur_iteration_range": (2, 7),
                             "blur_major_axes_length_range": (120, 201)}),
     "blur_major_axes_length_range", "blur_radius", "at most 200 px"),
    (("DepthSimulatedBlur", {}), "blur_iteration_range", "blur_iterations",  # default 8-10
     "fewer than 8"),
    (("Stains", {"stains_blend_alpha": 0.3}), "stains_blend_alpha", "overlay_alpha",
     "below 0.3"),
    (("LightingGradient", {"transparency": None}), "transparency", "overlay_alpha",
     "below 0.3"),
    (("Jpeg", {"quality_range": "random"}), "quality_range", "jpeg_quality",
     r"within \[70, 95\]"),
    # the families that erase text, each refused at Augraphy's default
    (("Gamma", {}), "gamma_range", "gamma", r"within \[0.67, 1.5\]"),  # default 0.5-1.5
    (("BadPhotoCopy", {"noise_iteration": (1, 2), "noise_concentration": (0.1, 0.7)}),
     "noise_concentration", "noise_concentration", "at most 0.3"),
    (("BadPhotoCopy", {"noise_concentration": (0.1, 0.2), "noise_iteration": (2, 4)}),
     "noise_iteration", "noise_iterations", "at most 3"),
    (("InkBleed", {"severity": (0.3, 0.4)}), "intensity_range", "ink_spread",  # 0.4-0.7
     "at most 0.6"),
    (("DotMatrix", {"dot_matrix_median_kernel_value_range": (9, 9),
                    "dot_matrix_dot_height_range": (3, 5)}),  # width 3-19 by default
     "dot_matrix_dot_width_range", "dot_size", "at most 5 px"),
    (("Dithering", {"dither": "ordered"}), "order", "dither_order", "at most 4"),  # 2-5
    (("Letterpress", {"n_samples": (200, 300)}), "n_clusters", "dropouts",  # 300-800
     "at most 400"),
    (("LowInkRandomLines", {"count_range": (5, 12)}), "count_range", "streaks", "at most 10"),
    (("Markup", {"num_lines_range": (2, 4), "markup_thickness_range": (1, 6)}),
     "markup_thickness_range", "stroke_width", "at most 4 px"),
    (("Faxify", {"scale_range": (0.5, 1.0)}), "scale_range", "fax_scale",
     r"within \[1, 1.5\]"),
    # each left Tesseract none or almost none of a rendered invoice's words, yet passed
    (("Geometric", {"translation": (0.95, 0.95)}), "translation", "translation",
     r"within ±0.05 of the page"),
    (("Geometric", {"scale": (0.05, 0.05)}), "scale", "geometric_scale", r"within \[0.5, 2\]"),
    (("Geometric", {"crop": (0, 0, 10, 10)}), "crop", "crop", r"empty \(\)"),
    (("Geometric", {"fliplr": 1}), "fliplr", "mirror", r"off \(0\)"),
    (("SubtleNoise", {"subtle_range": 255}), "subtle_range", "subtle_noise", "at most 80"),
])
def test_a_pipeline_outside_the_envelope_is_refused(augraphy, step, parameter, limit, rule):
    spec = PipelineSpec("too_much", paper=[("ColorPaper", {})], post=[step])
    with pytest.raises(EnvelopeError, match=(
            f"pipeline 'too_much' must stay inside the OCR-safe envelope; found 1 violation: "
            f"phase 'post', post\\[0\\] {step[0]}.{parameter}: {limit} must be {rule}; "
            "found ")) as info:
        make_pipeline(spec)
    (violation,) = info.value.violations
    assert violation["augmentation"] == step[0] and violation["limit"] == limit
    built = make_pipeline(spec, allow_unsafe=True)
    assert type(built).__name__ == "AugraphyPipeline"


def test_the_envelope_edges_are_inside(augraphy):
    spec = PipelineSpec("edges", post=[
        ("Geometric", {"rotate_range": (-5, 5)}),
        ("Jpeg", {"quality_range": (70, 95)}),
        ("Brightness", {"brightness_range": (0.7, 1.3)}),
        ("DepthSimulatedBlur", {"blur_iteration_range": (1, 7),
                                "blur_major_axes_length_range": (120, 200),
                                "blur_minor_axes_length_range": (120, 200)}),
        ("ShadowCast", {"shadow_opacity_range": (0.1, 0.29),
                        "shadow_blur_kernel_range": (101, 401)}),   # radius exactly 200
        ("LightingGradient", {"transparency": 0.71}),
    ])
    make_pipeline(spec)
    assert ENVELOPE.holds("overlay_alpha", 0.29) and not ENVELOPE.holds("overlay_alpha", 0.3)


def test_dot_matrix_median_filters_are_bounded(augraphy):
    spec = {"post": [("DotMatrix", {"dot_matrix_dot_width_range": (3, 3),
                                    "dot_matrix_dot_height_range": (3, 3),
                                    "dot_matrix_median_kernel_value_range": (29, 29)})]}
    with pytest.raises(EnvelopeError, match="DotMatrix.dot_matrix_median_kernel_value_range: "
                                            "filter_radius must be at most 4 px; found"):
        make_pipeline(spec)


def _inside(limit, number):
    """The envelope, written out again from its documented rules (module Notes)."""
    rules = {"rotation": (-5, 5), "jpeg_quality": (70, 95), "brightness": (0.7, 1.3),
             "gamma": (0.67, 1.5), "blur_radius": (0, 200), "noise_concentration": (0, 0.3),
             "noise_iterations": (0, 3), "ink_spread": (0, 0.6), "dot_size": (0, 5),
             "filter_radius": (0, 4), "dither_order": (0, 4), "dropouts": (0, 400),
             "streaks": (0, 10), "stroke_width": (0, 4), "fax_scale": (1, 1.5),
             "geometric_scale": (0.5, 2), "translation": (-0.05, 0.05),
             "subtle_noise": (0, 80), "mirror": (0, 0), "crop": (0, 0)}
    if limit == "blur_iterations":
        return number < 8
    if limit == "overlay_alpha":
        return number < 0.3
    low, high = rules[limit]
    return low <= number <= high


KERNELS = {("BadPhotoCopy", "blur_noise_kernel"), ("BleedThrough", "ksize"),
           ("DirtyDrum", "ksize"), ("ShadowCast", "shadow_blur_kernel_range"),
           ("ReflectedLight", "reflected_light_gaussian_kernel_size_range"),
           ("DotMatrix", "dot_matrix_gaussian_kernel_value_range"),
           ("DotMatrix", "dot_matrix_median_kernel_value_range"),
           ("InkMottling", "ink_mottling_gaussian_kernel_range")}


def test_every_registered_pipeline_is_inside_the_envelope_parameter_by_parameter(augraphy):
    import inspect

    # the families that erase text all have limits
    assert {"Gamma", "BadPhotoCopy", "DotMatrix", "Dithering", "InkBleed", "Letterpress",
            "LowInkRandomLines", "LowInkPeriodicLines", "Markup", "Faxify", "Jpeg",
            "Brightness", "Geometric", "Stains", "Moire", "DirtyDrum",
            "SubtleNoise"} <= set(ENVELOPE_RULES)
    assert {limit for rules in ENVELOPE_RULES.values() for _, limit, _ in rules} == set(LIMITS)
    checked = 0
    for name, spec in PIPELINES.items():
        for augmentation, params in _steps(spec):
            cls = getattr(augraphy, augmentation)
            defaults = {p.name: p.default for p in
                        inspect.signature(cls.__init__).parameters.values()}
            for parameter, limit, _ in ENVELOPE_RULES.get(augmentation, ()):
                value = params.get(parameter, defaults.get(parameter))
                numbers = [value] if not isinstance(value, (tuple, list)) else list(value)
                assert all(isinstance(v, (int, float)) for v in numbers), (name, parameter)
                if (augmentation, parameter) in KERNELS:
                    numbers = [(k - 1) / 2 for k in numbers]
                if augmentation == "LightingGradient":
                    numbers = [1 - t for t in numbers]
                if (augmentation, parameter) == ("Geometric", "crop"):
                    numbers = [0] if not value else [float("inf")]  # no crop: ()
                assert all(_inside(limit, v) for v in numbers), (name, augmentation,
                                                                parameter, value)
                checked += 1
    assert checked > 80  # every limited parameter of the 20 pipelines, defaults included


def test_every_violation_is_counted_and_nested_steps_are_checked(augraphy):
    spec = {"ink": [("OneOf", {"augmentations": [("Jpeg", {"quality_range": (10, 20)}),
                                                   ("Brightness", {"brightness_range": (2, 3)})]})]}
    with pytest.raises(EnvelopeError, match=r"found 2 violations, first: phase 'ink', "
                                            r"ink\[0\]\.augmentations\[0\] Jpeg") as info:
        make_pipeline(spec)
    assert [v["augmentation"] for v in info.value.violations] == ["Jpeg", "Brightness"]


@pytest.mark.parametrize("spec", [
    {"post": [("Scribbles", {})]},
    {"post": [("OneOf", {"augmentations": [("Jpeg", {"quality_range": (80, 90)}),
                                             ("Scribbles", {})]})]},
    {"paper": [("BindingsAndFasteners", {"use_figshare_library": 1})]},
])
def test_augmentations_that_download_are_refused_even_when_unsafe(spec):
    with pytest.raises(ValidationError, match="must not download anything.*refused even with "
                                              "allow_unsafe=True"):
        make_pipeline(spec, allow_unsafe=True)


def test_unknown_augmentations_and_parameters_are_named(augraphy):
    with pytest.raises(ValidationError, match="augmentation must be an Augraphy augmentation "
                                              "class name.*found 'Sparkle'"):
        make_pipeline({"post": [("Sparkle", {})]})
    with pytest.raises(ValidationError, match=r"post\[0\] \(Jpeg\): parameter 'quality' must "
                                              r"be one of Jpeg's parameters"):
        make_pipeline({"post": [("Jpeg", {"quality": 80})]})


# ------------------------------------------------------------------------------- degrade
@pytest.mark.parametrize("name", list(PIPELINES))
def test_every_pipeline_degrades_a_small_page(augraphy, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    page = _page()
    out = degrade(page, name, seed=11)
    assert out.shape == page.shape and out.dtype == np.uint8
    # a visible effect: the base blend alone changes no pixel (below), so all of it is the
    # pipeline's
    assert (out != page).mean() > 0.005
    assert np.array_equal(degrade(page, name, seed=11), out)
    assert os.listdir(tmp_path) == []  # no ./augraphy_cache, no logs


@pytest.mark.parametrize("name", ["fax_letterpress", "custom15", "archetype4"])
def test_gray_and_transparent_pages_keep_their_channels(augraphy, name):
    gray = degrade(_page(1), name, seed=3)
    assert gray.shape == (150, 200)
    bgra = degrade(_page(4), name, seed=3)
    assert bgra.shape == (150, 200, 4)
    assert np.array_equal(bgra[:, :, 3], _page(4)[:, :, 3])


def test_an_empty_pipeline_is_the_identity_bit_for_bit():
    from PIL import Image

    for page in (_page(), _page(1), _page(4), _page()[:, :, :1]):
        out = degrade(page, {}, seed=3)
        assert out is not page and out.dtype == page.dtype and out.shape == page.shape
        assert np.array_equal(out, page)
    image = Image.fromarray(_page()[:, :, ::-1], mode="RGB")
    assert degrade(image, PipelineSpec("nothing"), seed=0).tobytes() == image.tobytes()


def test_the_base_blend_leaves_a_page_on_white_paper_unchanged(augraphy):
    # a step that never fires (p=0): Augraphy still prints the ink layer onto the paper;
    # Augraphy's default "ink_to_paper" blend changed 22% of a rendered invoice's pixels
    idle = {"post": [("Jpeg", {"quality_range": (80, 90), "p": 0})]}
    gray = np.tile(np.linspace(0, 255, 200).astype(np.uint8), (150, 1))  # every gray level
    for page in (_page(), _page(1), gray):
        assert np.array_equal(degrade(page, idle, seed=1), page)


def test_other_threads_keep_their_working_directory_and_numba_threads(augraphy, tmp_path,
                                                                       monkeypatch):
    import threading

    import numba

    monkeypatch.chdir(tmp_path)
    threads_before = numba.get_num_threads()
    done = threading.Event()
    written, seen_threads = [], set()

    def writer():
        i = 0
        while not done.is_set() or i < 50:
            with open(f"note-{i}.txt", "w") as f:  # relative: the working directory's
                f.write(str(i))
            written.append(i)
            seen_threads.add(numba.get_num_threads())
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for seed in range(3):
            degrade(_page(), "bleed_through", seed=seed)  # reads and writes Augraphy's cache
    finally:
        done.set()
        thread.join()
    on_disk = {int(p.stem.split("-")[1]) for p in tmp_path.glob("note-*.txt")}
    assert len(written) >= 50 and on_disk == set(written)  # none lost elsewhere
    assert sorted(os.listdir(tmp_path)) == sorted(f"note-{i}.txt" for i in written)
    assert seen_threads == {threads_before} and numba.get_num_threads() == threads_before


def test_a_call_cut_short_does_not_hang_or_mix_up_the_next(augraphy, tmp_path):
    # an exception raised in the caller while it waits for the worker (here a signal
    # handler's, as Ctrl-C raises KeyboardInterrupt) left the worker's reply unread: the
    # next call wrote its request while the worker wrote that reply, both pipes full, and
    # hung for ever (or read the earlier call's page). Run in a child with a timeout.
    code = textwrap.dedent("""
        import signal, numpy as np
        from confcal.extras.augment import degrade
        import confcal.extras.augment._degrade as internals
        small = np.full((300, 400, 3), 255, np.uint8); small[50:60, 20:380] = 0
        big = np.full((2200, 1700, 3), 255, np.uint8); big[::40] = 0
        expected = degrade(small, "stains", seed=2)  # starts the worker
        first = internals._WORKER[0].process
        class Cut(Exception):
            pass
        def cut(*_):
            raise Cut
        signal.signal(signal.SIGALRM, cut)
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        try:
            degrade(big, "archetype3", seed=1)
            raise SystemExit("the big page finished before the alarm: make it bigger")
        except Cut:
            pass
        again = degrade(small, "stains", seed=2)
        assert again.shape == small.shape and (again == expected).all()
        assert first.returncode is not None  # the cut-short worker was ended and reaped
        print("ok")
    """)
    env = dict(os.environ)
    src = str(Path(confcal.__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=240)
    assert child.returncode == 0 and child.stdout.splitlines()[-1] == "ok", child.stderr[-2000:]


def test_pil_pages_come_back_as_pil_pages(augraphy):
    from PIL import Image

    page = Image.fromarray(_page()[:, :, ::-1], mode="RGB")
    out = degrade(page, "stains", seed=5)
    assert isinstance(out, Image.Image) and out.mode == "RGB" and out.size == (200, 150)
    # the same pixels as the BGR array path, in RGB order
    assert np.array_equal(np.asarray(out)[:, :, ::-1], degrade(_page(), "stains", seed=5))


ONE_OF = {"post": [("OneOf", {"augmentations": [("Jpeg", {"quality_range": (70, 75)}),
                                                 ("Brightness", {"brightness_range": (0.7, 0.8)}),
                                                 ("Dithering", {"dither": "ordered",
                                                                "order": (3, 4)})]})]}


def test_the_seed_decides_the_pixels_seed_0_included(augraphy):
    page = _page()
    zero = [degrade(page, "custom15", seed=0) for _ in range(2)]
    assert np.array_equal(zero[0], zero[1])  # Augraphy's own random_seed would ignore 0
    assert not np.array_equal(zero[0], degrade(page, "custom15", seed=1))
    # OneOf picks its branch at construction: the seed must reach it
    outputs = {hashlib.sha256(degrade(page, ONE_OF, seed=s).tobytes()).hexdigest()
               for s in range(6)}
    assert len(outputs) > 1
    assert all(np.array_equal(degrade(page, ONE_OF, seed=s), degrade(page, ONE_OF, seed=s))
               for s in (2, 3))


def test_the_same_seed_gives_the_same_bytes_in_another_process(augraphy, tmp_path):
    # moiré and dirty rollers draw inside numba; OneOf at construction; the hash seed of
    # the child differs from ours
    names = ["custom15", "custom12", "archetype3"]
    np.save(tmp_path / "page.npy", _page())
    code = textwrap.dedent(f"""
        import hashlib, json, numpy as np
        from confcal.extras.augment import degrade
        page = np.load({str(tmp_path / 'page.npy')!r})
        specs = {names!r} + [{ONE_OF!r}]
        print(json.dumps([hashlib.sha256(degrade(page, s, seed=9).tobytes()).hexdigest()
                          for s in specs]))
    """)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    src = str(Path(confcal.__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=240, check=True)
    theirs = json.loads(child.stdout.splitlines()[-1])
    ours = [hashlib.sha256(degrade(_page(), s, seed=9).tobytes()).hexdigest()
            for s in [*names, ONE_OF]]
    assert theirs == ours
    assert sorted(os.listdir(tmp_path)) == ["page.npy"]


def test_degrade_leaves_the_global_random_state_and_no_temporary_files(augraphy):
    random.seed(123)
    np.random.seed(456)
    py_state, np_state = random.getstate(), np.random.get_state()
    before = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("confcal-augment-")}
    degrade(_page(), "custom12", seed=1)
    assert random.getstate() == py_state
    assert np.array_equal(np.random.get_state()[1], np_state[1])
    after = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("confcal-augment-")}
    assert after <= before


def test_degrade_rejects_what_it_cannot_degrade(augraphy):
    with pytest.raises(ValidationError, match="image must hold uint8 pixels; found dtype float64"):
        degrade(np.ones((50, 50)), "stains", seed=0)
    with pytest.raises(ValidationError, match="at least 30 x 30 pixels.*found 20 x 50"):
        degrade(np.ones((50, 20), np.uint8), "stains", seed=0)
    with pytest.raises(ValidationError, match=r"seed must be an integer in \[0, 2\*\*31\)"):
        degrade(_page(), "stains", seed=-1)
    built = make_pipeline("stains")
    with pytest.raises(ValidationError, match="a built pipeline has drawn its OneOf choices"):
        degrade(_page(), built, seed=0)


# ------------------------------------------------------------------------ degrade_corpus
def test_degrade_corpus_writes_variants_with_metadata_and_resumes(augraphy, tmp_path):
    import cv2

    source = tmp_path / "pages"
    source.mkdir()
    cv2.imwrite(str(source / "inv-1.png"), _page())
    pages = {"inv-1": source / "inv-1.png", "inv-2": _page(1)}
    out = tmp_path / "corpus"
    table = degrade_corpus(pages, ["stains", "skew_jpeg"], seed=4, out_dir=out,
                           progress=False)
    assert list(table["pipeline"]) == ["original", "stains", "skew_jpeg"] * 2
    tiers = [PIPELINES["stains"].tier, PIPELINES["skew_jpeg"].tier]  # the measured ones
    assert list(table["tier"]) == ["original", *tiers] * 2
    assert not table["reused"].any()
    meta = json.loads((out / "stains" / "inv-1.json").read_text())
    assert meta["doc_id"] == "inv-1" and meta["pipeline"] == "stains"
    assert meta["tier"] == PIPELINES["stains"].measured_tier
    assert meta["intended_tier"] == "moderate" and meta["source"] == str(source / "inv-1.png")
    assert meta["spec"]["paper"][0][0] == "Stains" and (meta["width"], meta["height"]) == (200, 150)
    # the variant is degrade() with the recorded seed
    written = cv2.imread(str(out / "stains" / "inv-1.png"), cv2.IMREAD_UNCHANGED)
    assert np.array_equal(written, degrade(_page(), "stains", seed=meta["variant_seed"]))
    image = cv2.imread(str(out / "skew_jpeg" / "inv-2.png"), cv2.IMREAD_UNCHANGED)
    assert image.shape == (150, 200)
    assert np.array_equal(cv2.imread(str(out / "original" / "inv-1.png")), _page())

    again = degrade_corpus(pages, ["stains", "skew_jpeg"], seed=4, out_dir=out, progress=False)
    assert again["reused"].all()
    with pytest.raises(ValidationError, match="must not hold another run's variant.*differs in "
                                              r"\['seed', 'variant_seed'\]"):
        degrade_corpus(pages, ["stains"], seed=5, out_dir=out, progress=False)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_degrade_corpus_files_follow_the_umask(augraphy, tmp_path, mask, mode):
    # images and metadata are staged under mkstemp's 0600 and must end with open()'s mode
    out = tmp_path / "corpus"
    old = os.umask(mask)
    try:
        degrade_corpus({"inv-1": _page(1)}, ["stains"], seed=1, out_dir=out, progress=False)
    finally:
        os.umask(old)
    written = sorted(p for p in out.rglob("*") if p.is_file())
    assert [p.relative_to(out).as_posix() for p in written] == [
        "original/inv-1.json", "original/inv-1.png", "stains/inv-1.json", "stains/inv-1.png"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {mode}


def test_degrade_corpus_refuses_metadata_that_is_not_an_object(augraphy, tmp_path):
    out = tmp_path / "corpus"
    degrade_corpus({"inv-1": _page(1)}, ["stains"], seed=1, out_dir=out, progress=False)
    meta = out / "stains" / "inv-1.json"
    meta.write_text("[]")
    with pytest.raises(ValidationError, match=r"out_dir metadata '.*inv-1\.json' must be a JSON "
                                              r"object; found a JSON list") as info:
        degrade_corpus({"inv-1": _page(1)}, ["stains"], seed=1, out_dir=out, progress=False)
    assert info.value.source == str(meta)


def test_degrade_corpus_checks_every_pipeline_before_degrading(augraphy, tmp_path):
    unsafe = {"blurry": {"post": [("DepthSimulatedBlur", {})]}}
    with pytest.raises(EnvelopeError, match="pipeline 'blurry'"):
        degrade_corpus({"p": _page()}, {"stains": PIPELINES["stains"], **unsafe}, seed=0,
                       out_dir=tmp_path / "c", progress=False)
    assert not (tmp_path / "c").exists()
    with pytest.raises(ValidationError, match="doc id at position 0 must be a non-empty string"):
        degrade_corpus({"a/b": _page()}, ["stains"], seed=0, out_dir=tmp_path, progress=False)
    with pytest.raises(ValidationError, match="must not use the baseline's name 'original'"):
        degrade_corpus({"p": _page()}, {"original": PIPELINES["stains"]}, seed=0,
                       out_dir=tmp_path, progress=False)


# ------------------------------------------------------------------- the whole protocol
def test_the_confbench_protocol_example_runs_offline(augraphy, tmp_path):
    """examples/confbench_protocol.py: degrade, extract against its local stand-in, score."""
    script = Path(__file__).resolve().parents[2] / "examples" / "confbench_protocol.py"
    src = str(Path(confcal.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script), "--pages", "2", "--out", "demo"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "10 pages: 2 invoices x (original + 4 pipelines)" in done.stdout
    table = (tmp_path / "demo" / "comparison.csv").read_text().splitlines()
    assert table[0] == "modality,strategy,n,without_confidence,accuracy,auroc,ece,brier,ecarb@0.3"
    assert len(table) == 1 + 6  # three modalities x two strategies
    assert "degradation tiers" in done.stdout and "catastrophic failures" in done.stdout
    assert sorted(os.listdir(tmp_path)) == ["demo"]


def test_tool_versions_names_every_tool_and_absent_ones(monkeypatch):
    import numpy

    from confcal.extras.augment import TOOL_PACKAGES, _corpus, tool_versions

    found = tool_versions()
    assert list(found) == ["tesseract", *TOOL_PACKAGES]
    assert found["numpy"] == numpy.__version__
    monkeypatch.setattr(_corpus, "TOOL_PACKAGES", ("numpy", "no-such-package-for-confcal"))
    assert tool_versions()["no-such-package-for-confcal"] == "absent"
    monkeypatch.setitem(sys.modules, "pytesseract", None)  # not installed: ImportError
    assert tool_versions()["tesseract"] == "absent"
    # the benchmark and the corpus script record the same versions, from this one function
    for script in (BENCHMARK, ROOT / "scripts" / "make_ocr_corpus.py"):
        text = script.read_text()
        assert "def versions(" not in text and "tool_versions()" in text
