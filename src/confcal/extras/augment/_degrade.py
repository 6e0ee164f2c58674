"""Building and running pipelines: make_pipeline, and degrade in a worker process.

Augraphy reads and writes ``./augraphy_cache`` in the working directory (and a pipeline's
"other pages" come from it), and numba's thread count and generators belong to the whole
process. :func:`degrade` therefore runs Augraphy in a worker process of its own (started
once, on first use, and kept; see ``_worker``), where a private working directory and one
numba thread change nothing another thread of the caller sees.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import functools
import os
import random
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validation import check_seed
from ...exceptions import ValidationError
from ._envelope import check_spec
from ._protocol import read_message, write_message
from ._registry import as_spec
from ._specs import NESTING, PHASES, PipelineSpec, Step, require_augment

__all__ = ["BASE_BLEND", "MIN_SIDE", "SEED_LIMIT", "build_pipeline", "check_image", "degrade",
           "degrade_array", "make_pipeline", "match_input", "numba_seeder", "plain_steps",
           "stop_worker"]

# Augraphy refuses pages below 30 x 30 pixels.
MIN_SIDE = 30
SEED_LIMIT = 2**31  # cv2.setRNGSeed takes a C int
BASE_BLEND = "min"
"""How the ink phase's output is printed onto the paper phase's: the darker of the two.

Augraphy's default ``"ink_to_paper"`` blend lightens every anti-aliased pixel (22% of the
pixels of a rendered invoice change with no augmentation at all); ``"min"`` leaves a page
printed on white paper exactly as it was, so every change is an augmentation's."""

_WORKER_LOCK = threading.Lock()
_WORKER: list[_Worker] = []  # the one worker process, once started


def plain_steps(steps: tuple[Step, ...]) -> tuple[tuple[str, dict[str, Any]], ...]:
    """Steps with plain dicts for params (read-only views do not pickle), tuples kept."""
    out = []
    for name, params in steps:
        kwargs = dict(params)
        if name in NESTING:
            kwargs["augmentations"] = plain_steps(params["augmentations"])
        out.append((name, kwargs))
    return tuple(out)


def _instantiate(steps: tuple[Step, ...]) -> list[Any]:
    augraphy = require_augment("augraphy")
    built = []
    for name, params in steps:
        # copies: Augraphy mutates some parameters in place (BadPhotoCopy's lists)
        kwargs = {k: copy.deepcopy(v) for k, v in params.items() if k != "augmentations"}
        if name in NESTING:
            kwargs["augmentations"] = _instantiate(params["augmentations"])
        built.append(getattr(augraphy, name)(**kwargs))
    return built


def make_pipeline(spec: Any, *, allow_unsafe: bool = False) -> Any:
    """Build an ``augraphy.AugraphyPipeline`` from a spec checked against the envelope.

    Parameters
    ----------
    spec : str, PipelineSpec or mapping
        A name in :data:`PIPELINES`, a :class:`PipelineSpec`, or a mapping
        ``{"ink": [...], "paper": [...], "post": [...]}`` of ``(augmentation_name,
        params)`` steps (any phase may be left out).
    allow_unsafe : bool, default False
        Build a pipeline outside the OCR-safe envelope instead of raising.

    Returns
    -------
    augraphy.AugraphyPipeline

    Raises
    ------
    EnvelopeError
        A parameter (or the Augraphy default of one left out) is outside the envelope; the
        message names the pipeline, phase, step, augmentation, parameter, limit and value
        of the first breach and counts the rest; ``violations`` lists them all.
    ValidationError
        A malformed spec, an unknown augmentation or parameter, or an augmentation that
        downloads (``Scribbles``; ``BindingsAndFasteners(use_figshare_library=1)``), even
        with ``allow_unsafe=True``.
    ImportError
        Without the ``augment`` extra.

    Notes
    -----
    Augmentations draw some choices when they are constructed (``OneOf`` picks its
    branch), from Python's global ``random`` state. For reproducible pixels use
    :func:`degrade`, which seeds every generator and then builds the pipeline.

    Examples
    --------
    >>> pipeline = make_pipeline("skew_jpeg")  # doctest: +SKIP
    >>> make_pipeline({"post": [("Jpeg", {"quality_range": (25, 95)})]})  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    confcal.extras.augment.EnvelopeError: pipeline 'custom' must stay inside the OCR-safe envelope;
    found 1 violation: phase 'post', post[0] Jpeg.quality_range: jpeg_quality must be within [70,
    95]; found (25, 95) (pass allow_unsafe=True to build it anyway)
    """
    spec = as_spec(spec, "spec")
    check_spec(spec, allow_unsafe)
    return build_pipeline(spec.ink, spec.paper, spec.post)


def build_pipeline(ink: Any, paper: Any, post: Any) -> Any:
    augraphy = require_augment("augraphy")
    return augraphy.AugraphyPipeline(
        ink_phase=_instantiate(ink), paper_phase=_instantiate(paper),
        post_phase=_instantiate(post), overlay_type=BASE_BLEND,
        # Augraphy's default 0.3 is not below the overlay limit; the "min" blend does not
        # read it, but nothing in a built pipeline sits outside the envelope
        overlay_alpha=0.25)


# ---------------------------------------------------------------------------------------
# the worker process
# ---------------------------------------------------------------------------------------
@functools.cache
def numba_seeder() -> Any:
    numba = require_augment("numba")

    @numba.njit(cache=False)
    def seed(value: int) -> None:  # pragma: no cover - compiled
        # numba keeps its own generators for `random` and `np.random` (per thread);
        # seeding from Python would only reach the interpreter's
        random.seed(value)
        np.random.seed(value)

    return seed


class _Worker:
    """The worker process and the lock that gives it one request at a time."""

    def __init__(self) -> None:
        env = dict(os.environ)
        # the child imports this very confcal, whatever put it on the parent's path
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "confcal.extras.augment._worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.lock = threading.Lock()

    def call(self, array: np.ndarray, steps: Mapping[str, Any], seed: int) -> np.ndarray:
        assert self.process.stdin is not None and self.process.stdout is not None
        with self.lock:
            answered = False
            try:
                write_message(self.process.stdin, (array, steps, seed))
                status, value = read_message(self.process.stdout)
                answered = True
            except (EOFError, OSError):
                try:
                    code = self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    code = None
                raise RuntimeError(
                    f"the Augraphy worker process ended while degrading a page (exit status "
                    f"{code}; out of memory, or killed); the next call starts a new one"
                ) from None
            finally:
                if not answered:
                    # an exchange cut short (KeyboardInterrupt, a signal handler's exception)
                    # leaves half a request or an unread reply in the pipes: the next call
                    # would hang or get this call's page, so this worker is ended and the
                    # next call starts a new one
                    self.process.kill()
                    self.process.wait()
        if status == "error":
            raise value
        return value  # type: ignore[no-any-return]

    def stop(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def _worker() -> _Worker:
    with _WORKER_LOCK:
        if _WORKER and _WORKER[0].process.poll() is not None:
            _WORKER.pop().stop()  # it died: start a new one
        if not _WORKER:
            _WORKER.append(_Worker())
        return _WORKER[0]


def stop_worker() -> None:
    """Stop the worker process, if one runs (the next :func:`degrade` starts a new one)."""
    with _WORKER_LOCK:
        while _WORKER:
            _WORKER.pop().stop()


atexit.register(stop_worker)


def degrade_array(array: np.ndarray, spec: PipelineSpec, seed: int,
                  allow_unsafe: bool) -> np.ndarray:
    """Degrade a checked page (BGR(A) or gray uint8) with a spec, in the worker process."""
    check_spec(spec, allow_unsafe)
    if not any(spec[phase] for phase in PHASES):
        return array.copy()  # nothing to do: the page itself, bit for bit
    steps = {phase: plain_steps(spec[phase]) for phase in PHASES}
    require_augment("augraphy")  # the extra's ImportError here, not the worker's
    return _worker().call(array, steps, seed)



def _from_pil(image: Any) -> tuple[np.ndarray, str]:
    mode = image.mode
    if mode not in ("L", "RGB", "RGBA"):
        raise ValidationError(f"image must be a PIL image in mode 'L', 'RGB' or 'RGBA'; "
                              f"found mode {mode!r}")
    array = np.asarray(image)
    if mode == "RGB":
        array = array[:, :, ::-1]  # OpenCV order: Augraphy's colors are BGR
    elif mode == "RGBA":
        array = array[:, :, [2, 1, 0, 3]]
    return np.ascontiguousarray(array), mode


def check_image(image: Any, name: str = "image") -> tuple[np.ndarray, str | None]:
    """A uint8 BGR(A)/gray array and the PIL mode to return (None for an array input)."""
    if type(image).__module__.startswith("PIL."):
        array, mode = _from_pil(image)
    elif isinstance(image, np.ndarray):
        array, mode = image, None
    else:
        raise ValidationError(f"{name} must be a numpy array (OpenCV's BGR order) or a PIL "
                              f"image; found {type(image).__name__}")
    if array.dtype != np.uint8:
        raise ValidationError(f"{name} must hold uint8 pixels; found dtype {array.dtype}")
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if not (array.ndim == 2 or (array.ndim == 3 and array.shape[2] in (3, 4))):
        raise ValidationError(f"{name} must be (height, width) gray or (height, width, 3|4) "
                              f"color; found shape {array.shape}")
    if min(array.shape[:2]) < MIN_SIDE:
        raise ValidationError(f"{name} must be at least {MIN_SIDE} x {MIN_SIDE} pixels "
                              f"(Augraphy's minimum); found {array.shape[1]} x {array.shape[0]}")
    return array, mode


def match_input(output: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The output with the input's size and channel count (and alpha)."""
    cv2 = require_augment("cv2")
    if output.ndim == 3 and output.shape[2] == 1:
        output = output[:, :, 0]
    if output.shape[:2] != like.shape[:2]:
        # Geometric padding and Faxify scaling change the page size; the caller's page keeps
        # its size (and its words their place) by scaling back to it
        output = cv2.resize(output, (like.shape[1], like.shape[0]), interpolation=cv2.INTER_AREA)
    channels = 1 if like.ndim == 2 else like.shape[2]
    have = 1 if output.ndim == 2 else output.shape[2]
    if channels == 1 and have != 1:
        output = cv2.cvtColor(output, cv2.COLOR_BGR2GRAY if have == 3 else cv2.COLOR_BGRA2GRAY)
    elif channels == 3 and have != 3:
        output = cv2.cvtColor(output, cv2.COLOR_GRAY2BGR if have == 1 else cv2.COLOR_BGRA2BGR)
    elif channels == 4:
        color = {1: lambda o: cv2.cvtColor(o, cv2.COLOR_GRAY2BGR), 3: lambda o: o,
                 4: lambda o: o[:, :, :3]}[have](output)
        # the input's alpha, unchanged: degradations act on what is printed, not on the
        # caller's cut-out
        output = np.dstack([color, like[:, :, 3]])
    return np.ascontiguousarray(output, dtype=np.uint8)



def degrade(image: Any, pipeline: Any, *, seed: int, allow_unsafe: bool = False) -> Any:
    """Degrade one page with one pipeline; the same seed gives the same pixels.

    Parameters
    ----------
    image : numpy.ndarray or PIL.Image.Image
        uint8 pixels, at least 30 x 30: a ``(height, width)`` gray array or a
        ``(height, width, 3|4)`` array in OpenCV's BGR(A) order (as ``cv2.imread`` gives),
        or a PIL image in mode ``L``, ``RGB`` or ``RGBA``.
    pipeline : str, PipelineSpec or mapping
        A name in :data:`PIPELINES` or a spec (see :func:`make_pipeline`). Not a built
        ``AugraphyPipeline``: it would have drawn its ``OneOf`` choices already.
    seed : int in [0, 2**31)
        Seeds every generator involved (module Notes); 0 is a seed like any other.
    allow_unsafe : bool, default False
        See :func:`make_pipeline`.

    Returns
    -------
    numpy.ndarray or PIL.Image.Image
        The degraded page, of the input's type, size and channel count (and PIL mode).

    Raises
    ------
    EnvelopeError, ValidationError, ImportError
        As :func:`make_pipeline`; an image of another type, dtype, shape or below 30 px.

    Notes
    -----
    Augraphy prints the ink onto a three-channel paper, so a gray page comes back
    converted to gray, a transparent page gets its own alpha channel back unchanged, and
    a page whose size a step changed (padding, fax scaling) is scaled back to the input's
    size with area interpolation. An empty pipeline returns a copy of the input, bit for
    bit. Augraphy runs in a worker process (module docstring): no generator, working
    directory or numba setting of the calling process changes, and threads may call
    ``degrade`` concurrently (the worker takes one page at a time).

    Examples
    --------
    >>> import numpy as np
    >>> page = np.full((150, 200), 255, dtype=np.uint8)
    >>> page[60:70, 20:180] = 0                      # a line of "text"
    >>> out = degrade(page, "skew_jpeg", seed=7)     # doctest: +SKIP
    >>> out.shape, out.dtype                         # doctest: +SKIP
    ((150, 200), dtype('uint8'))
    >>> bool((degrade(page, "skew_jpeg", seed=7) == out).all())  # doctest: +SKIP
    True
    >>> bool((degrade(page, {}, seed=7) == page).all())  # the identity, no Augraphy run
    True
    """
    array, mode = check_image(image)
    spec = as_spec(pipeline)
    seed = check_seed(seed, optional=False, limit=SEED_LIMIT)
    if not any(spec[phase] for phase in PHASES):
        check_spec(spec, allow_unsafe)
        # the identity, bit for bit: no augmentation and no base blend
        return image.copy()
    output = degrade_array(array, spec, seed, allow_unsafe)
    if mode is None:
        return output
    from PIL import Image

    if mode == "RGB":
        output = output[:, :, ::-1]
    elif mode == "RGBA":
        output = output[:, :, [2, 1, 0, 3]]
    return Image.fromarray(np.ascontiguousarray(output), mode=mode)

