"""The ``confcal qa`` command (confcal.qa._command): the tables and report it writes, its
sources (records, the sample, DocBench, the model judge over HTTP) and its exit codes."""

from __future__ import annotations

import argparse
import json
import warnings

import pandas as pd
import pytest

from _chat_server import ChatServer, Reply
from _docqa_records import docbench, llm_records, qa, record, write_lines
from confcal.qa._command import add_qa_parser, run_qa
from confcal.qa.docqa import RuleJudge, accuracy_table, judge_records, load_sample

JUDGE = RuleJudge()


def qa_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="confcal")
    add_qa_parser(parser.add_subparsers(dest="command", required=True))
    return parser


def run(argv: list[str]) -> int:
    return run_qa(qa_parser().parse_args(["qa", *argv]))


def test_cli_demo_writes_every_table(tmp_path, capsys):
    out = tmp_path / "demo"
    assert run(["--demo", "-o", str(out)]) == 0
    written = sorted(p.name for p in out.iterdir())
    assert written == [".confcal-manifest.json", "accuracy.csv", "agreement.csv",
                       "calibration.csv", "reliability.csv", "report.md", "verdicts.csv"]
    accuracy = pd.read_csv(out / "accuracy.csv")
    expected = accuracy_table(judge_records(load_sample(), JUDGE), "verdict")
    pd.testing.assert_frame_equal(accuracy, expected, check_dtype=False)
    report = (out / "report.md").read_text()
    for heading in ("## Accuracy", "### By domain", "### By qtype", "## Judge vs human",
                    "## Calibration", "synthetic"):
        assert heading in report
    stdout = capsys.readouterr().out
    assert "judge vs human: sim-careful: agreement" in stdout and "AUROC" in stdout


def test_cli_records_file_with_breakdowns(tmp_path, capsys):
    path = write_lines(tmp_path / "r.jsonl", [
        json.dumps(record(doc_id=1, reference="Yes", answer="Yes", question="Is it?")),
        json.dumps(record(doc_id=2, reference="Jane Smith", answer="John Smith",
                          domain="laws")),
    ])
    assert run(["--records", str(path), "--by", "domain", "-o", str(tmp_path / "o")]) == 0
    accuracy = pd.read_csv(tmp_path / "o" / "accuracy.csv")
    assert accuracy[["by", "group", "correct", "undecided"]].values.tolist() == [
        ["overall", "all", 1, 1], ["domain", "laws", 0, 1], ["domain", "news", 1, 0]]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        ".confcal-manifest.json", "accuracy.csv", "report.md",
        "verdicts.csv"]  # no human, no confidence


def test_cli_with_the_model_judge_over_http(tmp_path, local_http, capsys):
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(r) for r in llm_records()[:3]])
    with ChatServer([Reply("1"), Reply("maybe"), Reply("0")]) as server:
        code = run(["--records", str(path), "--judge", "llm", "--base-url", server.url,
                    "--model", "judge-model", "--api-key-env", "CONFCAL_TEST_KEY", "--by",
                    "qtype", "-o", str(tmp_path / "o")])
    assert code == 0
    accuracy = pd.read_csv(tmp_path / "o" / "accuracy.csv")
    assert accuracy.loc[0, ["correct", "wrong", "unparseable"]].tolist() == [1, 1, 1]


def test_cli_model_judge_sends_sampling_only_when_given(tmp_path, local_http):
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(r) for r in llm_records()[:1]])
    base = ["--records", str(path), "--judge", "llm", "--model", "judge-model",
            "--api-key-env", "CONFCAL_TEST_KEY"]
    with ChatServer([Reply("1"), Reply("1")]) as server:
        assert run([*base, "--base-url", server.url, "-o", str(tmp_path / "a")]) == 0
        assert run([*base, "--base-url", server.url, "--temperature", "0", "--top-k", "1",
                    "-o", str(tmp_path / "b")]) == 0
    unset, given = (r["json"] for r in server.requests)
    assert not {"temperature", "top_p", "top_k"} & set(unset)
    assert (given["temperature"], given["top_k"]) == (0.0, 1) and "top_p" not in given


@pytest.mark.parametrize("argv, message", [
    (["--records", "r.jsonl"], "-o/--out DIR is required"),
    (["--demo", "--temperature", "0", "-o", "x"], "--temperature is for --judge llm or cascade"),
    (["--demo", "--judge", "llm", "-o", "x"], "--judge llm needs --base-url URL and --model"),
    (["--demo", "--model", "m", "-o", "x"], "--model is for --judge llm or cascade"),
    (["--demo", "--cache-dir", "c", "--prompt", "p", "-o", "x"],
     "--cache-dir, --prompt are for --judge llm or cascade"),
    (["--demo", "--judge", "cascade", "--model", "m", "-o", "x"],
     "--judge cascade needs --base-url URL and --model NAME"),
    (["--docbench", "d", "-o", "x"], "--docbench DIR and --system NAME go together"),
    (["--demo", "--judge", "official", "-o", "x"], "--judge official needs --eval-output"),
])
def test_cli_usage_errors_exit_2(argv, message, capsys, tmp_path):
    assert run(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--demo", "--records", "r.jsonl"], [], ["--demo",
                                                                          "--judge", "x"],
                                  ["--demo", "--by", "a,,b"], ["--demo", "--n-bins", "0"]])
def test_cli_argument_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        qa_parser().parse_args(["qa", *argv])
    assert info.value.code == 2


def test_cli_data_errors_exit_1_and_write_nothing(tmp_path, capsys):
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(record()), "{oops"])
    out = tmp_path / "o"
    assert run(["--records", str(path), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "confcal: error:" in err and "r.jsonl, line 2: must be valid JSON" in err
    assert not out.exists()
    assert run(["--records", str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 1
    good = write_lines(tmp_path / "g.jsonl", [json.dumps(record())])
    assert run(["--records", str(good), "--by", "nosuch", "-o", str(out)]) == 1
    assert "by must name columns of the records; found 'nosuch'" in capsys.readouterr().err
    assert run(["--records", str(good), "--human", "nosuch", "-o", str(out)]) == 1
    assert "--human must name a column" in capsys.readouterr().err
    assert not out.exists()


def test_cli_model_errors_are_data_errors(tmp_path, local_http, monkeypatch, capsys):
    monkeypatch.delenv("CONFCAL_TEST_KEY")
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(record())])
    assert run(["--records", str(path), "--judge", "llm", "--base-url",
                "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env",
                "CONFCAL_TEST_KEY", "-o", str(tmp_path / "o")]) == 1
    assert "environment variable CONFCAL_TEST_KEY" in capsys.readouterr().err


def test_cli_docbench_source(tmp_path):
    root = docbench(tmp_path, {"60": [qa(), qa(kind="una", answer="Not stated")]},
                    answers={"60": "1. 42\n2. It is 7.\n"})
    out = tmp_path / "o"
    assert run(["--docbench", str(root), "--system", "sys", "-o", str(out)]) == 0
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert verdicts["verdict"].tolist() == [1, 0]


def test_warnings_of_the_command_are_reported_not_raised(tmp_path, capsys):
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(record(reference="Ann",
                                                                answer="Anna Bell"))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run(["--records", str(path), "-o", str(tmp_path / "o")]) == 0
    assert "warning: accuracy is undefined" in capsys.readouterr().err
    assert "Warning: accuracy is undefined" in (tmp_path / "o" / "report.md").read_text()


# ------------------------------------------------ through the confcal command (cli.main)
def test_qa_subcommand_is_wired_into_the_confcal_command(tmp_path):
    # `confcal qa` comes from confcal.qa._command; through main() it keeps the exit-code rules
    from confcal.cli import main

    out = tmp_path / "qa"
    assert main(["qa", "--demo", "-o", str(out)]) == 0
    assert {"verdicts.csv", "accuracy.csv", "report.md"} <= {p.name for p in out.iterdir()}
    assert main(["qa", "--records", str(tmp_path / "missing.jsonl"), "-o",
                 str(tmp_path / "x")]) == 1
    assert main(["qa"]) == 2


def test_qa_output_is_replaced_whole_and_foreign_folders_are_refused(tmp_path, capsys):
    # Found in review: a second run left the first run's agreement/calibration files beside
    # its own, and a folder of the user's files was written into.
    import json

    from confcal.cli import main
    from confcal.qa.docqa import load_sample

    out = tmp_path / "qa"
    assert main(["qa", "--demo", "-o", str(out)]) == 0
    assert (out / "calibration.csv").exists()
    plain = tmp_path / "plain.jsonl"
    records = load_sample()
    keep = ["doc_id", "question", "reference", "answer", "domain", "qtype", "system"]
    with plain.open("w") as fh:
        for row in records[keep].to_dict(orient="records"):
            fh.write(json.dumps(row) + "\n")
    assert main(["qa", "--records", str(plain), "-o", str(out)]) == 0
    assert not (out / "calibration.csv").exists()  # nothing of the first run survives
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    assert main(["qa", "--demo", "-o", str(mine)]) == 1
    assert "must be new, empty or a previous confcal qa output" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_outputs_follow_the_umask_and_keep_a_replaced_folders_mode(tmp_path):
    # Found in review: tempfile's 0600/0700 modes leaked into the outputs.
    import os
    import stat

    from confcal.cli import main

    old = os.umask(0o022)
    try:
        out = tmp_path / "qa"
        assert main(["qa", "--demo", "-o", str(out)]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o755
        assert stat.S_IMODE((out / "report.md").stat().st_mode) == 0o644
        os.chmod(out, 0o2775)
        assert main(["qa", "--demo", "-o", str(out)]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o2775
    finally:
        os.umask(old)


# ------------------------------------------------------- the model judge: resume, cascade
def _llm_argv(server, path, out, *extra):
    return ["--records", str(path), "--base-url", server.url, "--model", "judge-model",
            "--api-key-env", "CONFCAL_TEST_KEY", "--by", "qtype", "-o", str(out), *extra]


def test_cli_judging_that_fails_midway_resumes_asking_only_the_missing(tmp_path, local_http,
                                                                       capsys):
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(r) for r in llm_records()])
    cache, out = tmp_path / "cache", tmp_path / "o"
    # five answers, the fifth empty (never asked): two replies, then the server fails
    with ChatServer([Reply("1"), Reply("0"), Reply(status=400), Reply(status=400)]) as server:
        code = run(["--judge", "llm", "--cache-dir", str(cache),
                    *_llm_argv(server, path, out)])
        first = len(server.requests)
    captured = capsys.readouterr()
    assert code == 1 and first == 4
    assert "2 answers could not be judged" in captured.err
    assert f"run the same command again (with --cache-dir {cache})" in captured.err
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert verdicts["verdict_status"].tolist() == ["correct", "wrong", "failed", "failed",
                                                   "wrong"]
    accuracy = pd.read_csv(out / "accuracy.csv")
    assert accuracy.loc[0, ["correct", "wrong", "failed", "judged"]].tolist() == [1, 2, 2, 3]
    with ChatServer([Reply("1"), Reply("1")]) as server:
        code = run(["--judge", "llm", "--cache-dir", str(cache),
                    *_llm_argv(server, path, out)])
        asked = server.user_messages()
    assert code == 0 and len(asked) == 2  # nothing asked twice
    assert "User answer: 1 March 2025" in asked[0] and "User answer: Yes, it is." in asked[1]
    stdout = capsys.readouterr().out
    assert "model judge: 2 asked, 2 from the cache, 0 failed, 1 empty answers not asked" in stdout
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert verdicts["verdict"].tolist() == [1, 0, 1, 1, 0]


def test_cli_cascade_counts_who_decided_what(tmp_path, local_http, capsys):
    long_ref = ("Sales rose because two new plants opened and the export licences were "
                "granted early in the year")
    rows = [record(doc_id="a", question="Is it signed?", reference="Yes", answer="Yes."),
            record(doc_id="b", question="Why did sales rise?", reference=long_ref,
                   answer="New plants and export licences")]
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(r) for r in rows])
    with ChatServer([Reply("1")]) as server:
        code = run(["--judge", "cascade", *_llm_argv(server, path, tmp_path / "o")])
        assert len(server.requests) == 1 and "New plants" in server.user_messages()[0]
    assert code == 0
    decided = pd.read_csv(tmp_path / "o" / "decided.csv")
    assert decided[["judge", "n", "correct"]].values.tolist() == [["rule", 1, 1],
                                                                  ["model", 1, 1]]
    report = (tmp_path / "o" / "report.md").read_text()
    assert "## Who decided" in report and "cascade: the rule judge, then the model" in report
    stdout = capsys.readouterr().out
    assert "decided by the rule judge: 1 (1 right" in stdout
    assert "decided by the model judge: 1 (1 right" in stdout


def test_cli_paper_template_and_the_docbench_convention(tmp_path, local_http):
    template = tmp_path / "prompt.txt"
    template.write_text("Q: {{question}}\nA: {{sys_ans}}\nR: {{ref_ans}}\nT: {{ref_text}}\n"
                        "- Correctness: ", encoding="utf-8")
    rows = [record(doc_id="a", question="How many?", reference="240", answer="240",
                   evidence=""),
            record(doc_id="b", question="Who?", reference="Ann", answer="Bob")]
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(r) for r in rows])
    with ChatServer([Reply("**1**"), Reply("The answer is wrong.")]) as server:
        code = run(["--judge", "llm", "--prompt", str(template), "--system-prompt", "Grade.",
                    "--convention", "docbench", *_llm_argv(server, path, tmp_path / "o")])
        messages = server.requests[0]["json"]["messages"]
    assert code == 0
    assert messages == [{"role": "system", "content": "Grade."},
                        {"role": "user", "content": "Q: How many?\nA: 240\nR: 240\nT: \n"
                                                    "- Correctness: "}]
    accuracy = pd.read_csv(tmp_path / "o" / "accuracy.csv")
    # "**1**" is 1; the reply without a digit is wrong overall and right by type
    assert accuracy[["by", "correct", "n", "counted_differently"]].values.tolist() == [
        ["overall", 1, 2, 1], ["qtype", 2, 2, 1]]
    assert "official DocBench notebook" in (tmp_path / "o" / "report.md").read_text()


def test_cli_bad_templates_are_data_errors_naming_the_file(tmp_path, local_http, capsys):
    template = tmp_path / "prompt.txt"
    template.write_text("{{question}} {{answer}} {{ref_ans}}", encoding="utf-8")
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(record())])
    with ChatServer([]) as server:
        assert run(["--judge", "llm", "--prompt", str(template),
                    *_llm_argv(server, path, tmp_path / "o")]) == 1
        assert server.requests == []
    assert (f"--prompt {template}: prompt_template has an unknown placeholder {{{{answer}}}}"
            in capsys.readouterr().err)


def test_cli_official_verdicts_are_judged_again_and_compared(tmp_path, capsys):
    lines = [{"question": "Who signed?", "answer": "Jane Smith", "evidence": "",
              "type": "text-only", "sys_ans": "Jane Smith", "file": "3", "eval": "1"},
             {"question": "Who signed?", "answer": "Jane Smith", "evidence": "",
              "type": "text-only", "sys_ans": "Bob", "file": "3", "eval": "Correctness: 1"}]
    path = write_lines(tmp_path / "gpt-4o_eval_output.jsonl", [json.dumps(x) for x in lines])
    out = tmp_path / "o"
    assert run(["--eval-output", str(path), "--convention", "docbench", "-o", str(out)]) == 0
    agreement = pd.read_csv(out / "agreement.csv")
    assert agreement[["system", "compared", "agreement", "judge_0_human_1"]].values.tolist() == [
        ["gpt-4o", 2, 0.5, 1]]
    assert "judge vs docbench: gpt-4o: agreement 0.500" in capsys.readouterr().out


def test_cli_demo_prints_three_decimals(tmp_path, capsys):
    assert run(["--demo", "-o", str(tmp_path / "o")]) == 0
    table = capsys.readouterr().out.split("judge vs human")[0]
    numbers = [w for w in table.replace("[", " ").replace("]", " ").replace(",", " ").split()
               if "." in w]
    assert numbers and all(len(w.split(".")[1]) == 3 for w in numbers), numbers


def test_report_md_escapes_what_the_records_say(tmp_path):
    rows = [record(doc_id=1, domain="<img src=x onerror=alert(1)>", system="a|b",
                   reference="Yes", answer="Yes", question="Is it?")]
    path = write_lines(tmp_path / "r.jsonl", [json.dumps(r) for r in rows])
    assert run(["--records", str(path), "--by", "domain", "-o", str(tmp_path / "o")]) == 0
    report = (tmp_path / "o" / "report.md").read_text()
    assert "<img" not in report and "&lt;img src=x onerror=alert(1)&gt;" in report
    assert "| a\\|b |" in report


def test_cli_official_verdicts_re_aggregated_as_published(tmp_path, capsys):
    from confcal.qa.docqa import load_docbench_verdicts

    replies = ["1", "0", "The answer is correct.", "Correctness: 1 ...", "1 or 0"]
    kinds = ["text-only", "una", "una", "meta-data", "Multimodal-t"]
    lines = [{"question": "Q?", "answer": "42", "evidence": "", "type": kind,
              "sys_ans": "42", "file": file, "eval": reply}
             for reply, kind, file in zip(replies, kinds, ["3", "3", "50", "50", "200"],
                                          strict=True)]
    path = write_lines(tmp_path / "gpt-4o_eval_output.jsonl", [json.dumps(x) for x in lines])
    out = tmp_path / "o"
    assert run(["--eval-output", str(path), "--judge", "official", "--convention", "docbench",
                "-o", str(out)]) == 0
    expected = accuracy_table(load_docbench_verdicts(path), "docbench", convention="docbench")
    accuracy = pd.read_csv(out / "accuracy.csv")
    pd.testing.assert_frame_equal(accuracy, expected, check_dtype=False)
    # overall: a "1" in replies 1, 4, 5 -> 3/5; by type, unanswerable holds 2, 3 and the
    # "Multimodal-t" line 5 (not a notebook spelling): "0" in 2 and 5 -> 1 - 2/3
    assert accuracy.loc[0, ["n", "correct"]].tolist() == [5, 3]
    una = accuracy[(accuracy["by"] == "qtype") & (accuracy["group"] == "unanswerable")]
    assert una[["n", "correct"]].values.tolist() == [[3, 1]]
    assert not (out / "agreement.csv").exists()  # nothing to compare the verdicts with
    verdicts = pd.read_csv(out / "verdicts.csv", dtype={"verdict_reply": str})
    assert verdicts["verdict_reply"].tolist() == replies
    assert set(verdicts["verdict_convention"]) == {"docbench"}


def test_every_qa_table_neutralises_formula_cells(tmp_path):
    # the attack: answers, questions and group labels a spreadsheet runs as formulas
    attacks = ['=HYPERLINK("http://example.com","x")', "@SUM(A1:A9)", "+cmd|' /C calc'!A0",
               "-2+3", "\r=1+1"]
    path = write_lines(tmp_path / "r.jsonl", [
        json.dumps(record(doc_id=f"d{i}", reference="R", answer=a, question=a, domain=a,
                          confidence=0.5, human=i % 2))
        for i, a in enumerate(attacks)])
    out = tmp_path / "o"
    assert run(["--records", str(path), "--by", "domain", "-o", str(out)]) == 0
    tables = sorted(p.name for p in out.glob("*.csv"))
    assert {"verdicts.csv", "accuracy.csv"} <= set(tables)
    for name in tables:
        frame = pd.read_csv(out / name, dtype=str, keep_default_na=False)
        for column in frame.columns:
            for cell in [column, *frame[column]]:
                # a text cell starts with a formula character only behind the quote, and a
                # plain number (-0.5) is left as it is
                if cell[:1] in ("=", "+", "@", "\t", "\r") or (
                        cell.startswith("-") and not cell.replace(".", "", 1)[1:].isdigit()):
                    raise AssertionError(f"{name}, column {column}: {cell!r}")
    verdicts = pd.read_csv(out / "verdicts.csv", dtype=str, keep_default_na=False)
    assert verdicts["answer"].tolist() == ["'" + a for a in attacks]  # one row each, kept
    accuracy = pd.read_csv(out / "accuracy.csv", dtype=str, keep_default_na=False)
    assert "'@SUM(A1:A9)" in accuracy["group"].tolist()
