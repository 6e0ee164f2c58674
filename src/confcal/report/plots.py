"""Pictures of calibration: reliability diagrams, AUROC against WOA, ECARB against budget.

Computing stays in :mod:`confcal.metrics` and :mod:`confcal.report`; these functions only
draw. Each returns a :class:`matplotlib.figure.Figure` and accepts ``ax=`` to draw into an
existing axes (to overlay curves or fill a grid). matplotlib is imported inside the
functions (extra ``plot`` or ``cli``), so ``import confcal`` never needs it.

Figures are built on the Agg canvas directly, without :mod:`matplotlib.pyplot`: nothing
changes the global backend, no window opens, and nothing is fetched (matplotlib's bundled
DejaVu fonts are used). In a notebook the returned figure displays as usual. Text that
comes from data (labels, titles) is shown literally: ``$`` never starts mathtext.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from .._validation import check_positive_int
from ..exceptions import ValidationError
from ..metrics._metrics import ecarb_curve as _ecarb_curve
from ..metrics._metrics import ece as _ece
from ..metrics._metrics import reliability_bins

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

__all__ = ["auroc_vs_woa", "ecarb_curve", "reliability_diagram"]

_ACCENT = "#1f5fa8"
_GAP = "#d1495b"


def _plain(text: Any) -> str:
    """Data as literal text: an unescaped ``$`` pair would be read as mathtext."""
    return str(text).replace("$", r"\$")


def _figure(figsize: tuple[float, float], layout: Literal["constrained"] | None = "constrained"
            ) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)  # Agg, not pyplot's global backend
    return fig


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is None:
        fig = _figure(figsize)
        return fig, fig.add_subplot()
    return ax.get_figure(root=True), ax  # type: ignore[return-value]


def panel_grid(n_panels: int, *, ncols: int = 4, size: float = 3.2) -> tuple[Figure, list[Axes]]:
    """A figure with n_panels square axes, ncols per row (for the report)."""
    ncols = max(1, min(ncols, n_panels))
    nrows = math.ceil(n_panels / ncols)
    # fixed margins instead of constrained layout, which costs half the drawing time of a
    # grid; the panels are alike, so one spacing fits all (in inches, whatever the grid)
    width, height = size * ncols, size * nrows + 0.2
    fig = _figure((width, height), layout=None)
    fig.subplots_adjust(left=0.75 / width, right=1 - 0.3 / width, bottom=0.5 / height,
                        top=1 - 0.55 / height, wspace=0.32, hspace=0.5)
    axes = [fig.add_subplot(nrows, ncols, i + 1) for i in range(n_panels)]
    return fig, axes


def figure_png(fig: Figure, *, dpi: int = 100) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def reliability_diagram(correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 10,
                        binning: str = "uniform", min_count: int = 30,
                        ax: Axes | None = None, title: str | None = None,
                        legend: bool = True) -> Figure:
    """Accuracy against confidence per bin, with the number of predictions in each bin.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
        As in :func:`confcal.reliability_bins`.
    n_bins : int, default 10
    binning : {"uniform", "quantile"}, default "uniform"
        Uniform bins are drawn as bars over their edges; quantile bins as points at their
        mean confidence with a line over the confidences they hold. The default is the
        usual diagram's 10 uniform bins, a drawing choice: :func:`confcal.ece` and
        :func:`confcal.reliability_bins` default to the paper's 5 equal-mass bins (pass
        ``n_bins=5, binning="quantile"`` to draw those).
    min_count : int, default 30
        Bins with fewer predictions are not drawn (their accuracy is noise), as in the
        ConfBench paper; how many bins and predictions were hidden is written on the plot.
        The ECE in the title uses every prediction.
    ax : matplotlib Axes, optional
        Draw into this axes instead of a new figure.
    title : str, optional
        Default ``"Reliability"``; the number of predictions and the ECE of these bins
        follow it.
    legend : bool, default True
        Draw the legend (a grid of diagrams needs it once).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> confidence = np.concatenate([rng.uniform(0.5, 1.0, size=500), np.full(10, 0.2)])
    >>> correct = rng.uniform(size=510) < confidence - 0.1       # overconfident by 0.1
    >>> fig = reliability_diagram(correct, confidence, title="model A")
    >>> for text in fig.axes[0].texts:                             # counts above the bars
    ...     print(text.get_text())
    96
    82
    105
    100
    117
    1 bin with < 30 predictions hidden
    (10 predictions)
    """
    min_count = check_positive_int(min_count, "min_count", 0)
    bins = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning)
    score = _ece(correct, confidence, n_bins=n_bins, binning=binning)
    shown = bins[bins["count"] >= min_count]
    hidden = bins[bins["count"] < min_count]
    fig, ax = _axes(ax, (4.6, 4.4))
    ax.plot([0, 1], [0, 1], ls="--", lw=1, color="0.55", label="perfect calibration")
    if binning == "uniform":
        width = (shown["upper"] - shown["lower"]).to_numpy()
        ax.bar(shown["lower"], shown["accuracy"], width=width, align="edge", color=_ACCENT,
               alpha=0.85, edgecolor="white", label="accuracy")
        # the gap between what the model says and what it achieves, at the bin's centre
        centre = shown["lower"].to_numpy() + width / 2
        ax.bar(centre, shown["mean_confidence"] - shown["accuracy"], bottom=shown["accuracy"],
               width=width * 0.35, color=_GAP, alpha=0.55, label="gap to mean confidence")
        x_text = centre
    else:
        x = shown["mean_confidence"].to_numpy()
        # A bin of equal confidences has lower == upper == its mean, but the mean is a sum
        # divided by a count and can land one ulp outside; matplotlib refuses negative
        # error bars, so the bar lengths are floored at zero (a drawing matter only).
        left = np.maximum(x - shown["lower"].to_numpy(), 0.0)
        right = np.maximum(shown["upper"].to_numpy() - x, 0.0)
        ax.errorbar(x, shown["accuracy"], xerr=[left, right],
                    fmt="o", color=_ACCENT, capsize=2, label="accuracy (bin range)")
        x_text = x
    # counts sit above the taller of the bar and its gap, so neither hides them
    tops = np.maximum(shown["accuracy"], shown["mean_confidence"])
    for x, top, count in zip(x_text, tops, shown["count"], strict=True):
        ax.annotate(f"{count:,}", (x, top), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=7, color="0.2")
    if len(hidden):
        noun = "bin" if len(hidden) == 1 else "bins"
        # top left, under the legend: empty unless a model is underconfident
        ax.text(0.02, 0.74 if legend else 0.97,
                f"{len(hidden)} {noun} with < {min_count} predictions hidden\n"
                f"({int(hidden['count'].sum()):,} predictions)", transform=ax.transAxes,
                ha="left", va="top", fontsize=7, color="0.35")
    n = int(bins["count"].sum())
    ax.set_title(f"{_plain(title or 'Reliability')}\nn={n:,}, ECE={score:.3f} "
                 f"({n_bins} {binning} bins)", fontsize=9)
    ax.set(xlim=(0, 1), ylim=(0, 1.08), xlabel="confidence", ylabel="accuracy")
    if legend:
        ax.legend(loc="upper left", fontsize=7, frameon=False)
    return fig


def ecarb_curve(correct: ArrayLike, confidence: ArrayLike, *,
                budgets: Sequence[float] | None = None, ties: str = "expected",
                label: str | None = None, ax: Axes | None = None,
                show_ceiling: bool = True, title: str | None = None) -> Figure:
    """ECARB against the review budget: how much better than random a review by confidence is.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    budgets : sequence of float in (0, 1], optional
        Default 0.05, 0.10, ..., 1.00 (:func:`confcal.ecarb_curve`).
    ties : str, default "expected"
        As in :func:`confcal.ecarb`.
    label : str, optional
        Legend entry of this curve; call again with ``ax=`` to overlay another run.
    show_ceiling : bool, default True
        Also draw the best achievable ECARB at each budget (dashed, same colour).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    The line ECARB = 1 is a random review. With no errors ECARB is undefined:
    :func:`confcal.ecarb_curve` warns and the curve is empty.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> confidence = rng.uniform(size=400)
    >>> correct = rng.uniform(size=400) < confidence
    >>> fig = ecarb_curve(correct, confidence, label="model A")
    >>> fig = ecarb_curve(correct, np.full(400, 0.9), label="constant", ax=fig.axes[0])
    >>> [line.get_label() for line in fig.axes[0].lines if not line.get_label().startswith("_")]
    ['random review', 'model A', 'ceiling: model A', 'constant', 'ceiling: constant']
    """
    curve = _ecarb_curve(correct, confidence, budgets=budgets, ties=ties)
    fig, ax = _axes(ax, (5.2, 3.8))
    if not any(line.get_gid() == "confcal-random" for line in ax.lines):
        ax.axhline(1.0, color="0.55", lw=1, ls=":", label="random review", gid="confcal-random")
    name = _plain(label) if label is not None else "ECARB"
    x = curve["budget"].to_numpy() * 100
    (line,) = ax.plot(x, curve["ecarb"], marker="o", ms=3, lw=1.5, label=name)
    if show_ceiling:
        ax.plot(x, curve["ceiling"], ls="--", lw=1, color=line.get_color(),
                label=f"ceiling: {name}")
    ax.set(xlabel="review budget (% least confident reviewed)",
           ylabel="ECARB (x random)", xlim=(0, 100))
    ax.set_ylim(bottom=0)
    if title is not None:
        ax.set_title(_plain(title), fontsize=9)
    ax.legend(fontsize=7, frameon=False)
    return fig


def _label_columns(runs: pd.DataFrame, label: str | Sequence[str] | None) -> list[str]:
    if label is None:
        by = runs.attrs.get("by")
        if by is None:
            stop = list(runs.columns).index("n_documents") if "n_documents" in runs else 0
            by = list(runs.columns[:stop])
        return list(by)
    columns = [label] if isinstance(label, str) else list(label)
    absent = [c for c in columns if c not in runs.columns]
    if absent:
        raise ValidationError(f"label must name columns of runs; found {absent} absent "
                              f"(columns: {list(runs.columns)})")
    return columns


def auroc_vs_woa(runs: pd.DataFrame, *, label: str | Sequence[str] | None = None,
                 ax: Axes | None = None, title: str | None = None) -> Figure:
    """One point per run: extraction accuracy (WOA) across, ranking quality (AUROC) up.

    A model can extract well and still not know when it is wrong; this picture separates
    the two. Points are coloured by the first label column and annotated with the others;
    with bootstrap intervals in ``runs`` (``woa_low`` ... ``auroc_high``) they get error bars.

    Parameters
    ----------
    runs : pandas.DataFrame
        The output of :func:`confcal.report.compare_runs` (columns ``woa`` and ``auroc``).
    label : str or sequence of str, optional
        Columns naming a run; default the ``by`` columns of ``compare_runs``.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Runs whose AUROC or WOA is undefined (NaN) cannot be placed; the plot says how many.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"model": ["a", "b"], "tier": ["clean", "high"],
    ...                      "woa": [0.95, 0.71], "auroc": [0.81, 0.64]})
    >>> fig = auroc_vs_woa(runs, label=["model", "tier"])
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['clean', 'high']
    """
    if not isinstance(runs, pd.DataFrame):
        raise ValidationError(f"runs must be a DataFrame from compare_runs; found "
                              f"{type(runs).__name__}")
    absent = [c for c in ("woa", "auroc") if c not in runs.columns]
    if absent:
        raise ValidationError(f"runs must have the columns 'woa' and 'auroc'; found {absent} "
                              "absent")
    columns = _label_columns(runs, label)
    fig, ax = _axes(ax, (5.6, 4.4))
    placed = runs[runs["woa"].notna() & runs["auroc"].notna()]
    colour_key = placed[columns[0]].astype(str) if columns else pd.Series("run", placed.index)
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    colours = {k: cmap(i % 10) for i, k in enumerate(dict.fromkeys(colour_key))}
    has_ci = {"woa_low", "woa_high", "auroc_low", "auroc_high"} <= set(runs.columns)
    for key, group in placed.groupby(colour_key, sort=False):
        x, y = group["woa"].to_numpy(float), group["auroc"].to_numpy(float)
        if has_ci:
            xerr = np.abs(np.vstack([x - group["woa_low"], group["woa_high"] - x]))
            yerr = np.abs(np.vstack([y - group["auroc_low"], group["auroc_high"] - y]))
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor=colours[key],
                        alpha=0.5, lw=1)
        ax.scatter(x, y, color=colours[key], s=28, label=_plain(key), zorder=3)
        for (_, row), xi, yi in zip(group.iterrows(), x, y, strict=True):
            rest = " / ".join(str(row[c]) for c in columns[1:])
            if rest:
                ax.annotate(_plain(rest), (xi, yi), xytext=(4, 3), textcoords="offset points",
                            fontsize=7, color="0.25")
    ax.axhline(0.5, color="0.55", lw=1, ls=":", label="chance ranking")
    if len(placed) < len(runs):
        ax.text(0.02, 0.02, f"{len(runs) - len(placed)} runs without WOA or AUROC not shown",
                transform=ax.transAxes, fontsize=7, color="0.35")
    ax.set(xlabel="WOA (extraction accuracy)", ylabel="AUROC (confidence ranks right above "
           "wrong)")
    ax.set_title(_plain(title or "Extraction accuracy vs. confidence ranking"), fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="best")
    return fig
