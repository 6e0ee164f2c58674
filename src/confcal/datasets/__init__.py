"""Bundled data: the synthetic demo corpus behind ``confcal demo``.

:func:`load_demo` returns 75 **synthetic** FCC-style political-advertising invoices (ground
truth in the :data:`confcal.scoring.presets.FCC_INVOICE` schema) and the predictions of four
simulated extractors on each invoice at four degradation tiers (``clean`` and the degraded
variants ``mild``, ``moderate``, ``high``): 16 runs of 75 predicted documents.

The extractors differ in how their confidence behaves, as the model families ConfBench
compares do:

========================  ==========  =================================================
model                     leaf form   confidence
========================  ==========  =================================================
``sim-calibrated``        value       the probability of being right given the invoice,
                                      field and tier: well calibrated, moderate ranking
``sim-overconfident``     value       0.93-0.999 whatever happens
``sim-verbalized``        candidates  coarse tied top-3 probabilities 0.9 / 0.95 / 0.99,
                                      and now and then a bare value with no confidence
``sim-logprob``           value       a sharp function of the true probability (the best
                                      ranking), pushed towards 1: poorly calibrated
========================  ==========  =================================================

Errors are the ones a reader makes (garbled and confused text, digit swaps, shifted
decimals and dates, values left out, missed and invented line items) and grow with the
tier. Nothing here is a real document: the files are made by the seeded generator
``python -m confcal.datasets._generate``, which reproduces them byte for byte (see its
docstring for the simulation), and the degraded tiers are simulated by error rates, not
images.

Files (``confcal/datasets/data/``): ``truth.jsonl.gz`` and one
``predictions/<model>__<tier>.jsonl.gz`` per run, each line ``{"doc_id": ..., "document":
{...}}`` as ``confcal score`` reads them, and ``manifest.json`` describing the runs.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from .._validation import check_option
from ..exceptions import ValidationError
from ..scoring._result import ExtractionResult
from ..scoring._scoring import score_documents
from ..scoring.presets import FCC_INVOICE

__all__ = ["DemoCorpus", "DemoRun", "load_demo"]

_PACKAGE = "confcal.datasets"


@dataclass(frozen=True)
class DemoRun:
    """One simulated extractor on one degradation tier.

    Attributes
    ----------
    model : str
        ``sim-calibrated``, ``sim-overconfident``, ``sim-verbalized`` or ``sim-logprob``.
    tier : str
        ``clean``, ``mild``, ``moderate`` or ``high``.
    pipeline : str
        ``ocr+llm`` or ``vlm`` (a label: nothing is run).
    confidence_source : str
        Where the confidence comes from, in words.
    predictions : Mapping[str, dict]
        doc_id -> predicted document.

    See Also
    --------
    DemoCorpus : the corpus it belongs to.
    load_demo : loads the corpus.
    """

    model: str
    tier: str
    pipeline: str
    confidence_source: str
    predictions: Mapping[str, dict[str, Any]]

    @property
    def metadata(self) -> dict[str, str]:
        """The columns this run adds to every entity row: model, tier, pipeline,
        confidence_source."""
        return {"model": self.model, "tier": self.tier, "pipeline": self.pipeline,
                "confidence_source": self.confidence_source}


@dataclass(frozen=True)
class DemoCorpus:
    """The demo corpus: ground truth, the runs, and the manifest that describes them.

    Attributes
    ----------
    truths : Mapping[str, dict]
        doc_id -> ground-truth invoice (75).
    runs : tuple of DemoRun
        Every (model, tier) pair, models in manifest order, tiers from clean to high.
    manifest : Mapping[str, Any]
        The parsed ``manifest.json``: description (synthetic), seed, tiers with the
        degradations they stand for, models with their pipeline and confidence behaviour.

    See Also
    --------
    load_demo : loads it.
    score_documents : what its ``score`` runs.
    """

    truths: Mapping[str, dict[str, Any]]
    runs: tuple[DemoRun, ...]
    manifest: Mapping[str, Any]

    @property
    def models(self) -> tuple[str, ...]:
        """Model names, in manifest order."""
        return tuple(dict.fromkeys(r.model for r in self.runs))

    @property
    def tiers(self) -> tuple[str, ...]:
        """Tier names, from clean to high."""
        return tuple(dict.fromkeys(r.tier for r in self.runs))

    def run(self, model: str, tier: str) -> DemoRun:
        """The run of ``model`` at ``tier``.

        Examples
        --------
        >>> corpus = load_demo()
        >>> run = corpus.run("sim-verbalized", "high")
        >>> run.predictions["fcc-001"]["Agency"]["candidates"][0]["probability"] in (0.9, 0.95,
        ...                                                                          0.99)
        True
        """
        check_option(model, "model", self.models)
        check_option(tier, "tier", self.tiers)
        return next(r for r in self.runs if r.model == model and r.tier == tier)

    def score(self, *, models: Iterable[str] | None = None, tiers: Iterable[str] | None = None,
              progress: Callable[[int], None] | None = None) -> ExtractionResult:
        """Score the selected runs against the truth with FCC_INVOICE, in one result.

        Parameters
        ----------
        models, tiers : iterable of str, optional
            Restrict to these models / tiers (default: all).
        progress : callable, optional
            Called with the number of documents scored after each run (a progress bar's
            ``update``).

        Returns
        -------
        ExtractionResult
            The entity tables of the runs stacked (run order), with the metadata columns
            ``model, tier, pipeline, confidence_source``; counts added over runs
            (``counts["documents"]`` counts (document, run) pairs).

        Examples
        --------
        >>> result = load_demo().score(models=["sim-calibrated"], tiers=["clean", "high"])
        >>> sorted(result.entities["tier"].unique())
        ['clean', 'high']
        >>> result.counts["documents"]
        150
        """
        from ..scoring._results import concat_results

        wanted_models = self.models if models is None else tuple(models)
        wanted_tiers = self.tiers if tiers is None else tuple(tiers)
        for i, m in enumerate(wanted_models):
            check_option(m, f"models[{i}]", self.models)
        for i, t in enumerate(wanted_tiers):
            check_option(t, f"tiers[{i}]", self.tiers)
        selected = [r for r in self.runs if r.model in wanted_models and r.tier in wanted_tiers]
        if not selected:
            raise ValidationError("models and tiers must select at least one run; found none")
        results = []
        for run in selected:
            metadata = {doc_id: run.metadata for doc_id in self.truths}
            results.append(score_documents(FCC_INVOICE, self.truths, run.predictions,
                                           metadata=metadata))
            if progress is not None:
                progress(len(self.truths))
        return concat_results(results)


def _read_jsonl_gz(name: str, folder: str = "data") -> dict[str, dict[str, Any]]:
    data = resources.files(_PACKAGE).joinpath(f"{folder}/{name}").read_bytes()
    lines = gzip.decompress(data).decode("utf-8").splitlines()
    return {r["doc_id"]: r["document"] for r in map(json.loads, lines)}


def load_demo(corpus: str = "synthetic") -> DemoCorpus:
    """Load a bundled demo corpus: the synthetic one (75 invoices, 4 extractors x 4 tiers)
    or the OCR one (``corpus="ocr"``).

    The OCR corpus holds 6 of the same synthetic invoices drawn as pages, degraded by the 20
    ``confcal.extras.augment`` pipelines, read by Tesseract 5.3 and extracted by a template
    whose confidence is the product of the OCR word confidences (``scripts/make_ocr_corpus.py``
    made it; reading it needs neither Tesseract nor Augraphy): one run per pipeline
    (``tier`` is the pipeline's name, ``original`` the undegraded page), model
    ``tesseract-template``.

    Each call reads the package files afresh, so changing the returned documents never
    affects a later call.

    Parameters
    ----------
    corpus : {"synthetic", "ocr"}, default "synthetic"
        Which bundled corpus.

    Returns
    -------
    DemoCorpus
        ``truths`` (doc_id -> invoice), ``runs`` (16 :class:`DemoRun`, each with
        ``predictions`` doc_id -> predicted document and the run's ``metadata``), and the
        ``manifest``. ``corpus.score()`` gives the entity table of every run.

    See Also
    --------
    score_documents : score your own documents the same way.
    write_report : the report of the scored demo.

    Examples
    --------
    >>> corpus = load_demo()
    >>> len(corpus.truths), corpus.models, corpus.tiers
    (75, ('sim-calibrated', 'sim-overconfident', 'sim-verbalized', 'sim-logprob'), ('clean', 'mild',
    'moderate', 'high'))
    >>> corpus.manifest["synthetic"]
    True
    >>> sorted(corpus.truths["fcc-001"])
    ['Advertiser', 'Agency', 'AgencyCommission', 'GrossTotal', 'LineItems', 'NetAmountDue',
    'PaymentTerms']
    >>> ocr = load_demo("ocr")
    >>> len(ocr.truths), ocr.models, ocr.tiers[:3]
    (6, ('tesseract-template',), ('original', 'archetype1', 'archetype2'))
    """
    folder = {"synthetic": "data", "ocr": "ocr_data"}[check_option(corpus, "corpus",
                                                                  ("synthetic", "ocr"))]
    manifest = json.loads(resources.files(_PACKAGE).joinpath(f"{folder}/manifest.json")
                          .read_text())
    truths = _read_jsonl_gz(manifest["truth"], folder)
    runs = tuple(
        DemoRun(model=r["model"], tier=r["tier"], pipeline=r["pipeline"],
                confidence_source=r["confidence_source"],
                predictions=MappingProxyType(_read_jsonl_gz(r["file"], folder)))
        for r in manifest["runs"]
    )
    return DemoCorpus(truths=MappingProxyType(truths), runs=runs,
                      manifest=MappingProxyType(manifest))
