"""The case files themselves: enough of them, every family, and scenarios the engine accepts."""

from collections import Counter

from shardwise.evals import scenario as sc
from shardwise.evals.case import FAMILIES, truth_kind
from shardwise.evals.loader import load_cases


def test_at_least_80_cases_covering_every_family():
    cases = load_cases()
    by_family = Counter(c.family for c in cases)
    assert len(cases) >= 80
    assert set(by_family) == set(FAMILIES) and min(by_family.values()) >= 7


def test_the_span_the_issue_asks_for():
    cases = load_cases()
    scenarios = [s for c in cases for s in c.scenarios() if s.gpus]
    gpus = {s.gpus for s in scenarios}
    assert min(gpus) == 1 and max(gpus) == 16384
    assert len({s.gpu for s in scenarios}) >= 8  # several GPU types
    moe = {"mixtral-8x7b", "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3", "kimi-k2"}
    assert moe & {s.model for s in scenarios} and len({c.id for c in cases if c.family == "recommend"
                                                       and c.scenario.model in moe}) >= 3
    assert {"lora", "qlora"} <= {s.mode for s in scenarios}
    assert sum(len(c.turns) > 1 for c in cases) >= 10


def test_every_graded_scenario_is_one_the_engine_accepts():
    """A catalog rename must fail here, not as a mysterious grader failure."""
    for case in load_cases():
        for turn, scenario in zip(case.turns, case.scenarios()):
            if truth_kind(case, turn) != "none" or turn.expect.plan:
                specs = sc.build(scenario)  # raises ShardwiseInputError on an unknown name
                assert specs.setup.global_batch >= 1, case.id
            for side in turn.side_scenarios(scenario):  # side by side: each side's scenario is graded
                assert sc.build(side).setup.global_batch >= 1, case.id
            for plan in (turn.plans or []) + ([turn.plan] if turn.plan else []):
                if "from" not in plan:
                    sc.strategy(plan)


def test_every_uncertainty_and_calibration_truth_computes():
    """A `range`/`step_range`/`memory_range`/`calibrate` turn whose plan no longer fits (or whose
    measurement the fit refuses) would grade every answer as failing: say so here instead."""
    from shardwise.evals.truth import compute
    from shardwise.evals.truth_profile import profile_for

    kinds = ("range", "step_range", "memory_range", "calibrate", "calibrate_compare", "impossible")
    for case in load_cases():
        for index, (turn, scenario) in enumerate(zip(case.turns, case.scenarios())):
            kind = truth_kind(case, turn)
            profile = profile_for(case, index)  # `profile: measured`: the earlier measurement must fit
            if kind in kinds:
                truth = compute(kind, scenario, turn.plan, turn.plans, turn.measured, profile)
                assert truth.error is None and truth.stated, f"{case.id}: {truth.error}"
            elif profile is not None:
                truth = compute(kind, scenario, turn.plan, turn.plans, turn.measured, profile)
                assert truth.error is None, f"{case.id}: {truth.error}"
