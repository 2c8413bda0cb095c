"""explain: structure and signs, on stand-in objectives solvable by hand and on the real models."""

from __future__ import annotations

import numpy as np
import pytest

import shardwise.engine.evaluate as evaluate_module
import shardwise.engine.memory as memory_module
import shardwise.engine.performance as performance_module
from shardwise.engine.arrays import MemoryArrays, TimeArrays
from shardwise.engine.cluster import Cluster
from shardwise.engine.explain import TIME_TERMS, compare_plans, counterfactuals, explain
from shardwise.engine.hardware import GPUSpec, NetworkSpec
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

GIB = 2**30
NVLINK = NetworkSpec(id="nvlink", name="NVLink", bandwidth_gbs=450, latency_us=2)
GPU80 = GPUSpec(id="gpu80", name="GPU 80", memory_gib=80, bf16_tflops=1000, hbm_bandwidth_gbs=3000,
                intra_node=NVLINK)
CLUSTER = Cluster(gpu=GPU80, num_gpus=8, gpus_per_node=8, network=NVLINK)
SMALL = ModelSpec(name="small", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                  ffn_hidden_size=14336, vocab_size=32000)
SETUP = TrainingSetup(seq_len=1024, global_batch=64)


@pytest.fixture
def standin(monkeypatch):
    """Memory 16 B/param / (TP·PP); time 1 s + recompute + 50 ms per extra TP or CP rank,
    80 ms per extra stage, 10 ms per ZeRO stage."""

    def install(params: float):
        def memory(model, cluster, setup, grid):
            z = np.zeros(len(grid))
            return MemoryArrays(weights=16.0 * params / (grid.tp * grid.pp), gradients=z, optimizer=z,
                                activations=z, other=z)

        def time(model, cluster, setup, grid):
            z = np.zeros(len(grid))
            return TimeArrays(compute=1.0 + np.choose(grid.recompute, [0.0, 0.05, 0.3]), tp_comm=0.05 * (grid.tp - 1),
                              cp_comm=0.05 * (grid.cp - 1), ep_comm=z, pp_bubble=0.08 * (grid.pp - 1), pp_comm=z,
                              dp_comm=0.01 * grid.zero_stage, optimizer=z, model_flops_per_step=z + 1e15,
                              hardware_flops_per_step=z + 1e15)

        for module in (memory_module, evaluate_module):
            monkeypatch.setattr(module, "memory_per_gpu", memory)
        for module in (performance_module, evaluate_module):
            monkeypatch.setattr(module, "step_time", time)

    return install


def test_compare_names_the_deciding_term(standin):
    standin(1e9)
    c = compare_plans(SMALL, CLUSTER, SETUP, Strategy(tp=2), Strategy(tp=4))
    # steps: 1.05 (selective) + 0.05·(TP−1) + 0.01 (ZeRO-1) → 1.11 s vs 1.21 s.
    assert c.winner == "a" and c.decided_by == "throughput"
    assert c.speedup == pytest.approx(1.21 / 1.11)
    assert c.decisive[0].term == "tp_comm_s"
    assert (c.decisive[0].a, c.decisive[0].b, c.decisive[0].delta) == pytest.approx((0.05, 0.15, 0.10))
    # DP 8/2 = 4 → 8/4 = 2, so gradient accumulation 64/4 = 16 → 64/2 = 32.
    assert [(k.knob, k.before, k.after) for k in c.knobs] == [("tp", 2, 4), ("dp", 4, 2), ("grad_accum", 16, 32)]
    weights = next(t for t in c.memory if t.term == "weights_gib")
    assert weights.delta == pytest.approx(16e9 / 4 / GIB - 16e9 / 2 / GIB)


def test_memory_and_validity_decide_before_speed(standin):
    standin(7e9)  # 104.3 GiB at TP=1, over 72 GiB usable
    c = compare_plans(SMALL, CLUSTER, SETUP, Strategy(tp=1), Strategy(tp=2))
    assert (c.winner, c.decided_by, c.rules) == ("b", "memory", ["memory_capacity"])
    c = compare_plans(SMALL, CLUSTER, SETUP, Strategy(tp=3), Strategy(tp=2))
    assert c.winner == "b" and c.decided_by == "validity" and "tp_divides_heads" in c.rules


def test_binding_constraint_is_memory_when_the_faster_neighbour_does_not_fit(standin):
    standin(7e9)
    x = explain(SMALL, CLUSTER, SETUP, Strategy(tp=2, zero_stage=0, recompute="none"))
    b = x.binding
    # TP 2 → 1 saves 50 ms but needs 16 · 7e9 B = 104.3 GiB.
    assert (b.kind, b.rule, b.knob, b.before, b.after) == ("memory", "memory_capacity", "tp", 2, 1)
    assert b.numbers["memory_gib"] == pytest.approx(16 * 7e9 / GIB)
    assert b.numbers["step_delta_s"] == pytest.approx(-0.05)
    by_change = {(c.knob, c.after): c for c in x.counterfactuals}
    up = by_change[("tp", 4)]
    assert up.outcome == "slower" and up.step_delta_s == pytest.approx(0.10)
    assert up.memory_delta_gib == pytest.approx(16 * 7e9 / 4 / GIB - 16 * 7e9 / 2 / GIB)
    assert by_change[("tp", 1)].outcome == "does_not_fit"
    assert by_change[("pp", 2)].outcome == "slower"


def test_binding_constraint_is_the_growing_term_at_an_optimum(standin):
    standin(1e9)  # fits everywhere; TP=1, PP=1, ZeRO-0, no recompute is the fastest plan
    x = explain(SMALL, CLUSTER, SETUP, Strategy(tp=1, zero_stage=0, recompute="none"))
    b = x.binding
    # The cheapest move is ZeRO 0 → 1 (+10 ms of DP communication); TP or CP cost 50 ms, PP 80 ms.
    assert b.kind == "time_term" and (b.knob, b.after) == ("zero_stage", 1)
    assert b.term == "dp_comm_s" and (b.numbers["a"], b.numbers["b"]) == pytest.approx((0.0, 0.01))
    assert not [c for c in x.counterfactuals if c.outcome == "faster"]


def test_an_invalid_counterfactual_carries_its_rule(standin):
    standin(1e9)
    options = counterfactuals(SMALL, CLUSTER, SETUP, Strategy(tp=8, zero_stage=0))
    tp16 = next(c for c in options if (c.knob, c.after) == ("tp", 16))
    assert tp16.outcome == "invalid" and "tp_cp_pp_divides_gpus" in {v.rule for v in tp16.violations}


def test_real_models_terms_add_up_and_tp_shards_weights():
    """On the real models: the exposed time terms add up to the step (their definition), and
    doubling TP shards the attention and MLP weights further, so weights per GPU go down."""
    from shardwise.engine.hardware_catalog import get_gpu, get_network
    from shardwise.engine.model_catalog import get_model

    model = get_model("llama-3.1-70b")
    cluster = Cluster(gpu=get_gpu("h100-sxm"), num_gpus=64, gpus_per_node=8, network=get_network("ib-ndr"))
    setup = TrainingSetup(seq_len=8192, global_batch=512)
    x = explain(model, cluster, setup, Strategy(tp=4, pp=2, zero_stage=1), Strategy(tp=8, pp=1, zero_stage=1))
    for side in ("a", "b"):
        t = getattr(x.comparison, side).time
        assert sum(getattr(t, term) for term in TIME_TERMS) == pytest.approx(t.step_s)
    assert x.comparison.winner in ("a", "b", "tie", "neither")
    base = x.winner
    tp_up = next(c for c in x.counterfactuals if c.knob == "tp" and c.after == 2 * c.before)
    assert tp_up.outcome != "invalid"  # TP 8 → 16 on 64 GPUs or 4 → 8: both divide heads and GPUs
    up = explain(model, cluster, setup, Strategy(tp=tp_up.plan.tp, pp=tp_up.plan.pp, zero_stage=1)).winner
    assert up.memory.weights_gib < base.memory.weights_gib


def test_explain_says_why_ep_stays_in_a_node_or_crosses():
    """DeepSeek-V3 on 2,048 H800 with DeepEP: the plan's EP against EP on the other side of the node
    boundary (8 GPUs per node: EP·ETP > 8 crosses), with the EP communication each pays."""
    from shardwise.engine.explain import explain
    from shardwise.engine.inputs import build_cluster, resolve_model
    from shardwise.engine.strategy import Strategy
    from shardwise.engine.training import TrainingSetup

    model, cluster = resolve_model("deepseek-v3"), build_cluster("h800", 2048)
    setup = TrainingSetup(seq_len=4096, global_batch=15360, precision="fp8", moe_dispatcher="deepep")
    x = explain(model, cluster, setup, Strategy(tp=1, pp=16, ep=64, zero_stage=1))
    e = x.expert_parallel
    assert (e.ep, e.crosses_nodes, e.dispatcher) == (64, True, "deepep")
    assert [a.ep for a in e.alternatives] == [8] and not e.alternatives[0].crosses_nodes
    inside = x.expert_parallel.alternatives[0]
    # In a node the dispatch runs on NVLink (cheaper), but each GPU holds 256/8 = 32 experts instead of 4.
    assert inside.ep_comm_delta_s < 0 and inside.memory_delta_gib > 10
    assert inside.outcome == "does_not_fit"
    y = explain(model, cluster, setup, Strategy(tp=2, pp=32, ep=8, zero_stage=1, recompute="none"))
    assert not y.expert_parallel.crosses_nodes and y.expert_parallel.alternatives[0].ep == 16
    assert y.expert_parallel.alternatives[0].crosses_nodes
    assert explain(resolve_model("llama-3-8b"), build_cluster("h100", 8), TrainingSetup(),
                   Strategy(tp=1)).expert_parallel is None
