"""The ConfBench protocol end to end, offline: degrade, extract, score, compare.

1. Render a few synthetic FCC invoices and degrade each with four Augraphy pipelines
   (confcal.extras.augment), keeping the undegraded page as the baseline.
2. Start a stand-in model on 127.0.0.1 that speaks the OpenAI chat-completions protocol,
   and extract every page under three modalities (OCR only, image only, OCR + image) and
   both confidence strategies (verbalized top-4, token log-probabilities) with
   confcal.extras.extraction.run_extraction. Answers are cached, so a second run is free.
3. Score with confcal.score_documents, then compare calibration per (modality, strategy)
   with confcal.calibration_report, list each pipeline's degradation tier and the
   catastrophic failures, and draw reliability diagrams if matplotlib is installed.

Nothing here reaches the network. The stand-in model and OCR are simulations: the model
recognises which demo page it was shown, reads the OCR words it was sent, and answers the
truth or a plausible misreading, more often wrong and less sure on worse pages. The
numbers show the protocol working, not any real model.

Needs the ``augment`` and ``models`` extras:  python examples/confbench_protocol.py [--out DIR]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import math
import random
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pandas as pd
from PIL import Image

import confcal
from confcal.extras.augment import degrade_corpus
from confcal.extras.clients import OpenAICompatibleClient
from confcal.extras.extraction import MODALITIES, run_extraction
from confcal.report.degradation import catastrophic_failures, degradation_tiers
from confcal.scoring.presets import FCC_INVOICE

PIPELINES = ["stains", "skew_jpeg", "shadow_lighting", "fax_letterpress"]
PAGE = (800, 1000)  # width, height: fits the 1200 x 1000 box, so pages are sent unscaled


# ----------------------------------------------------------------------------- pages
def make_truths(n: int, seed: int = 7) -> dict[str, dict[str, Any]]:
    rng = random.Random(seed)
    agencies = ["ACME Media Buying", "Blue Ridge Advertising", "Northstar Media",
                "Harbor Lane Partners", "Civic Voice Group", "Prairie Ad Works"]
    advertisers = ["Friends of Dana Lee", "Vote Morales 2024", "Citizens for Parks",
                   "Keep Ohio Working", "Smith for Senate", "Clean Water Now"]
    programs = ["Evening News", "Morning Show", "Local Sports", "Late Movie", "Weekend Talk"]
    truths = {}
    for i in range(n):
        items = []
        for _ in range(rng.randint(2, 3)):
            day = rng.randint(1, 20)
            items.append({"StartDate": f"2024-03-{day:02d}", "EndDate": f"2024-03-{day + 6:02d}",
                          "Days": rng.choice(["M-F", "Sa-Su", "M-Su"]),
                          "Description": rng.choice(programs),
                          "Rate": float(rng.choice([150, 275, 420, 800, 1250]))})
        gross = sum(item["Rate"] for item in items)
        truths[f"inv-{i + 1}"] = {
            "Agency": agencies[i % len(agencies)], "Advertiser": advertisers[i % len(advertisers)],
            "GrossTotal": gross, "PaymentTerms": rng.choice(["Net 30", "Net 15", "Due on receipt"]),
            "AgencyCommission": round(gross * 0.15, 2), "NetAmountDue": round(gross * 0.85, 2),
            "LineItems": items}
    return truths


def page_lines(truth: dict[str, Any]) -> list[str]:
    lines = [f"Agency: {truth['Agency']}", f"Advertiser: {truth['Advertiser']}",
             f"Terms: {truth['PaymentTerms']}", "", "Start End Days Program Rate"]
    for item in truth["LineItems"]:
        start = item["StartDate"].split("-")
        end = item["EndDate"].split("-")
        lines.append(f"{start[1]}/{start[2]}/{start[0]} {end[1]}/{end[2]}/{end[0]} "
                     f"{item['Days']} {item['Description']} {item['Rate']:,.2f}")
    lines += ["", f"Gross total: {truth['GrossTotal']:,.2f}",
              f"Agency commission: {truth['AgencyCommission']:,.2f}",
              f"Net amount due: {truth['NetAmountDue']:,.2f}"]
    return lines


def render(truth: dict[str, Any]) -> np.ndarray:
    page = np.full((PAGE[1], PAGE[0], 3), 255, dtype=np.uint8)
    cv2.putText(page, "INVOICE", (40, 70), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (0, 0, 0), 3)
    for i, line in enumerate(page_lines(truth)):
        cv2.putText(page, line, (40, 140 + 48 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.75, (0, 0, 0), 2)
    return page


def thumbnail(image: Image.Image | np.ndarray) -> np.ndarray:
    if isinstance(image, np.ndarray):
        image = Image.fromarray(image if image.ndim == 2 else image[:, :, ::-1])
    return np.asarray(image.convert("L").resize((40, 50)), dtype=np.float64) / 255


def stand_in_ocr(truth: dict[str, Any], damage: float, variant: str) -> list[tuple[str, float]]:
    """Words in reading order with an engine-like confidence that falls with damage."""
    rng = random.Random(f"ocr|{variant}")
    words = [w for line in page_lines(truth) for w in line.split()]
    return [(w, round(min(1.0, max(0.05, 0.97 - 1.5 * damage + rng.gauss(0, 0.04))), 2))
            for w in words]


# ------------------------------------------------------------------- the stand-in model
def misread(value: Any, rng: random.Random) -> Any:
    if isinstance(value, float):
        return round(value * rng.choice([0.1, 10, 1.08, 0.92]), 2)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return value[:-2] + f"{min(28, int(value[-2:]) + rng.choice([1, 3, 10])):02d}"
    swaps = {"o": "0", "l": "1", "e": "c", "a": "o", "n": "m", "S": "5"}
    chars = list(value)
    for i in rng.sample(range(len(chars)), k=max(1, len(chars) // 3)):
        chars[i] = swaps.get(chars[i], chars[i].upper() if chars[i].islower() else "x")
    return "".join(chars)


class StandInModel:
    """Answers chat-completions requests for the demo pages it was built with."""

    def __init__(self, truths: dict[str, Any], pages: dict[str, dict[str, Any]]) -> None:
        self.truths = truths
        self.pages = pages  # variant -> {"source", "thumb", "damage", "ocr_text"}
        self.by_ocr = {p["ocr_text"]: v for v, p in pages.items()}

    def identify(self, text: str, image: Image.Image | None) -> str:
        if image is not None:  # the nearest thumbnail among the demo pages
            thumb = thumbnail(image)
            return min(self.pages, key=lambda v: float(((self.pages[v]["thumb"] - thumb) ** 2)
                                                     .sum()))
        block = text.split("(0 to 1):\n", 1)[1].strip()
        return self.by_ocr[block]

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        content = body["messages"][1]["content"]
        text = content if isinstance(content, str) else content[-1]["text"]
        image = None
        if not isinstance(content, str):
            data = content[0]["image_url"]["url"].split(",", 1)[1]
            image = Image.open(io.BytesIO(base64.b64decode(data)))
        variant = self.identify(text, image)
        page = self.pages[variant]
        ocr_conf = [float(x) for x in re.findall(r"\t([01]\.\d+)", text)]
        seen = [page["damage"]] if image is not None else []
        if ocr_conf:
            seen.append(1 - float(np.mean(ocr_conf)))
        difficulty = min(seen)  # two views of the page help
        modality = ("ocr+image" if image is not None and ocr_conf
                    else "image" if image is not None else "ocr")
        logprob = bool(body.get("logprobs"))
        leaves = self.read(self.truths[page["source"]], difficulty,
                           f"{variant}|{modality}|{logprob}")
        if logprob:
            return self.logprob_answer(leaves)
        match = re.search(r"top (\d+) candidate", text)
        return self.verbalized_answer(leaves, int(match.group(1)) if match else 4)

    @staticmethod
    def read(truth: dict[str, Any], difficulty: float, key: str) -> dict[str, Any]:
        """Per leaf: (value, alternative, confidence), right less often on harder pages."""
        rng = random.Random(key)

        def leaf(name: str, value: Any) -> tuple[Any, Any, float]:
            p_right = min(0.98, max(0.05, 0.96 - 1.2 * difficulty - (0.05 if name == "Days"
                                                                      else 0.0)))
            right = rng.random() < p_right
            confidence = min(0.99, max(0.05, p_right + rng.gauss(0.08, 0.12)))
            wrong = misread(value, rng)
            return (value, wrong, confidence) if right else (wrong, value, confidence)

        doc: dict[str, Any] = {}
        for name, value in truth.items():
            if name == "LineItems":
                doc[name] = [{k: leaf(k, v) for k, v in item.items()} for item in value]
            else:
                doc[name] = leaf(name, value)
        return doc

    @staticmethod
    def verbalized_answer(leaves: dict[str, Any], k: int) -> dict[str, Any]:
        def candidates(leaf: tuple[Any, Any, float]) -> list[dict[str, Any]]:
            value, alternative, confidence = leaf
            # verbalized probabilities come rounded and a little overconfident
            top = round(min(0.99, confidence + 0.1) * 20) / 20
            out = [{"value": value, "probability": top}]
            if k > 1 and top < 0.99:  # the runner-up: less likely than the answer
                out.append({"value": alternative,
                            "probability": round(min(1 - top, top / 2), 2)})
            return out

        answer = {name: ([{k2: candidates(v2) for k2, v2 in item.items()} for item in leaf]
                         if name == "LineItems" else candidates(leaf))
                  for name, leaf in leaves.items()}
        return completion(json.dumps(answer))

    @staticmethod
    def logprob_answer(leaves: dict[str, Any]) -> dict[str, Any]:
        tokens: list[tuple[str, float]] = []  # (token, probability)

        def emit(text: str) -> None:
            tokens.append((text, 0.999))

        def value(leaf: tuple[Any, Any, float]) -> None:
            spelled = json.dumps(leaf[0])
            emit(spelled[0] if spelled.startswith('"') else "")
            body = spelled.removeprefix('"')
            body, tail = (body[:-1], '"') if spelled.startswith('"') else (body, "")
            pieces = [body[i:i + 3] for i in range(0, len(body), 3)]
            tokens.append((pieces[0], leaf[2]))  # the first value token carries the doubt
            tokens.extend((p, 0.995) for p in pieces[1:])
            if tail:
                emit(tail)

        emit("{")
        for i, (name, leaf) in enumerate(leaves.items()):
            emit(("" if i == 0 else ", ") + json.dumps(name) + ": ")
            if name == "LineItems":
                emit("[")
                for j, item in enumerate(leaf):
                    emit(("" if j == 0 else ", ") + "{")
                    for m, (sub, sub_leaf) in enumerate(item.items()):
                        emit(("" if m == 0 else ", ") + json.dumps(sub) + ": ")
                        value(sub_leaf)
                    emit("}")
                emit("]")
            else:
                value(leaf)
        emit("}")
        tokens = [(t, p) for t, p in tokens if t]
        content = [{"token": t, "logprob": math.log(p),
                    "top_logprobs": [{"token": t, "logprob": math.log(p)},
                                     {"token": "?", "logprob": math.log(max(1e-6, 1 - p))}]}
                   for t, p in tokens]
        return completion("".join(t for t, _ in tokens), content)


def completion(text: str, logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": text}}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"object": "chat.completion", "model": "stand-in", "choices": [choice]}


def serve(model: StandInModel) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = json.dumps(model.answer(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


# ------------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="confbench-demo", help="output folder")
    parser.add_argument("--pages", type=int, default=4, help="invoices to render")
    args = parser.parse_args()
    out = Path(args.out)

    # 1. pages and their degraded variants
    truths = make_truths(args.pages)
    corpus = degrade_corpus({doc: render(t) for doc, t in truths.items()}, PIPELINES, seed=2026,
                            out_dir=out / "pages", progress=False)
    pages, documents = {}, {}
    originals = {r.doc_id: thumbnail(Image.open(r.path)) for r in corpus.itertuples()
                 if r.pipeline == "original"}
    for r in corpus.itertuples():
        variant = f"{r.doc_id}__{r.pipeline}"
        thumb = thumbnail(Image.open(r.path))
        # how far the grey levels of the page's middle moved, whatever moved where: a
        # skewed page (dark corners aside) is no harder to read, a stained or dim one is
        middle = (slice(5, 45), slice(4, 36))
        shift = np.abs(np.sort(thumb[middle], axis=None)
                       - np.sort(originals[r.doc_id][middle], axis=None))
        damage = min(1.0, float(shift.mean()) / 0.3)
        ocr = stand_in_ocr(truths[r.doc_id], damage, variant)
        pages[variant] = {"source": r.doc_id, "pipeline": r.pipeline, "thumb": thumb,
                          "damage": damage,
                          "ocr_text": "\n".join(f"{w}\t{c:.2f}" for w, c in ocr)}
        documents[variant] = {"image": r.path, "ocr": ocr}
    print(f"{len(corpus)} pages: {args.pages} invoices x (original + {len(PIPELINES)} "
          f"pipelines) in {out / 'pages'}")

    # 2. extraction under every modality and strategy, against the local stand-in
    httpd = serve(StandInModel(truths, pages))
    client = OpenAICompatibleClient(f"http://127.0.0.1:{httpd.server_address[1]}/v1",
                                    "stand-in", api_key_env=None, timeout=30)
    truth_docs = {v: truths[p["source"]] for v, p in pages.items()}
    tables = []
    try:
        for modality in MODALITIES:
            # the paper's two strategies (the stand-in does not play the two-stage scorer)
            for strategy in ("verbalized", "logprob"):
                # the paper decodes its logprob pass greedily (temperature 0, top_p 0.1); a
                # self-hosted server takes both, and the verbalized pass sends none
                sampling = ({"temperature": 0.0, "top_p": 0.1} if strategy == "logprob"
                            else None)
                run = run_extraction(client, documents, modality=modality, strategy=strategy,
                                     sampling=sampling, cache_dir=out / "cache",
                                     progress=False)
                if run.failures:
                    print(f"{modality}/{strategy}: {len(run.failures)} failed:",
                          next(iter(run.failures.values()))["message"])
                metadata = {v: {**run.metadata[v], "pipeline": pages[v]["pipeline"],
                                "source": pages[v]["source"]} for v in pages}
                result = confcal.score_documents(FCC_INVOICE, truth_docs, run.predictions,
                                                 metadata=metadata)
                tables.append(result.entities)
    finally:
        httpd.shutdown()
        httpd.server_close()
    entities = pd.concat(tables, ignore_index=True)

    # 3. the comparison table: one calibration report per (modality, strategy)
    rows = []
    for (modality, strategy), group in entities.groupby(["modality", "strategy"], sort=False):
        has = group["confidence"].notna()
        report = confcal.calibration_report(group.loc[has, "correct"],
                                            group.loc[has, "confidence"], budgets=[0.3])
        rows.append({"modality": modality, "strategy": strategy, "n": report.n,
                     "without_confidence": int((~has).sum()),
                     "accuracy": report.accuracy, "auroc": report.auroc, "ece": report.ece,
                     "brier": report.brier, "ecarb@0.3": report.ecarb[0.3]})
    comparison = pd.DataFrame(rows)
    comparison.to_csv(out / "comparison.csv", index=False)
    with pd.option_context("display.width", 120, "display.float_format", "{:.3f}".format):
        print("\ncalibration by modality and strategy\n" + comparison.to_string(index=False))
        tiers = degradation_tiers(entities, by=["modality", "strategy"], doc="source")
        print("\ndegradation tiers (OCR + image, verbalized)\n" + tiers.loc[
            (tiers["modality"] == "ocr+image") & (tiers["strategy"] == "verbalized"),
            ["pipeline", "n_documents", "baseline_accuracy", "accuracy", "drop", "tier"]
        ].to_string(index=False))
    failures = catastrophic_failures(entities, by=["modality", "strategy", "pipeline"])
    print(f"\ncatastrophic failures: {int(failures['catastrophic'].sum())} of {len(failures)} "
          "extractions")

    try:
        import matplotlib  # noqa: F401  (only to know whether figures can be drawn)
    except ImportError:
        print("matplotlib is not installed: no reliability diagrams")
        return
    from matplotlib.figure import Figure

    from confcal.report.plots import reliability_diagram

    figure = Figure(figsize=(13, 8), layout="constrained")
    axes = figure.subplots(2, 3).ravel()
    # six panels; a combination with no entities (all its runs failed) leaves its panel blank
    for ax, ((strategy, modality), group) in zip(
            axes, entities.groupby(["strategy", "modality"], sort=False), strict=False):
        has = group["confidence"].notna()
        reliability_diagram(group.loc[has, "correct"], group.loc[has, "confidence"],
                            n_bins=5, min_count=5, ax=ax,
                            title=f"{strategy} / {modality}", legend=False)
    figure.savefig(out / "reliability.png", dpi=80)
    print(f"reliability diagrams: {out / 'reliability.png'}")


if __name__ == "__main__":
    main()
