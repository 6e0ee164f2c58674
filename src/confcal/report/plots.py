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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from .._validation import check_positive_int, is_missing
from ..exceptions import ValidationError
from ..metrics._inference import CalibrationTest
from ..metrics._inference import calibration_test as _calibration_test
from ..metrics._metrics import ecarb_curve, reliability_bins
from ..metrics._metrics import ece as _ece

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

__all__ = ["auroc_vs_woa", "ecarb_vs_budget", "reliability_diagram"]

_ACCENT = "#1f5fa8"
_GAP = "#d1495b"


def plain_text(text: Any) -> str:
    """Data as literal text: an unescaped ``$`` pair would be read as mathtext. A missing
    value reads ``n/a``, as in the report's tables (never ``nan``)."""
    return ("n/a" if is_missing(text, blank=False) else str(text)).replace("$", r"\$")


_plain = plain_text


def _count(n: int) -> str:
    """A bin count in at most 5 characters (``987``, ``1.2k``, ``12k``, ``3.4M``)."""
    for scale, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= scale:
            value = n / scale
            return f"{value:.1f}{suffix}" if value < 10 else f"{value:.0f}{suffix}"
    return f"{n:d}"


def _overlap(a: Any, b: Any) -> bool:
    return bool(a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1)


def _keep_inside(ax: Axes, texts: Sequence[Any]) -> None:
    """Count labels that would overprint one another stand upright instead; labels stay
    inside the axes (the frame is grown to hold them)."""
    if not texts:
        return
    fig = ax.get_figure(root=True)
    if not hasattr(fig.canvas, "get_renderer"):  # type: ignore[union-attr]
        # a user's Figure() without a canvas (FigureCanvasBase cannot measure text): give
        # it the Agg canvas its own savefig would use for a PNG
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)  # type: ignore[arg-type]
    renderer = fig.canvas.get_renderer()  # type: ignore[union-attr]

    def measure() -> tuple[list[Any], Any]:
        if fig.get_layout_engine() is not None:  # type: ignore[union-attr]
            fig.draw_without_rendering()  # type: ignore[union-attr]  # lays the axes out
        return [t.get_window_extent(renderer) for t in texts], ax.get_window_extent(renderer)

    boxes, frame = measure()
    if any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]):
        for t in texts:
            t.set_rotation(90)
        boxes, frame = measure()
    # a label at the edge of the confidence range leans inwards instead of over the frame
    for t, box in zip(texts, boxes, strict=True):
        if box.x1 > frame.x1:
            t.set_horizontalalignment("right")
        elif box.x0 < frame.x0:
            t.set_horizontalalignment("left")
    boxes, frame = measure()
    # bins too close for even upright labels (equal-mass bins crowd at high confidence):
    # keep labels left to right while they clear the last one kept, and say how many not
    order = sorted(range(len(texts)), key=lambda i: boxes[i].x0)
    kept: list[Any] = []
    dropped = 0
    for i in order:
        if kept and _overlap(boxes[i], kept[-1]):
            texts[i].set_visible(False)
            dropped += 1
        else:
            kept.append(boxes[i])
    if dropped:
        ax.text(0.98, 0.02, f"{dropped} crowded bin counts not shown", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=8, color="0.35")
    texts = [t for t in texts if t.get_visible()]
    boxes, frame = measure()
    for _ in range(4):  # the layout moves a little each time the range grows
        top = max(b.y1 for b in boxes)
        if top <= frame.y1 - 1:
            break
        # grow the y range until the highest label fits under the frame
        low, high = ax.get_ylim()
        per_pixel = (high - low) / frame.height
        ax.set_ylim(low, high + (top - frame.y1 + 3) * per_pixel * 1.2)
        boxes, frame = measure()


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


def panel_grid(n_panels: int, *, ncols: int = 3, size: float = 3.2) -> tuple[Figure, list[Axes]]:
    """A figure with n_panels square axes, ncols per row (for the report)."""
    ncols = max(1, min(ncols, n_panels))
    nrows = math.ceil(n_panels / ncols)
    # fixed margins instead of constrained layout, which costs half the drawing time of a
    # grid; the panels are alike, so one spacing fits all (in inches, whatever the grid)
    width, height = size * ncols, size * nrows + 0.2
    fig = _figure((width, height), layout=None)
    fig.subplots_adjust(left=0.75 / width, right=1 - 0.3 / width, bottom=0.5 / height,
                        top=1 - 0.7 / height, wspace=0.32, hspace=0.62)
    axes = [fig.add_subplot(nrows, ncols, i + 1) for i in range(n_panels)]
    return fig, axes


def figure_png(fig: Figure, *, dpi: int = 100) -> bytes:
    """The figure as PNG bytes, cropped to everything drawn (a legend beside the axes
    included: nothing is cut at the figure's edge)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.08)
    return buffer.getvalue()


def reliability_diagram(correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 10,
                        binning: str = "uniform", min_count: int = 30,
                        ax: Axes | None = None, title: str | None = None,
                        legend: bool = True,
                        consistency: bool | CalibrationTest = False) -> Figure:
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
    consistency : bool or CalibrationTest, default False
        Draw each shown bin's consistency band (Bröcker & Smith 2007): the range of
        accuracies a calibrated model shows there, as a bracket at the bin's mean
        confidence; an accuracy outside its bracket is one calibration rarely gives. True
        computes :func:`confcal.calibration_test` on these bins (independent outcomes,
        1,000 redraws, seed 0); pass a :class:`~confcal.metrics.CalibrationTest` of the same
        ``n_bins`` and ``binning`` to draw its bands (with ``groups``, bands that respect
        documents). Its p-value joins the title.

    Returns
    -------
    matplotlib.figure.Figure

    See Also
    --------
    reliability_bins : the bins as a table.
    calibration_test : the consistency bands.

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
    >>> print(fig.axes[0].get_xlabel())                           # and what is not drawn
    confidence
    1 bin with < 30 predictions hidden (10 predictions)
    >>> fig.axes[0].get_title().splitlines()[1]
    'n=510, ECE=0.097 (10 uniform bins)'
    >>> fig = reliability_diagram(correct, confidence, consistency=True)
    >>> fig.axes[0].get_title().splitlines()[2]                 # far outside calibration
    'consistency test: p=0.001 (1,000 redraws)'
    """
    min_count = check_positive_int(min_count, "min_count", 0)
    bins = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning)
    score = _ece(correct, confidence, n_bins=n_bins, binning=binning)
    test: CalibrationTest | None = None
    if isinstance(consistency, CalibrationTest):
        if (consistency.n_bins, consistency.binning) != (n_bins, binning):
            raise ValidationError(
                f"consistency must be a calibration test of the diagram's bins ({n_bins} "
                f"{binning}); found one of {consistency.n_bins} {consistency.binning}")
        if len(consistency.bands) != len(bins) or not np.array_equal(
                consistency.bands["count"].to_numpy(), bins["count"].to_numpy()):
            raise ValidationError("consistency must be a calibration test of these "
                                  "predictions; found bins of other counts")
        test = consistency
    elif consistency is True:
        test = _calibration_test(correct, confidence, n_bins=n_bins, binning=binning)
    elif consistency is not False:
        raise ValidationError(f"consistency must be True, False or a CalibrationTest; found "
                              f"{consistency!r}")
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
    if test is not None:
        band = test.bands[bins["count"].to_numpy() >= min_count]
        x_band = band["mean_confidence"].to_numpy()
        low, high = band["band_low"].to_numpy(), band["band_high"].to_numpy()
        middle = (low + high) / 2
        level = f"{test.confidence_level:.0%}"
        ax.errorbar(x_band, middle, yerr=[middle - low, high - middle], fmt="none",
                    ecolor="0.15", elinewidth=1.1, capsize=3, zorder=4,
                    label=f"{level} consistency band")
    # a uniform bin's count sits above the taller of its bar and gap, so neither hides it;
    # a quantile bin's just above its point
    tops = (np.maximum(shown["accuracy"], shown["mean_confidence"]) if binning == "uniform"
            else shown["accuracy"]).to_numpy()
    if test is not None:  # and above the band, which would cross it
        tops = np.maximum(tops, high)
    ax.set(xlim=(0, 1), ylim=(0, 1.08))
    counts = [ax.annotate(_count(int(count)), (x, top), xytext=(0, 3),
                          textcoords="offset points", ha="center", va="bottom", fontsize=8,
                          color="0.2", gid="confcal-count")
              for x, top, count in zip(x_text, tops, shown["count"], strict=True)]
    xlabel = "confidence"
    if len(hidden):
        noun = "bin" if len(hidden) == 1 else "bins"
        # under the axis, where no bar or count label can be: inside the axes it overprinted
        # the first bar's count on pages whose low bins are tall
        xlabel += (f"\n{len(hidden)} {noun} with < {min_count} predictions hidden "
                   f"({int(hidden['count'].sum()):,} predictions)")
    n = int(bins["count"].sum())
    kind = "uniform" if binning == "uniform" else "equal-mass"
    heading = f"{_plain(title or 'Reliability')}\nn={n:,}, ECE={score:.3f} ({n_bins} {kind} bins)"
    if test is not None:
        heading += f"\n{consistency_note(test)}"
    ax.set_title(heading, fontsize=9)
    ax.set(xlabel=xlabel, ylabel="accuracy")
    if len(hidden):
        ax.xaxis.label.set_color("0.35")
    if legend:
        ax.legend(loc="upper left", fontsize=8, frameon=False)
    _keep_inside(ax, counts)
    return fig


def consistency_note(test: CalibrationTest) -> str:
    """The p-value of a calibration test in a few words, for a figure's title."""
    grouped = ", documents" if test.null == "grouped" else ""
    return f"consistency test: p={test.p_value:.3f} ({test.n_resamples:,} redraws{grouped})"


def ecarb_vs_budget(correct: ArrayLike, confidence: ArrayLike, *,
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

    See Also
    --------
    ecarb_curve : the numbers drawn.

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
    >>> fig = ecarb_vs_budget(correct, confidence, label="model A")
    >>> fig = ecarb_vs_budget(correct, np.full(400, 0.9), label="constant", ax=fig.axes[0])
    >>> [line.get_label() for line in fig.axes[0].lines if not line.get_label().startswith("_")]
    ['random review', 'model A', 'ceiling: model A', 'constant', 'ceiling: constant']
    """
    curve = ecarb_curve(correct, confidence, budgets=budgets, ties=ties)
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
    # every curve drawn into these axes so far, not only this one: set_ylim(bottom=0) alone
    # would freeze the top at the first curve's range and cut off a later, higher curve
    values = [np.asarray(line.get_ydata(), dtype=np.float64) for line in ax.lines]
    finite = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.array([])
    ax.set_ylim(0, 1.06 * max(1.0, float(finite.max()) if finite.size else 1.0))
    if title is not None:
        ax.set_title(_plain(title), fontsize=9)
    ax.legend(fontsize=8, frameon=False)
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
    the two. Points are coloured by the first label column and shaped by the others (two
    legends beside the axes, so no text sits on the points); with more than 10 combinations
    of the others, they are written beside the points instead, each where it overlaps no
    other label or point (one with no free place is left out, and the plot says how many).
    With bootstrap intervals in ``runs`` (``woa_low`` ... ``auroc_high``) points get error
    bars.

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

    See Also
    --------
    compare_runs : the runs table it draws.

    Notes
    -----
    Runs whose AUROC or WOA is undefined (NaN) cannot be placed; the plot says how many.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"model": ["a", "b"], "tier": ["clean", "high"],
    ...                      "woa": [0.95, 0.71], "auroc": [0.81, 0.64]})
    >>> fig = auroc_vs_woa(runs, label=["model", "tier"])
    >>> [t.get_text() for t in fig.legends[1].get_texts()]  # tiers as shapes, beside
    ['clean', 'high']
    """
    _check_runs_columns(runs)
    columns = _label_columns(runs, label)
    created = ax is None
    fig, ax = _axes(ax, (6.4, 4.6))
    placed = runs[runs["woa"].notna() & runs["auroc"].notna()]
    styles = _run_styles(placed, columns)
    has_ci = {"woa_low", "woa_high", "auroc_low", "auroc_high"} <= set(runs.columns)
    _draw_runs(ax, placed, styles, has_ci)
    ax.axhline(0.5, color="0.55", lw=1, ls=":")
    if len(placed) < len(runs):
        ax.text(0.02, 0.02, f"{len(runs) - len(placed)} runs without WOA or AUROC not shown",
                transform=ax.transAxes, fontsize=8, color="0.35")
    ax.set(xlabel="WOA (extraction accuracy)", ylabel="AUROC (confidence ranks right above "
           "wrong)")
    ax.set_title(_plain(title or "Extraction accuracy vs. confidence ranking"), fontsize=9)
    _name_runs(fig, ax, placed, columns, styles,
               own=created and fig.get_layout_engine() is not None)
    return fig


def _check_runs_columns(runs: Any) -> None:
    """``runs`` is a DataFrame with the ``woa`` and ``auroc`` columns a point needs."""
    if not isinstance(runs, pd.DataFrame):
        raise ValidationError(f"runs must be a DataFrame from compare_runs; found "
                              f"{type(runs).__name__}")
    absent = [c for c in ("woa", "auroc") if c not in runs.columns]
    if absent:
        raise ValidationError(f"runs must have the columns 'woa' and 'auroc'; found {absent} "
                              "absent")


@dataclass(frozen=True)
class _RunStyles:
    """How each placed run is drawn: its colour (the first label column), its shape or text
    label (the other label columns)."""

    colour_key: pd.Series  # run -> first label value
    rest_key: pd.Series  # run -> the other label values, joined with " / "
    colours: dict[Any, Any]  # first label value -> colour
    rests: list[str]  # the distinct values of rest_key, in order; [] with one label column
    markers: dict[str, str]  # rest value -> marker shape
    use_markers: bool  # the other columns as shapes (few values), else as text labels


def _run_styles(placed: pd.DataFrame, columns: Sequence[str]) -> _RunStyles:
    """Colours by the first label column; the others as marker shapes when few enough (no
    text to overprint), else as text labels placed where they overlap nothing drawn."""
    from matplotlib import colormaps

    colour_key = (placed[columns[0]].map(_plain) if columns
                  else pd.Series("run", index=placed.index))
    rest_key = pd.Series([" / ".join(_plain(row[c]) for c in columns[1:])
                          for _, row in placed.iterrows()], index=placed.index, dtype=object)
    cmap = colormaps["tab10"]
    colours = {k: cmap(i % 10) for i, k in enumerate(dict.fromkeys(colour_key))}
    rests = list(dict.fromkeys(rest_key)) if len(columns) > 1 else []
    use_markers = 0 < len(rests) <= len(_MARKERS)
    markers = {r: (_MARKERS[i] if use_markers else "o") for i, r in enumerate(rests)}
    return _RunStyles(colour_key, rest_key, colours, rests, markers, use_markers)


def _draw_runs(ax: Axes, placed: pd.DataFrame, styles: _RunStyles, has_ci: bool) -> None:
    """One point per run at (WOA, AUROC), with its bootstrap intervals as error bars."""
    for index, row in placed.iterrows():
        x, y = float(row["woa"]), float(row["auroc"])
        colour = styles.colours[styles.colour_key[index]]
        if has_ci:
            xerr = np.abs([[x - row["woa_low"]], [row["woa_high"] - x]])
            yerr = np.abs([[y - row["auroc_low"]], [row["auroc_high"] - y]])
            ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt="none", ecolor=colour, alpha=0.5,
                        lw=1)
        ax.scatter([x], [y], color=colour, s=34, zorder=3, edgecolors="white", linewidths=0.5,
                   marker=styles.markers.get(styles.rest_key[index], "o"),
                   label=styles.colour_key[index])


def _name_runs(fig: Figure, ax: Axes, placed: pd.DataFrame, columns: Sequence[str],
               styles: _RunStyles, *, own: bool) -> None:
    """The colour legend, then the other label columns as a shape legend or as text beside
    the points.

    Legends go beside the axes, where no point can be: with a figure of its own (``own``),
    as figure legends the constrained layout makes room for; in a caller's axes, inside
    them.
    """
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=c, label=_plain(k))
               for k, c in styles.colours.items()]
    handles.append(Line2D([], [], color="0.55", lw=1, ls=":", label="chance ranking"))
    style = {"fontsize": 7, "frameon": False, "title_fontsize": 7}
    first_title = _plain(columns[0]) if columns else None
    if own:
        fig.legend(handles=handles, loc="outside right upper", title=first_title, **style)
    else:
        first = ax.legend(handles=handles, loc="upper left", title=first_title, **style)
    if styles.use_markers:
        shapes = [Line2D([], [], ls="", marker=styles.markers[r], color="0.3", label=r)
                  for r in styles.rests]
        shape_title = " / ".join(map(_plain, columns[1:]))
        if own:
            fig.legend(handles=shapes, loc="outside right lower", title=shape_title, **style)
        else:
            ax.add_artist(first)
            ax.legend(handles=shapes, loc="lower right", title=shape_title, **style)
    elif styles.rests:
        _place_labels(ax, [(float(r["woa"]), float(r["auroc"]), styles.rest_key[i])
                           for i, r in placed.iterrows()])


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
# offsets (points) tried in turn for a text label beside its point
_OFFSETS = ((5, 4, "left", "bottom"), (5, -4, "left", "top"), (-5, 4, "right", "bottom"),
            (-5, -4, "right", "top"), (0, 7, "center", "bottom"), (0, -7, "center", "top"),
            (9, 0, "left", "center"), (-9, 0, "right", "center"))


def _place_labels(ax: Axes, points: Sequence[tuple[float, float, str]]) -> None:
    """Each label at the first offset where it overlaps no label or point already drawn,
    inside the axes; a label with no free place is left out and the omission noted."""
    fig = ax.get_figure(root=True)
    if not hasattr(fig.canvas, "get_renderer"):  # type: ignore[union-attr]
        # a user's Figure() without a canvas (FigureCanvasBase cannot measure text): give
        # it the Agg canvas its own savefig would use for a PNG
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)  # type: ignore[arg-type]
    renderer = fig.canvas.get_renderer()  # type: ignore[union-attr]
    frame = ax.get_window_extent(renderer)
    dots = [ax.transData.transform((x, y)) for x, y, _ in points]
    taken: list[Any] = []
    left_out = 0
    for x, y, text in points:
        for dx, dy, ha, va in _OFFSETS:
            label = ax.annotate(_plain(text), (x, y), xytext=(dx, dy),
                                textcoords="offset points", ha=ha, va=va, fontsize=8,
                                color="0.25")
            box = label.get_window_extent(renderer)
            inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0
                      and box.y1 <= frame.y1)
            hits_dot = any(box.x0 - 3 < px < box.x1 + 3 and box.y0 - 3 < py < box.y1 + 3
                           for px, py in dots)
            if inside and not hits_dot and not any(_overlap(box, t) for t in taken):
                taken.append(box)
                break
            label.remove()
        else:
            left_out += 1
    if left_out:
        ax.text(0.98, 0.02, f"{left_out} labels left out (no free place)",
                transform=ax.transAxes, ha="right", fontsize=8, color="0.35")
