"""The bundled demo corpus: shape, realism, confidence behaviours, byte-for-byte regeneration."""

from __future__ import annotations

import json
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path

import pytest

import confcal
from confcal.datasets import DemoCorpus, load_demo
from confcal.datasets import _generate as generate

DATA = Path(generate.__file__).with_name("data")


@pytest.fixture(scope="module")
def corpus() -> DemoCorpus:
    return load_demo()


@pytest.fixture(scope="module")
def entities(corpus):
    return corpus.score().entities


def _cents(text: str) -> int:
    dollars, cents = text.split(".")
    return int(dollars) * 100 + int(cents)


def test_corpus_shape_and_manifest(corpus):
    assert len(corpus.truths) == 75
    assert corpus.models == ("sim-calibrated", "sim-overconfident", "sim-verbalized",
                             "sim-logprob")
    assert corpus.tiers == ("clean", "mild", "moderate", "high")
    assert len(corpus.runs) == 16
    assert all(set(run.predictions) == set(corpus.truths) for run in corpus.runs)
    assert corpus.manifest["synthetic"] is True
    assert "synthetic" in corpus.manifest["description"].lower()
    assert corpus.manifest["tiers"]["clean"]["degradations"] == []
    assert {run.pipeline for run in corpus.runs} == {"ocr+llm", "vlm"}
    run = corpus.run("sim-logprob", "mild")
    assert run.metadata == {"model": "sim-logprob", "tier": "mild", "pipeline": "ocr+llm",
                            "confidence_source": "token log-probability"}


def test_invoices_are_fcc_shaped_and_their_amounts_add_up(corpus):
    n_items = []
    for doc_id, invoice in corpus.truths.items():
        assert set(invoice) == {"Agency", "Advertiser", "GrossTotal", "PaymentTerms",
                                "AgencyCommission", "NetAmountDue", "LineItems"}, doc_id
        items = invoice["LineItems"]
        n_items.append(len(items))
        gross = _cents(invoice["GrossTotal"])
        assert gross == sum(_cents(item["Rate"]) for item in items), doc_id
        # 15% agency commission, rounded half up to the cent; net = gross - commission
        assert _cents(invoice["AgencyCommission"]) == (gross * 15 + 50) // 100, doc_id
        assert _cents(invoice["NetAmountDue"]) == gross - _cents(invoice["AgencyCommission"])
        for item in items:
            assert item["StartDate"] <= item["EndDate"], doc_id  # ISO dates sort as text
            assert set(item) == {"StartDate", "EndDate", "Days", "Description", "Rate"}
    assert min(n_items) >= 5 and max(n_items) <= 40
    assert max(n_items) >= 30  # some long invoices, not only short ones
    # some invoices carry no payment terms: the scorer must see TN and FA rows
    assert any(t["PaymentTerms"] is None for t in corpus.truths.values())


def test_leaf_forms_follow_each_extractor(corpus):
    verbalized = corpus.run("sim-verbalized", "moderate").predictions
    tops, bare = set(), 0
    for document in verbalized.values():
        for leaf in [document["Agency"], document["GrossTotal"],
                     *(item["Rate"] for item in document["LineItems"])]:
            if isinstance(leaf, dict):
                assert set(leaf) == {"candidates"}
                probabilities = [c["probability"] for c in leaf["candidates"]]
                tops.add(probabilities[0])
                assert probabilities == sorted(probabilities, reverse=True)
                assert sum(probabilities) <= 1.0 + 1e-12
            else:
                bare += 1
    assert tops == {0.9, 0.95, 0.99}  # coarse, tied scores
    assert bare > 0  # a few leaves come with no confidence at all
    for model in ("sim-calibrated", "sim-overconfident", "sim-logprob"):
        for document in corpus.run(model, "high").predictions.values():
            leaf = document["Agency"]
            assert set(leaf) == {"value", "confidence"} and 0 <= leaf["confidence"] <= 1


def test_errors_grow_with_the_tier_for_every_extractor(entities):
    error_rate = (~entities["correct"]).groupby([entities["model"], entities["tier"]]).mean()
    for model in entities["model"].unique():
        rates = [error_rate[(model, t)] for t in ("clean", "mild", "moderate", "high")]
        assert rates == sorted(rates) and rates[-1] > 2 * rates[0], (model, rates)
    outcomes = entities.groupby("tier")["outcome"].value_counts().unstack()
    # missed line items (FN) and invented ones (FA) both grow with degradation
    assert outcomes.loc["high", "FN"] > 3 * outcomes.loc["clean", "FN"]
    assert outcomes.loc["high", "FA"] > 3 * outcomes.loc["clean", "FA"]


def test_invented_line_items_keep_their_confidence(entities):
    fa = entities[(entities["outcome"] == "FA") & entities["field"].astype(str).str.startswith(
        "LineItems.")]
    assert len(fa) > 0 and fa["confidence"].notna().mean() > 0.9
    over = fa[fa["model"] == "sim-overconfident"]["confidence"]
    assert over.min() >= 0.9  # confidently invented rows: what calibration must see


def _report(entities, model):
    rows = entities[(entities["model"] == model) & entities["confidence"].notna()]
    return confcal.calibration_report(rows["correct"], rows["confidence"])


def test_each_extractor_has_its_confidence_behaviour(entities):
    reports = {m: _report(entities, m) for m in entities["model"].unique()}
    calibrated, over = reports["sim-calibrated"], reports["sim-overconfident"]
    verbalized, logprob = reports["sim-verbalized"], reports["sim-logprob"]
    assert calibrated.ece < 0.02  # well calibrated
    assert over.ece > 0.1 and over.auroc < 0.7  # overconfident, weak ranking
    # logprob: the sharpest ranking of all, yet far from calibrated
    assert logprob.auroc == max(r.auroc for r in reports.values())
    assert logprob.auroc > 0.85 and logprob.ece > 3 * calibrated.ece
    verbal = entities[(entities["model"] == "sim-verbalized") & entities["confidence"].notna()]
    assert set(verbal["confidence"].unique()) == {0.9, 0.95, 0.99}
    assert verbalized.ece > calibrated.ece


def test_right_values_are_often_reformatted_and_still_scored_right(entities):
    right = entities[(entities["outcome"] == "TP") & (entities["model"] == "sim-verbalized")]
    amounts = right[right["field"].astype(str) == "GrossTotal"]
    assert any(str(p).startswith("$") for p in amounts["prediction"])
    dates = right[right["field"].astype(str) == "LineItems.StartDate"]
    assert any("/" in str(p) for p in dates["prediction"])
    text = right[right["field"].astype(str) == "LineItems.Description"]
    assert (text["similarity"] < 1).any()  # harmless typos: TP with partial similarity


def test_load_demo_returns_fresh_documents():
    first = load_demo()
    first.truths["fcc-001"]["Agency"] = "changed"
    assert load_demo().truths["fcc-001"]["Agency"] != "changed"


def test_generator_reproduces_the_package_files_byte_for_byte(tmp_path):
    written = generate.write(tmp_path)
    generated = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in written}
    shipped = {p.relative_to(DATA).as_posix(): p.read_bytes()
               for p in DATA.rglob("*") if p.is_file()}
    assert sorted(generated) == sorted(shipped)
    for name, data in generated.items():
        assert data == shipped[name], f"{name} differs: run python -m confcal.datasets._generate"


def test_corpus_is_small_and_declared_as_package_data():
    files = [p for p in DATA.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 5_000_000
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["confcal.datasets"]
    for path in files:
        relative = path.relative_to(DATA.parent).as_posix()
        assert any(fnmatch(relative, p) for p in patterns), f"{relative} is not package data"
    assert resources.files("confcal.datasets").joinpath("data/manifest.json").is_file()


def test_manifest_lists_every_run_file():
    manifest = json.loads((DATA / "manifest.json").read_text())
    listed = {run["file"] for run in manifest["runs"]} | {manifest["truth"], "manifest.json"}
    present = {p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file()}
    assert listed == present


def test_score_selects_runs_and_rejects_unknown_names(corpus):
    result = corpus.score(models=["sim-logprob"], tiers=["clean"])
    assert set(result.entities["model"]) == {"sim-logprob"}
    assert result.counts["documents"] == 75
    with pytest.raises(ValueError, match=r"models\[0\] must be one of .*; found 'gpt'"):
        corpus.score(models=["gpt"])
    calls = []
    corpus.score(tiers=["high"], models=["sim-calibrated", "sim-logprob"], progress=calls.append)
    assert calls == [75, 75]


def test_figures_quoted_in_the_docs(entities):
    # docs/quickstart.md and docs/concepts.md quote these pooled-by-model figures
    from confcal.report import compare_runs

    table = compare_runs(entities, by="model", budgets=(0.1, 0.3)).set_index("model")
    assert round(table.at["sim-calibrated", "ece"], 3) == 0.002
    assert round(table.at["sim-calibrated", "auroc"], 2) == 0.75
    assert round(table.at["sim-logprob", "auroc"], 2) == 0.87
    assert round(table.at["sim-logprob", "ece"], 3) == 0.096
    assert round(table.at["sim-logprob", "ecarb@0.1"], 1) == 5.2
    verbalized = table.loc["sim-verbalized"]
    assert verbalized["ecarb@0.1"] == verbalized["ecarb@0.3"]  # both cut-offs inside a tie
    logprob = entities[(entities["model"] == "sim-logprob") & entities["confidence"].notna()]
    high = logprob[logprob["confidence"] >= 0.99]
    assert round(len(high) / len(logprob), 1) == 0.9  # "nine answers in ten say 0.99 or more"
    assert round(1 / (1 - high["correct"].mean())) == 16  # "one in sixteen of those is wrong"
    quickstart = (Path(__file__).parents[1] / "docs" / "quickstart.md").read_text()
    assert "ECE 0.002 pooled" in quickstart and "AUROC 0.87, ECARB@0.1 of 5.2" in quickstart
