"""Document question answering evaluation in the style of DocBench.

A system reads a whole document and answers questions about it; a judge scores each answer
1 (right) or 0 (wrong) against a reference answer. DocBench (Zou et al., 2024) has 229
PDFs and 1,102 questions in five domains and four question types, judged by GPT-4 with
three rules: yes/no answers must agree; short answers must match the key numbers, nouns
and dates; long answers must carry the same meaning. This module evaluates that way:

- **QA records** (:func:`check_records`, :func:`load_records`, :func:`load_docbench`,
  :func:`load_sample`): one row per answer, with columns ``doc_id, question, reference,
  answer, domain, qtype`` and optionally ``evidence, confidence, system``.
- **Judges** share one call, ``judge.judge(question, answer, reference, *, qtype=None,
  evidence=None) -> Verdict``: :class:`RuleJudge` (deterministic rules, no model) and
  :class:`LLMJudge` (the three-rule prompt sent to a chat model). :func:`judge_records`
  judges every record.
- **Tables**: :func:`accuracy_table` (accuracy with :func:`wilson_interval` intervals,
  overall, by domain and by type), :func:`judge_agreement` (percent agreement and Cohen's
  kappa, e.g. a judge against human verdicts) and :func:`calibration_table` (the verdicts
  and the answers' confidences through :func:`confcal.calibration_report`).

A verdict is 1, 0 or undecided (``None``). A judge that cannot decide says so: the rule
judge leaves an answer undecided rather than guess, and a model judge's reply that is not
exactly 0 or 1 is *unparseable*. Undecided and unparseable verdicts are counted in their
own columns and never folded into right or wrong (the DocBench scripts counted an
unreadable reply as right in one table and as wrong in another).
"""


# The code lives in private modules, one per job (STYLE 16); this module is the public face.
from ._judges import JUDGE_PROMPT, ChatModel, LLMJudge, parse_judge_reply
from ._records import (
    DOCBENCH_DOMAINS,
    DOMAINS,
    QTYPES,
    RECORD_COLUMNS,
    check_records,
    load_docbench,
    load_records,
    load_sample,
)
from ._rule_judge import RuleJudge
from ._tables import accuracy_table, calibration_table, judge_agreement, wilson_interval
from ._verdicts import RULES, STATUSES, Judge, Verdict, judge_records

__all__ = [
    "DOCBENCH_DOMAINS",
    "DOMAINS",
    "JUDGE_PROMPT",
    "QTYPES",
    "RECORD_COLUMNS",
    "RULES",
    "STATUSES",
    "ChatModel",
    "Judge",
    "LLMJudge",
    "RuleJudge",
    "Verdict",
    "accuracy_table",
    "calibration_table",
    "check_records",
    "judge_agreement",
    "judge_records",
    "load_docbench",
    "load_records",
    "load_sample",
    "parse_judge_reply",
    "wilson_interval",
]
