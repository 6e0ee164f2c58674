"""confcal.report.plots: what each figure shows, drawn without pyplot and without network."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import confcal
from confcal.exceptions import UndefinedMetricWarning, ValidationError
from confcal.report import plots

pytest.importorskip("matplotlib")  # plots imports it lazily, inside each function


def _data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.3, 1.0, size=n)
    return rng.uniform(size=n) < confidence - 0.1, confidence


def _count_labels(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts if "hidden" not in t.get_text()]


def test_reliability_diagram_shows_the_count_of_every_visible_bin():
    correct, confidence = _data()
    fig = plots.reliability_diagram(correct, confidence)
    bins = confcal.reliability_bins(correct, confidence, n_bins=10, binning="uniform")
    assert (bins["count"] >= 30).all()  # nothing hidden in this sample
    assert _count_labels(fig) == [f"{c:,}" for c in bins["count"]]
    # one accuracy bar per bin, at the bin's edge, as tall as the bin's accuracy
    bars = fig.axes[0].containers[0]
    assert [round(b.get_x(), 9) for b in bars] == list(bins["lower"].round(9))
    assert [b.get_height() for b in bars] == pytest.approx(list(bins["accuracy"]))


def test_reliability_diagram_hides_sparse_bins_and_says_so():
    correct, confidence = _data()
    # 12 predictions at 0.05: bin 0 holds fewer than 30 and is hidden by default
    correct = np.concatenate([correct, np.zeros(12, bool)])
    confidence = np.concatenate([confidence, np.full(12, 0.05)])
    fig = plots.reliability_diagram(correct, confidence)
    # said under the axis, where it cannot overprint a bar's count
    assert fig.axes[0].get_xlabel() == ("confidence\n1 bin with < 30 predictions hidden "
                                        "(12 predictions)")
    assert not [t for t in fig.axes[0].texts if "hidden" in t.get_text()]
    assert "12" not in _count_labels(fig)
    # the ECE in the title still counts every prediction
    expected = confcal.ece(correct, confidence, n_bins=10, binning="uniform")
    assert f"ECE={expected:.3f}" in fig.axes[0].get_title()
    assert f"n={len(correct):,}" in fig.axes[0].get_title()
    shown = plots.reliability_diagram(correct, confidence, min_count=0)
    assert "12" in _count_labels(shown)


def test_reliability_diagram_quantile_bins_and_existing_axes():
    correct, confidence = _data()
    fig = plots.reliability_diagram(correct, confidence, n_bins=5, binning="quantile",
                                    title="run $x$")
    bins = confcal.reliability_bins(correct, confidence, n_bins=5, binning="quantile")
    assert _count_labels(fig) == [f"{c:,}" for c in bins["count"]]
    assert fig.axes[0].get_title().startswith(r"run \$x\$")  # literal, never mathtext
    fig.canvas.draw()  # a stray "$" would fail here if it reached mathtext
    grid, axes = plots.panel_grid(2)
    out = plots.reliability_diagram(correct, confidence, ax=axes[1], legend=False)
    assert out is grid and axes[1].get_legend() is None and len(axes[0].texts) == 0


def test_reliability_diagram_validates_like_the_metrics():
    with pytest.raises(ValidationError, match="confidence must be finite and within"):
        plots.reliability_diagram([1, 0], [0.5, 1.5])
    with pytest.raises(ValidationError, match="min_count must be an integer >= 0"):
        plots.reliability_diagram([1, 0], [0.5, 0.4], min_count=-1)


def test_ecarb_curve_plots_the_metric_and_overlays():
    correct, confidence = _data()
    fig = plots.ecarb_vs_budget(correct, confidence, label="A")
    expected = confcal.ecarb_curve(correct, confidence)
    lines = {line.get_label(): line for line in fig.axes[0].lines}
    assert list(lines["A"].get_xdata()) == pytest.approx(list(expected["budget"] * 100))
    assert list(lines["A"].get_ydata()) == pytest.approx(list(expected["ecarb"]))
    assert list(lines["ceiling: A"].get_ydata()) == pytest.approx(list(expected["ceiling"]))
    plots.ecarb_vs_budget(correct, confidence[::-1], label="B", ax=fig.axes[0], show_ceiling=False)
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert labels.count("random review") == 1  # drawn once per axes
    assert "B" in labels and "ceiling: B" not in labels


def test_ecarb_curve_without_errors_warns_like_the_metric():
    with pytest.warns(UndefinedMetricWarning, match="no errors"):
        fig = plots.ecarb_vs_budget([1, 1, 1], [0.2, 0.5, 0.9])
    assert np.isnan(fig.axes[0].lines[1].get_ydata()).all()


def test_auroc_vs_woa_places_runs_and_draws_intervals():
    runs = pd.DataFrame({
        "model": ["a", "a", "b"], "tier": ["clean", "high", "clean"],
        "n_documents": [3, 3, 3], "woa": [0.9, 0.7, 0.8], "woa_low": [0.85, 0.6, 0.7],
        "woa_high": [0.95, 0.8, 0.9], "auroc": [0.8, 0.6, np.nan],
        "auroc_low": [0.7, 0.5, np.nan], "auroc_high": [0.9, 0.7, np.nan],
    })
    fig = plots.auroc_vs_woa(runs)  # labels default to the columns before n_documents
    ax = fig.axes[0]
    points = np.vstack([c.get_offsets() for c in ax.collections if c.get_offsets().size
                        and len(c.get_offsets()) and c.get_label() in ("a", "b")])
    assert points.tolist() == [[0.9, 0.8], [0.7, 0.6]]
    texts = [t.get_text() for t in ax.texts]
    # the tiers are marker shapes with their own legend: no text on the points
    assert [t.get_text() for t in fig.legends[1].get_texts()] == ["clean", "high"]
    assert "1 runs without WOA or AUROC not shown" in texts
    with pytest.raises(ValidationError, match=r"label must name columns of runs; found \['x'\]"):
        plots.auroc_vs_woa(runs, label="x")
    with pytest.raises(ValidationError, match="runs must have the columns 'woa' and 'auroc'"):
        plots.auroc_vs_woa(runs.drop(columns="auroc"))


def test_figures_render_to_png():
    correct, confidence = _data()
    png = plots.figure_png(plots.reliability_diagram(correct, confidence))
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000


def test_import_is_lazy_and_drawing_never_touches_pyplot():
    code = (
        "import sys, warnings\n"
        "import confcal.report.plots as p\n"
        "assert 'matplotlib' not in sys.modules, 'imported at import time'\n"
        "fig = p.reliability_diagram([1, 0, 1, 1], [0.9, 0.2, 0.7, 0.6], min_count=0)\n"
        "fig.savefig(__import__('io').BytesIO(), format='png')\n"
        "print(type(fig.canvas).__name__, 'matplotlib.pyplot' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["FigureCanvasAgg", "False"]


def test_quantile_diagram_with_tied_bins_draws():
    # seven 0.7s: their mean is 0.7 * 7 / 7 = 0.6999999999999999, one ulp below the bin's
    # lower edge 0.7; the error bar must not go negative (matplotlib raises on that).
    pytest.importorskip("matplotlib")
    from confcal.report.plots import reliability_diagram

    confidence = [0.1] * 3 + [0.7] * 7
    correct = [1, 0, 1, 1, 1, 1, 0, 1, 1, 1]
    assert np.mean(np.full(7, 0.7)) != 0.7
    fig = reliability_diagram(correct, confidence, binning="quantile", n_bins=5, min_count=1)
    assert fig.axes


def test_reliability_diagram_draws_the_bands_of_a_calibration_test():
    rng = np.random.default_rng(2)
    confidence = rng.uniform(0.2, 1.0, size=800)
    correct = rng.uniform(size=800) < confidence
    test = confcal.calibration_test(correct, confidence, n_bins=10, binning="uniform",
                                    n_resamples=300, seed=4)
    fig = plots.reliability_diagram(correct, confidence, consistency=test, min_count=0)
    ax = fig.axes[0]
    (band,) = [c for c in ax.containers if c.get_label() == "95% consistency band"]
    # one bracket per drawn bin, from band_low to band_high at the bin's mean confidence
    segments = band.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 0].mean() for s in segments], test.bands["mean_confidence"])
    np.testing.assert_allclose([s[:, 1].min() for s in segments], test.bands["band_low"])
    np.testing.assert_allclose([s[:, 1].max() for s in segments], test.bands["band_high"])
    assert ax.get_title().splitlines()[-1] == (
        f"consistency test: p={test.p_value:.3f} (300 redraws)")
    # True computes the test itself (seed 0, 1,000 redraws)
    own = plots.reliability_diagram(correct, confidence, consistency=True)
    assert own.axes[0].get_title().endswith("(1,000 redraws)")


def test_reliability_diagram_refuses_bands_of_other_bins():
    correct, confidence = [1, 0, 1, 1, 0, 1], [0.9, 0.2, 0.7, 0.6, 0.4, 0.8]
    test = confcal.calibration_test(correct, confidence, n_bins=5, n_resamples=10)
    with pytest.raises(ValidationError, match=r"consistency must be a calibration test of the "
                                              r"diagram's bins \(10 uniform\); found one of 5 "
                                              "quantile"):
        plots.reliability_diagram(correct, confidence, consistency=test)
    with pytest.raises(ValidationError, match="consistency must be True, False or a "
                                              "CalibrationTest; found 'yes'"):
        plots.reliability_diagram(correct, confidence, consistency="yes")
