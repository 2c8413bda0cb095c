"""Each engine tool against the engine called directly (the tools' ground truth), and the
textbook numbers explain_concept adds against hand calculations with their sources."""

from __future__ import annotations

import json

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.engine.explain import compare
from shardwise.engine.export import export_plan
from shardwise.engine.hardware_catalog import get_gpu
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.search import recommend
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup
from shardwise.tools import dispatch

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 16, "seq_len": 4096, "global_batch": 256}


def engine(gpu="h100", gpus=16, mode="full", seq=4096, batch=256, model="llama-3.1-8b"):
    return get_model(model), build_cluster(gpu, gpus), TrainingSetup(seq_len=seq, global_batch=batch, mode=mode)


def call(name, arguments, rid="R1"):
    out = dispatch(name, json.dumps(arguments), result_id=rid)
    assert out.ok, out.errors
    return out.result


def test_recommend_matches_the_engine_and_derives_why_it_wins():
    result = call("recommend_plans", {"scenario": SCENARIO, "top_k": 3})
    rec = recommend(*engine(), top_k=25)
    best = rec.plans[0]
    assert result.best.strategy == best.strategy
    assert result.best.memory_gib == round(best.memory.total_gib, 3)
    assert result.best.step_ms == round(1e3 * best.time.step_s, 3)
    assert result.best.mfu_percent == round(100 * best.throughput.mfu, 1)
    assert (result.searched, result.valid, result.fitting) == (rec.searched, rec.valid, rec.fitting)
    assert [p.strategy for p in result.alternatives] == [p.strategy for p in rec.plans[1:3]]
    why = result.why_best
    # the runner-up: the fastest plan with another layout that is predicted slower (a tie explains nothing)
    runner = next(p for p in rec.plans[1:] if any(getattr(p.strategy, k) != getattr(best.strategy, k)
                                                  for k in ("tp", "pp", "cp", "ep", "zero_stage", "micro_batch",
                                                            "recompute")) and p.time.step_s > best.time.step_s)
    assert why.runner_up.startswith(f"TP={runner.strategy.tp}")
    # speedup = best tokens/s ÷ runner-up's − 1; step saved = difference of step times
    assert why.speedup_percent == pytest.approx(
        100 * (best.throughput.tokens_per_s / runner.throughput.tokens_per_s - 1), abs=0.06)
    assert why.step_ms_saved == pytest.approx(1e3 * (runner.time.step_s - best.time.step_s), abs=0.002)
    # the deciding term is the time term where the runner-up spends the most extra time
    terms = {"compute": "compute_s", "TP communication": "tp_comm_s", "CP communication": "cp_comm_s",
             "EP communication": "ep_comm_s", "pipeline bubble": "pp_bubble_s", "PP communication": "pp_comm_s",
             "DP communication": "dp_comm_s", "optimizer step": "optimizer_s",
             "optimizer phase": "optimizer_phase_s"}
    extra = {name: getattr(runner.time, attr) - getattr(best.time, attr) for name, attr in terms.items()}
    assert why.deciding_term.term == max(extra, key=extra.get)
    assert result.binding is not None and result.counterfactuals
    assert result.headroom_percent == 100 * rec.headroom


def test_recommend_with_constraints_and_bad_headroom():
    pinned = call("recommend_plans", {"scenario": SCENARIO, "constraints": {"tp": 4}})
    assert pinned.best.strategy.tp == 4
    assert pinned.best.strategy == recommend(*engine(), top_k=1, tp=4).plans[0].strategy
    out = dispatch("recommend_plans", json.dumps({"scenario": SCENARIO, "headroom": 0.9}))
    assert not out.ok and "headroom is a fraction between 0 and 0.5" in out.errors[0]


def test_nothing_fits_is_a_result_with_the_engines_remedies():
    result = call("recommend_plans", {"scenario": {"model": "llama-3.1-405b", "gpu": "rtx-4090", "gpus": 8}})
    n = recommend(*engine(gpu="rtx-4090", gpus=8, model="llama-3.1-405b", seq=4096, batch=1024), top_k=1).nothing_fits
    assert result.best is None and result.nothing_fits.min_gpus == n.min_gpus
    assert result.nothing_fits.lowest_memory_gib == round(n.lowest_memory_gib, 3)
    assert result.nothing_fits.over_capacity_gib == round(n.lowest_memory_gib - n.usable_gib, 3)


def test_evaluate_plan_figures_and_an_invalid_plan_is_a_normal_result():
    result = call("evaluate_plan", {"scenario": SCENARIO, "plan": {"tp": 2, "pp": 2}})
    e = evaluate(*engine(), Strategy(tp=2, pp=2))
    assert result.evaluation == e
    m = e.memory
    assert result.plan.memory_free_gib == round(m.capacity_gib - m.total_gib, 3)
    shares = {t.name: t.percent for t in result.plan.memory_terms}
    assert shares["weights"] == round(100 * m.weights_gib / m.total_gib, 1)
    assert result.plan.time_terms[0].value == max(t.value for t in result.plan.time_terms)
    # micro-batch 3 with DP = 16 / 2 = 8: 256 sequences are not divisible by 8·3 = 24
    bad = call("evaluate_plan", {"scenario": SCENARIO, "plan": {"tp": 2, "micro_batch": 3}})
    assert bad.plan.valid is False and bad.plan.violations and bad.plan.step_ms is None


@pytest.mark.parametrize("name, arguments", [
    ("evaluate_plan", {"plan": {"tp": 3}}),
    ("estimate_memory", {"plan": {"tp": 3}}),
    ("compare_plans", {"plan_a": {"tp": 2}, "plan_b": {"tp": 3}}),
    ("explain_concept", {"concept": "tensor_parallel", "plan": {"tp": 3}}),
])
def test_a_plan_without_a_whole_dp_is_refused_not_priced_with_a_rounded_down_dp(name, arguments):
    # TP=3 on 16 GPUs used to come back with DP = 16 // 3 = 5; 16 / 3 is not whole, and the TP values that
    # divide 16 (CP = PP = 1) are its divisors 1, 2, 4, 8, 16
    out = dispatch(name, json.dumps({"scenario": SCENARIO, **arguments}), result_id="R1")
    assert not out.ok and len(out.errors) == 1
    assert "TP·CP·PP = 3·1·1 = 3 does not divide 16 GPUs" in out.errors[0] and "1, 2, 4, 8, 16" in out.errors[0]


def test_incomplete_scenario_is_a_fix_list():
    out = dispatch("evaluate_plan", json.dumps({"scenario": {"model": "llama-3.1-8b"}, "plan": {}}))
    assert out.errors == ["the scenario is incomplete: give gpu (a GPU type such as h100-sxm), gpus (how many)"]
    out = dispatch("evaluate_plan", json.dumps({"scenario": {**SCENARIO, "model": "llama-9-8b"}, "plan": {}}))
    assert "unknown model 'llama-9-8b'" in out.errors[0]


def test_compare_agrees_with_the_engine():
    a, b = {"tp": 1, "zero": 1}, {"tp": 8, "zero": 1}
    result = call("compare_plans", {"scenario": SCENARIO, "plan_a": a, "plan_b": b})
    ea = evaluate(*engine(), Strategy(tp=1, zero_stage=1), headroom=0.1)
    eb = evaluate(*engine(), Strategy(tp=8, zero_stage=1), headroom=0.1)
    c = compare(ea, eb)
    assert result.verdict.winner == c.winner and result.verdict.decided_by == c.decided_by
    if c.decided_by == "throughput":
        fast, slow = (ea, eb) if c.winner == "a" else (eb, ea)
        assert result.verdict.speedup_percent == pytest.approx(
            100 * (slow.time.step_s / fast.time.step_s - 1), abs=0.06)
    diffs = {d.term: d.b_minus_a for d in result.memory_differences}
    assert diffs["weights"] == pytest.approx(eb.memory.weights_gib - ea.memory.weights_gib, abs=0.002)


def test_what_if_gpu_change_matches_two_engine_searches_and_names_reasons():
    result = call("what_if", {"scenario": SCENARIO, "change": {"gpu": "h200"}})
    before = recommend(*engine(), top_k=1).plans[0]
    after = recommend(*engine(gpu="h200"), top_k=1).plans[0]
    assert result.before_best.strategy == before.strategy and result.after_best.strategy == after.strategy
    assert result.tokens_per_s_change_percent == pytest.approx(
        100 * (after.throughput.tokens_per_s / before.throughput.tokens_per_s - 1), abs=0.06)
    memory = next(r for r in result.reasons if r.rule == "gpu_memory")
    assert memory.numbers["before_gib"] == get_gpu("h100").memory_gib
    assert memory.numbers["after_gib"] == get_gpu("h200").memory_gib
    assert [c.field for c in result.changed_inputs] == ["gpu"]


def test_what_if_sequence_length_keeps_tokens_per_step():
    result = call("what_if", {"scenario": SCENARIO, "change": {"seq_len": 8192}})
    # 256 sequences of 4096 tokens = 1,048,576 tokens; at 8192 tokens that is 128 sequences
    assert result.after.global_batch == 128 and result.after.global_batch_tokens == 256 * 4096
    assert result.after_best.strategy == recommend(*engine(seq=8192, batch=128), top_k=1).plans[0].strategy


def test_estimate_memory_defaults_to_the_recommended_plan():
    result = call("estimate_memory", {"scenario": SCENARIO, "plan": None})
    best = recommend(*engine(), top_k=1).plans[0]
    assert result.evaluation.strategy == best.strategy
    assert result.memory_gib == round(evaluate(*engine(), Strategy(
        tp=best.strategy.tp, pp=best.strategy.pp, vpp=best.strategy.vpp, cp=best.strategy.cp,
        zero_stage=best.strategy.zero_stage, micro_batch=best.strategy.micro_batch,
        recompute=best.strategy.recompute, sequence_parallel=best.strategy.sequence_parallel)).memory.total_gib, 3)
    assert result.largest_term.value == max(t.value for t in result.terms)


def test_export_attaches_the_exporters_text_and_hides_it_from_the_model():
    out = dispatch("export_config", json.dumps({"scenario": SCENARIO, "format": "deepspeed",
                                                "plan": {"tp": 1, "zero": 2, "micro_batch": 2}}), result_id="R4")
    expected = export_plan("deepspeed", *engine(), Strategy(zero_stage=2, micro_batch=2))
    assert out.result.attachments() == {"deepspeed": expected.text}
    seen = json.loads(out.content())
    assert "text" not in seen and seen["attached"].startswith("the deepspeed file (ds_config.json")
    assert expected.text not in out.content()


def test_export_refusal_carries_the_reason_and_a_substitute_the_format_can_run():
    result = call("export_config", {"scenario": SCENARIO, "format": "fsdp", "plan": {"tp": 8}})
    assert "TP" in result.refused_reason and result.substituted_for.startswith("TP=8")
    # the substitute was searched for FSDP and is one the FSDP snippet can express (no TP: the
    # snippet is plain fully_shard), so exporting it directly must succeed
    assert result.exported and result.planned_for == "fsdp" and "TP=8" not in result.plan
    assert list(result.attachments()) == ["fsdp"]


def test_a_substitute_is_found_past_a_crowd_of_near_ties():
    """Accelerate's Megatron plugin cannot configure ZeRO-2 with PP (it needs Megatron-FSDP). For
    Qwen2.5-14B on 24 A100s the top of the Megatron ranking is such plans, so the substitute lies
    deeper: it must be one Accelerate can express (ZeRO <= 1, or no pipeline)."""
    scenario = {"model": "qwen2.5-14b", "gpu": "a100-80gb", "gpus": 24, "seq_len": 4096, "global_batch": 256}
    result = call("export_config", {"scenario": scenario, "format": "accelerate",
                                    "plan": {"tp": 1, "pp": 3, "zero": 2, "micro_batch": 1}})
    assert "ZeRO-2" in result.refused_reason and result.exported
    assert "ZeRO-2" not in result.plan and ("ZeRO-0" in result.plan or "ZeRO-1" in result.plan or "PP=" not in result.plan)
    assert result.slowdown_percent is not None and list(result.attachments()) == ["accelerate"]


def test_export_refusal_with_no_substitute_is_a_normal_result():
    # DeepSpeed's config has no FP8 switch: no DeepSpeed plan can be exported at --precision fp8.
    result = call("export_config", {"scenario": {**SCENARIO, "precision": "fp8"}, "format": "deepspeed",
                                    "plan": {"tp": 1}})
    assert result.exported is False and "FP8" in result.refused_reason and result.attachments() == {}


# -- explain_concept: textbook numbers by hand ---------------------------------------------

def numbers(concept, plan, scenario=SCENARIO):
    return call("explain_concept", {"concept": concept, "scenario": scenario, "plan": plan}).numbers


def test_pipeline_bubble_by_hand():
    n = numbers("pipeline_bubble", {"pp": 4, "vpp": 2, "micro_batch": 1})
    # DP = 16 / 4 = 4; micro-batches m = 256 / (4·1) = 64; Narayanan et al. 2021: (p−1)/(v·m)
    assert n["micro_batches"] == 64
    assert n["bubble_over_ideal_percent"] == round(100 * 3 / (2 * 64), 1)  # 2.3 %
    assert n["bubble_share_percent"] == round(100 * 3 / (2 * 64 + 3), 1)
    e = evaluate(*engine(), Strategy(pp=4, vpp=2))
    assert n["engine_bubble_ms"] == round(1e3 * e.time.pp_bubble_s, 1)


def test_tensor_parallel_volume_by_hand():
    n = numbers("tensor_parallel", {"tp": 4, "micro_batch": 1, "recompute": "selective"})
    # one collective moves b·s·h bf16 values: 1 × 4096 × 4096 × 2 bytes = 32 MiB (Llama-3.1-8B, h = 4096)
    assert n["message_mib"] == 32.0
    # DP = 16/4 = 4, 64 micro-batches; 4 collectives × 32 layers × 64 × ring factor 2·(4−1)/4 × 32 MiB
    assert n["bytes_sent_per_gpu_per_step_gib"] == round(4 * 32 * 64 * 1.5 * 32 / 1024, 2)  # 384.0 GiB


def test_zero_stages_by_hand():
    n = numbers("zero", {"tp": 2, "zero": 1})
    psi = 8_030_261_248 / 2  # Llama-3.1-8B (Meta model card: 8.03 B) over TP=2; DP = 8
    gib = 2**30
    assert n["params_per_model_parallel_rank_billion"] == round(psi / 1e9, 2)
    assert n["textbook_stage0_gib"] == round(16 * psi / gib, 1)  # ZeRO paper: (2 + 2 + 12)·Ψ
    assert n["textbook_stage1_gib"] == round((4 * psi + 12 * psi / 8) / gib, 1)
    assert n["textbook_stage2_gib"] == round((2 * psi + 14 * psi / 8) / gib, 1)
    assert n["textbook_stage3_gib"] == round(16 * psi / 8 / gib, 1)


def test_lora_trainable_parameters_match_peft():
    n = numbers("lora", {"tp": 1}, {**SCENARIO, "model": "llama-3-8b", "mode": "lora", "lora_rank": 16})
    # Hugging Face PEFT's print_trainable_parameters() for Llama-3-8B, r=16 on all seven projections:
    # "trainable params: 41,943,040" — by hand: 32 layers × 16 × (8192 + 5120 + 5120 + 8192 + 3 × 18432).
    assert 32 * 16 * (8192 + 5120 + 5120 + 8192 + 3 * 18432) == 41_943_040
    assert n["trainable_params_million"] == 41.9


def test_qlora_nf4_weights_by_hand():
    n = numbers("qlora", {"tp": 1}, {**SCENARIO, "mode": "qlora"})
    # Dettmers et al. 2023: 4 bits per weight + 0.127 bits of double-quantised constants
    assert n["nf4_base_weights_gib"] == round(8_030_261_248 * 4.127 / 8 / 2**30, 1)
    assert n["bf16_base_weights_gib"] == round(8_030_261_248 * 2 / 2**30, 1)


def test_explain_without_a_scenario_is_generic_and_every_concept_renders():
    from shardwise.tools.dispatcher_numbers import dispatcher_numbers
    from shardwise.tools.explain import TITLES, calibration_numbers, interval_numbers

    for concept in TITLES:
        generic = call("explain_concept", {"concept": concept, "scenario": None, "plan": None})
        # the calibration entry states its bounds (constants, engine/assumptions/calibration_bounds.py) without a scenario,
        # the intervals entry its bands' held-out checks (engine/assumptions/error_bands.py), the dispatchers entry which
        # framework offers which (engine/validity/dispatchers.py)
        assert generic.numbers == {"calibration": calibration_numbers(None), "intervals": interval_numbers(None),
                                   "moe_dispatcher": dispatcher_numbers(None)}.get(concept, {})
        assert generic.text.startswith("### ")
        filled = call("explain_concept", {"concept": concept, "scenario": SCENARIO, "plan": {"tp": 2, "pp": 2}})
        assert "With your numbers" in filled.text, concept


def test_runner_up_is_not_a_tie():
    # Llama-3.1-70B on 64 H100s: the best plan ties with the same plan at CP=2 and twice the
    # micro-batch; "why it wins" compared with that tie and named compute (49.3 s vs 49.3 s) as
    # the deciding term.
    result = call("recommend_plans", {"scenario": {"model": "llama-3.1-70b", "gpu": "h100", "gpus": 64}})
    why = result.why_best
    assert why.step_ms_saved > 0 and why.speedup_percent > 0
    assert why.deciding_term.b_minus_a > 0  # the runner-up spends more time in the deciding term


def test_recommend_for_an_export_format_ranks_what_it_writes_and_counts_what_it_set_aside():
    # Llama-3-70B, 64 H100, 16k tokens, ranked for Megatron: the fastest plan is TP with CP (see
    # tests/engine/export/test_recommend_exportable.py), which ds_config refuses. (Ranked for DeepSpeed
    # itself, since session 11, no such plan is ranked at all: engine/validity/deepspeed_config.py.)
    scenario = {"model": "llama-3-70b", "gpu": "h100-sxm", "gpus": 64, "seq_len": 16384, "global_batch": 256,
                "framework": "megatron"}
    plain = call("recommend_plans", {"scenario": scenario, "top_k": 2})
    result = call("recommend_plans", {"scenario": scenario, "top_k": 2, "export_format": "deepspeed"})
    assert "deepspeed" not in plain.best.export_formats
    assert result.export_format == "deepspeed" and "deepspeed" in result.best.export_formats
    model, cluster = get_model("llama-3-70b"), build_cluster("h100-sxm", 64)
    setup = TrainingSetup(seq_len=16384, global_batch=256, framework="megatron")
    export_plan("deepspeed", model, cluster, setup, Strategy(**{k: getattr(result.best.strategy, k) for k in (
        "tp", "pp", "cp", "ep", "zero_stage", "micro_batch", "recompute", "sequence_parallel")}))
    fastest = next(a for a in result.set_aside if a.fastest == plain.best.label)
    assert "Ulysses" in fastest.reason
    # its speed-up is the two plans' tokens/s, as the figures report them
    assert fastest.faster_percent == pytest.approx(100 * (plain.best.tokens_per_s / result.best.tokens_per_s - 1),
                                                   abs=0.06)


def test_compare_sentence_says_long_steps_in_seconds():
    # By hand: 52,374.1 ms is 52.4 s; below ten seconds a duration stays in ms (353.5 ms).
    from shardwise.present import duration_ms

    assert duration_ms(52_374.1) == "52.4 s"
    assert duration_ms(9_999.0) == "9,999.0 ms"
    assert duration_ms(353.5) == "353.5 ms"
