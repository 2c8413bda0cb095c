""""What are CUDA graphs?" is a glossary question (tools/explain.py, prompts/explain/cuda_graphs.md.j2), not a
setup missing its model: the answer says what graphs remove (per-kernel launch/host overhead), the two scopes,
that shardwise prices them for Megatron only and does not model their memory, and how to turn them on. A setup
*with* cuda graphs is still a setup to plan (tests/agent/test_planner_setup_words.py)."""

from __future__ import annotations

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.tools.scenario import Plan, Scenario

from support.chat import ask


@pytest.mark.parametrize("message", [
    "what are cuda graphs?",
    "what is a CUDA graph",
    "explain cuda graphs",
    "cuda graphs?",
    "what do cuda graphs actually buy me?",
])
def test_cuda_graphs_with_no_scenario_is_explained(make_service, message):
    [(calls, answer)] = ask(make_service(), message)
    assert calls == [("explain_concept", {"concept": "cuda_graphs", "scenario": None, "plan": None})]
    assert "still need" not in answer
    for said in ("kernel", "launch", "host", "**per-layer**", "**full-iteration**", "Megatron-only",
                 "does **not** model the memory", "--cuda-graphs per-layer", "--cuda-graphs full-iteration"):
        assert said in answer, said


def test_a_setup_said_with_cuda_graphs_and_a_metric_asked_is_not_the_glossary(make_service):
    [(calls, _)] = ask(make_service(), "llama 3.1 8b on 16 h100 with full cuda graphs, what's the throughput?")
    assert [name for name, _ in calls] == ["recommend_plans"]
    assert calls[0][1]["scenario"]["cuda_graphs"] == "full-iteration"


def test_with_a_scenario_the_numbers_are_the_engines_step_time_per_mode(make_service):
    # DeepSeek-V3 with the deepep dispatcher: full-iteration graphs are allowed for a dropless MoE
    # (validity/graphs.py); per-layer graphs refuse the full recompute such a plan needs.
    turns = ask(make_service(), "deepseek-v3 on 256 h800 with deepep", "what are cuda graphs?")
    calls, answer = turns[1]
    [(name, args)] = calls
    assert name == "explain_concept" and args["concept"] == "cuda_graphs"
    assert args["scenario"]["cuda_graphs"] is None  # the topic asked about, not a setting of the scenario
    resolved = Scenario(**args["scenario"]).resolve()
    plan = Plan(**args["plan"]).strategy()
    for mode, label in (("none", "without graphs"), ("per-layer", "per-layer graphs"),
                        ("full-iteration", "full-iteration graphs")):
        e = evaluate(resolved.model, resolved.cluster, resolved.setup.model_copy(update={"cuda_graphs": mode}), plan)
        line = next(line for line in answer.splitlines() if label in line and line.startswith("- "))
        if e.valid:
            assert f"{1e3 * e.time.step_s:,.1f} ms" in line
        else:
            assert "not valid" in line and e.violations[0].message in line
    assert plan.recompute == "full"  # so the per-layer line above was the engine's refusal


def test_a_framework_without_graphs_says_so(make_service):
    turns = ask(make_service(), "llama 3.1 8b on 16 h100 with deepspeed", "what are cuda graphs?")
    _, answer = turns[1]
    assert "deepspeed has no training-step CUDA graph option" in answer
