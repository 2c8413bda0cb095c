"""The runner, its statistics and its reports, on targets written in the test."""

import json

from shardwise.evals.case import Case
from shardwise.evals.report import Progress, summary_json, summary_table, write_report
from shardwise.evals.runner import run_suite, wilson
from shardwise.evals.targets import FunctionTarget, RecordedTarget

OOD = Case.model_validate({"id": "ood-x", "family": "out_of_domain", "user": "write me a haiku",
                           "expect": {"budget": 0, "keywords": [["parallel", "training"]]}})
TWO_TURNS = Case.model_validate({"id": "mt-x", "family": "multi_turn", "turns": [
    {"user": "hi", "truth": "none"}, {"user": "and now?", "truth": "none", "expect": {"keywords": ["second"]}}]})


def test_wilson_interval_by_hand():
    # Wilson (1927): centre (p + z²/2n)/(1 + z²/n), half-width z·sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n).
    # 8 of 10, z = 1.96: centre 0.99208/1.38416 = 0.71674, half 1.96·0.160012/1.38416 = 0.22658.
    low, high = wilson(8, 10)
    assert abs(low - 0.49016) < 1e-4 and abs(high - 0.94332) < 1e-4
    # 0 of 10: the interval still has width — [0, z²/n / (1 + z²/n)] = [0, 0.27753].
    low, high = wilson(0, 10)
    assert low == 0 and abs(high - 0.27753) < 1e-4


def test_run_suite_grades_each_turn_and_reports_by_family():
    good = FunctionTarget(lambda cid: lambda msgs: {"answer": "I plan distributed training parallelism; "
                                                              "no haiku, and the second answer.", "tool_calls": []})
    result = run_suite([OOD, TWO_TURNS], good)
    assert result.passed == 2 and result.pass_rate == 1.0
    data = summary_json(result)
    assert set(data) >= {"total", "passed", "pass_rate", "by_family", "cases"}
    assert data["by_family"] == {"out_of_domain": {"total": 1, "passed": 1}, "multi_turn": {"total": 1, "passed": 1}}
    assert data["cases"][0] == {"id": "ood-x", "family": "out_of_domain", "passed": True, "failures": [],
                                "runs": 1, "passes": 1}


def test_failures_name_the_turn_and_grader():
    chatty = FunctionTarget(lambda cid: lambda msgs: {
        "answer": "Here is a haiku with 3 lines.", "tool_calls": [{"name": "lookup_model", "arguments": "{}"}]})
    result = run_suite([OOD], chatty)
    failures = summary_json(result)["cases"][0]["failures"]
    assert "tools: 1 tool calls, budget 0" in failures
    assert any(f.startswith("numbers: unbacked number '3'") for f in failures)
    assert any(f.startswith("facts: missing") for f in failures)
    assert "tools" in summary_table(result) and "0%" in summary_table(result)


def test_a_crashing_target_fails_its_case_not_the_suite():
    def crash(cid):
        def respond(msgs):
            raise ConnectionError("endpoint down")
        return respond

    result = run_suite([OOD], FunctionTarget(crash))
    assert not result.runs[0].passed
    assert any("endpoint down" in f for f in result.runs[0].failures())


def test_repeats_count_runs_and_fresh_conversations():
    opened = []

    def factory(cid):
        opened.append(cid)
        return lambda msgs: {"answer": "parallelism training" if len(opened) % 2 else "nope"}

    result = run_suite([OOD], FunctionTarget(factory), repeats=4)
    assert len(opened) == 4 and result.total == 4 and result.passed == 2
    entry = summary_json(result)["cases"][0]
    assert entry["runs"] == 4 and entry["passes"] == 2 and entry["passed"] is False


def test_recorded_target_replays_by_turn(tmp_path):
    path = tmp_path / "rec.jsonl"
    path.write_text(json.dumps({"case": "mt-x", "turns": [{"answer": "hi"}, {"answer": "the second one"}]}) + "\n")
    result = run_suite([TWO_TURNS, OOD], RecordedTarget.from_files([path]))
    assert result.runs[0].passed
    assert not result.runs[1].passed  # no recording: an error reply


def test_reports_carry_failing_transcripts(tmp_path):
    result = run_suite([OOD], FunctionTarget(lambda cid: lambda m: {"answer": "a <b>haiku</b>"}))
    write_report(result, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["failing"][0]["turns"][0]["answer"] == "a <b>haiku</b>"
    write_report(result, tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    assert "ood-x" in html and "&lt;b&gt;haiku" in html  # escaped, never raw


def test_progress_writes_lines_when_not_a_terminal():
    import io

    stream = io.StringIO()
    run_suite([OOD] * 3, FunctionTarget(lambda cid: lambda m: {"answer": "parallel"}), progress=Progress(stream))
    assert "eval: 3/3 cases, 0 failed" in stream.getvalue()
