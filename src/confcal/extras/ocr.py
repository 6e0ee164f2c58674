"""OCR words with confidence from Tesseract or Amazon Textract, ready for extraction.

ConfBench's OCR and OCR+Image modalities hand the model the page's words in reading order,
each with the engine's confidence. Engines report confidence on 0-100; confcal wants
[0, 1]. This module reads both engines into one form, :class:`OCRWord`, which
:func:`confcal.extras.extraction.build_request` (``ocr=``) accepts as it is:

* :func:`tesseract_words` runs Tesseract (through pytesseract) on a page.
* :func:`textract_words` reads a Textract ``DetectDocumentText`` / ``AnalyzeDocument``
  response (a parsed JSON dict, as boto3 returns it).

Install with the ``ocr`` extra (pytesseract, pillow) and the Tesseract program itself
(Debian and Ubuntu: ``apt-get install tesseract-ocr``). Reading a Textract response needs
neither.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .._validation import is_real
from ..exceptions import ValidationError
from ._optional import require

__all__ = ["OCRWord", "TesseractNotFoundError", "tesseract_words", "textract_words"]

_EXTRA = "ocr"
_DEBIAN_PACKAGE = "tesseract-ocr"


@dataclass(frozen=True)
class OCRWord:
    """One word an OCR engine read, with its confidence in [0, 1] and where it is.

    Attributes
    ----------
    text : str
        The word as read.
    confidence : float
        The engine's confidence divided by 100: within [0, 1].
    box : tuple of float
        ``(left, top, width, height)``: pixels for Tesseract, fractions of the page's width
        and height for Textract (its ``Geometry.BoundingBox``).
    line : int
        Index of the word's line in reading order (0-based, over the whole document).
    page : int
        1-based page number (Textract's ``Page``; 1 for Tesseract).

    Examples
    --------
    >>> word = OCRWord("ACME", 0.98, (10.0, 20.0, 64.0, 18.0), line=0)
    >>> word.text, word.confidence
    ('ACME', 0.98)
    """

    text: str
    confidence: float
    box: tuple[float, float, float, float]
    line: int = 0
    page: int = 1


class TesseractNotFoundError(FileNotFoundError):
    """The ``tesseract`` program is not installed (or not where pytesseract looks)."""


def _to_pil(image: Any) -> Any:
    """A PIL image from a PIL image, a uint8 array (gray, BGR or BGRA) or a file path."""
    from PIL import Image

    if type(image).__module__.startswith("PIL."):
        return image
    if isinstance(image, np.ndarray):
        if image.dtype != np.uint8:
            raise ValidationError(f"image must hold uint8 pixels; found dtype {image.dtype}")
        if image.ndim == 3 and image.shape[2] == 1:
            image = image[:, :, 0]
        if image.ndim == 2:
            return Image.fromarray(np.ascontiguousarray(image), mode="L")
        if image.ndim == 3 and image.shape[2] in (3, 4):
            # OpenCV's channel order, as confcal.extras.augment uses
            order = [2, 1, 0] if image.shape[2] == 3 else [2, 1, 0, 3]
            return Image.fromarray(np.ascontiguousarray(image[:, :, order]),
                                   mode="RGB" if image.shape[2] == 3 else "RGBA")
        raise ValidationError(f"image must be (height, width) gray or (height, width, 3|4) "
                              f"BGR(A); found shape {image.shape}")
    if isinstance(image, (str, bytes)) or hasattr(image, "__fspath__"):
        try:
            with Image.open(image) as opened:
                opened.load()
                return opened.copy()
        except (OSError, ValueError) as exc:
            raise ValidationError(f"image must be a readable image file; found {image!r} "
                                  f"({exc})") from None
    raise ValidationError(f"image must be a PIL image, a numpy array or an image file path; "
                          f"found {type(image).__name__}")


def _tesseract(pytesseract: Any) -> None:
    command = pytesseract.pytesseract.tesseract_cmd
    if shutil.which(command) is None:
        raise TesseractNotFoundError(
            f"tesseract_words needs the Tesseract program; {command!r} is not on PATH "
            f"(Debian and Ubuntu: apt-get install {_DEBIAN_PACKAGE}; or set "
            "pytesseract.pytesseract.tesseract_cmd to its path)")


def tesseract_words(image: Any, *, lang: str = "eng", config: str = "") -> list[OCRWord]:
    """Read a page with Tesseract: its words in reading order, confidence in [0, 1].

    Parameters
    ----------
    image : PIL.Image.Image, numpy.ndarray or path
        The page: a PIL image, a uint8 array (gray, or BGR(A) in OpenCV's order, as
        :func:`confcal.extras.augment.degrade` returns it) or an image file.
    lang : str, default "eng"
        Tesseract language(s), e.g. ``"eng+deu"`` (their traineddata must be installed).
    config : str, default ""
        Extra Tesseract options, e.g. ``"--psm 6"``.

    Returns
    -------
    list of OCRWord
        Tesseract's words in its reading order (block, paragraph, line, word), blank
        results skipped, with ``confidence = conf / 100`` and the box in pixels.

    Raises
    ------
    TesseractNotFoundError
        The ``tesseract`` program is missing; the message names the Debian package.
    ImportError
        Without the ``ocr`` extra (pytesseract).
    ValidationError
        An image of another type, dtype or shape, or an unreadable file; a confidence
        outside 0-100 from the engine.

    Notes
    -----
    Tesseract gives a word confidence -1 only to the non-word rows of its layout
    (pages, blocks, lines); those are not words and are skipped, as are words whose text
    is blank. Nothing else is dropped.

    Examples
    --------
    >>> from PIL import Image, ImageDraw, ImageFont
    >>> page = Image.new("L", (400, 80), 255)
    >>> ImageDraw.Draw(page).text((10, 20), "Net 30", fill=0,
    ...                           font=ImageFont.load_default(size=32))  # doctest: +SKIP
    >>> [(w.text, w.confidence > 0.5) for w in tesseract_words(page)]  # doctest: +SKIP
    [('Net', True), ('30', True)]
    """
    pytesseract = require("pytesseract", user="confcal.extras.ocr.tesseract_words",
                          extra=_EXTRA)
    _tesseract(pytesseract)
    if not isinstance(lang, str) or not lang:
        raise ValidationError(f"lang must be a non-empty string such as 'eng'; found {lang!r}")
    if not isinstance(config, str):
        raise ValidationError(f"config must be a string of Tesseract options; found "
                              f"{config!r}")
    data = pytesseract.image_to_data(_to_pil(image), lang=lang, config=config,
                                     output_type=pytesseract.Output.DICT)
    words: list[OCRWord] = []
    lines: dict[tuple[int, int, int, int], int] = {}
    for i, text in enumerate(data["text"]):
        confidence = float(data["conf"][i])
        if int(data["level"][i]) != 5 or confidence == -1 or not str(text).strip():
            continue
        if not 0.0 <= confidence <= 100.0:
            raise ValidationError(f"Tesseract word {i} ({text!r}) confidence must be within "
                                  f"[0, 100]; found {confidence!r}")
        key = (int(data["page_num"][i]), int(data["block_num"][i]), int(data["par_num"][i]),
               int(data["line_num"][i]))
        line = lines.setdefault(key, len(lines))
        box = (float(data["left"][i]), float(data["top"][i]), float(data["width"][i]),
               float(data["height"][i]))
        words.append(OCRWord(str(text).strip(), confidence / 100.0, box, line=line,
                             page=int(data["page_num"][i])))
    return words


def _where(i: int, block: Mapping[str, Any]) -> str:
    block_id = block.get("Id")
    return f"response['Blocks'][{i}]" + (f" (Id {block_id!r})" if block_id is not None else "")


def _box(i: int, block: Mapping[str, Any]) -> tuple[float, float, float, float]:
    geometry = block.get("Geometry")
    box = geometry.get("BoundingBox") if isinstance(geometry, Mapping) else None
    if not isinstance(box, Mapping):
        raise ValidationError(f"{_where(i, block)} must have Geometry.BoundingBox (Left, Top, "
                              f"Width, Height); found Geometry {geometry!r:.80}")
    values = []
    for key in ("Left", "Top", "Width", "Height"):
        value: Any = box.get(key)
        if not is_real(value) or not math.isfinite(float(value)):
            raise ValidationError(f"{_where(i, block)} Geometry.BoundingBox.{key} must be a "
                                  f"finite number; found {value!r}")
        values.append(float(value))
    return values[0], values[1], values[2], values[3]


def textract_words(response: Mapping[str, Any]) -> list[OCRWord]:
    """Read a Textract response's WORD blocks in LINE order, confidence / 100.

    Parameters
    ----------
    response : mapping
        A ``DetectDocumentText`` or ``AnalyzeDocument`` response (``{"Blocks": [...]}``),
        or the pages of an asynchronous job merged into one ``Blocks`` list.

    Returns
    -------
    list of OCRWord
        For each ``LINE`` block in response order, its ``CHILD`` words in the order the
        line lists them: ``text`` from ``Text``, ``confidence = Confidence / 100``,
        ``box`` from ``Geometry.BoundingBox`` (fractions of the page), ``line`` the LINE's
        index, ``page`` from ``Page`` (1 when absent).

    Raises
    ------
    ValidationError
        The response is not a mapping with a ``Blocks`` list; a block is not a mapping or
        lacks ``BlockType`` or ``Id``; two blocks share an ``Id``; a LINE lists a child
        that is missing or not a WORD; a WORD lacks a string ``Text``, has a
        ``Confidence`` outside [0, 100] or a malformed box; a WORD belongs to no LINE, or
        to two. Each message names the block (its index and ``Id``) and what was found.

    Examples
    --------
    >>> def word(i, text, conf):
    ...     return {"BlockType": "WORD", "Id": i, "Text": text, "Confidence": conf,
    ...             "Geometry": {"BoundingBox": {"Left": 0.1, "Top": 0.2, "Width": 0.05,
    ...                                          "Height": 0.01}}}
    >>> response = {"Blocks": [
    ...     {"BlockType": "PAGE", "Id": "p"},
    ...     {"BlockType": "LINE", "Id": "l1", "Text": "Net 30",
    ...      "Relationships": [{"Type": "CHILD", "Ids": ["w1", "w2"]}]},
    ...     word("w2", "30", 91.0), word("w1", "Net", 99.5)]}
    >>> [(w.text, w.confidence, w.line) for w in textract_words(response)]
    [('Net', 0.995, 0), ('30', 0.91, 0)]
    """
    blocks = _textract_blocks(response)
    by_id = _blocks_by_id(blocks)
    words: list[OCRWord] = []
    owner: dict[str, str] = {}  # WORD Id -> the Id of the LINE that lists it
    n_lines = 0
    for i, block in enumerate(blocks):
        if block["BlockType"] != "LINE":
            continue
        for child in _line_children(i, block):
            j, word = _claim_word(i, block, child, by_id, owner)
            words.append(_textract_word(j, word, block, line=n_lines))
        n_lines += 1
    _check_every_word_in_a_line(by_id, owner)
    return words


def _textract_blocks(response: Any) -> Sequence[Any]:
    """The ``Blocks`` list of a Textract response."""
    if not isinstance(response, Mapping):
        raise ValidationError(f"response must be a Textract response (a mapping with "
                              f"'Blocks'); found {type(response).__name__}")
    blocks = response.get("Blocks")
    if not isinstance(blocks, Sequence) or isinstance(blocks, (str, bytes)):
        raise ValidationError(f"response['Blocks'] must be a list of blocks; found "
                              f"{type(blocks).__name__}"
                              + (f" (keys present: {sorted(map(str, response))})"
                                 if blocks is None else ""))
    return blocks


def _blocks_by_id(blocks: Sequence[Any]) -> dict[str, tuple[int, Mapping[str, Any]]]:
    """Block Id -> (its index, the block): every block a mapping with a unique string Id."""
    by_id: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for i, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            raise ValidationError(f"response['Blocks'][{i}] must be a mapping; found "
                                  f"{type(block).__name__}")
        kind, block_id = block.get("BlockType"), block.get("Id")
        if not isinstance(kind, str) or not isinstance(block_id, str):
            raise ValidationError(f"{_where(i, block)} must have string BlockType and Id; "
                                  f"found BlockType {kind!r}, Id {block_id!r}")
        if block_id in by_id:
            raise ValidationError(f"{_where(i, block)} must have a unique Id; found it at "
                                  f"response['Blocks'][{by_id[block_id][0]}] too")
        by_id[block_id] = (i, block)
    return by_id


def _line_children(i: int, block: Mapping[str, Any]) -> list[str]:
    """The Ids a LINE lists in its CHILD relationships, in order."""
    children: list[str] = []
    relations = block.get("Relationships") or ()
    if not isinstance(relations, Sequence) or isinstance(relations, (str, bytes)):
        raise ValidationError(f"{_where(i, block)} Relationships must be a list of "
                              f"{{'Type', 'Ids'}} mappings; found {relations!r:.80}")
    for r, relation in enumerate(relations):
        ids = relation.get("Ids", []) if isinstance(relation, Mapping) else None
        if not isinstance(ids, Sequence) or isinstance(ids, (str, bytes)):
            raise ValidationError(f"{_where(i, block)} Relationships[{r}] must be a "
                                  f"mapping with a list of Ids; found {relation!r:.80}")
        bad = [x for x in ids if not isinstance(x, str)]
        if bad:
            raise ValidationError(f"{_where(i, block)} Relationships[{r}].Ids must hold "
                                  f"block Id strings; found {bad[0]!r:.80}")
        if relation.get("Type") == "CHILD":
            children.extend(ids)
    return children


def _claim_word(i: int, line: Mapping[str, Any], child: str,
                by_id: Mapping[str, tuple[int, Mapping[str, Any]]],
                owner: dict[str, str]) -> tuple[int, Mapping[str, Any]]:
    """The WORD block a LINE lists as a child, recorded as that line's (one LINE per WORD)."""
    if child not in by_id:
        raise ValidationError(f"{_where(i, line)} lists child {child!r}, which must "
                              "be a block of the response; found none with that Id")
    j, word = by_id[child]
    if word["BlockType"] != "WORD":
        raise ValidationError(f"{_where(i, line)} lists child {child!r}, which must "
                              f"be a WORD; found a {word['BlockType']}")
    if child in owner:
        where = (f"twice in LINE {line['Id']!r}" if owner[child] == line["Id"] else
                 f"in LINE {owner[child]!r} and LINE {line['Id']!r}")
        raise ValidationError(f"{_where(j, word)} must belong to one LINE; "
                              f"found it {where}")
    owner[child] = line["Id"]
    return j, word


def _textract_word(j: int, word: Mapping[str, Any], line_block: Mapping[str, Any], *,
                   line: int) -> OCRWord:
    """One WORD block as an :class:`OCRWord`: its Text, Confidence / 100, box and Page."""
    text, confidence = word.get("Text"), cast(Any, word.get("Confidence"))
    if not isinstance(text, str):
        raise ValidationError(f"{_where(j, word)} Text must be a string; found "
                              f"{text!r:.80}")
    if not is_real(confidence) or not 0.0 <= float(confidence) <= 100.0:
        raise ValidationError(f"{_where(j, word)} Confidence must be a number within "
                              f"[0, 100]; found {confidence!r}")
    page = word.get("Page", line_block.get("Page", 1))
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        raise ValidationError(f"{_where(j, word)} Page must be a positive integer; "
                              f"found {page!r}")
    return OCRWord(text, float(confidence) / 100.0, _box(j, word), line=line, page=page)


def _check_every_word_in_a_line(by_id: Mapping[str, tuple[int, Mapping[str, Any]]],
                                owner: Mapping[str, str]) -> None:
    """No WORD outside every LINE: the reading order comes from the lines."""
    orphans = [(i, b) for b_id, (i, b) in by_id.items()
               if b["BlockType"] == "WORD" and b_id not in owner]
    if orphans:
        i, block = orphans[0]
        raise ValidationError(f"every WORD must belong to a LINE (the reading order comes from "
                              f"the lines); found {len(orphans)} that do not, first "
                              f"{_where(i, block)} {block.get('Text')!r}")
