"""The report as a reader sees it: figures that show every point, one ECE and one
missing-value marker per page, errors per run, escaped Markdown, and a page that fits 1024
pixels in headless Chromium."""

from __future__ import annotations

import html
import re
import warnings
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _optional import program_or_none
from confcal.datasets import load_demo
from confcal.metrics import ece
from confcal.report import _render, compare_runs, plots, write_report

pytest.importorskip("matplotlib")

CHROMIUM = program_or_none("chromium")


def _boxes(fig, texts):
    renderer = fig.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in texts]


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def _inside(box, frame) -> bool:
    return (box.x0 >= frame.x0 - 0.5 and box.x1 <= frame.x1 + 0.5 and box.y0 >= frame.y0 - 0.5
            and box.y1 <= frame.y1 + 0.5)


@pytest.fixture(scope="module")
def demo_entities() -> pd.DataFrame:
    return load_demo().score().entities


# ----------------------------------------------------------------------- ECARB axes
def test_every_ecarb_curve_stays_inside_the_axes(demo_entities):
    # the case: sim-overconfident mild has ECARB@0.05 = 2.158, drawn after the
    # clean curve whose range ended the y axis near 1.9
    panel = demo_entities[demo_entities["model"] == "sim-overconfident"]
    fig = None
    highest = 0.0
    for tier, group in panel.groupby("tier", sort=False, observed=True):
        has = group["confidence"].notna()
        correct = group.loc[has, "correct"].to_numpy(bool)
        conf = group.loc[has, "confidence"].to_numpy(float)
        fig = plots.ecarb_vs_budget(correct, conf, label=str(tier), show_ceiling=False,
                                ax=None if fig is None else fig.axes[0])
        highest = max(highest, float(np.nanmax(
            plots.ecarb_curve(correct, conf)["ecarb"].to_numpy(float))))
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    assert highest > 2.1  # the mild curve's first point (2.158 in the issue)
    for line in ax.lines:
        y = np.asarray(line.get_ydata(), float)
        assert np.all(y[np.isfinite(y)] <= high) and np.all(y[np.isfinite(y)] >= low)


# ----------------------------------------------------------------- reliability labels
@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_bin_counts_sit_at_their_points_inside_the_frame_without_overprinting(binning):
    rng = np.random.default_rng(3)
    # crowded at high confidence, as the demo's extractors are: narrow bins side by side
    conf = np.clip(np.concatenate([rng.uniform(0.9, 1.0, 5000), rng.uniform(0, 1, 400)]),
                   0, 1)
    correct = rng.uniform(size=conf.size) < conf
    fig = plots.reliability_diagram(correct, conf, n_bins=20, binning=binning, min_count=1)
    ax = fig.axes[0]
    every = [t for t in ax.texts if t.get_gid() == "confcal-count"]
    counts = [t for t in every if t.get_visible()]
    assert len(every) >= 15 and len(counts) >= 5
    if len(counts) < len(every):  # too crowded to label every bin: said, not hidden silently
        assert f"{len(every) - len(counts)} crowded bin counts not shown" in [
            t.get_text() for t in ax.texts]
    frame = ax.get_window_extent(fig.canvas.get_renderer())
    boxes = _boxes(fig, counts)
    for box in boxes:
        assert _inside(box, frame), (box, frame)
    assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    # each label is anchored at its own bin's point (x) and just above its top (y)
    bins = confcal_bins = plots.reliability_bins(correct, conf, n_bins=20, binning=binning)
    shown = confcal_bins[confcal_bins["count"] >= 1]
    xs = sorted(t.xy[0] for t in every)
    expected = (shown["lower"] + (shown["upper"] - shown["lower"]) / 2 if binning == "uniform"
                else shown["mean_confidence"])
    np.testing.assert_allclose(xs, sorted(expected), atol=1e-9)
    assert len(bins) >= len(counts)


def test_auroc_vs_woa_labels_never_overprint():
    # 12 tiers: more than the marker shapes, so the text labels are placed one by one
    rng = np.random.default_rng(0)
    runs = pd.DataFrame({"model": np.repeat(["a", "b"], 12), "tier": [f"t{i}" for i in
                                                                     range(12)] * 2,
                         "woa": 0.9 + rng.normal(0, 0.01, 24),
                         "auroc": 0.7 + rng.normal(0, 0.01, 24)})
    fig = plots.auroc_vs_woa(runs, label=["model", "tier"])
    ax = fig.axes[0]
    labels = [t for t in ax.texts if re.fullmatch(r"t\d+", t.get_text())]
    note = [t.get_text() for t in ax.texts if "left out" in t.get_text()]
    left_out = int(note[0].split()[0]) if note else 0
    assert len(labels) + left_out == 24 and len(labels) >= 12
    boxes = _boxes(fig, labels)
    frame = ax.get_window_extent(fig.canvas.get_renderer())
    assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all(_inside(b, frame) for b in boxes)


def test_auroc_vs_woa_marks_few_tiers_by_shape_and_shows_missing_as_na():
    runs = pd.DataFrame({"model": ["a", "a", None], "tier": ["clean", np.nan, "high"],
                         "woa": [0.9, 0.8, 0.7], "auroc": [0.8, 0.7, 0.6]})
    fig = plots.auroc_vs_woa(runs, label=["model", "tier"])
    legend_texts = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert "n/a" in legend_texts and "nan" not in legend_texts and "None" not in legend_texts
    assert not [t for t in fig.axes[0].texts if t.get_text() in ("clean", "high")]


# ----------------------------------------------------------------- the written report
@pytest.fixture(scope="module")
def report(demo_entities, tmp_path_factory):
    entities = demo_entities.copy()
    entities["model"] = entities["model"].astype(object)
    # a run with missing metadata, and a hostile prediction: a remote image and a row break
    # (one tier's rows only: blanking every tier of the model would stack its runs into one,
    # every document's entities several times, which compare_runs refuses)
    verbalized = entities["model"] == "sim-verbalized"
    one_tier = verbalized & (entities["tier"] == entities.loc[verbalized, "tier"].iloc[0])
    entities.loc[one_tier, "tier"] = np.nan
    wrong = entities.index[(entities["outcome"] == "FD") & entities["confidence"].notna()
                           & (entities["model"] == "sim-logprob")][0]
    entities.loc[wrong, ["prediction", "confidence"]] = [
        "![t](http://example.com/t.png)\r| x | <img src=x onerror=alert(1)>", 0.999999]
    out = tmp_path_factory.mktemp("figures") / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = write_report(entities, out, by=("model", "tier"), n_resamples=0,
                               n_errors=3)
    return entities, written


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_report_md_renders_no_remote_image_link_or_tag(report):
    from markdown_it import MarkdownIt

    _, written = report
    md = written.markdown.read_text()
    assert "![t](http" not in md and "\r" not in md
    parser = _Tags()
    parser.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(md))
    tags = {t for t, _ in parser.tags}
    assert tags <= {"h1", "h2", "p", "blockquote", "ul", "li", "strong", "img", "table",
                    "thead", "tbody", "tr", "th", "td"}, tags
    images = [a["src"] for t, a in parser.tags if t == "img"]
    assert images == ["reliability.png", "auroc_vs_woa.png", "ecarb_curve.png"]
    assert not [a for t, a in parser.tags if t != "img" and a]  # no href, onerror, style


def test_one_ece_per_page_each_panel_names_both(report):
    entities, written = report
    runs = written.runs
    page = written.html.read_text()
    # the caption and the glossary name both definitions side by side
    assert html.escape("Each panel names two ECEs: the table's, over 5 equal-mass bins, and "
                       "that of the 10 uniform bins drawn.") in page
    # each panel's "table" ECE is the table's own number, and the drawn one is named apart
    fig, _ = _render._reliability_panels(entities, ("model", "tier"), runs, 30)
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == len(runs) == 16  # 4 tiers x 4 models, one verbalized tier n/a
    for title, (_, row) in zip(titles, runs.iterrows(), strict=True):
        lines = title.splitlines()
        assert lines[1] == f"ECE {row['ece']:.3f} (table: 5 equal-mass bins)"
        assert re.fullmatch(r"ECE \d\.\d{3} \(drawn: 10 uniform bins\)", lines[2])
    group = entities[(entities["model"] == runs.loc[0, "model"])
                     & (entities["tier"] == runs.loc[0, "tier"]) & entities["confidence"].notna()]
    drawn = ece(group["correct"], group["confidence"], n_bins=10, binning="uniform")
    assert titles[0].splitlines()[2] == f"ECE {drawn:.3f} (drawn: 10 uniform bins)"


def test_missing_metadata_reads_n_a_in_tables_and_figures(report):
    entities, written = report
    frame = entities
    fig_title = _render._short(("sim-verbalized", np.nan))
    assert fig_title == "sim-verbalized / n/a"
    page = written.html.read_text()
    assert ">n/a<" in page and ">nan<" not in page
    assert "| nan |" not in written.markdown.read_text()
    assert frame["tier"].isna().any()


def test_most_confident_errors_are_shown_per_run(report):
    entities, written = report
    page = written.html.read_text()
    table = page.split('<table class="errors">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td>", table)
    per_run = pd.Series([f"{m}/{t}" for m, t in rows]).value_counts()
    runs = written.runs
    assert len(per_run) == len(runs)  # every run, not 20 rows of one
    assert (per_run == 3).all()
    assert "Most confident errors (top 3 per run)" in page


def test_small_groups_get_a_note_and_the_others_none(tmp_path):
    entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    few = entities[entities["doc_id"].isin(sorted(entities["doc_id"].unique())[:8])]
    with pytest.warns(UserWarning, match="intervals from 8 documents"):
        written = write_report(few, tmp_path / "r", by="model", n_resamples=20)
    assert "1 run with fewer than 30 documents" in written.html.read_text()


def test_metrics_csv_quotes_formula_cells_and_keeps_numbers(tmp_path):
    entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    entities = entities.assign(model="=HYPERLINK(\"http://example.com\")")
    written = write_report(entities, tmp_path / "r", by="model", n_resamples=0)
    metrics = pd.read_csv(written.metrics)
    assert metrics["model"].tolist() == ["'=HYPERLINK(\"http://example.com\")"]
    expected = compare_runs(entities, by="model")
    assert metrics["woa"].tolist() == pytest.approx(expected["woa"].tolist())


# ---------------------------------------------------------- 1024 pixels in Chromium
_WIDTHS = """<script>
window.addEventListener('load', () => {
  const t = [...document.querySelectorAll('table')].map(e => e.scrollWidth + '/' + e.clientWidth);
  document.body.setAttribute('data-widths', t.join(','));
  document.body.setAttribute('data-page', document.documentElement.scrollWidth + '/' +
                             document.documentElement.clientWidth);
});
</script>"""


@pytest.mark.usefixtures("chromium")
def test_report_is_readable_at_1024_pixels(report, tmp_path):
    from test_report import _chromium  # the suite's one way of running the browser

    _, written = report
    shot = tmp_path / "report-1024.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1024,3000",
                     written.html.as_uri(), profile=tmp_path / "p1")
    assert shot.is_file() and shot.stat().st_size > 20_000, done.stderr[-2000:]
    page = written.html.read_text()
    probe = tmp_path / "probe.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
                     .replace("</body>", _WIDTHS + "\n</body>"))
    dom = _chromium("--dump-dom", "--virtual-time-budget=10000", "--window-size=1024,900",
                    probe.as_uri(), profile=tmp_path / "p2").stdout
    widths = re.search(r'data-widths="([^"]*)"', dom).group(1).split(",")
    assert len(widths) == 3  # runs, pooled, errors
    for w in widths:  # no table scrolls sideways: nothing is cut off
        scroll, client = map(int, w.split("/"))
        assert scroll <= client, widths
    scroll, client = map(int, re.search(r'data-page="([^"]*)"', dom).group(1).split("/"))
    assert scroll <= client
    Path(shot).replace(tmp_path / "kept-report-1024.png")


# ------------------------------------------------------ a phone (390 px) and a desktop
_LAYOUT = """<script>
window.addEventListener('load', () => {
  const root = document.documentElement, out = [];
  out.push('page=' + root.scrollWidth + '/' + window.innerWidth);
  let smallest = 1e9;  // the smallest text of the page outside the figures
  for (const e of document.body.querySelectorAll('*')) {
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (own && !e.closest('figure img')) {
      smallest = Math.min(smallest, parseFloat(getComputedStyle(e).fontSize));
    }
  }
  out.push('text=' + smallest);
  for (const img of document.querySelectorAll('figure img')) {
    out.push('img=' + img.clientWidth + '/' + img.naturalWidth);
  }
  for (const box of document.querySelectorAll('div.scroll')) {
    const table = box.querySelector('table');
    if (!table) continue;
    const hint = box.nextElementSibling;
    out.push('table=' + (box.scrollWidth > box.clientWidth ? 'wide' : 'fits') + ':' +
             getComputedStyle(table.rows[1].cells[0]).position + ':' +
             (hint && hint.className === 'more' ? getComputedStyle(hint).display : 'none'));
  }
  for (const p of document.querySelectorAll('p.note')) {
    out.push('note=' + p.scrollWidth + '/' + p.clientWidth);
  }
  document.body.setAttribute('data-layout', out.join(' '));
});
</script>"""


@pytest.mark.usefixtures("chromium")
@pytest.mark.parametrize("width", [390, 1280])
def test_report_reads_on_a_phone_and_a_desktop(report, tmp_path, width):
    from test_report import _chromium

    _, written = report
    shot = tmp_path / f"report-{width}.png"
    done = _chromium(f"--screenshot={shot}", f"--window-size={width},2400",
                     written.html.as_uri(), profile=tmp_path / "p1")
    assert shot.is_file() and shot.stat().st_size > 20_000, done.stderr[-2000:]
    page = written.html.read_text()
    probe = tmp_path / "probe.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
                     .replace("</body>", _LAYOUT + "\n</body>"))
    dom = _chromium("--dump-dom", "--virtual-time-budget=10000", f"--window-size={width},900",
                    probe.as_uri(), profile=tmp_path / "p2").stdout
    items = re.search(r'data-layout="([^"]*)"', dom).group(1).split()
    facts: dict[str, list[str]] = {}
    for item in items:
        key, _, value = item.partition("=")
        facts.setdefault(key, []).append(value)
    scroll, inner = map(int, facts["page"][0].split("/"))
    assert scroll <= inner  # the page body never scrolls sideways
    smallest_text = float(facts["text"][0])
    for img in facts["img"]:  # never shrunk: 8 pt at 100 dpi is 11.1 px, the page's smallest
        shown, natural = map(int, img.split("/"))
        assert shown >= natural and 8 * 100 / 72 >= smallest_text, (img, smallest_text)
    assert len(facts["table"]) == 3
    for table in facts["table"]:
        fits, position, hint = table.split(":")
        assert position == "sticky"  # the first column stays while the rest scrolls
        if fits == "wide":  # more columns follow: the hint says so on a narrow screen
            assert hint == ("block" if width < 700 else "none"), table
    if width == 390:
        assert any(t.startswith("wide") for t in facts["table"])  # the case is exercised
    for note in facts["note"]:  # the signature line and every note wrap
        wide, box = map(int, note.split("/"))
        assert wide <= box, note

def test_a_lone_carriage_return_stays_inside_its_metrics_cell(tmp_path):
    # the attack: a run label "x\r=1+1" split the row, and the next line began with =1+1
    entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    entities = entities.assign(model="x\r=1+1")
    written = write_report(entities, tmp_path / "r", by="model", n_resamples=0)
    metrics = pd.read_csv(written.metrics)
    assert metrics["model"].tolist() == ["x\r=1+1"]  # one row, the cell whole
    assert len(metrics) == 1


def test_report_html_removes_bidirectional_overrides_as_report_md_does(tmp_path):
    # the attack: a run label with a right-to-left override reads backwards in report.html
    entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    entities = entities.assign(model="run\u202egpj.exe")
    written = write_report(entities, tmp_path / "r", by="model", n_resamples=0)
    for path in (written.html, tmp_path / "r" / "report.md"):
        text = path.read_text(encoding="utf-8")
        assert "\u202e" not in text and "run\ufffdgpj.exe" in text
