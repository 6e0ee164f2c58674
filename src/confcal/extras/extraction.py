"""Ask a model for an extraction with confidence: verbalized top-K, token log-probabilities,
or a second call that scores the extracted values.

The ConfBench protocol asks each model for every field of a document, under three input
modalities, with two kinds of confidence (and the paper's future-work third):

* **Modality** is chosen by which inputs are given: OCR only (``ocr=`` a list of
  ``(word, confidence)`` pairs in reading order), image only (``image=``), or both.
  Images are scaled down to fit 1200 x 1000 pixels (width x height, :data:`MAX_IMAGE_SIZE`)
  keeping their aspect ratio, and sent as PNG.
* **Verbalized** (:func:`extract_verbalized`): the 1S-TopK prompt asks, in one step and
  without reasoning, for the top-k candidate values of every field (line items included)
  with a probability each; the answer is read by :func:`confcal.calibration.confidence.parse_topk`.
* **Log-probability** (:func:`extract_logprob`): a plain JSON answer (greedy where the
  server takes ``sampling={"temperature": 0.0}``) with each token's log-probability and
  its top alternatives (OpenAI-compatible endpoints); every value's tokens are found by
  :func:`confcal.calibration.confidence.value_token_spans` and aggregated
  (:func:`confcal.calibration.confidence.confidences_from_logprobs`).
* **Two-stage verbalized** (:func:`extract_two_stage`): call 1 asks for the values only;
  call 2, to the same or another model (the *scorer*), receives the document's inputs and
  the extracted values and answers a probability per value, which attaches to it.

:func:`run_extraction` does this for a corpus: bounded concurrency, a progress bar, the
clients' retries, and a verified on-disk cache of raw answers
(:class:`confcal._chat.ChatCache`), so that an interrupted run resumes without paying
twice. One document's failure is one record, never the end of the run. The result feeds
:func:`confcal.scoring.score_documents` directly.

Examples
--------
>>> from confcal.scoring.presets import FCC_INVOICE
>>> request = build_request(FCC_INVOICE, strategy="verbalized",
...                         ocr=[("ACME", 0.98), ("Media", 0.91)])
>>> "top 4 candidate values" in request.text, request.images
(True, ())
>>> print(request.text.splitlines()[-2])
ACME	0.98
"""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from .._chat import ChatCache, check_sampling
from .._validation import check_option, check_positive_int, is_real
from ..calibration.confidence import METHODS, confidences_from_logprobs, parse_topk
from ..exceptions import ConfcalError, ModelCallError, ModelResponseError, ValidationError
from ..scoring.comparators import Date, Exact, Number, Text
from ..scoring.presets import FCC_INVOICE
from ..scoring.schema import Field, Items, Schema
from ._corpus import FAILURE_KINDS, ExtractionRun, check_documents
from ._optional import progress, require, run_concurrently
from ._two_stage import attach_scores, read_values, scoring_request
from .clients import ChatClient, ChatRequest, ChatResponse

__all__ = [
    "MAX_IMAGE_SIZE",
    "MODALITIES",
    "STRATEGIES",
    "ExtractionRun",
    "ModelAnswerError",
    "build_request",
    "FAILURE_KINDS",
    "extract_logprob",
    "extract_two_stage",
    "extract_verbalized",
    "run_extraction",
]

MODALITIES: tuple[str, ...] = ("ocr", "image", "ocr+image")
"""Input modalities: OCR words only, the page image only, or both."""

STRATEGIES: tuple[str, ...] = ("verbalized", "logprob", "two-stage")
"""Confidence strategies: verbalized top-K (1S-TopK), token log-probabilities, or two-stage
verbalized (extract, then score the extracted values in a second call)."""

MAX_IMAGE_SIZE: tuple[int, int] = (1200, 1000)
"""(width, height) an image is scaled down to fit, keeping its aspect ratio."""

_EXTRA = "models"
_SYSTEM = ("You extract structured data from business documents. Answer with one JSON "
           "object and nothing else: no explanation, no reasoning, no code fence.")
_CACHE_KIND = "extraction"
_DEFAULT_MAX_TOKENS = 8192
_DEFAULT_TOP_LOGPROBS = 5


class ModelAnswerError(ConfcalError, ValueError):
    """A model answered, but its answer cannot be read as a prediction.

    Raised for an answer cut at ``max_tokens`` (``finish_reason == "length"``), text that
    holds no valid JSON object in the requested form, or a log-probability answer without
    log-probabilities. The message says which, and ``response`` keeps the answer.
    """

    def __init__(self, message: str, response: ChatResponse | None = None) -> None:
        super().__init__(message)
        self.response = response


# ---------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------
def _require(module: str) -> Any:
    """Import an optional dependency, naming the extra that installs it when missing."""
    return require(module, user="confcal.extras.extraction", extra=_EXTRA)


def _check_ocr(ocr: Any, name: str = "ocr") -> list[tuple[str, float]]:
    if isinstance(ocr, (str, bytes, Mapping)) or not isinstance(ocr, Iterable):
        raise ValidationError(f"{name} must be a list of (word, confidence) pairs in reading "
                              f"order; found {type(ocr).__name__}")
    pairs = []
    for i, pair in enumerate(ocr):
        if hasattr(pair, "text") and hasattr(pair, "confidence"):
            # a confcal.extras.ocr.OCRWord (tesseract_words, textract_words), as it is
            pair = (pair.text, pair.confidence)
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValidationError(f"{name}[{i}] must be a (word, confidence) pair; found "
                                  f"{pair!r:.80}")
        word, confidence = pair
        if not isinstance(word, str):
            raise ValidationError(f"{name}[{i}] word must be a string; found {word!r:.80}")
        if not is_real(confidence) or not 0.0 <= float(confidence) <= 1.0:
            raise ValidationError(f"{name}[{i}] confidence must be a number within [0, 1] "
                                  f"(rescale 0-100 engine scores); found {confidence!r}")
        pairs.append((word, float(confidence)))
    if not pairs:
        raise ValidationError(f"{name} must hold at least one word; found 0 pairs")
    return pairs


def _png(image: Any, name: str = "image") -> bytes:
    """The page as PNG bytes, scaled down to fit MAX_IMAGE_SIZE keeping the aspect ratio."""
    if isinstance(image, np.ndarray):
        raise ValidationError(f"{name} must be a PIL image, image file bytes or a path; found a "
                              "numpy array, which does not say whether its channels are RGB "
                              "or OpenCV's BGR (convert it with PIL.Image.fromarray)")
    Image = _require("PIL.Image")
    ImageOps = _require("PIL.ImageOps")
    if isinstance(image, Image.Image):
        page = image
    elif isinstance(image, (bytes, str, os.PathLike)):
        source = io.BytesIO(image) if isinstance(image, bytes) else image
        try:
            page = Image.open(source)
            page.load()
        except (OSError, ValueError) as exc:
            shown = "bytes" if isinstance(image, bytes) else repr(str(image))
            raise ValidationError(f"{name} must be a readable image; found {shown} that PIL "
                                  f"cannot read ({exc})") from None
    else:
        raise ValidationError(f"{name} must be a PIL image, image file bytes or a path; found "
                              f"{type(image).__name__}")
    page = ImageOps.exif_transpose(page)  # phone photos store their rotation in EXIF
    if page.mode in ("RGBA", "LA") or (page.mode == "P" and "transparency" in page.info):
        rgba = page.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        page = Image.alpha_composite(white, rgba).convert("RGB")  # transparent = paper
    elif page.mode not in ("L", "RGB"):
        page = page.convert("RGB")
    width, height = page.size
    scale = min(MAX_IMAGE_SIZE[0] / width, MAX_IMAGE_SIZE[1] / height)
    if scale < 1.0:  # never enlarged: upsampling adds pixels, not information
        size = (min(MAX_IMAGE_SIZE[0], max(1, round(width * scale))),
                min(MAX_IMAGE_SIZE[1], max(1, round(height * scale))))
        page = page.resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    page.save(buffer, format="PNG")
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------
# prompts
# ---------------------------------------------------------------------------------------
def _kind(spec: Field) -> tuple[str, Any]:
    """How a field's value is asked for, and an example value for the answer template."""
    comparator = spec.comparator
    if isinstance(comparator, Number):
        return ("number: digits with a decimal point, no currency symbol or thousands "
                "separator; negative for credits"), 0.0
    if isinstance(comparator, Date):
        return "date: YYYY-MM-DD", "YYYY-MM-DD"
    if isinstance(comparator, (Text, Exact)):
        return "text, as written on the document", "..."
    return "value, as written on the document", "..."


def _field_lines(schema: Schema) -> list[str]:
    lines = []
    for name, spec in schema.fields.items():
        if isinstance(spec, Items):
            lines.append(f"- {name}: a list with one record per line item (an empty list if "
                         "there are none), each record with:")
            lines.extend(f"  - {sub} ({_kind(s)[0]})" for sub, s in spec.fields.items())
        else:
            lines.append(f"- {name} ({_kind(spec)[0]})")
    return lines


def _template(schema: Schema, leaf: Any) -> str:
    parts = []
    for name, spec in schema.fields.items():
        if isinstance(spec, Items):
            record = ", ".join(f"{json.dumps(sub)}: {leaf(s)}" for sub, s in spec.fields.items())
            parts.append(f"{json.dumps(name)}: [{{{record}}}, ...]")
        else:
            parts.append(f"{json.dumps(name)}: {leaf(spec)}")
    return "{" + ", ".join(parts) + "}"


def _inputs_text(ocr: list[tuple[str, float]] | None, has_image: bool) -> list[str]:
    lines = []
    if has_image and ocr is None:
        lines.append("The document is the attached page image.")
    elif has_image:
        lines.append("The document is the attached page image; its OCR follows.")
    if ocr is not None:
        lines.append("OCR of the page: the words in reading order, one per line, each "
                     "followed by a tab and the OCR engine's confidence in it (0 to 1):")
        lines.extend(f"{word}\t{confidence:.2f}" for word, confidence in ocr)
    return lines


def build_request(schema: Schema, *, strategy: str = "verbalized", image: Any = None,
                  ocr: Any = None, k: int = 4, max_tokens: int = _DEFAULT_MAX_TOKENS,
                  top_logprobs: int = _DEFAULT_TOP_LOGPROBS,
                  sampling: Mapping[str, Any] | None = None) -> ChatRequest:
    """The exact (first) request :func:`extract_verbalized`, :func:`extract_logprob` or
    :func:`extract_two_stage` sends.

    Parameters
    ----------
    schema : Schema
    strategy : {"verbalized", "logprob", "two-stage"}, default "verbalized"
        ``"two-stage"`` builds call 1: the values only, no log-probabilities.
    image : PIL.Image.Image, bytes or path, optional
        The page; scaled down to fit :data:`MAX_IMAGE_SIZE`, sent as PNG. Not a numpy
        array (its channel order is ambiguous).
    ocr : sequence of (str, float), optional
        Words in reading order with the OCR engine's confidence in [0, 1].
    k : int, default 4
        Candidates per field (verbalized).
    max_tokens : int, default 8192
    top_logprobs : int, default 5
        Alternatives per token (logprob; at least 2, the margin method needs two).
    sampling : mapping, optional
        Sampling parameters to send (``{"temperature": 0.0}``, also ``top_p``,
        ``top_k``); none by default, so the server decides. See
        :class:`~confcal._chat.ChatRequest`.

    Returns
    -------
    ChatRequest

    Raises
    ------
    ValidationError
        Neither ``image`` nor ``ocr``, malformed OCR pairs, an unreadable image, an unknown
        strategy, ``k < 1``, ``top_logprobs < 2``, an unknown or invalid sampling parameter.
    """
    if not isinstance(schema, Schema):
        raise ValidationError(f"schema must be a confcal Schema; found {type(schema).__name__}")
    strategy = check_option(strategy, "strategy", STRATEGIES)
    k = check_positive_int(k, "k", 1)
    max_tokens = check_positive_int(max_tokens, "max_tokens", 1)
    top_logprobs = check_positive_int(top_logprobs, "top_logprobs", 2)
    settings = check_sampling(sampling)
    if image is None and ocr is None:
        raise ValidationError("image or ocr must be given (the modality is chosen by which "
                              "are: ocr, image, or both); found neither")
    pairs = None if ocr is None else _check_ocr(ocr)
    images = () if image is None else (_png(image),)
    lines = ["Extract these fields from the document:", *_field_lines(schema), ""]
    if strategy == "verbalized":
        lines += [
            (f"For every field give your top {k} candidate values, most likely first, each "
             "with the probability (0.0 to 1.0) that it is the correct value. The "
             "probabilities of one field's candidates must not sum above 1.0. Give fewer "
             "candidates when fewer are plausible. Use null instead of a list when the "
             "document does not contain the field. For line items, give the candidates of "
             "each field of each record."),
            "",
            "Answer in exactly this form:",
            _template(schema, lambda s: "[{\"value\": " + json.dumps(_kind(s)[1])
                      + ", \"probability\": 0.0}, ...]"),
        ]
    else:
        lines += [
            "Give each field's value, or null when the document does not contain it.",
            "",
            "Answer in exactly this form:",
            _template(schema, lambda s: json.dumps(_kind(s)[1])),
        ]
    lines += ["", *_inputs_text(pairs, bool(images)), ""]
    return ChatRequest(system=_SYSTEM, text="\n".join(lines), images=images,
                       max_tokens=max_tokens, **settings,
                       top_logprobs=top_logprobs if strategy == "logprob" else 0)


# ---------------------------------------------------------------------------------------
# reading answers
# ---------------------------------------------------------------------------------------
def _check_client(client: Any, *, logprobs: bool, name: str = "client") -> None:
    if not isinstance(client, ChatClient):
        raise ValidationError(f"{name} must have provider, model, supports_logprobs and "
                              f"complete(request) (a ChatClient); found {type(client).__name__}")
    if logprobs and not client.supports_logprobs:
        raise ValidationError(f"client must return token log-probabilities for the logprob "
                              f"strategy; found {client!r}, whose API has none (use "
                              "strategy='verbalized', or an OpenAI-compatible endpoint)")


def _check_finished(response: ChatResponse, request: ChatRequest) -> None:
    if response.finish_reason == "length":
        raise ModelAnswerError(
            f"the answer was cut at max_tokens={request.max_tokens} (finish_reason "
            f"'length', {len(response.text)} characters): a truncated JSON answer is not "
            "read; raise max_tokens", response)


# a log-probability answer without them: no confidence is made up (no 0, 1 or NaN), the
# document is one failure of kind "answer"
_NO_LOGPROBS = ("the model returned no log-probabilities; use a verbalized strategy or a "
                "server that returns them")

# A model's text can hold anything: JSON nested beyond any limit, numbers no float holds.
# Whatever reading it raises becomes a ModelAnswerError naming what was read.
_UNREADABLE = (ValueError, RecursionError, OverflowError, TypeError)


def _unreadable(what: str, exc: BaseException, response: ChatResponse) -> ModelAnswerError:
    detail = ("nested too deeply to read" if isinstance(exc, RecursionError)
              else f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValidationError)
              else str(exc))
    return ModelAnswerError(f"the {what} cannot be read: {detail}", response)


def _read_verbalized(response: ChatResponse, request: ChatRequest, schema: Schema,
                     k: int) -> dict[str, Any]:
    _check_finished(response, request)
    try:
        return parse_topk(response.text, schema, k=k)
    except _UNREADABLE as exc:
        raise _unreadable("verbalized answer", exc, response) from None


def _read_values(response: ChatResponse, request: ChatRequest,
                 schema: Schema) -> dict[str, Any]:
    _check_finished(response, request)
    try:
        return read_values(response.text, schema)
    except _UNREADABLE as exc:
        raise _unreadable("extraction answer (two-stage call 1)", exc, response) from None


def _read_scores(values: dict[str, Any], response: ChatResponse, request: ChatRequest,
                 schema: Schema) -> dict[str, Any]:
    _check_finished(response, request)
    try:
        return attach_scores(values, response.text, schema)
    except _UNREADABLE as exc:
        raise _unreadable("scoring answer (two-stage call 2)", exc, response) from None


def _scoring_request(schema: Schema, values: dict[str, Any], first: ChatRequest, ocr: Any,
                     max_tokens: int) -> ChatRequest:
    """Call 2 of the two-stage strategy: the inputs of ``first`` and the values it got."""
    pairs = None if ocr is None else _check_ocr(ocr)
    return scoring_request(schema, values, field_lines=_field_lines(schema),
                           inputs_text=_inputs_text(pairs, bool(first.images)),
                           images=first.images, max_tokens=max_tokens,
                           sampling=first.sampling())


def _read_logprob(response: ChatResponse, request: ChatRequest, schema: Schema,
                  method: str) -> dict[str, Any]:
    _check_finished(response, request)
    if response.tokens is None or response.token_logprobs is None \
            or (not response.tokens and response.text.strip()):
        raise ModelAnswerError(_NO_LOGPROBS, response)
    top = None
    if response.top_logprobs is not None:
        top = [None if e is None else [dict(a) for a in e] for e in response.top_logprobs]
    try:
        return confidences_from_logprobs(list(response.tokens), list(response.token_logprobs),
                                         schema, top_logprobs=top, method=method,
                                         token_style=response.token_style)
    except _UNREADABLE as exc:
        raise _unreadable("log-probability answer", exc, response) from None


def extract_verbalized(client: ChatClient, schema: Schema, *, image: Any = None,
                       ocr: Any = None, k: int = 4, max_tokens: int = _DEFAULT_MAX_TOKENS,
                       sampling: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One document's fields with verbalized top-k candidates (the 1S-TopK prompt).

    Parameters
    ----------
    client : ChatClient
        Any client (:mod:`confcal.extras.clients`).
    schema : Schema
        The fields to extract, e.g. :data:`confcal.scoring.presets.FCC_INVOICE`.
    image : PIL.Image.Image, bytes or path, optional
    ocr : sequence of (str, float), optional
        The modality is chosen by which are given (see :func:`build_request`).
    k : int, default 4
        Candidates per field.
    max_tokens : int, default 8192
    sampling : mapping, optional
        Sampling parameters to send (``{"temperature": 0.0}``, also ``top_p``,
        ``top_k``); none by default, so the server decides. See
        :class:`~confcal._chat.ChatRequest`.

    Returns
    -------
    dict
        A predicted document in the ``{"candidates": [...]}`` form of
        :func:`~confcal.calibration.confidence.parse_topk`, ready for ``score_documents``.

    Raises
    ------
    ModelCallError
        The call failed after the client's retries.
    ModelAnswerError
        The answer was cut at ``max_tokens`` or is not a valid top-k JSON object.
    ValidationError
        Invalid inputs (:func:`build_request`).
    """
    _check_client(client, logprobs=False)
    request = build_request(schema, strategy="verbalized", image=image, ocr=ocr, k=k,
                            max_tokens=max_tokens, sampling=sampling)
    return _read_verbalized(client.complete(request), request, schema, k)


def extract_logprob(client: ChatClient, schema: Schema, *, image: Any = None,
                    ocr: Any = None, method: str = "first",
                    top_logprobs: int = _DEFAULT_TOP_LOGPROBS,
                    max_tokens: int = _DEFAULT_MAX_TOKENS,
                    sampling: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One document's fields with token-log-probability confidences.

    Parameters
    ----------
    client : ChatClient
        A client with ``supports_logprobs``
        (:class:`~confcal.extras.clients.OpenAICompatibleClient`).
    schema : Schema
    image, ocr : optional
        As :func:`extract_verbalized`.
    method : {"first", "mean", "margin"}, default "first"
        How a value's token log-probabilities become one confidence
        (:func:`~confcal.calibration.confidence.aggregate_logprobs`).
    top_logprobs : int, default 5
        Alternatives requested per token (at least 2).
    max_tokens : int, default 8192
    sampling : mapping, optional
        Sampling parameters to send; none by default (the server decides). ConfBench's
        log-probability runs decode greedily: ``{"temperature": 0.0, "top_p": 0.1}``
        asks for that on a server that takes them.

    Returns
    -------
    dict
        A predicted document in the ``{"value": v, "confidence": c}`` form.

    Raises
    ------
    ModelCallError, ModelAnswerError, ValidationError
        As :func:`extract_verbalized`; also a client without log-probabilities, and an
        answer that came back without them (the model returned none: never a confidence
        of 0, 1 or NaN).
    """
    _check_client(client, logprobs=True)
    method = check_option(method, "method", METHODS)
    request = build_request(schema, strategy="logprob", image=image, ocr=ocr,
                            top_logprobs=top_logprobs, max_tokens=max_tokens,
                            sampling=sampling)
    return _read_logprob(client.complete(request), request, schema, method)


def extract_two_stage(client: ChatClient, schema: Schema, *, image: Any = None,
                      ocr: Any = None, scorer: ChatClient | None = None,
                      max_tokens: int = _DEFAULT_MAX_TOKENS,
                      sampling: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One document's fields, then a second call's probability for each extracted value.

    Call 1 asks ``client`` for the values only (the log-probability strategy's prompt,
    without log-probabilities). Call 2 sends ``scorer`` (``client`` when None: the same
    model, in a separate call) the same document inputs, the field descriptions and the
    extracted values, and asks for the probability that each value, null included, is
    correct. The probabilities attach to call 1's values.

    Parameters
    ----------
    client : ChatClient
        The extractor; any client (no log-probabilities needed).
    schema : Schema
    image, ocr : optional
        As :func:`extract_verbalized`; both calls see the same inputs.
    scorer : ChatClient, optional
        The model that scores the values; ``client`` when None.
    max_tokens : int, default 8192
        Per call.
    sampling : mapping, optional
        Sampling parameters both calls send; none by default (the servers decide).

    Returns
    -------
    dict
        A predicted document in the ``{"value": v, "confidence": c}`` form.

    Raises
    ------
    ModelCallError, ModelAnswerError, ValidationError
        As :func:`extract_verbalized`, for either call; a scoring answer that misses a
        value's probability, or gives one outside [0, 1], is a ``ModelAnswerError``
        naming the field.
    """
    _check_client(client, logprobs=False)
    scorer = client if scorer is None else scorer
    _check_client(scorer, logprobs=False, name="scorer")
    first = build_request(schema, strategy="two-stage", image=image, ocr=ocr,
                          max_tokens=max_tokens, sampling=sampling)
    values = _read_values(client.complete(first), first, schema)
    second = _scoring_request(schema, values, first, ocr, max_tokens)
    return _read_scores(values, scorer.complete(second), second, schema)


# ---------------------------------------------------------------------------------------
# the corpus run
# ---------------------------------------------------------------------------------------
class _Failed(Exception):
    """One document's failure, as recorded."""

    def __init__(self, kind: str, stage: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.stage, self.message = kind, stage, message


def _failure_kind(exc: BaseException) -> str:
    if isinstance(exc, ModelResponseError):
        return "response"
    if isinstance(exc, ModelCallError):
        return "call"
    if isinstance(exc, ModelAnswerError):
        return "answer"
    return "error"


def run_extraction(client: ChatClient, documents: Any, *, modality: str, strategy: str,
                   schema: Schema = FCC_INVOICE, concurrency: int = 4,
                   cache_dir: str | os.PathLike[str] | None = None, k: int = 4,
                   method: str = "first", top_logprobs: int = _DEFAULT_TOP_LOGPROBS,
                   max_tokens: int = _DEFAULT_MAX_TOKENS, scorer: ChatClient | None = None,
                   sampling: Mapping[str, Any] | None = None,
                   progress: bool = True) -> ExtractionRun:
    """Extract a corpus under one modality and one strategy; resume from a cache.

    Parameters
    ----------
    client : ChatClient
    documents : mapping or iterable of pairs
        doc_id -> ``{"image": ..., "ocr": [...]}``. Each document must have the inputs its
        modality reads; others are ignored (a corpus with both runs under every modality).
    modality : {"ocr", "image", "ocr+image"}
    strategy : {"verbalized", "logprob", "two-stage"}
    schema : Schema, default FCC_INVOICE
    concurrency : int, default 4
        Documents in flight at once.
    cache_dir : path, optional
        Raw answers are stored there as each arrives (:class:`confcal._chat.ChatCache`,
        kind ``"extraction"``): keyed by the SHA-256 of (provider, model, the request's
        prompt and settings, the images' SHA-256), with that identity stored beside the
        answer and checked when read. A later run reads a matching entry instead of
        calling; an entry whose identity does not match (copied from another document,
        edited) is never used: it is counted in ``counts["rejected"]``, asked again and
        overwritten; an entry that cannot be read (not a regular file, too large, not
        JSON, wrong types) is counted in ``counts["unreadable"]``, asked again and
        replaced. Nothing secret is written (prompt text and image digests only).
    k : int, default 4
        Candidates per field (verbalized).
    method : {"first", "mean", "margin"}, default "first"
        Log-probability aggregation (logprob).
    top_logprobs : int, default 5
        Alternatives per token (logprob).
    max_tokens : int, default 8192
        Per call; an answer cut there is a failure of kind ``"answer"``.
    scorer : ChatClient, optional
        The model that scores the values of a two-stage run (``client`` when None);
        refused for the other strategies.
    sampling : mapping, optional
        Sampling parameters every call sends (``{"temperature": 0.0}``); none by default,
        so each server decides. A client whose API refuses a set one fails each document
        with one record of kind ``"call"`` naming the parameter and how to unset it.
    progress : bool, default True
        Show a tqdm progress bar.

    Returns
    -------
    ExtractionRun

    Raises
    ------
    ValidationError
        Invalid arguments, a document without the inputs of the modality or with an
        unreadable image (all checked before the first call).

    Notes
    -----
    Every first request is built (and every image encoded) before the first call, so an
    input error costs nothing. Any failure of one document (its call, its answer, an
    overflowing or too deeply nested reply, a client's own exception) is one record in
    ``failures`` with its kind, and the run goes on; ``failure_counts`` and
    :meth:`ExtractionRun.summary` count them by kind. Answers are cached as they arrive,
    so an interrupted or partly failed run is resumed by running it again (a two-stage
    document whose scoring call failed asks only that call again). Timeouts and retries
    are the client's.

    Examples
    --------
    >>> from confcal.extras.clients import OpenAICompatibleClient
    >>> client = OpenAICompatibleClient("http://127.0.0.1:8000/v1", "qwen2-vl",
    ...                                 api_key_env=None)
    >>> run = run_extraction(client, {"inv-1": {"image": "inv-1.png"}}, modality="image",
    ...                      strategy="verbalized", cache_dir="cache")  # doctest: +SKIP
    >>> result = score_documents(FCC_INVOICE, truths, run.predictions,
    ...                          metadata=run.metadata)                 # doctest: +SKIP
    """
    modality = check_option(modality, "modality", MODALITIES)
    strategy = check_option(strategy, "strategy", STRATEGIES)
    _check_client(client, logprobs=strategy == "logprob")
    if scorer is not None:
        if strategy != "two-stage":
            raise ValidationError(f"scorer must be None for strategy {strategy!r} (only "
                                  "'two-stage' scores in a second call); found "
                                  f"{scorer!r}")
        _check_client(scorer, logprobs=False, name="scorer")
    judge = client if scorer is None else scorer
    concurrency = check_positive_int(concurrency, "concurrency", 1)
    method = check_option(method, "method", METHODS)
    if not isinstance(progress, bool):
        raise ValidationError(f"progress must be True or False; found {progress!r}")
    docs = check_documents(documents, modality)
    sampling = check_sampling(sampling)
    requests = {}
    for doc_id, image, ocr in docs:
        try:
            requests[doc_id] = build_request(schema, strategy=strategy, image=image, ocr=ocr,
                                             k=k, max_tokens=max_tokens,
                                             top_logprobs=top_logprobs, sampling=sampling)
        except ValidationError as exc:
            raise ValidationError(f"documents[{doc_id!r}]: {exc}") from None
    ocrs = {doc_id: ocr for doc_id, _, ocr in docs}
    cache = None if cache_dir is None else ChatCache(Path(cache_dir), kind=_CACHE_KIND)
    bar = _progress(len(docs), f"{client.model} {modality} {strategy}", progress)
    tally = {"cached": 0, "called": 0}
    lock = threading.Lock()

    def ask(who: ChatClient, request: ChatRequest, stage: str) -> ChatResponse:
        key = None
        if cache is not None:
            key = cache.key(who, request)
            try:
                cached = cache.get(key)
            except ValidationError as exc:
                raise _Failed("cache", stage, str(exc)) from None
            if cached is not None:
                with lock:
                    tally["cached"] += 1
                return cached
        try:
            response = who.complete(request)
        except Exception as exc:  # one document's failure, whatever the client raised
            raise _Failed(_failure_kind(exc), stage, _message(exc)) from None
        if not isinstance(response, ChatResponse):
            raise _Failed("error", stage, f"the client returned a {type(response).__name__},"
                                          " not a ChatResponse")
        if cache is not None and key is not None:
            try:
                cache.put(key, response)
            except (OSError, ValueError) as exc:  # a full disk, a text no file can hold
                raise _Failed("cache", stage, f"the answer could not be cached: "
                                              f"{_message(exc)}") from None
        with lock:
            tally["called"] += 1
        return response

    def read(stage: str, reader: Any, *args: Any) -> Any:
        try:
            return reader(*args)
        except Exception as exc:  # RecursionError, OverflowError, ... included
            raise _Failed(_failure_kind(exc), stage, _message(exc)) from None

    def work(doc_id: Any) -> dict[str, Any]:
        request = requests[doc_id]
        response = ask(client, request, "extract")
        if strategy == "verbalized":
            return read("extract", _read_verbalized, response, request, schema, k)  # type: ignore
        if strategy == "logprob":
            return read("extract", _read_logprob, response, request, schema, method)  # type: ignore
        values = read("extract", _read_values, response, request, schema)
        second = read("score", _scoring_request, schema, values, request, ocrs[doc_id],
                      max_tokens)
        return read("score", _read_scores, values, ask(judge, second, "score"), second,  # type: ignore
                    schema)

    # an interrupt stops handing out work; what arrived is in the cache already
    outcomes = run_concurrently(work, [doc_id for doc_id, _, _ in docs],
                                concurrency=concurrency, bar=bar, catch=_Failed)
    order = [doc_id for doc_id, _, _ in docs]
    failures = {d: MappingProxyType({"kind": outcomes[d].kind, "stage": outcomes[d].stage,
                                     "message": outcomes[d].message})
                for d in order if isinstance(outcomes[d], _Failed)}
    by_kind = {kind: sum(f["kind"] == kind for f in failures.values()) for kind in FAILURE_KINDS}
    predictions = {d: outcomes[d] for d in order if d not in failures}
    labels = {"provider": client.provider, "model": client.model, "modality": modality,
              "strategy": strategy, "confidence_provider": judge.provider,
              "confidence_model": judge.model}
    rejected = tuple(dict.fromkeys(cache.rejected)) if cache is not None else ()
    unreadable = tuple(dict.fromkeys(cache.unreadable)) if cache is not None else ()
    return ExtractionRun(
        predictions=MappingProxyType(predictions), failures=MappingProxyType(failures),
        metadata=MappingProxyType({d: MappingProxyType(dict(labels)) for d in order}),
        counts=MappingProxyType({"documents": len(order), "ok": len(predictions),
                                 "failed": len(failures), **tally,
                                 "rejected": len(rejected),
                                 "unreadable": len(unreadable)}),
        model=client.model, modality=modality, strategy=strategy,
        failure_counts=MappingProxyType(by_kind), rejected=rejected, unreadable=unreadable)


def _message(exc: BaseException) -> str:
    if isinstance(exc, ConfcalError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "RecursionError: nested too deeply to read"
    return f"{type(exc).__name__}: {exc}"[:500]


def _progress(total: int, desc: str, enabled: bool) -> Any:
    return progress(total, desc, enabled, unit="doc", user="confcal.extras.extraction",
                    extra=_EXTRA)
