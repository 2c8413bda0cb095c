"""DPO, GRPO and PPO through `evaluate`: the issue's acceptance checks on Llama-3.1-8B on 8 H100 (one
plan), the reference model's bytes by hand, what LoRA changes, and bad inputs.

Hand calculations: Llama-3.1-8B has Ψ = 8,030,261,248 parameters (Hugging Face); a bf16 reference
holds 2 bytes of each, split like the policy (TP, PP) and sharded over DP only where the framework
shards parameters (ZeRO-3 / FSDP)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.evaluate import evaluate
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.post_training import post_training
from shardwise.engine.post_training.modes import split_mode, training_setup
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

GIB = 2**30
PSI = 8_030_261_248
MODEL, CLUSTER = get_model("llama-3.1-8b"), build_cluster("h100", 8)
PLAN = Strategy(tp=2, zero_stage=1, micro_batch=2, recompute="selective")
TIME_PARTS = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_bubble_s", "pp_comm_s", "dp_comm_s",
              "optimizer_s", "optimizer_phase_s", "rollout_s", "reference_s", "old_logprob_s", "reward_s", "critic_s")


def run(mode: str, plan: Strategy = PLAN, **kw):
    setup = training_setup(mode, seq_len=kw.pop("seq_len", 4096), global_batch=kw.pop("global_batch", 256), **kw)
    return evaluate(MODEL, CLUSTER, setup, plan)


def test_dpo_adds_the_reference_and_its_forward_on_the_same_tokens():
    full, dpo = run("full"), run("dpo")
    assert dpo.valid and full.valid
    # TP 2, ZeRO-1 (parameters not sharded): 2 bytes × Ψ / 2 (up to TP-replicated norms, < 0.01 %)
    assert dpo.memory.details_gib["weights.reference"] == pytest.approx(2 * PSI / 2 / GIB, rel=1e-4)
    assert "weights.reference" not in full.memory.details_gib
    assert dpo.time.reference_s > 0 and dpo.time.step_s > full.time.step_s
    assert dpo.throughput.tokens_per_s < full.throughput.tokens_per_s  # same tokens per step, longer step
    assert dpo.memory.total_gib > full.memory.total_gib + 2 * PSI / 2 / GIB * 0.99
    assert dpo.post_training.pairs_per_step == 128


def test_grpo_generates_scores_and_trains_on_the_same_tokens():
    full = run("full")
    grpo = run("grpo", seq_len=None, prompt_len=512, response_len=3584)  # 4,096-token sequences
    assert grpo.valid
    assert grpo.time.rollout_s > 0 and grpo.time.reference_s > 0 and grpo.time.old_logprob_s > 0
    assert grpo.time.step_s > full.time.step_s
    assert grpo.memory.peak_phase in ("policy_training", "rollout", "reference_forward")
    assert grpo.post_training.defaults_used == ["group_size", "inference_tp"]


def test_time_parts_add_up_to_the_step():
    for mode in ("dpo", "grpo", "ppo", "grpo-lora"):
        t = run(mode).time
        assert sum(getattr(t, p) for p in TIME_PARTS) == pytest.approx(t.step_s, rel=1e-12), mode


def test_reference_is_sharded_with_the_policy_under_fsdp():
    fsdp = Strategy(tp=1, zero_stage=3, micro_batch=2, recompute="full")
    e = run("dpo", plan=fsdp, framework="fsdp")
    assert e.memory.details_gib["weights.reference"] == pytest.approx(2 * PSI / 8 / GIB, rel=1e-9)


def test_lora_reference_is_the_base_and_costs_no_memory():
    e = run("dpo-lora")
    assert "weights.reference" not in e.memory.details_gib
    assert e.time.reference_s > 0
    assert "adapters disabled" in e.post_training.reference


def test_ppo_adds_critic_and_reward_model():
    e, grpo = run("ppo"), run("grpo")
    d = e.memory.details_gib
    assert d["weights.reward_model"] == pytest.approx(d["weights.reference"])
    assert d["weights.critic"] == pytest.approx(d["weights.parameters"])  # the critic is laid out like the policy
    assert d["optimizer.critic"] == pytest.approx(d["optimizer.adam_states"])
    assert e.time.critic_s > 0 and e.time.reward_s > 0
    assert e.memory.total_gib > grpo.memory.total_gib
    assert e.post_training.group_size == 1 and grpo.post_training.group_size == 5


def test_rollout_peak_is_named_when_the_kv_cache_dominates():
    # 1,024 sequences of 8K tokens: the KV cache fills vLLM's budget; FSDP ZeRO-3 training is small.
    plan = Strategy(tp=1, zero_stage=3, micro_batch=1, recompute="full")
    e = run("grpo", plan=plan, seq_len=None, prompt_len=1024, response_len=7168, global_batch=1024, framework="fsdp")
    assert e.memory.peak_phase == "rollout"
    assert e.memory.details_gib["activations.kv_cache"] > 0
    assert e.memory.details_gib["weights.inference_engine"] == pytest.approx(2 * PSI / 2 / GIB)


def test_modes_parse_and_bad_inputs_are_clear():
    assert split_mode("dpo-lora") == ("lora", "dpo")
    assert split_mode("GRPO") == ("full", "grpo")
    assert split_mode("ppo+qlora") == ("qlora", "ppo")
    with pytest.raises(ShardwiseInputError, match="allowed"):
        split_mode("rlhf")
    with pytest.raises(ValidationError, match="pairs"):
        TrainingSetup(global_batch=255, post_training=post_training("dpo"))
    with pytest.raises(ValidationError, match="prompt \\+ response"):
        TrainingSetup(seq_len=4096, post_training=post_training("grpo"))
    with pytest.raises(ShardwiseInputError, match="only to mode grpo or ppo"):
        training_setup("full", response_len=1024)
    with pytest.raises(ShardwiseInputError, match="not prompt \\+ response"):
        training_setup("grpo", seq_len=1024, prompt_len=512, response_len=1024)
    # a sequence length alone: the prompt takes its default (512), the response the rest
    s = training_setup("grpo", seq_len=2048)
    assert (s.post_training.prompt_len, s.post_training.response_len, s.seq_len) == (512, 1536, 2048)
    # a token budget under DPO rounds to whole pairs
    assert training_setup("dpo", seq_len=4096, global_batch_tokens=3 * 4096).global_batch == 4


def test_dpo_micro_batch_holds_whole_pairs():
    e = run("dpo", plan=Strategy(tp=2, zero_stage=1, micro_batch=1))
    assert not e.valid and e.violations[0].rule == "dpo_microbatch_holds_pairs"
    assert run("full", plan=Strategy(tp=2, zero_stage=1, micro_batch=1)).valid


def test_what_if_changes_the_rollout_shape():
    from shardwise.engine.whatif import apply_changes, parse_changes

    grpo = training_setup("grpo", global_batch=256)  # 512 + 512, verl's defaults
    _, longer = apply_changes(CLUSTER, grpo, parse_changes("response_len=2k"))
    assert (longer.post_training.response_len, longer.seq_len, longer.global_batch) == (2048, 512 + 2048, 256)
    assert "response_len" not in longer.post_training.defaults_used
    _, switched = apply_changes(CLUSTER, training_setup("full", seq_len=1024, global_batch=256),
                                parse_changes("mode=grpo,group_size=8"))
    assert (switched.post_training.group_size, switched.seq_len) == (8, 1024)
    with pytest.raises(ShardwiseInputError, match="only to mode grpo or ppo"):
        apply_changes(CLUSTER, training_setup("dpo", global_batch=256), parse_changes("response_len=1k"))


def test_nothing_fits_offers_a_wider_rollout_engine():
    from shardwise.engine.search import recommend

    # Llama-3.1-70B's rollout engine at verl's TP 2 holds 70.6 GB of weights per GPU: beyond vLLM's 40 GiB.
    setup = training_setup("grpo-lora", global_batch=64)
    r = recommend(get_model("llama-3.1-70b"), CLUSTER, setup)
    assert not r.plans
    fixes = {f.rule: f for f in r.nothing_fits.options}
    assert fixes["inference_tp"].fits and fixes["inference_tp"].change == {"inference_tp": 4}
    assert fixes["lora"].change == {"mode": "grpo-lora"} and not fixes["lora"].applicable


def test_moe_policy_forward_passes_price_the_expert_exchange():
    # Mixtral-8x7B, EP 8: the reference forward includes half of the layer's dispatch and combine.
    model, plan = get_model("mixtral-8x7b"), Strategy(tp=1, ep=8, zero_stage=3, micro_batch=2, recompute="full")
    setup = training_setup("dpo", seq_len=4096, global_batch=256)
    e = evaluate(model, CLUSTER, setup, plan)
    assert e.valid and e.time.reference_s > 0 and e.time.ep_comm_s > 0
