"""How far the rule judge can be trusted: its verdicts on the labelled judge cases.

Reads ``tests/data/qa_judge_cases.jsonl`` (hand-labelled answers: ``label`` is what a
careful human grader says, ``adversarial`` marks wrong answers that look right and right
answers that look wrong) and prints, for the whole set, its adversarial and ordinary halves
and every ``kind``:

- ``decided``: the share of answers the judge scores 1 or 0 (the rest are undecided);
- ``agreement``: the share of decided answers whose score equals the label;
- ``false positives``: answers the judge calls correct that the label says are wrong, as a
  count and as a share of the wrong answers (label 0) in the group;

and, below the table, the adversarial share of the set, its false positives and its false
negatives (right answers the judge calls wrong).

Run ``python scripts/rule_judge_accuracy.py`` (``--json`` for the figures as JSON).
``tests/qa/test_rule_judge.py`` calls :func:`measure` and asserts the targets.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "data" / "qa_judge_cases.jsonl"
_FIELDS = ("id", "question", "reference", "answer", "qtype", "domain", "label",
           "adversarial", "kind", "note")


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    """The labelled cases, each checked for its fields; an error names the line."""
    cases = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            case = json.loads(line)
            missing = [k for k in _FIELDS if k not in case]
            if missing:
                raise ValueError(f"{path}:{line_no}: missing field(s) {', '.join(missing)}")
            if case["label"] not in (0, 1) or not isinstance(case["adversarial"], bool):
                raise ValueError(f"{path}:{line_no}: label must be 0 or 1 and adversarial a "
                                 f"boolean; found {case['label']!r}, {case['adversarial']!r}")
            cases.append(case)
    return cases


def _figures(rows: list[tuple[Mapping[str, Any], int | None]]) -> dict[str, Any]:
    n = len(rows)
    decided = [(c["label"], s) for c, s in rows if s is not None]
    agree = sum(label == s for label, s in decided)
    wrong = sum(c["label"] == 0 for c, _ in rows)
    fp = sum(c["label"] == 0 and s == 1 for c, s in rows)
    fn = sum(c["label"] == 1 and s == 0 for c, s in rows)
    return {
        "n": n,
        "decided": len(decided),
        "decided_share": len(decided) / n if n else float("nan"),
        "agreement": agree / len(decided) if decided else float("nan"),
        "label_0": wrong,
        "false_positives": fp,
        "false_positive_rate": fp / wrong if wrong else float("nan"),
        "false_negatives": fn,
    }


def measure(cases: Iterable[Mapping[str, Any]], judge: Any = None) -> dict[str, Any]:
    """Judge every case and compute the figures overall, by half and by kind.

    Returns a dict with ``overall``, ``adversarial``, ``ordinary`` and ``by_kind`` (a dict
    of kind to figures), and ``verdicts`` (id, label, score, rule) for every case.
    """
    if judge is None:
        from confcal.qa.docqa import RuleJudge
        judge = RuleJudge()
    rows: list[tuple[Mapping[str, Any], int | None]] = []
    verdicts = []
    for case in cases:
        v = judge.judge(case["question"], case["answer"], case["reference"],
                        qtype=case["qtype"])
        rows.append((case, v.score))
        verdicts.append({"id": case["id"], "kind": case["kind"], "label": case["label"],
                         "score": v.score, "rule": v.rule, "reason": v.reason})
    kinds = sorted({c["kind"] for c, _ in rows})
    return {
        "overall": _figures(rows),
        "adversarial": _figures([r for r in rows if r[0]["adversarial"]]),
        "ordinary": _figures([r for r in rows if not r[0]["adversarial"]]),
        "by_kind": {k: _figures([r for r in rows if r[0]["kind"] == k]) for k in kinds},
        "verdicts": verdicts,
    }


def _pct(x: float) -> str:
    return "-" if x != x else f"{100 * x:.1f}%"


def table(figures: Mapping[str, Any]) -> str:
    """The figures as a Markdown table."""
    lines = ["| cases | n | decided | agreement on decided | false positives (of label 0) |",
             "|---|---:|---:|---:|---:|"]
    groups = [("all", figures["overall"]), ("adversarial", figures["adversarial"]),
              ("ordinary", figures["ordinary"])]
    groups += [(f"kind: {k}", f) for k, f in figures["by_kind"].items()]
    for name, f in groups:
        lines.append(f"| {name} | {f['n']} | {_pct(f['decided_share'])} | "
                     f"{_pct(f['agreement'])} | {f['false_positives']} of {f['label_0']} |")
    overall, adversarial = figures["overall"], figures["adversarial"]
    share = adversarial["n"] / overall["n"] if overall["n"] else float("nan")
    lines += ["", f"adversarial share: {adversarial['n']} of {overall['n']} ({_pct(share)}); "
                  f"false positives: {overall['false_positives']} of {overall['label_0']} "
                  f"wrong answers; false negatives: {overall['false_negatives']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--disagreements", action="store_true",
                        help="also list the decided cases where judge and label differ")
    args = parser.parse_args(argv)
    figures = measure(load_cases(args.cases))
    if args.json:
        print(json.dumps({k: v for k, v in figures.items() if k != "verdicts"}, indent=2))
    else:
        print(table(figures))
    if args.disagreements:
        for v in figures["verdicts"]:
            if v["score"] is not None and v["score"] != v["label"]:
                print(f"{v['id']} {v['kind']}: label {v['label']}, judge {v['score']} "
                      f"({v['rule']}: {v['reason']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
