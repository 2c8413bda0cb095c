"""recommend(): ranking machinery on stand-in objectives a hand can solve, then the real
memory and performance models against hand estimates."""

from __future__ import annotations

import math

import numpy as np
import pytest

import shardwise.engine.evaluate as evaluate_module
import shardwise.engine.memory as memory_module
import shardwise.engine.performance as performance_module
from shardwise.engine.arrays import MemoryArrays, TimeArrays
from shardwise.engine.cluster import Cluster
from shardwise.engine.enumerate import enumerate_plans
from shardwise.engine.constraints import parse_constraints
from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.hardware import GPUSpec, NetworkSpec
from shardwise.engine.hardware_catalog import get_gpu, get_network, list_gpus
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.search import recommend
from shardwise.engine.synthetic import model_from_param_count
from shardwise.engine.training import TrainingSetup
from shardwise.engine.validity.rule import Scenario

GIB = 2**30
NVLINK = NetworkSpec(id="nvlink", name="NVLink", bandwidth_gbs=450, latency_us=2)
IB = NetworkSpec(id="ib", name="InfiniBand", bandwidth_gbs=50, latency_us=5)
GPU80 = GPUSpec(id="gpu80", name="GPU 80", memory_gib=80, bf16_tflops=1000, hbm_bandwidth_gbs=3000,
                intra_node=NVLINK)
# 32 layers, 32 heads: every TP and PP up to 8 is valid; the weights are what the stand-in counts.
SMALL = ModelSpec(name="small", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                  ffn_hidden_size=14336, vocab_size=32000)


def cluster8(gpu: GPUSpec = GPU80) -> Cluster:
    return Cluster(gpu=gpu, num_gpus=8, gpus_per_node=8, network=IB)


@pytest.fixture
def standin(monkeypatch):
    """Replace the memory and performance models by formulas simple enough to solve by hand."""

    def install(params: float, bytes_per_param: float = 16.0, zero3_shards: bool = False):
        def memory(model, cluster, setup, grid):
            shards = grid.tp * grid.pp * (np.where(grid.zero_stage == 3, grid.dp * grid.cp, 1) if zero3_shards else 1)
            z = np.zeros(len(grid))
            return MemoryArrays(weights=bytes_per_param * params / shards, gradients=z, optimizer=z,
                                activations=z, other=z)

        def time(model, cluster, setup, grid):
            z = np.zeros(len(grid))
            # compute 1 s (+recompute), TP 50 ms per extra rank, PP 80 ms, CP 50 ms, ZeRO 10 ms per stage.
            compute = 1.0 + np.choose(grid.recompute, [0.0, 0.05, 0.3])
            return TimeArrays(compute=compute, tp_comm=0.05 * (grid.tp - 1), cp_comm=0.05 * (grid.cp - 1), ep_comm=z,
                              pp_bubble=0.08 * (grid.pp - 1), pp_comm=z, dp_comm=0.01 * grid.zero_stage, optimizer=z,
                              model_flops_per_step=z + 1e15, hardware_flops_per_step=z + 1e15)

        for module in (memory_module, evaluate_module):
            monkeypatch.setattr(module, "memory_per_gpu", memory)
        for module in (performance_module, evaluate_module):
            monkeypatch.setattr(module, "step_time", time)

    return install


SETUP = TrainingSetup(seq_len=1024, global_batch=64)


def test_a_model_that_only_fits_with_tp_2(standin):
    # 16 bytes/param · 7e9 = 104.3 GiB at TP·PP = 1 > 72 GiB usable (80 · 0.9); 52.2 GiB at 2.
    standin(7e9)
    r = recommend(SMALL, cluster8(), SETUP, top_k=5, headroom=0.1)
    best = r.plans[0].strategy
    # Cheapest way to halve memory: TP=2 costs 50 ms, PP=2 80 ms, CP does not shard weights here.
    # Everything else at its cheapest: ZeRO-0, no recompute; ties go to micro-batch 1 and SP on.
    assert (best.tp, best.pp, best.vpp, best.cp, best.zero_stage, best.recompute, best.micro_batch) == \
        (2, 1, 1, 1, 0, "none", 1)
    assert best.sequence_parallel
    assert all(p.strategy.tp * p.strategy.pp >= 2 for p in r.plans)
    # Every valid plan with TP·PP = 1 was dropped for memory, and only those.
    one = enumerate_plans(Scenario(SMALL, cluster8(), SETUP), parse_constraints({"tp": 1, "pp": 1}))
    assert r.excluded["does_not_fit"] == len(one.grid)
    assert r.searched == sum(r.excluded.values()) + r.fitting
    assert [p.throughput.tokens_per_s for p in r.plans] == sorted((p.throughput.tokens_per_s for p in r.plans),
                                                                   reverse=True)


def test_headroom_changes_what_fits(standin):
    # Keep half free: 40 GiB usable; TP·PP = 2 needs 52.2 GiB, TP·PP = 4 needs 26.1 GiB. Among the
    # ways to reach 4: TP=4 costs 150 ms, TP=2·PP=2 130 ms, PP=4 240 ms → TP=2, PP=2.
    standin(7e9)
    best = recommend(SMALL, cluster8(), SETUP, headroom=0.5).plans[0].strategy
    assert (best.tp, best.pp) == (2, 2)


def test_constraints_pin_and_bound(standin):
    standin(7e9)
    r = recommend(SMALL, cluster8(), SETUP, tp=4, max_pp=1, recompute="full")
    assert {(p.strategy.tp, p.strategy.pp, p.strategy.recompute) for p in r.plans} == {(4, 1, "full")}
    assert r.constraints == {"tp": 4, "recompute": "full", "max_pp": 1}
    assert r.setup.framework == "megatron"
    r = recommend(SMALL, cluster8(), SETUP, framework="fsdp", top_k=50)
    assert r.setup.framework == "fsdp" and 1 not in {p.strategy.zero_stage for p in r.plans}


def test_ranking_is_deterministic(standin):
    standin(7e9)
    first = recommend(SMALL, cluster8(), SETUP, top_k=10)
    again = recommend(SMALL, cluster8(), SETUP, top_k=10)
    assert [p.strategy for p in first.plans] == [p.strategy for p in again.plans]


def test_bad_arguments_are_input_errors(standin):
    standin(7e9)
    with pytest.raises(ShardwiseInputError, match="headroom"):
        recommend(SMALL, cluster8(), SETUP, headroom=1.5)
    with pytest.raises(ShardwiseInputError, match="top_k"):
        recommend(SMALL, cluster8(), SETUP, top_k=0)
    with pytest.raises(ShardwiseInputError, match="unknown search constraint"):
        recommend(SMALL, cluster8(), SETUP, tensor=4)


def test_nothing_fits_names_the_minimum_gpu_count(standin):
    # ZeRO-3 shards the stand-in's 16 bytes/param over every GPU: 16 · 1e12 / N ≤ 72 GiB needs
    # N ≥ 206.96. Doubling from 8 finds 256; refining 128 + 16k gives 208 (= 16·13: PP=13 works).
    standin(1e12, zero3_shards=True)
    r = recommend(SMALL, cluster8(), TrainingSetup(seq_len=1024, global_batch=1024))
    assert r.plans == [] and r.nothing_fits.reason == "out_of_memory"
    assert r.nothing_fits.min_gpus == 208
    assert 16e12 / 208 <= 72 * GIB < 16e12 / 192
    options = {o.rule: o for o in r.nothing_fits.options}
    assert options["more_gpus"].fits and options["more_gpus"].change == {"num_gpus": 208}
    assert not options["zero3"].applicable  # ZeRO-3 was already searched
    assert not options["lora"].fits  # the stand-in ignores the mode


def test_nothing_fits_names_the_smallest_larger_gpu(standin):
    # 16 · 50e9 / 8 GPUs = 93.1 GiB per GPU: over 72 GiB usable on 80 GiB; a GPU fits if
    # 0.9 · memory ≥ 93.1 GiB. The expected answer is read from the catalog with that formula.
    standin(50e9)
    need = 16 * 50e9 / 8 / GIB
    fitting = sorted((g for g in list_gpus() if g.memory_gib > 80 and 0.9 * g.memory_gib >= need),
                     key=lambda g: (g.memory_gib, g.id))
    r = recommend(SMALL, cluster8(), SETUP)
    assert r.nothing_fits.larger_gpu == fitting[0].id


def test_no_valid_plan_explains_the_blocking_rules(standin):
    standin(1e9)
    # 7 GPUs, 32 heads: only TP=1 divides the heads, so TP·CP·PP = 7 needs PP=7 (32 layers, allowed)
    # or DP=7, which cannot divide a global batch of 64.
    c = Cluster(gpu=GPU80, num_gpus=7, gpus_per_node=7, network=IB)
    r = recommend(SMALL, c, SETUP, pp=1)
    assert r.plans == [] and r.nothing_fits.reason == "no_valid_plan"
    assert "dp_microbatch_divides_global_batch" in {v.rule for v in r.nothing_fits.blocking}


# --- the real models against hand estimates -------------------------------------------------

def test_real_models_a_model_that_needs_tensor_parallelism():
    """Llama-3.1-8B full training without ZeRO, PP or CP on 8 x 80 GB: weights (2 B) + gradients
    (≥ 2 B) + fp32 master, m, v (12 B) ≥ 16 B/param · 8.03e9 = 119.7 GiB > 72 GiB at TP=1;
    at TP=8 those states are 15 GiB, and 1,024-token sequences add little."""
    from shardwise.engine.model_catalog import get_model

    model = get_model("llama-3.1-8b")
    cluster = Cluster(gpu=get_gpu("h100-sxm"), num_gpus=8, gpus_per_node=8, network=get_network("ib-ndr"))
    r = recommend(model, cluster, TrainingSetup(seq_len=1024, global_batch=64), top_k=5, zero=0, pp=1, cp=1)
    assert r.plans and all(p.strategy.tp >= 2 for p in r.plans)
    assert all(p.memory.fits for p in r.plans)


def test_real_models_10t_params_on_8_small_gpus():
    """10 T parameters on 8 x 24 GB: nothing fits. With every state sharded, at least
    16 B/param · 1e13 / 24 GiB = 6,210 GPUs are needed — the answer cannot be fewer."""
    model = model_from_param_count(1e13)
    cluster = Cluster(gpu=get_gpu("rtx-4090"), num_gpus=8, gpus_per_node=8, network=get_network("ib-ndr"))
    r = recommend(model, cluster, TrainingSetup(seq_len=4096, global_batch=1024))
    n = r.nothing_fits
    assert r.plans == [] and n.reason == "out_of_memory"
    assert n.lowest_memory_gib > n.usable_gib
    assert n.min_gpus is not None and n.min_gpus >= math.ceil(16 * 1e13 / (24 * GIB))
    assert n.min_gpus_plan is not None
    rules = {o.rule for o in n.options}
    assert {"more_gpus", "recompute_full", "zero3", "lora", "qlora", "larger_gpu"} <= rules
