"""confcal.extras.ocr: Tesseract words from a page the test renders, Textract responses.

The Tesseract tests run the real ``tesseract`` program on a small page drawn here with
DejaVu Sans (shipped with matplotlib); they skip without pytesseract or the program. The
Textract fixtures are checked against botocore's own model of the DetectDocumentText
response before confcal reads them, so their shape is Textract's, not ours.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from _optional import need_module, need_program
from confcal.exceptions import ValidationError
from confcal.extras.ocr import OCRWord, TesseractNotFoundError, tesseract_words, textract_words

LINES = ["Agency: Blue Harbor Media", "Net amount due: $1,062.50", "Payment terms: Net 30"]


@pytest.fixture(scope="module")
def pytesseract():
    module = need_module("pytesseract")
    need_program("tesseract")
    return module


@pytest.fixture(scope="module")
def page():
    """Three lines of 30 px text on a 900 x 260 white page (PIL, mode L)."""
    from PIL import Image, ImageDraw, ImageFont

    from confcal.extras.augment._render import font_path

    image = Image.new("L", (900, 260), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(font_path()), 30)
    for i, line in enumerate(LINES):
        draw.text((40, 40 + 64 * i), line, fill=0, font=font)
    return image


@pytest.fixture(scope="module")
def words(pytesseract, page):
    return tesseract_words(page)


def test_tesseract_reads_the_words_in_reading_order(words):
    assert [w.text for w in words] == " ".join(LINES).split()
    assert [w.line for w in words] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    assert all(w.page == 1 for w in words)


def test_tesseract_confidence_is_a_probability_and_boxes_sit_on_the_words(words):
    assert all(0.0 <= w.confidence <= 1.0 for w in words)
    assert min(w.confidence for w in words) > 0.5  # clean 30 px text
    for w in words:
        left, top, width, height = w.box
        assert 40 <= left and left + width <= 900 and width > 0
        line = w.line
        # the drawn line starts at y = 40 + 64 * line and is ~30 px high
        assert 40 + 64 * line - 5 <= top <= 40 + 64 * line + 35 and 10 < height < 45


def test_tesseract_takes_gray_bgr_arrays_and_files_alike(pytesseract, page, words, tmp_path):
    gray = np.asarray(page)
    bgr = np.dstack([gray, gray, gray])
    path = tmp_path / "page.png"
    page.save(path)
    for image in (gray, bgr, path, str(path)):
        assert tesseract_words(image) == words


def test_tesseract_rejects_what_is_not_an_image(pytesseract, tmp_path):
    with pytest.raises(ValidationError, match="uint8"):
        tesseract_words(np.zeros((40, 40), dtype=np.float32))
    with pytest.raises(ValidationError, match="shape"):
        tesseract_words(np.zeros((40, 40, 2), dtype=np.uint8))
    bad = tmp_path / "notes.png"
    bad.write_text("not a picture")
    with pytest.raises(ValidationError, match="readable image file"):
        tesseract_words(bad)
    with pytest.raises(ValidationError, match="PIL image, a numpy array"):
        tesseract_words(42)
    with pytest.raises(ValidationError, match="lang"):
        tesseract_words(np.full((40, 40), 255, dtype=np.uint8), lang="")


def test_without_the_program_the_error_names_the_debian_package(pytesseract, page,
                                                                monkeypatch):
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd",
                        "/nonexistent/bin/tesseract")
    with pytest.raises(TesseractNotFoundError, match="apt-get install tesseract-ocr"):
        tesseract_words(page)


def test_extraction_takes_ocr_words_as_they_are(words):
    from confcal.extras.extraction import build_request
    from confcal.scoring.presets import FCC_INVOICE

    from_words = build_request(FCC_INVOICE, ocr=words)
    from_pairs = build_request(FCC_INVOICE, ocr=[(w.text, w.confidence) for w in words])
    assert from_words == from_pairs
    with pytest.raises(ValidationError, match=r"ocr\[0\] confidence must be a number within"):
        build_request(FCC_INVOICE, ocr=[OCRWord("x", 87.0, (0, 0, 1, 1))])


# ----------------------------------------------------------------------------- Textract
def _word(block_id, text, confidence, left=0.1, page=1):
    return {"BlockType": "WORD", "Id": block_id, "Text": text, "Confidence": confidence,
            "TextType": "PRINTED", "Page": page,
            "Geometry": {"BoundingBox": {"Left": left, "Top": 0.2, "Width": 0.05,
                                         "Height": 0.01}}}


def _line(block_id, children, text, page=1):
    return {"BlockType": "LINE", "Id": block_id, "Text": text, "Confidence": 99.0,
            "Page": page, "Relationships": [{"Type": "CHILD", "Ids": children}],
            "Geometry": {"BoundingBox": {"Left": 0.1, "Top": 0.2, "Width": 0.5,
                                         "Height": 0.01}}}


@pytest.fixture
def response():
    """Two pages; the WORD blocks listed in another order than their lines read them."""
    return {
        "DocumentMetadata": {"Pages": 2},
        "Blocks": [
            {"BlockType": "PAGE", "Id": "p1", "Page": 1,
             "Relationships": [{"Type": "CHILD", "Ids": ["l1", "l2"]}]},
            _line("l1", ["w2", "w1"], "Net 30"),
            _line("l2", ["w3"], "$1,062.50"),
            _word("w1", "30", 91.25, left=0.3),
            _word("w2", "Net", 99.5),
            _word("w3", "$1,062.50", 62.0),
            {"BlockType": "PAGE", "Id": "p2", "Page": 2,
             "Relationships": [{"Type": "CHILD", "Ids": ["l3"]}]},
            _line("l3", ["w4"], "Agency", page=2),
            _word("w4", "Agency", 100.0, page=2),
        ],
    }


def test_the_fixture_is_a_textract_response_by_botocore_s_own_model(response):
    botocore_session = need_module("botocore.session")
    from botocore.validate import ParamValidator

    model = botocore_session.get_session().get_service_model("textract")
    shape = model.operation_model("DetectDocumentText").output_shape
    report = ParamValidator().validate(response, shape)
    assert not report.has_errors(), report.generate_report()


def test_textract_words_follow_the_lines_with_confidence_over_100(response):
    words = textract_words(response)
    # l1 lists w2 then w1: "Net 30", though the blocks hold w1 first
    assert [(w.text, w.confidence, w.line, w.page) for w in words] == [
        ("Net", 0.995, 0, 1), ("30", 0.9125, 0, 1), ("$1,062.50", 0.62, 1, 1),
        ("Agency", 1.0, 2, 2)]
    assert words[1].box == (0.3, 0.2, 0.05, 0.01)


@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("Blocks"), r"response\['Blocks'\] must be a list of blocks; found "
                                r"NoneType \(keys present"),
    (lambda r: r["Blocks"].append("WORD"), r"Blocks'\]\[9\] must be a mapping; found str"),
    (lambda r: r["Blocks"][3].pop("Id"), r"Blocks'\]\[3\] must have string BlockType and Id"),
    (lambda r: r["Blocks"][4].update(Id="w1"), r"Blocks'\]\[4\] \(Id 'w1'\) must have a "
                                               r"unique Id; found it at .*\[3\]"),
    (lambda r: r["Blocks"][1]["Relationships"][0]["Ids"].append("w9"),
     r"Blocks'\]\[1\] \(Id 'l1'\) lists child 'w9', which must be a block"),
    (lambda r: r["Blocks"][1]["Relationships"][0]["Ids"].append("p2"),
     r"lists child 'p2', which must be a WORD; found a PAGE"),
    (lambda r: r["Blocks"][2]["Relationships"][0]["Ids"].append("w1"),
     r"Blocks'\]\[3\] \(Id 'w1'\) must belong to one LINE; found it in LINE 'l1' and LINE "
     r"'l2'"),
    (lambda r: r["Blocks"][3].update(Confidence=150.0),
     r"\(Id 'w1'\) Confidence must be a number within \[0, 100\]; found 150.0"),
    (lambda r: r["Blocks"][3].pop("Text"), r"\(Id 'w1'\) Text must be a string; found None"),
    (lambda r: r["Blocks"][3].update(Page=0), r"\(Id 'w1'\) Page must be a positive integer; "
                                             r"found 0"),
    (lambda r: r["Blocks"][3].update(Page=True), r"\(Id 'w1'\) Page must be a positive "
                                                r"integer; found True"),
    (lambda r: r["Blocks"][3]["Geometry"]["BoundingBox"].pop("Top"),
     r"\(Id 'w1'\) Geometry.BoundingBox.Top must be a finite number; found None"),
    (lambda r: r["Blocks"].append(_word("w5", "stray", 80.0)),
     r"every WORD must belong to a LINE .*found 1 that do not, first .*\(Id 'w5'\) 'stray'"),
    # a string of Ids was read as one Id per character; an unhashable Id was a TypeError;
    # a Relationships mapping was iterated by its keys
    (lambda r: r["Blocks"][1]["Relationships"][0].update(Ids="w1"),
     r"\(Id 'l1'\) Relationships\[0\] must be a mapping with a list of Ids; found .*'w1'"),
    (lambda r: r["Blocks"][1]["Relationships"][0]["Ids"].append(["w1"]),
     r"\(Id 'l1'\) Relationships\[0\]\.Ids must hold block Id strings; found \['w1'\]"),
    (lambda r: r["Blocks"][1].update(Relationships=r["Blocks"][1]["Relationships"][0]),
     r"\(Id 'l1'\) Relationships must be a list of \{'Type', 'Ids'\} mappings; found \{"),
    (lambda r: r["Blocks"][1]["Relationships"][0]["Ids"].append("w1"),
     r"\(Id 'w1'\) must belong to one LINE; found it twice in LINE 'l1'"),
])
def test_malformed_textract_responses_are_named(response, change, message):
    broken = copy.deepcopy(response)
    change(broken)
    with pytest.raises(ValidationError, match=message):
        textract_words(broken)


def test_a_textract_response_must_be_a_mapping():
    with pytest.raises(ValidationError, match="must be a Textract response"):
        textract_words([{"BlockType": "WORD"}])
