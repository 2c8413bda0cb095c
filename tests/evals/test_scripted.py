"""Scripted model replies through the agent's real loop, tools, engine and session store.

The bundled scripts (evals/scripts) behave as a good model should and must pass every grader.
The bad scripts below are written here so that the failure each must cause follows from the
script itself: a number the tools never returned, a plan the engine did not recommend, a
scenario with the wrong GPU count, a config typed into the answer.
"""

import pytest

from shardwise.evals.loader import load_cases, select
from shardwise.evals.runner import run_suite
from shardwise.evals.scripted import load_scripts
from shardwise.evals.targets import AgentTarget

SCENARIO = {"model": "llama-3-70b", "gpu": "h100-sxm", "gpus": 64, "seq_len": 8192, "global_batch_tokens": "4M"}
RECOMMEND = {"name": "recommend_plans", "arguments": {"scenario": SCENARIO}}


def run(scripts: dict, ids: list[str]):
    cases = select(load_cases(), ids=ids)
    return run_suite(cases, AgentTarget("scripted", scripts=scripts))


def test_bundled_scripts_pass_every_grader():
    scripts = load_scripts()
    result = run(scripts, sorted(scripts))
    failing = {r.case.id: r.failures() for r in result.runs if not r.passed}
    assert failing == {}
    assert result.total == len(scripts) >= 8


@pytest.mark.parametrize("text, grader, needle", [
    # 97.3 GiB: above every memory value (and 80 % band) in the result; 61.7 is now a band endpoint
    ("Use `{{ last.best.label }}` [{{ last.id }}]: it needs 97.3 GiB per GPU.", "numbers", "97.3 GiB"),
    ("Use `TP=4 PP=4 DP=4 ZeRO-1 micro-batch=1 recompute=selective` [{{ last.id }}].", "plan", "engine recommends"),
    ('Use `{{ last.best.label }}`. Config: {"zero_optimization": {"stage": 1}}', "tools", "config text"),
])
def test_bad_answers_fail_the_right_grader(text, grader, needle):
    result = run({"rec-llama3-70b-64xh100": [{"tool_calls": [RECOMMEND]}, {"text": text}]}, ["rec-llama3-70b-64xh100"])
    failures = result.runs[0].failures()
    assert any(f.startswith(f"{grader}:") and needle in f for f in failures), failures


def test_a_wrong_scenario_fails_the_tools_grader():
    wrong = {"name": "recommend_plans", "arguments": {"scenario": {**SCENARIO, "gpus": 32}}}
    result = run({"rec-llama3-70b-64xh100": [{"tool_calls": [wrong]}, {"text": "Use `{{ last.best.label }}`."}]},
                 ["rec-llama3-70b-64xh100"])
    assert any(f.startswith("tools:") and "gpus=32" in f for f in result.runs[0].failures())
