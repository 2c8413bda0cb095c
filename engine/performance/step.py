"""step_time: assemble one optimizer step from its parts, for every plan of a PlanGrid.

Per micro-batch on one rank: compute (layers of its stage, plus embedding / logits on the
first / last stage) and the exposed TP, CP and EP communication inside it. The pipeline runs
m micro-batches at the busiest stage's pace plus the fill/drain bubble; then the exposed
data-parallel synchronisation and the optimizer step (in the Megatron family with its
optimizer phase: optimizer_phase.py). Reported parts are exposed seconds that
add up to the step: compute, tp/cp/ep are the average stage's; pp_bubble is everything the
pipeline adds on top (fill/drain and stage imbalance).
"""

from __future__ import annotations

import numpy as np

from ..arrays import TimeArrays
from ..assumptions import network as dp_wire
from ..assumptions.compute import FULL_RECOMPUTE_HOST_FACTOR, PIPELINE_FILL_PER_STAGE
from ..assumptions.cuda_graphs import HOST_FLOOR_KEPT
from ..assumptions.performance import DEFAULT_ASSUMPTIONS, PerformanceAssumptions
from ..cluster import Cluster
from ..flops import hardware_flops_per_token, lora_trainable_params, model_flops_per_token
from ..model_spec import ModelSpec
from ..params import param_breakdown
from ..plans import RECOMPUTE_FULL, RECOMPUTE_SELECTIVE, PlanGrid
from ..training import TrainingSetup
from .compute import microbatch_compute
from .cp import cp_time_per_layer
from .dp import ShardedParams, dp_exposed_time
from .ep import ep_time_per_moe_layer
from .optimizer import optimizer_time
from .optimizer_phase import optimizer_phase_time
from .post_training import add_post_training
from .pp import busiest_stage_layers, pipeline_time, pipeline_time_uneven, pp_p2p_time
from .tied_embeddings import tied_embedding_sync_time
from .topology import pp_group
from .tp import tp_time_per_layer


def trainable_params_per_gpu(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid) -> ShardedParams:
    """Trainable weights on one GPU before ZeRO: dense ones split by TP and PP, experts by EP·ETP and PP."""
    if setup.mode != "full":
        adapters = lora_trainable_params(model, setup) / (grid.tp * grid.pp)
        return ShardedParams(dense=adapters.astype(np.float64), expert=np.zeros(len(grid)))
    b = param_breakdown(model)
    dense = b.non_expert / (grid.tp * grid.pp)
    expert = b.routed_experts / (grid.ep * grid.etp * grid.pp)
    return ShardedParams(dense=dense.astype(np.float64), expert=np.asarray(expert, dtype=np.float64))


def host_floor_kept(model: ModelSpec, setup: TrainingSetup) -> float:
    """Fraction of the per-layer host floor the setup's CUDA graphs leave, averaged over the model's
    dense and MoE layers."""
    kept = HOST_FLOOR_KEPT[setup.cuda_graphs]
    moe_share = model.num_moe_layers / model.num_layers
    return (1 - moe_share) * kept["dense"] + moe_share * kept["moe"]


def step_time(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid,
              assumptions: PerformanceAssumptions | None = None) -> TimeArrays:
    assume = assumptions or DEFAULT_ASSUMPTIONS
    mb = microbatch_compute(model, cluster, setup, grid, assume)
    L = model.num_layers
    m = grid.num_microbatches

    # Per layer (model-average mix of dense and MoE layers), per micro-batch.
    layer_compute = mb.layer_mix(model, "total")
    tp_layer, tp_ends = tp_time_per_layer(model, cluster, setup, grid, mb.tokens, assume)
    cp_layer = cp_time_per_layer(model, cluster, grid, mb.tokens, mb.dense_layer.attention_forward, assume,
                                 setup.cp_comm_type)
    moe_window = mb.moe_layer.total if mb.moe_layer is not None else None
    ep_layer = ep_time_per_moe_layer(model, cluster, setup, grid, mb.tokens, assume, moe_window) * (model.num_moe_layers / L)

    # Average stage and busiest stage (the last one also runs the logit layer and the loss).
    avg_layers = L / grid.pp
    ends = mb.embedding + mb.logits
    compute_avg = avg_layers * layer_compute + ends / grid.pp
    comm_layer = tp_layer + cp_layer + ep_layer
    tp_avg = avg_layers * tp_layer + tp_ends / grid.pp
    per_mb_avg = compute_avg + avg_layers * (cp_layer + ep_layer) + tp_avg
    per_layer = layer_compute + comm_layer
    extra = (mb.logits + tp_ends / 2) / per_layer
    busiest = busiest_stage_layers(L, grid.pp, extra, assume.balance_output_layer)
    per_mb_busiest = np.where(grid.pp > 1, busiest * per_layer, per_mb_avg)

    # The host must dispatch every layer's kernels: a micro-batch is never faster than that.
    # Some frameworks pay more per layer when pipeline sends leave the node (see the assumption).
    # CUDA graphs remove the floor of the layers they capture (assumptions/cuda_graphs.py).
    pp_remote = pp_group(cluster, grid, assume).crosses_nodes
    host_per_layer = assume.host_time_for(setup.framework) + np.where(
        pp_remote, assume.pipeline_host_time_for(setup.framework) * grid.tp, 0.0)
    host = (host_per_layer * avg_layers * host_floor_kept(model, setup)
            * np.where(grid.recompute == RECOMPUTE_FULL, FULL_RECOMPUTE_HOST_FACTOR, 1.0))
    host_wait = np.maximum(host - per_mb_avg, 0.0)
    compute_avg = compute_avg + host_wait
    per_mb_avg = per_mb_avg + host_wait
    per_mb_busiest = np.maximum(per_mb_busiest, per_mb_avg)

    # Every stage's own forward + backward: the model's layers and the logit layer once.
    pipeline = (pipeline_time_uneven(per_mb_avg, per_mb_busiest, (L + extra) * per_layer, grid)
                if setup.framework in PIPELINE_FILL_PER_STAGE else pipeline_time(per_mb_avg, per_mb_busiest, grid))
    bubble = np.maximum(pipeline - m * per_mb_avg, 0.0)

    # Data parallelism and the optimizer.
    params = trainable_params_per_gpu(model, setup, grid)
    mb_fwd = avg_layers * mb.layer_mix(model, "forward")
    mb_bwd = avg_layers * (mb.layer_mix(model, "backward") + mb.layer_mix(model, "recompute"))
    grad_bytes = dp_wire.GRAD_REDUCE_BYTES_BF16 if setup.grad_reduce_dtype == "bf16" else dp_wire.GRAD_REDUCE_BYTES
    dp = dp_exposed_time(cluster, grid, params, avg_layers, mb_fwd, mb_bwd, assume, setup.framework,
                         grad_bytes=grad_bytes,
                         gather_bytes=dp_wire.PARAM_GATHER_BYTES_FP8 if setup.fp8_param_gather
                         else dp_wire.PARAM_GATHER_BYTES)
    # A tied embedding's two copies (first and last stage) are summed after the DP sync, exposed.
    tied_sync = tied_embedding_sync_time(model, cluster, setup, grid, grad_bytes, assume)
    optimizer = optimizer_time(cluster, grid, params.dense, params.expert, assume)
    # Megatron-family full training: the rest of the optimizer phase (clipping, buffer zeroing, FP8 re-cast).
    optimizer_phase = optimizer_phase_time(cluster, setup, grid, params, grad_bytes, assume)

    # FLOPs per step, whole cluster.
    tokens = grid.dp * grid.micro_batch * m * setup.seq_len
    model_flops = model_flops_per_token(model, setup.attention_length, setup) * tokens
    hw_per_token = np.select(
        [grid.recompute == RECOMPUTE_FULL, grid.recompute == RECOMPUTE_SELECTIVE],
        [hardware_flops_per_token(model, setup.attention_length, "full", setup),
         hardware_flops_per_token(model, setup.attention_length, "selective", setup)],
        hardware_flops_per_token(model, setup.attention_length, "none", setup))
    policy = TimeArrays(
        compute=m * compute_avg,
        tp_comm=m * tp_avg,
        cp_comm=m * avg_layers * cp_layer,
        ep_comm=m * avg_layers * ep_layer,
        pp_bubble=bubble,
        pp_comm=pp_p2p_time(model, cluster, grid, mb.tokens, assume),
        dp_comm=dp + tied_sync,
        optimizer=optimizer,
        optimizer_phase=optimizer_phase,
        model_flops_per_step=model_flops.astype(np.float64),
        hardware_flops_per_step=(hw_per_token * tokens).astype(np.float64),
        details={
            "recompute_s": m * avg_layers * mb.layer_mix(model, "recompute"),
            "attention_s": m * avg_layers * mb.dense_layer.attention_forward,
            "microbatch_s": per_mb_avg,
            "host_wait_s": m * host_wait,
            "tied_embedding_sync_s": tied_sync,
        },
    )
    return add_post_training(policy, model, cluster, setup, grid, assume)
