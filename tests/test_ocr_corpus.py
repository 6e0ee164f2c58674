"""The OCR demo corpus: bundled, loadable without Tesseract, reproduced by its script.

The script (``scripts/make_ocr_corpus.py``) takes about 5 minutes for all 126 pages, so the
test regenerates one page with the real Tesseract and Augraphy (``--check`` on a subset);
the template extractor, which needs no OCR, is re-run on every shipped page's words.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import confcal
from _optional import need_module, need_program
from confcal.datasets import load_demo

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "confcal" / "datasets" / "ocr_data"
SCRIPT = ROOT / "scripts" / "make_ocr_corpus.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("make_ocr_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def test_the_corpus_is_small_and_has_a_run_per_pipeline():
    from confcal.extras.augment import PIPELINES

    size = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    assert size < 1_000_000
    corpus = load_demo("ocr")
    assert corpus.models == ("tesseract-template",)
    assert corpus.tiers == ("original", *PIPELINES)
    assert len(corpus.truths) == 6 and all(set(r.predictions) == set(corpus.truths)
                                           for r in corpus.runs)
    assert corpus.manifest["versions"]["tesseract"].startswith("5.")
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from fnmatch import fnmatch

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["confcal.datasets"]
    for path in (p for p in DATA.rglob("*") if p.is_file()):
        relative = path.relative_to(DATA.parent).as_posix()
        assert any(fnmatch(relative, p) for p in patterns), f"{relative} is not package data"
    assert {r["intended_tier"] for r in corpus.manifest["runs"]} == {"clean", "mild",
                                                                      "moderate", "high"}
    for run in corpus.manifest["runs"][1:]:
        assert run["intended_tier"] == PIPELINES[run["tier"]].intended_tier, run["tier"]


def test_it_loads_and_scores_without_tesseract_or_augraphy():
    code = (
        "import sys\n"
        "for name in ('pytesseract', 'augraphy', 'cv2', 'numba', 'PIL'):\n"
        "    sys.modules[name] = None\n"
        "from confcal.datasets import load_demo\n"
        "result = load_demo('ocr').score(tiers=['original', 'custom22'])\n"
        "print(result.counts['documents'])\n")
    env = {**os.environ, "PYTHONPATH": str(Path(confcal.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["12"]


def test_the_template_reproduces_every_shipped_prediction_from_the_shipped_words(script):
    from confcal.extras.ocr import OCRWord

    manifest = json.loads((DATA / "manifest.json").read_text())
    pages = _lines(DATA / "ocr_words.jsonl.gz")
    assert len(pages) == len(manifest["runs"]) * manifest["documents"]
    predictions = {run["tier"]: {r["doc_id"]: r["document"] for r in _lines(DATA / run["file"])}
                   for run in manifest["runs"]}
    for page in pages:
        words = [OCRWord(text, conf, tuple(box), line=line)
                 for text, conf, box, line in page["words"]]
        assert 0 < len(words) and all(0 <= w.confidence <= 1 for w in words)
        assert script.extract(words) == predictions[page["pipeline"]][page["doc_id"]]


def test_a_value_s_confidence_is_the_product_of_its_words(script):
    from confcal.extras.ocr import OCRWord

    def word(text, conf, x, y, line):
        return OCRWord(text, conf, (x, y, 10 * len(text), 30), line=line)

    words = [word("Gross", 0.9, 100, 1000, 1), word("total:", 0.8, 190, 1002, 1),
             word("$1,250.00", 0.5, 400, 1001, 1),
             word("Payment", 1.0, 100, 300, 0), word("terms:", 1.0, 220, 300, 0),
             word("Net", 0.9, 400, 301, 0), word("30", 0.8, 450, 299, 0)]
    out = script.extract(words)
    # the label's own words do not count: 0.5 alone; 0.9 x 0.8 = 0.72
    assert out["GrossTotal"] == {"value": "$1,250.00", "confidence": 0.5}
    assert out["PaymentTerms"] == {"value": "Net 30", "confidence": 0.72}
    assert "Agency" not in out and out["LineItems"] == []
    assert math.isclose(0.9 * 0.8, 0.72)


def test_the_script_checks_a_page_on_whatever_versions_are_installed(script):
    need_module("pytesseract")
    need_module("augraphy")
    need_program("tesseract")
    env = {**os.environ, "PYTHONPATH": str(Path(confcal.__file__).parents[1])}
    done = subprocess.run([sys.executable, str(SCRIPT), "--check", "--invoices", "3",
                           "--pipelines", "skew_jpeg"], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((DATA / "manifest.json").read_text())
    from confcal.extras.augment import tool_versions

    if tool_versions() == manifest["versions"]:
        assert "checked 1 pages: 1 identical, 0 differ" in done.stdout
        assert "warning" not in done.stderr
    else:
        # another OpenCV (or Tesseract...): named, compared, and within the tolerances
        assert "warning: installed versions differ from the manifest's" in done.stderr
        assert "checked 1 pages:" in done.stdout and "0 outside the tolerances" in done.stdout


def _page_record(words, values, sha="a" * 64, means=(200, 255, 255, 10)):
    """A shipped or regenerated page as --check reads it: 2 x 2 tiles of a 100 px page."""
    import base64

    return {"prediction": {"doc_id": "d", "document": values},
            "words": {"doc_id": "d", "pipeline": "p",
                      "words": [[w, 0.9, [0, 0, 10, 10], 0] for w in words]},
            "pixels": {"sha256": sha, "shape": [100, 100], "tile": 50,
                       "means": base64.b64encode(bytes(means)).decode()}}


def test_the_check_says_how_much_a_page_differs(script):
    shipped = _page_record(["Agency:", "Blue", "Harbor", "$1,250.00"],
                           {"Agency": {"value": "Blue Harbor", "confidence": 0.8},
                            "LineItems": [{"Rate": {"value": "$1,250.00", "confidence": 0.9}}]})
    assert script._compare_page(shipped, shipped)["identical"]
    # one word misread, one tile 3 grey levels darker, the item's rate changed
    new = _page_record(["Agency:", "Blue", "Harbour", "$1,250.00"],
                       {"Agency": {"value": "Blue Harbor", "confidence": 0.8},
                        "LineItems": [{"Rate": {"value": "$1,250.0O", "confidence": 0.9}}]},
                       sha="b" * 64, means=(197, 255, 255, 10))
    diff = script._compare_page(shipped, new)
    assert not diff["identical"]
    assert (diff["words_changed"], diff["n_words"]) == (1, 4)
    assert (diff["values_changed"], diff["n_values"]) == (1, 2)
    assert diff["confidence_moved"] == 0.0
    # the same values with other confidences: not a changed value, but not identical
    moved = _page_record(["Agency:", "Blue", "Harbor", "$1,250.00"],
                         {"Agency": {"value": "Blue Harbor", "confidence": 0.75},
                          "LineItems": [{"Rate": {"value": "$1,250.00", "confidence": 0.9}}]})
    other = script._compare_page(shipped, moved)
    assert other["values_changed"] == 0 and not other["identical"]
    assert math.isclose(other["confidence_moved"], 0.05)  # 0.8 - 0.75
    assert diff["pixels"] == {"same": False, "tiles": 4, "tiles_changed": 1, "grey": 3}
    text = script._describe(diff)
    assert "the mean of 1 of 4 50-px tiles moved, by at most 3 grey levels" in text
    assert "OCR words: 1 of 4 read differently" in text
    # 1 of 4 words is 25%, beyond the 5% a version difference may cost
    assert not script._within(diff)
    many = _page_record([f"w{i}" for i in range(40)], {})
    fewer = _page_record([f"w{i}" for i in range(39)] + ["x"], {}, means=(205, 255, 255, 10))
    diff = script._compare_page(many, fewer)
    assert diff["words_changed"] == 1 and diff["pixels"]["grey"] == 5
    assert script._within(diff)  # 1 of 40 = 2.5% <= 5%, 5 <= 8 grey levels
    darker = _page_record([f"w{i}" for i in range(40)], {}, means=(191, 255, 255, 10))
    assert not script._within(script._compare_page(many, darker))  # 9 > 8 grey levels


def test_a_page_fingerprint_is_its_pixels_hash_and_tile_means(script):
    import numpy as np

    page = np.full((120, 160), 255, dtype=np.uint8)
    page[:50, :50] = 0        # the first tile black
    page[50:100, 50:100] = 100  # one tile grey
    page[100:, :] = 7         # a strip below the last whole row of tiles: left out
    out = script.fingerprint(page)
    means = script.tile_means(out)
    assert means.shape == (2, 3)  # 120 // 50, 160 // 50
    assert means.tolist() == [[0, 255, 255], [255, 100, 255]]
    assert out["sha256"] == hashlib.sha256(page.tobytes()).hexdigest()
    page[119, 159] = 0  # outside every tile: the hash sees it, the thumbnail does not
    again = script.fingerprint(page)
    assert again["sha256"] != out["sha256"] and again["means"] == out["means"]
