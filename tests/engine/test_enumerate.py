"""The search space on a case small enough to count by hand."""

from __future__ import annotations

from shardwise.engine.cluster import Cluster
from shardwise.engine.constraints import parse_constraints
from shardwise.engine.enumerate import enumerate_plans
from shardwise.engine.hardware import GPUSpec, NetworkSpec
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.training import TrainingSetup
from shardwise.engine.validity.rule import Scenario

NVLINK = NetworkSpec(id="nvlink", name="NVLink", bandwidth_gbs=450, latency_us=2)
GPU = GPUSpec(id="g", name="G", memory_gib=80, bf16_tflops=989, hbm_bandwidth_gbs=3350, intra_node=NVLINK)
TINY = ModelSpec(name="tiny", num_layers=4, hidden_size=512, num_attention_heads=8, ffn_hidden_size=2048,
                 vocab_size=1000)


def scenario(framework="megatron") -> Scenario:
    cluster = Cluster(gpu=GPU, num_gpus=2, gpus_per_node=2, network=NVLINK)
    return Scenario(TINY, cluster, TrainingSetup(seq_len=2048, global_batch=2, framework=framework))


def test_two_gpus_counted_by_hand():
    """2 GPUs, 4 layers, global batch 2, megatron.

    Candidates: TP {1,2}, CP {1,2} (2048/2 = 1024 tokens per rank is allowed), (PP,VPP) in
    {(1,1), (2,1), (2,2)} (PP·VPP ≤ 4 layers), micro-batch {1,2}, ZeRO {0,1,2,3},
    recompute 3 modes, SP {on,off} only when TP = 2.
    searched = 6 layouts·2·4·3 (TP=1) + 6·2·4·3·2 (TP=2) = 144 + 288 = 432.
    TP·CP·PP must divide 2: valid layouts TP1CP1PP1, TP2, CP2, PP2·VPP1, PP2·VPP2;
      excluded 2 TP=1 layouts·24 + 5 TP=2 layouts·48 = 288.
    Batch: DP=2 with micro-batch 2 needs 4 | 2 → 12 plans (4 ZeRO·3 recompute);
      PP2·VPP2 with micro-batch 2 has 1 micro-batch, not a multiple of PP=2 → 12.
    Options: 8 (layout, micro-batch) rows → 6·12 + 2·24 = 120 plans; ZeRO>0 with DP·CP = 1
      duplicates ZeRO-0: TP2 2·3·3·2 = 36, PP2·VPP1 2·3·3 = 18, PP2·VPP2 1·3·3 = 9 → 63.
    Left: 120 − 63 = 57.
    """
    e = enumerate_plans(scenario(), parse_constraints({}))
    assert e.searched == 432
    assert e.excluded == {"tp_cp_pp_divides_gpus": 288, "dp_microbatch_divides_global_batch": 12,
                          "vpp_microbatch_groups": 12, "zero_without_dp": 63}
    assert len(e.grid) == 57
    assert e.searched == sum(e.excluded.values()) + len(e.grid)


def test_pins_narrow_the_space():
    # TP pinned to 2: layouts TP2 × CP{1,2} × 3 (PP,VPP) = 6, each 2·4·3·2 = 48 plans.
    e = enumerate_plans(scenario(), parse_constraints({"tp": 2}))
    assert e.searched == 6 * 48
    assert set(e.grid.tp.tolist()) == {2}
    # The only valid layout is TP2·CP1·PP1 (DP=1): micro-batch 1 or 2, ZeRO-0 only (others
    # duplicate it), 3 recompute modes, SP on/off → 2·1·3·2 = 12.
    assert len(e.grid) == 12


def test_fsdp_flavour_has_no_zero1():
    e = enumerate_plans(scenario("fsdp"), parse_constraints({}))
    assert 1 not in set(e.grid.zero_stage.tolist())
    assert e.space.zero_stage == (0, 2, 3)


def test_interleaving_only_where_layers_split_into_equal_chunks():
    """6 layers on 2 GPUs: PP=2 with VPP=3 gives 6 chunks of 1 layer (Megatron's
    --num-layers-per-virtual-pipeline-stage 1); VPP=2 would need 1.5 layers per chunk, so the
    search leaves it out (evaluate still accepts it, with the uneven_pipeline_split warning)."""
    six = TINY.model_copy(update={"num_layers": 6})
    cluster = Cluster(gpu=GPU, num_gpus=2, gpus_per_node=2, network=NVLINK)
    e = enumerate_plans(Scenario(six, cluster, TrainingSetup(seq_len=2048, global_batch=4)), parse_constraints({}))
    pipelined = {(int(p), int(v)) for p, v in zip(e.grid.pp, e.grid.vpp) if p > 1}
    assert pipelined == {(2, 1), (2, 3)}
