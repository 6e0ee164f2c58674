"""The model judge (confcal.qa._judges): the chat protocol, templates filled verbatim, the
two reply conventions, failures recorded, the cache and resume, and the cascade.

Every model call goes to a real chat-completions server on 127.0.0.1 (tests/_chat_server.py)
through the project's real client, confcal.extras.clients.OpenAICompatibleClient.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import confcal
from _chat_server import ChatServer, Reply
from _docqa_records import llm_records, record
from _profiles import examples
from confcal._chat import ChatRequest, ChatResponse
from confcal.exceptions import ModelCallError, ValidationError
from confcal.extras.clients import OpenAICompatibleClient
from confcal.qa.docqa import (
    JUDGE_PROMPT,
    CascadeJudge,
    LLMJudge,
    RuleJudge,
    Verdict,
    accuracy_table,
    cascade_table,
    check_template,
    judge_records,
    parse_judge_reply,
)

# A DocBench-style template: the paper's four placeholders in a prompt of our own words
# (the paper's prompt text is the user's to pass; it is not shipped or copied here).
PAPER_STYLE = ("Grade it.\nQuestion: {{question}}\nUser Answer: {{sys_ans}}\n"
               "Reference Answer: {{ref_ans}}\nReference Text: {{ref_text}}\n\n- Correctness: ")


class Scripted:
    """A chat client with scripted answers (for tests that need no HTTP)."""

    provider, model, supports_logprobs = "scripted", "m", False

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []

    def complete(self, request):
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return ChatResponse(reply, "stop")


def client_for(server, **kw):
    return OpenAICompatibleClient(server.url, "judge-model", api_key_env="CONFCAL_TEST_KEY",
                                  **kw)


# ------------------------------------------------------------------- reply conventions
@pytest.mark.parametrize("reply, parsed", [
    ("1", 1),
    ("0", 0),
    ("Correctness: 1", 1),
    (" 1\n", 1),
    ("The answer is correct", None),
    ("", None),
    ("1 or 0", None),
    # more of the same rule: the digit alone, after the form's label at most
    ("- Correctness: 0", 0),
    ("correctness:1", 1),
    ("1.", None),
    ("**1**", None),
    ("10", None),
    ("Correctness: 1\nThe answer matches.", None),
    (None, None),
])
def test_judge_replies_are_parsed_strictly(reply, parsed):
    assert parse_judge_reply(reply) == parsed
    assert parse_judge_reply(reply, convention="strict") == parsed


@pytest.mark.parametrize("reply, parsed", [
    # the official rule: a "1" in the first 20 characters and no "0" is right, and back
    ("Correctness: 1\nThe user's answer matches the reference.", 1),
    ("**1**", 1),
    ("1.", 1),
    ("Score: 1", 1),
    ("Correctness: 0 (the year differs)", 0),
    ("0", 0),
    # neither digit in the first 20: the notebook counts it wrong by domain, right by type
    ("The answer is correct", None),
    ("", None),
    ("The user answer is wrong: 1", None),  # the "1" is character 28: not read
    # both digits: right by domain, wrong by type
    ("1 or 0", None),
    ("Correctness: 10", None),
    ("12345678901234567890", None),
    ("                   1", 1),  # character 20 is still inside the first 20
    ("                    1", None),  # character 21 is not
])
def test_judge_replies_are_read_as_the_official_evaluation_reads_them(reply, parsed):
    assert parse_judge_reply(reply, convention="docbench") == parsed


def test_a_reply_that_is_not_text_or_an_unknown_convention_is_an_error():
    with pytest.raises(ValidationError, match="text must be a string or None; found int"):
        parse_judge_reply(1)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="convention must be one of 'strict', "
                                              "'docbench'; found 'paper'"):
        parse_judge_reply("1", convention="paper")


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=40))
def test_the_docbench_reading_agrees_with_the_notebooks_two_tests(reply):
    # the notebook's tests, written out: right by domain when "1" in reply[:20], wrong by
    # type when "0" in reply[:20]; a score only when the two agree
    right_by_domain = "1" in reply[:20]
    wrong_by_type = "0" in reply[:20]
    parsed = parse_judge_reply(reply, convention="docbench")
    if right_by_domain != wrong_by_type:
        assert parsed == int(right_by_domain)
    else:
        assert parsed is None
    strict = parse_judge_reply(reply)
    if strict is not None:  # what strict reads, docbench reads alike when it sees the digit
        assert parsed == (strict if reply.index(str(strict)) < 20 else None)


# ------------------------------------------------------------------------- templates
def test_a_docbench_template_is_filled_verbatim():
    judge = LLMJudge(Scripted(), prompt_template=PAPER_STYLE)
    # the values go in as they are: spaces, newlines and empty evidence kept as given
    text = judge.prompt("How many?  ", " 240 cores\n", "240", evidence=None)
    assert text == ("Grade it.\nQuestion: How many?  \nUser Answer:  240 cores\n\n"
                    "Reference Answer: 240\nReference Text: \n\n- Correctness: ")
    assert judge.prompt("Q", "A", "R", evidence="") == judge.prompt("Q", "A", "R")
    # found by the property below: evidence of spaces only is text too, kept as given
    assert "Reference Text: \r\n" in judge.prompt("Q", "A", "R", evidence="\r")


def test_confcal_templates_of_users_are_filled_verbatim_too_the_default_keeps_its_wording():
    mine = LLMJudge(Scripted(), prompt_template="{question}|{answer}|{reference}|{evidence}")
    assert mine.prompt("q", "a", "r") == "q|a|r|"
    assert "Reference text: (none)" in LLMJudge(Scripted()).prompt("q", "a", "r")
    assert "Reference text: E" in LLMJudge(Scripted()).prompt("q", "a", "r", evidence="E")


def test_placeholders_inside_values_are_never_filled():
    judge = LLMJudge(Scripted(), prompt_template=PAPER_STYLE)
    text = judge.prompt("{{ref_ans}}?", "{{ref_text}} {answer}", "R", evidence="E")
    assert "Question: {{ref_ans}}?" in text and "User Answer: {{ref_text}} {answer}" in text


safe_text = st.text(st.characters(blacklist_characters="{}", blacklist_categories=("Cs",)),
                    max_size=30)


@settings(max_examples=examples(200), deadline=None)
@given(safe_text, safe_text, safe_text, safe_text)
@example("0", "0", "0", "\r")
def test_the_fill_equals_the_official_chain_of_replacements(question, answer, ref, text):
    # evaluate.py fills the template with four str.replace calls in a row; for values
    # without braces that is exactly one pass of confcal's fill
    if not answer.strip() or not question.strip() or not ref.strip():
        return
    judge = LLMJudge(Scripted(), prompt_template=PAPER_STYLE)
    official = (PAPER_STYLE.replace("{{question}}", question).replace("{{sys_ans}}", answer)
                .replace("{{ref_ans}}", ref).replace("{{ref_text}}", text))
    assert judge.prompt(question, answer, ref, evidence=text) == official


@pytest.mark.parametrize("template, message", [
    ("{{question}} {{sys_ans}} {{ref_ans}} {{reftext}}",
     "unknown placeholder {{reftext}}; the placeholders are {question}, {answer}"),
    ("{question} {answer} {reference} {other} {more} {other}",
     "unknown placeholders {other}, {more};"),
    ("{{ question }} {{sys_ans}} {{ref_ans}}", r"unknown placeholder \{\{ question \}\}"),
    ("{{question}} {{sys_ans}} {reference}",
     r"must use one placeholder style; found both \{\{question\}\}, \{\{sys_ans\}\} and "
     r"\{reference\}"),
    ("{{question}} {{ref_ans}}", r"found it without \{\{sys_ans\}\}"),
    ("{question}", r"found it without \{answer\} and \{reference\}"),
    ("", "prompt_template must be a non-empty string"),
])
def test_templates_are_checked_and_errors_name_the_placeholders(template, message):
    with pytest.raises(ValidationError, match=message):
        check_template(template)
    with pytest.raises(ValidationError, match=message):
        LLMJudge(Scripted(), prompt_template=template)


def test_braces_that_are_not_one_word_are_text():
    template = 'Reply as JSON {"score": 1}. {{question}} {{sys_ans}} {{ref_ans}} { }'
    assert check_template(template) == "docbench"
    assert check_template(JUDGE_PROMPT) == "confcal"
    text = LLMJudge(Scripted(), prompt_template=template).prompt("Q", "A", "R")
    assert text == 'Reply as JSON {"score": 1}. Q A R { }'


# ---------------------------------------------------------------- over HTTP, strictly
def test_llm_judge_against_a_real_chat_completions_server(local_http):
    script = [Reply("1"), Reply("0"), Reply("The answer is correct"), Reply("Correctness: 1")]
    with ChatServer(script) as server:
        judged = judge_records(llm_records(), LLMJudge(client_for(server)))
    assert judged["verdict_status"].tolist() == ["correct", "wrong", "unparseable", "correct",
                                                 "wrong"]
    assert judged["verdict_rule"].tolist() == ["llm", "llm", "unparseable", "llm",
                                               "empty-answer"]
    assert judged.loc[2, "verdict_reason"] == "reply: 'The answer is correct'"
    assert judged["verdict_reply"].tolist()[:4] == ["1", "0", "The answer is correct",
                                                    "Correctness: 1"]
    assert judged["verdict_convention"].tolist()[:4] == ["strict"] * 4
    # four answers asked; the empty answer never asked
    assert len(server.requests) == 4
    body = server.requests[0]["json"]
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-local-test"
    assert "temperature" not in body and body["max_tokens"] == 256
    assert body["messages"][0] == {"role": "system", "content": LLMJudge(Scripted()).system_prompt}
    first = server.user_messages()[0]
    for part in ("Question: How many cores?", "User answer: 240 cores",
                 "Reference answer: 240", "Reference text: 240 soil cores were collected.",
                 "Yes/no questions", "Short answers", "Long or abstractive answers"):
        assert part in first
    assert "Reference text: (none)" in server.user_messages()[1]
    table = accuracy_table(judged, "verdict", by=())
    assert table[["n", "correct", "wrong", "undecided", "unparseable", "failed", "judged"]
                 ].values.tolist() == [[5, 2, 2, 0, 1, 0, 4]]
    assert table.loc[0, "accuracy"] == 0.5


def test_the_paper_template_and_system_prompt_are_sent_as_given(local_http):
    with ChatServer([Reply("Correctness: 1\nThe numbers agree.")]) as server:
        judge = LLMJudge(client_for(server), prompt_template=PAPER_STYLE,
                         system_prompt="You grade.", convention="docbench")
        verdict = judge.judge("How many?", "240", "240", evidence="")
    sent = server.requests[0]["json"]["messages"]
    assert sent == [{"role": "system", "content": "You grade."},
                    {"role": "user", "content": PAPER_STYLE.replace("{{question}}", "How many?")
                     .replace("{{sys_ans}}", "240").replace("{{ref_ans}}", "240")
                     .replace("{{ref_text}}", "")}]
    assert (verdict.score, verdict.rule, verdict.convention) == (1, "llm", "docbench")


# ------------------------------------------------------------------------- failures
def test_a_failed_call_is_recorded_and_the_run_goes_on(local_http):
    script = [Reply("1"), Reply(status=400), Reply("0")]
    with ChatServer(script) as server:
        judge = LLMJudge(client_for(server))
        judged = judge_records(llm_records()[:3], judge)
    assert judged["verdict_status"].tolist() == ["correct", "failed", "wrong"]
    assert judged["verdict_rule"].tolist() == ["llm", "model-error", "llm"]
    assert judged.loc[1, "verdict_reason"].startswith("the model call failed (ModelHTTPError)")
    assert "HTTP 400" in judged.loc[1, "verdict_reason"]
    assert "sk-local-test" not in judged.to_csv()
    assert judge.counts == {"asked": 2, "cached": 0, "failed": 1, "not_asked": 0,
                            "unreadable": 0}
    table = accuracy_table(judged, "verdict", by=())
    assert table[["correct", "wrong", "failed", "judged"]].values.tolist() == [[1, 1, 1, 2]]


def test_only_model_errors_are_recorded_other_exceptions_raise():
    judge = LLMJudge(Scripted(ModelCallError("boom", attempts=3)))
    v = judge.judge("Q?", "A", "R")
    assert (v.score, v.status, v.rule) == (None, "failed", "model-error")
    with pytest.raises(RuntimeError, match="a bug"):
        LLMJudge(Scripted(RuntimeError("a bug"))).judge("Q?", "A", "R")

    class Wrong(Scripted):
        def complete(self, request):
            return "1"

    with pytest.raises(ValidationError, match="client.complete must return a ChatResponse; "
                                              "found str"):
        LLMJudge(Wrong()).judge("Q?", "A", "R")


# --------------------------------------------------------------------- cache, resume
def test_a_run_that_failed_midway_resumes_asking_only_what_is_missing(local_http, tmp_path):
    cache = tmp_path / "cache"
    records = llm_records()  # five answers, the last one empty (never asked)
    with ChatServer([Reply("1"), Reply("0"), Reply(status=400), Reply(status=400)]) as server:
        first = judge_records(records, LLMJudge(client_for(server), cache_dir=cache))
    assert len(server.requests) == 4
    assert first["verdict_status"].tolist() == ["correct", "wrong", "failed", "failed", "wrong"]
    with ChatServer([Reply("1"), Reply("1")]) as server:
        judge = LLMJudge(client_for(server), cache_dir=cache)
        second = judge_records(records, judge)
        asked = server.user_messages()
    # only the two failed answers were asked again, in order
    assert len(asked) == 2
    assert "User answer: 1 March 2025" in asked[0] and "User answer: Yes, it is." in asked[1]
    assert judge.counts == {"asked": 2, "cached": 2, "failed": 0, "not_asked": 1,
                            "unreadable": 0}
    assert second["verdict_status"].tolist() == ["correct", "wrong", "correct", "correct",
                                                 "wrong"]
    # a third run asks nothing at all
    with ChatServer([]) as server:
        third = judge_records(records, LLMJudge(client_for(server), cache_dir=cache))
    assert server.requests == [] and third["verdict"].tolist() == second["verdict"].tolist()
    # nothing secret on disk: prompts and replies only
    stored = "".join(p.read_text() for p in cache.rglob("*.json"))
    assert "sk-local-test" not in stored and "127.0.0.1" not in stored
    # a spoiled entry is asked again, counted and replaced; the others are read
    entry = sorted(cache.rglob("*.json"))[0]
    entry.write_bytes(b"\xff not json")
    with ChatServer([], responder=lambda r: Reply("1")) as server:
        judge = LLMJudge(client_for(server), cache_dir=cache)
        judge_records(records, judge)
    assert len(server.requests) == 1
    assert judge.counts == {"asked": 1, "cached": 3, "failed": 0, "not_asked": 1,
                            "unreadable": 1}
    assert json.loads(entry.read_text())["response"]["text"] == "1"


def test_a_cached_reply_is_read_again_by_either_convention(tmp_path):
    client = Scripted("**1**")
    strict = LLMJudge(client, cache_dir=tmp_path / "c").judge("Q?", "A", "R")
    assert strict.status == "unparseable"
    paper = LLMJudge(Scripted(), cache_dir=tmp_path / "c", convention="docbench")
    again = paper.judge("Q?", "A", "R")  # Scripted() has no reply left: from the cache
    assert (again.score, again.reply, paper.counts["cached"]) == (1, "**1**", 1)


def test_another_prompt_or_model_is_never_served_from_the_cache(tmp_path):
    LLMJudge(Scripted("1"), cache_dir=tmp_path / "c").judge("Q?", "A", "R")
    other = Scripted("0")
    v = LLMJudge(other, cache_dir=tmp_path / "c", system_prompt="Other.").judge("Q?", "A", "R")
    assert v.score == 0 and len(other.requests) == 1
    renamed = Scripted("0")
    renamed.model = "another-model"
    assert LLMJudge(renamed, cache_dir=tmp_path / "c").judge("Q?", "A", "R").score == 0


# ------------------------------------------------------------ the old chat protocol


@pytest.mark.parametrize("kwargs, message", [
    ({"convention": "paper"}, "convention must be one of 'strict', 'docbench'"),
    ({"max_tokens": 0}, "max_tokens must be an integer >= 1; found 0"),
    ({"system_prompt": None}, "system_prompt must be a string"),
])
def test_llm_judge_options_are_validated(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        LLMJudge(Scripted(), **kwargs)


# ------------------------------------------------------------------------- cascade
def test_the_cascade_sends_only_the_undecided_answers_to_the_model(local_http):
    long_ref = ("Sales rose because two new plants opened and the export licences were "
                "granted early in the year")
    rows = [record(doc_id="a", question="Is it signed?", reference="Yes", answer="Yes."),
            record(doc_id="b", question="Why did sales rise?", reference=long_ref,
                   answer="New plants and export licences"),
            record(doc_id="c", question="Who signed?", reference="Ann", answer=""),
            record(doc_id="d", question="Why?", reference=long_ref, answer="Weather")]
    rule = judge_records(rows, RuleJudge())
    undecided = rule.index[rule["verdict_status"] == "undecided"].tolist()
    assert undecided == [1, 3]  # the premise: the rule judge cannot judge these
    with ChatServer([Reply("1"), Reply(status=400)]) as server:
        cascade = CascadeJudge(RuleJudge(), LLMJudge(client_for(server)))
        judged = judge_records(rows, cascade)
    assert len(server.requests) == 2 and "New plants" in server.user_messages()[0]
    assert judged["verdict_rule"].tolist() == [rule.loc[0, "verdict_rule"], "llm",
                                               "empty-answer", "model-error"]
    assert judged.loc[1, "verdict_reason"].startswith("first judge undecided (long-answer")
    assert cascade.counts == {"decided_first": 2, "sent_on": 2}
    table = cascade_table(judged, "verdict")
    assert table.to_dict(orient="records") == [
        {"judge": "rule", "n": 2, "correct": 1, "wrong": 1, "undecided": 0, "unparseable": 0,
         "failed": 0},
        {"judge": "model", "n": 2, "correct": 1, "wrong": 0, "undecided": 0, "unparseable": 0,
         "failed": 1}]
    assert cascade_table(rows, [Verdict(1, "exact-match")] * 4).loc[1, "n"] == 0


def test_cascade_and_cascade_table_inputs_are_checked():
    with pytest.raises(ValidationError, match="then must have a judge"):
        CascadeJudge(RuleJudge(), object())  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="verdicts must be Verdicts \\(their rules tell "
                                              "who decided\\); found 1 value"):
        cascade_table([record()], [1])
    with pytest.raises(ValidationError, match="found no column 'v_rule'"):
        import pandas as pd

        frame = pd.DataFrame([record()])
        frame["v"] = [1]
        cascade_table(frame, "v")


def test_the_judge_is_exported_at_the_top_level():
    assert confcal.LLMJudge is LLMJudge
    assert json.loads(json.dumps(LLMJudge(Scripted()).counts)) == {
        "asked": 0, "cached": 0, "failed": 0, "not_asked": 0, "unreadable": 0}


