"""Document degradation pipelines inside an OCR-safe envelope (Augraphy).

ConfBench builds its benchmark by degrading clean invoices with 20 Augraphy pipelines and
asking how much a model's confidence still means on the degraded pages. This package holds
those pipelines and runs them reproducibly:

* :data:`PIPELINES`: 20 named :class:`PipelineSpec` objects, 8 built on Augraphy's
  ``pipeline_archetype*`` functions with their parameters pulled inside the envelope and
  12 custom ones, three under the paper's names (``custom12``: dirty-drum streaks with
  roller marks; ``custom15``: moiré on colored paper; ``custom22``: ink-phase dithering
  with a dot-matrix post phase). Each has ink, paper and post phases, a severity per phase
  (its intended tier is the highest), the tier its OCR accuracy drop measured in the
  degradation benchmark, and a one-line real-world effect.
* :func:`make_pipeline` builds an ``augraphy.AugraphyPipeline`` from a spec after checking
  it against the OCR-safe envelope (:data:`ENVELOPE`).
* :func:`degrade` degrades one page: the same seed gives the same pixels, in any process;
  an empty pipeline gives the page back bit for bit.
* :func:`degrade_corpus` degrades many pages with many pipelines and writes each variant
  with its metadata next to it.
* :func:`render_invoice` draws a demo invoice as a page to degrade, in one of the
  :data:`PAGE_DESIGNS` (DejaVu Sans, Serif or Sans Mono, shipped with matplotlib; open or
  ruled tables; 200 or 150 dpi) or any :class:`InvoiceLayout`.

A spec is a mapping ``{"ink": [...], "paper": [...], "post": [...]}`` whose phases list
``(augmentation_name, params)`` pairs: an Augraphy class name and its keyword parameters.
``("OneOf", {"augmentations": [...], "p": 0.5})`` and ``("AugmentationSequence",
{"augmentations": [...]})`` nest steps. Every :class:`PipelineSpec` is such a mapping, so a
variant is ``{**PIPELINES["stains"], "post": [("Jpeg", {"quality_range": (80, 90)})]}``.

Install with the ``augment`` extra (augraphy, opencv-python-headless, pillow, tqdm). The
package imports without them; the functions that need them raise an ImportError naming
the extra.

Notes
-----
**The OCR-safe envelope** (:data:`ENVELOPE`, checked by :func:`make_pipeline` on every
parameter, Augraphy's default included when the spec leaves it out; :data:`ENVELOPE_RULES` lists
which parameters each limit reads): rotation within ±5 degrees; JPEG quality 70 to 95;
brightness 0.7 to 1.3; gamma 0.67 to 1.5; blur radius at most 200 px (a Gaussian kernel k
read as (k - 1) / 2); fewer than 8 blur iterations; overlay alpha below 0.3; photocopy
noise concentration at most 0.3 and at most 3 noise iterations; ink bleed intensity and
severity at most 0.6; dot-matrix dots at most 5 px and median filters of radius at most 4
px; ordered-dither order at most 4; letterpress dropouts of at most 400 clusters of at most
400 points; at most 10 streaks or markup lines, at most 4 px wide; fax scale 1 to 1.5;
a geometric scale of 0.5 to 2, a shift of at most 0.05 of the page, no mirroring and no
crop; subtle noise of at most 80.
Every limit was set where the benchmark (``benchmarks/bench_degradation.py``) shows text
still read by Tesseract, on every page design it draws. A range is checked at both ends; a
value that is not a number (``"random"``) cannot be shown to be inside and is a violation.
Two augmentations are refused whatever ``allow_unsafe`` says, because they download:
``Scribbles`` (fonts) and ``BindingsAndFasteners(use_figshare_library=1)`` (images).

**Reproducibility and threads.** :func:`degrade` runs Augraphy in a worker process of its
own, spawned on first use and kept (the cost: the worker's start, about the time to import
Augraphy, once; then a copy of the page each way). There it seeds Python's ``random``,
NumPy's global generator, OpenCV's generator and numba's own generators with the seed
itself (so seed 0 is a seed), builds the pipeline only then (``OneOf`` draws its branch at
construction), runs numba on one thread and runs each call in a fresh temporary working
directory (Augraphy writes ``./augraphy_cache`` there, and ``BleedThrough``,
``PageBorder`` and ``BookBinding`` read their "other pages" from it, so a variant never
depends on pages degraded before it). Nothing of this touches the calling process: its
working directory, generators and numba threads stay as they are, whatever its other
threads do meanwhile. The ink is printed onto the paper with a ``"min"`` blend
(:data:`BASE_BLEND`), which leaves a page on white paper exactly as it was.
"""

from __future__ import annotations

from ._corpus import TOOL_PACKAGES, degrade_corpus, tool_versions
from ._degrade import BASE_BLEND, degrade, make_pipeline
from ._envelope import ENVELOPE, ENVELOPE_RULES, LIMITS, EnvelopeError, OCRSafeEnvelope
from ._registry import PIPELINES
from ._render import FONTS, PAGE_DESIGNS, InvoiceLayout, invoice_lines, render_invoice
from ._specs import PHASES, SEVERITIES, PipelineSpec

__all__ = [
    "BASE_BLEND",
    "ENVELOPE",
    "FONTS",
    "LIMITS",
    "PAGE_DESIGNS",
    "PHASES",
    "PIPELINES",
    "ENVELOPE_RULES",
    "SEVERITIES",
    "TOOL_PACKAGES",
    "EnvelopeError",
    "InvoiceLayout",
    "OCRSafeEnvelope",
    "PipelineSpec",
    "degrade",
    "degrade_corpus",
    "invoice_lines",
    "make_pipeline",
    "render_invoice",
    "tool_versions",
]
