"""degrade_corpus: many pages, many pipelines, each variant written with its metadata."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._files import atomic_write, read_json_object
from ..._validation import check_seed
from ...exceptions import ValidationError
from .._optional import progress
from ._degrade import SEED_LIMIT, check_image, degrade_array
from ._envelope import check_spec
from ._registry import as_spec
from ._specs import EXTRA, PipelineSpec, check_name, require_augment

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TOOL_PACKAGES", "degrade_corpus", "tool_versions"]


def _variant_seed(seed: int, doc_id: str, pipeline: str) -> int:
    """A per-variant seed that is the same in every process (no salted hash())."""
    digest = hashlib.blake2b(f"{seed}\0{doc_id}\0{pipeline}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % SEED_LIMIT


def _spec_digest(spec: PipelineSpec) -> str:
    # what the pipeline does, not what was measured of it: a new measurement keeps the
    # variants degraded before it
    described = {k: v for k, v in spec.to_dict().items() if k != "measured_tier"}
    text = json.dumps(described, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def _load_source(value: Any, doc_id: str) -> tuple[np.ndarray, str | None]:
    """A page for the corpus: an array, a PIL image or an image file path."""
    if isinstance(value, (str, os.PathLike)):
        cv2 = require_augment("cv2")
        path = Path(value)
        array = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if array is None:
            raise ValidationError(f"images[{doc_id!r}] must be a readable image file; found "
                                  f"{str(path)!r}, which OpenCV cannot read")
        checked, _ = check_image(array, f"images[{doc_id!r}]")
        return checked, str(path)
    checked, _ = check_image(value, f"images[{doc_id!r}]")
    return checked, None


def _corpus_items(images: Any) -> list[tuple[str, Any]]:
    if isinstance(images, Mapping):
        items = list(images.items())
    elif isinstance(images, (str, bytes, os.PathLike)) or not isinstance(images, Iterable):
        raise ValidationError("images must be a mapping doc_id -> image (array, PIL image or "
                              f"file path) or a list of file paths; found {type(images).__name__}")
    else:
        items = []
        for i, value in enumerate(images):
            if not isinstance(value, (str, os.PathLike)):
                raise ValidationError(f"images given as a list must be file paths (the file "
                                      f"name's stem is the doc id); found "
                                      f"{type(value).__name__} at position {i}")
            items.append((Path(value).stem, value))
    if not items:
        raise ValidationError("images must not be empty; found 0 pages")
    seen: dict[str, int] = {}
    for i, (doc_id, _) in enumerate(items):
        check_name(doc_id, f"doc id at position {i}")
        if doc_id in seen:
            raise ValidationError(f"images must not repeat a doc id; found {doc_id!r} at "
                                  f"positions {seen[doc_id]} and {i}")
        seen[doc_id] = i
    return items


def _corpus_pipelines(pipelines: Any, baseline: str | None) -> list[PipelineSpec]:
    if isinstance(pipelines, Mapping):
        specs = []
        for name, spec in pipelines.items():
            s = as_spec(spec, f"pipelines[{name!r}]")
            if s.name != name:
                s = PipelineSpec(check_name(name, "pipeline name"), ink=s.ink,
                                 paper=s.paper, post=s.post, severity=s.severity,
                                 effect=s.effect, based_on=s.based_on,
                                 measured_tier=s.measured_tier)
            specs.append(s)
    elif isinstance(pipelines, (str, bytes)) or not isinstance(pipelines, Iterable):
        raise ValidationError("pipelines must be a list of names in PIPELINES / "
                              "PipelineSpec objects or a mapping name -> spec; found "
                              f"{type(pipelines).__name__}")
    else:
        specs = [as_spec(p, f"pipelines[{i}]") for i, p in enumerate(pipelines)]
    if not specs:
        raise ValidationError("pipelines must not be empty; found 0 pipelines")
    names = [s.name for s in specs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ValidationError(f"pipelines must have distinct names; found {dup!r} twice")
    if baseline is not None and baseline in names:
        raise ValidationError(f"pipelines must not use the baseline's name {baseline!r} "
                              "(the undegraded page is written under it)")
    return specs


def degrade_corpus(images: Any, pipelines: Any, *, seed: int, out_dir: str | os.PathLike[str],
                   baseline: str | None = "original", allow_unsafe: bool = False,
                   progress: bool = True) -> pd.DataFrame:
    """Degrade every page with every pipeline; write each variant with its metadata.

    Parameters
    ----------
    images : mapping of str to image, or sequence of paths
        doc_id -> page (array, PIL image or image file path), or image file paths whose
        stem is the doc id. Doc ids name files: letters, digits, ``.``, ``_``, ``-``.
    pipelines : sequence or mapping
        Names in :data:`PIPELINES` or :class:`PipelineSpec` objects, or a mapping
        name -> spec.
    seed : int in [0, 2**31)
        The corpus seed. Each variant is degraded with its own seed derived from
        ``(seed, doc_id, pipeline)`` (recorded as ``variant_seed``), so a variant does not
        depend on which other pages or pipelines are in the run.
    out_dir : path
        ``<out_dir>/<pipeline>/<doc_id>.png`` and ``<doc_id>.json`` beside it.
    baseline : str or None, default "original"
        The pipeline name under which the undegraded page is written too (tier
        ``"original"``), the baseline of :func:`confcal.report.degradation.degradation_tiers`;
        None to skip it.
    allow_unsafe : bool, default False
        See :func:`make_pipeline`.
    progress : bool, default True
        Show a tqdm progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per variant: ``doc_id, pipeline, tier, path, metadata_path, variant_seed,
        reused``. ``tier`` is :attr:`PipelineSpec.tier`: the tier measured by the
        degradation benchmark for a registered pipeline (its intended tier for a spec
        without a measurement); the drop on these very pages comes from
        :func:`~confcal.report.degradation.degradation_tiers`.

    Notes
    -----
    The metadata JSON holds ``doc_id, source (the input path or null), source_sha256,
    pipeline, tier, intended_tier, severity, effect, based_on, seed, variant_seed, spec,
    spec_sha256, image, width, height, channels, augraphy_version``. Every pipeline is
    checked before the first page is degraded. A run that is interrupted resumes: a variant whose
    metadata already records the same source, spec and seeds is kept (``reused``); one
    that records anything else is an error, never silently overwritten.

    Examples
    --------
    >>> import numpy as np
    >>> pages = {"inv-1": np.full((150, 200, 3), 255, dtype=np.uint8)}
    >>> table = degrade_corpus(pages, ["stains", "skew_jpeg"], seed=0,
    ...                        out_dir="corpus", progress=False)  # doctest: +SKIP
    >>> table[["doc_id", "pipeline", "tier"]]                     # doctest: +SKIP
      doc_id   pipeline      tier
    0  inv-1   original  original
    1  inv-1     stains  moderate
    2  inv-1  skew_jpeg  moderate
    """
    import pandas as pd

    items = _corpus_items(images)
    if baseline is not None:
        check_name(baseline, "baseline")
    specs = _corpus_pipelines(pipelines, baseline)
    seed = check_seed(seed, optional=False, limit=SEED_LIMIT)
    if not isinstance(progress, bool):
        raise ValidationError(f"progress must be True or False; found {progress!r}")
    for checked in specs:
        check_spec(checked, allow_unsafe)  # every pipeline, before any page is degraded
    cv2 = require_augment("cv2")
    augraphy_version = _version("augraphy")
    out = Path(out_dir)
    variants: list[PipelineSpec | None] = [None] if baseline is not None else []
    variants.extend(specs)
    jobs = [(doc_id, value, spec) for doc_id, value in items for spec in variants]
    bar = _progress(len(jobs), "degrading", progress)
    rows = []
    sources: dict[str, tuple[np.ndarray, str | None, str]] = {}
    try:
        for doc_id, value, spec in jobs:
            if doc_id not in sources:
                array, source = _load_source(value, doc_id)
                sources.clear()  # one page in memory at a time
                sources[doc_id] = (array, source, hashlib.sha256(array.tobytes()).hexdigest()
                                   + f":{array.shape}")
            array, source, source_digest = sources[doc_id]
            name = baseline if spec is None else spec.name
            assert name is not None
            variant_seed = _variant_seed(seed, doc_id, name)
            folder = out / name
            image_path, meta_path = folder / f"{doc_id}.png", folder / f"{doc_id}.json"
            meta = _page_meta(doc_id, source, source_digest, name, spec, seed, variant_seed,
                              image_path, array, augraphy_version)
            reused = _reusable(meta_path, image_path, meta)
            if not reused:
                output = array if spec is None else degrade_array(array, spec, variant_seed,
                                                                   allow_unsafe)
                folder.mkdir(parents=True, exist_ok=True)
                # a partial file from an interrupted run must never look like a finished one
                atomic_write(image_path, _encode_png(cv2, output, image_path))
                atomic_write(meta_path, json.dumps(meta, indent=2, default=repr) + "\n")
            rows.append({"doc_id": doc_id, "pipeline": name, "tier": meta["tier"],
                         "path": str(image_path), "metadata_path": str(meta_path),
                         "variant_seed": variant_seed, "reused": reused})
            bar.update(1)
    finally:
        bar.close()
    return pd.DataFrame(rows, columns=["doc_id", "pipeline", "tier", "path", "metadata_path",
                                       "variant_seed", "reused"])


def _page_meta(doc_id: str, source: str | None, source_digest: str, name: str, spec: Any,
               seed: int, variant_seed: int, image_path: Path, array: np.ndarray,
               augraphy_version: str | None) -> dict[str, Any]:
    """The metadata written beside one degraded page (``spec`` None: the baseline page)."""
    described = {} if spec is None else {
        "tier": spec.tier, "intended_tier": spec.intended_tier,
        "severity": dict(spec.severity), "effect": spec.effect, "based_on": spec.based_on,
        "spec": spec.to_dict(), "spec_sha256": _spec_digest(spec)}
    return {
        "doc_id": doc_id, "source": source, "source_sha256": source_digest,
        "pipeline": name,
        "tier": described.get("tier", "original"),
        "intended_tier": described.get("intended_tier", "original"),
        "severity": described.get("severity"),
        "effect": described.get("effect", "the undegraded page"),
        "based_on": described.get("based_on"),
        "seed": seed, "variant_seed": variant_seed,
        "spec": described.get("spec"), "spec_sha256": described.get("spec_sha256"),
        "image": image_path.name, "width": int(array.shape[1]),
        "height": int(array.shape[0]),
        "channels": 1 if array.ndim == 2 else int(array.shape[2]),
        "augraphy_version": augraphy_version,
    }


def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


TOOL_PACKAGES = ("augraphy", "opencv-python-headless", "pillow", "numpy", "matplotlib")
"""The packages whose versions decide a degraded page's pixels and its OCR words."""


def tool_versions() -> dict[str, str]:
    """The versions of the tools that make a degraded page and read it back.

    The Tesseract program's (through pytesseract) and those of :data:`TOOL_PACKAGES`; a
    tool that is not installed is ``"absent"``. The same versions give the same pixels
    and the same words, so a measurement or a corpus records them and compares them
    before it trusts an earlier result.

    Returns
    -------
    dict
        ``{"tesseract": "5.3.0", "augraphy": "8.2.6", ...}``: the program first, then the
        packages in the order of :data:`TOOL_PACKAGES`.

    See Also
    --------
    degrade : the pixels these versions decide.
    degrade_corpus : records the Augraphy and OpenCV versions beside each variant.

    Examples
    --------
    >>> list(tool_versions())
    ['tesseract', 'augraphy', 'opencv-python-headless', 'pillow', 'numpy', 'matplotlib']
    >>> import numpy
    >>> tool_versions()["numpy"] == numpy.__version__
    True
    """
    try:
        import pytesseract

        tesseract = str(pytesseract.get_tesseract_version())
    except (ImportError, OSError, RuntimeError):  # no pytesseract, or no program
        tesseract = "absent"
    return {"tesseract": tesseract,
            **{package: _version(package) or "absent" for package in TOOL_PACKAGES}}


def _reusable(meta_path: Path, image_path: Path, meta: dict[str, Any]) -> bool:
    """True when a finished variant with the same inputs is on disk; raise on a conflict."""
    if not meta_path.exists() and not image_path.exists():
        return False
    if not meta_path.exists():
        raise ValidationError(f"out_dir must not hold an image without its metadata; found "
                              f"{str(image_path)!r} without {meta_path.name!r}")
    try:
        raw = meta_path.read_bytes()
    except OSError as exc:
        raise ValidationError(f"out_dir metadata {str(meta_path)!r} must be readable JSON; "
                              f"found {exc}", source=meta_path) from None
    old = read_json_object(raw, where=f"out_dir metadata {str(meta_path)!r}", source=meta_path)
    keys = ("source_sha256", "pipeline", "seed", "variant_seed", "spec_sha256")
    differ = [k for k in keys if old.get(k) != meta[k]]
    if differ:
        raise ValidationError(
            f"out_dir must not hold another run's variant at {str(image_path)!r}; its "
            f"metadata differs in {differ} (use a new out_dir or remove the old files)")
    return image_path.exists()


def _encode_png(cv2: Any, image: np.ndarray, path: Path) -> bytes:
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise OSError(f"OpenCV could not encode {path} as PNG")
    return bytes(data)


def _progress(total: int, desc: str, enabled: bool) -> Any:
    return progress(total, desc, enabled, unit="page", user="confcal.extras.augment",
                    extra=EXTRA)

