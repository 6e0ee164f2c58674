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
  evidence=None) -> Verdict``: :class:`RuleJudge` (deterministic rules, no model),
  :class:`LLMJudge` (a prompt sent to a chat model, the reply read strictly or as the
  official DocBench evaluation reads it) and :class:`CascadeJudge` (the rule judge, then
  the model judge for what it left undecided). :func:`judge_records` judges every record.
- **Tables**: :func:`accuracy_table` (accuracy with :func:`wilson_interval` intervals,
  overall, by domain and by type; strictly or as the official notebook aggregates),
  :func:`cascade_table` (who decided what), :func:`judge_agreement` (percent agreement
  and Cohen's kappa, e.g. a judge against human verdicts or the official verdicts read by
  :func:`load_docbench_verdicts`) and :func:`calibration_table` (the verdicts and the
  answers' confidences through :func:`confcal.calibration_report`).

A verdict is 1, 0 or no score. A judge that cannot decide says so: the rule judge leaves
an answer *undecided* rather than guess, a model judge's reply its convention cannot read
is *unparseable*, and a model call that failed is *failed*. By default these are counted
in their own columns and never folded into right or wrong (the DocBench notebook counted
a reply without a digit as wrong by domain and as right by type); ``convention="docbench"``
reproduces the notebook when a published number is to be matched.
"""


# The code lives in private modules, one per job (STYLE 16); this module is the public face.
from ._judges import (
    JUDGE_PROMPT,
    CascadeJudge,
    LLMJudge,
    check_template,
    load_docbench_verdicts,
    parse_judge_reply,
)
from ._records import (
    DOCBENCH_DOMAINS,
    DOMAINS,
    NOTEBOOK_TYPES,
    QTYPES,
    RECORD_COLUMNS,
    check_records,
    load_docbench,
    load_records,
    load_sample,
)
from ._rule_judge import RuleJudge
from ._tables import (
    accuracy_table,
    calibration_table,
    cascade_table,
    judge_agreement,
    wilson_interval,
)
from ._verdicts import CONVENTIONS, RULES, STATUSES, Judge, Verdict, judge_records

__all__ = [
    "CONVENTIONS",
    "DOCBENCH_DOMAINS",
    "DOMAINS",
    "JUDGE_PROMPT",
    "NOTEBOOK_TYPES",
    "QTYPES",
    "RECORD_COLUMNS",
    "RULES",
    "STATUSES",
    "CascadeJudge",
    "Judge",
    "LLMJudge",
    "RuleJudge",
    "Verdict",
    "accuracy_table",
    "calibration_table",
    "cascade_table",
    "check_records",
    "check_template",
    "judge_agreement",
    "judge_records",
    "load_docbench",
    "load_docbench_verdicts",
    "load_records",
    "load_sample",
    "parse_judge_reply",
    "wilson_interval",
]
