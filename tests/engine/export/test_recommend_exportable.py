"""recommend with an export format: only plans the format writes are ranked, and the faster ones
it refuses are counted by cause — checked against the exporter's own refusal, plan by plan.

Scenario: Llama-3-70B, 64 x H100, sequences of 16,384, ranked for Megatron and exported as DeepSpeed JSON.
Long sequences make CP pay and 70B makes TP pay, so the fastest Megatron plan uses TP and CP together —
which ds_config cannot write (Ulysses' groups are SP x DP only, engine/export/deepspeed.py). Since
session 11 the `deepspeed` framework itself no longer ranks such layouts (engine/validity/deepspeed_config.py),
and the export refuses it by the same named limit (`tp_with_ulysses_cp`). The test first checks that
premise, so it fails loudly, rather than passing vacuously, if the ranking ever changes.
"""

from __future__ import annotations

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.engine.export import FORMATS, ExportRefused, export_plan
from shardwise.engine.export.carriers import formats_carrying, refusal
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.search import recommend
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

MODEL, CLUSTER = get_model("llama-3-70b"), build_cluster("h100-sxm", 64)
SETUP = TrainingSetup(seq_len=16384, global_batch=256, framework="megatron")
# the exporter refuses by the limit's own name (engine/validity/deepspeed_config.py LIMITS), since session 12
LAYOUT_RULE = "tp_with_ulysses_cp"
WALK = 400  # unfiltered plans walked by hand (Megatron ranking since session 11): enough to hold the 3 kept plans, every refusal above them and the near ties (60 before E11's refit)
STRATEGY_KEYS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero_stage", "hsdp_replicas", "sequence_parallel",
                 "micro_batch", "recompute")


def strategy(summary) -> Strategy:
    return Strategy(**{k: getattr(summary, k) for k in STRATEGY_KEYS})


@pytest.fixture(scope="module")
def unfiltered():
    return recommend(MODEL, CLUSTER, SETUP, top_k=WALK)


@pytest.fixture(scope="module")
def for_deepspeed():
    return recommend(MODEL, CLUSTER, SETUP, top_k=3, export_format="deepspeed", list_exports=True)


def test_premise_the_fastest_plan_needs_tp_and_cp_and_ds_config_refuses_it(unfiltered):
    best = unfiltered.plans[0].strategy
    assert best.tp > 1 and best.cp > 1
    with pytest.raises(ExportRefused) as refused:
        export_plan("deepspeed", MODEL, CLUSTER, SETUP, strategy(best))
    assert refused.value.rule
    # ... and some plan faster than every plan ds_config writes is refused for TP with Ulysses CP, by the
    # same named limit the deepspeed framework's layout rule applies (engine/validity/deepspeed_config.py).
    ulysses = [p for p in unfiltered.plans
               if (why := refusal("deepspeed", MODEL, CLUSTER, SETUP, strategy(p.strategy))) is not None
               and why.rule == LAYOUT_RULE]
    assert ulysses


def test_only_plans_the_export_writes_are_ranked_in_the_same_order(unfiltered, for_deepspeed):
    # By hand: walk the unfiltered ranking, keep what export_plan("deepspeed") does not refuse.
    by_hand = [p.strategy for p in unfiltered.plans
               if refusal("deepspeed", MODEL, CLUSTER, SETUP, strategy(p.strategy)) is None][:3]
    assert len(by_hand) == 3  # WALK is deep enough
    assert [p.strategy for p in for_deepspeed.plans] == by_hand
    for p in for_deepspeed.plans:
        export_plan("deepspeed", MODEL, CLUSTER, SETUP, strategy(p.strategy))  # raises if it cannot
    assert for_deepspeed.export_format == "deepspeed"
    assert for_deepspeed.fitting == unfiltered.fitting  # what fits does not depend on the export


def test_the_faster_plans_set_aside_are_counted_by_the_exporters_own_rule(unfiltered, for_deepspeed):
    last_kept = [p.strategy for p in unfiltered.plans].index(for_deepspeed.plans[-1].strategy)
    by_rule: dict[str, int] = {}
    for p in unfiltered.plans[:last_kept]:
        why = refusal("deepspeed", MODEL, CLUSTER, SETUP, strategy(p.strategy))
        if why is not None:
            by_rule[why.rule] = by_rule.get(why.rule, 0) + 1
    assert {a.rule: a.count for a in for_deepspeed.set_aside} == by_rule
    assert LAYOUT_RULE in by_rule
    for cause in for_deepspeed.set_aside:
        # by hand: the first plan of the unfiltered ranking that the exporter refuses by this rule
        fastest = next(p for p in unfiltered.plans
                       if (why := refusal("deepspeed", MODEL, CLUSTER, SETUP, strategy(p.strategy))) is not None
                       and why.rule == cause.rule)
        assert cause.fastest == fastest.strategy
        assert cause.fastest_step_s == pytest.approx(fastest.time.step_s)
        # the plan set aside is ranked above the last plan the format writes that is shown (what is counted:
        # plans ranked above it); under the Megatron ranking a cause's fastest may sit between kept plans
        assert cause.fastest_step_s < for_deepspeed.plans[-1].time.step_s


def test_each_plan_names_the_formats_that_write_it(unfiltered, for_deepspeed):
    for p in for_deepspeed.plans:
        expected = [fmt for fmt in FORMATS
                    if refusal(fmt, MODEL, CLUSTER, SETUP, strategy(p.strategy)) is None]
        assert p.export_formats == expected and "deepspeed" in expected
    best = strategy(unfiltered.plans[0].strategy)
    assert "deepspeed" not in formats_carrying(MODEL, CLUSTER, SETUP, best)
    assert unfiltered.plans[0].export_formats is None  # not asked for: not computed


def test_near_ties_are_counted_among_the_plans_the_format_writes(unfiltered, for_deepspeed):
    from shardwise.engine.calibration.coverage import RANKING_RESOLUTION

    kept = [p for p in unfiltered.plans if refusal("deepspeed", MODEL, CLUSTER, SETUP, strategy(p.strategy)) is None]
    bound = kept[0].time.step_s * (1 + RANKING_RESOLUTION)
    near = sum(p.time.step_s < bound for p in kept[1:])
    assert near < len(kept) - 1  # WALK reaches past the near ties, so the count by hand is complete
    assert for_deepspeed.near_best == near


def test_a_format_that_writes_no_fitting_plan_says_so_instead_of_nothing_fits():
    # Megatron's FP8 ranking exported as DeepSpeed JSON (since session 12 `--framework deepspeed` itself
    # ranks no FP8 plan: the same `fp8` limit, engine/validity/deepspeed_config.py).
    fp8 = SETUP.model_copy(update={"precision": "fp8"})
    rec = recommend(MODEL, CLUSTER, fp8, top_k=3, export_format="deepspeed")
    assert rec.plans == [] and rec.nothing_fits is None and rec.fitting > 0
    assert rec.export_checked == rec.fitting
    assert sum(a.count for a in rec.set_aside) == rec.fitting
    assert [a.rule for a in rec.set_aside] == ["fp8"]  # DeepSpeed's config has no FP8 switch


def test_an_unknown_format_is_one_clear_error():
    with pytest.raises(ShardwiseInputError, match="unknown export format 'jax'; valid formats: deepspeed"):
        recommend(MODEL, CLUSTER, SETUP, top_k=1, export_format="jax")


def test_the_evaluation_of_a_kept_plan_is_evaluate_of_it(for_deepspeed):
    p = for_deepspeed.plans[0]
    again = evaluate(MODEL, CLUSTER, SETUP, strategy(p.strategy))
    assert again.time.step_s == pytest.approx(p.time.step_s)
