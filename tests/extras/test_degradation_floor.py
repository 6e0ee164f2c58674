"""The paper's custom12 and custom22 keep Tesseract above the floor on other page designs.

The degradation benchmark (``benchmarks/bench_degradation.py``) measures every pipeline on
every design; this keeps the two the paper names at the tiers' two ends in CI, on a small
page (a 6-row invoice, cut below its last line) of two designs that are not the demo's:
DejaVu Serif at 200 dpi with a ruled table, and DejaVu Sans at 150 dpi with a ruled table.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from _optional import need_module, need_program

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_degradation.py"
FLOOR = 0.5


@pytest.fixture(scope="module")
def bench():
    need_module("augraphy")
    need_module("pytesseract")
    need_program("tesseract")
    spec = importlib.util.spec_from_file_location("bench_degradation", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _small_page(design: str):
    from confcal.datasets._generate import make_invoice
    from confcal.extras.augment import PAGE_DESIGNS, render_invoice

    invoice = make_invoice(9)  # 6 line items
    layout = PAGE_DESIGNS[design]
    page = np.asarray(render_invoice(invoice, layout=layout))
    # title, 3 header lines, the table header and 6 rows, 3 totals, and the blank lines
    bottom = layout.margin + 18 * layout.line_height
    return np.ascontiguousarray(page[:bottom]), invoice


@pytest.mark.parametrize("design", ["serif-200-ruled", "sans-150-ruled"])
@pytest.mark.parametrize("pipeline", ["custom12", "custom22"])
def test_the_paper_s_pipelines_stay_above_the_floor(bench, design, pipeline, monkeypatch):
    from confcal.extras.augment import degrade
    from confcal.extras.ocr import tesseract_words

    monkeypatch.setenv("OMP_THREAD_LIMIT", "1")
    page, invoice = _small_page(design)
    printed = bench.printed_words(invoice)
    clean = bench.word_accuracy(printed, [w.text for w in tesseract_words(page)])
    assert clean >= 0.8, clean  # the page itself reads
    out = degrade(page, pipeline, seed=1)
    assert bench.mean_abs_diff(out, page) >= 2.0  # a visible change
    degraded = bench.word_accuracy(printed, [w.text for w in tesseract_words(out)])
    assert degraded >= FLOOR, (pipeline, design, degraded)
