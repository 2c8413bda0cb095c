"""What CUDA graphs remove from a training step (TrainingSetup.cuda_graphs), each with its source.

A CUDA graph records a sequence of kernels once and replays it with one launch, so the host no
longer issues the captured kernels one by one (Megatron-Core user guide, "CUDA Graph": "CUDA Graphs
reduce kernel-launch overhead by recording GPU operations once and replaying the recording";
Megatron-Bridge docs/training/cuda-graphs.md: "eliminating repeated kernel-launch and driver costs on
every training step"). The engine has two host-side terms a graph can remove:

* the per-layer host floor (compute.HOST_TIME_PER_LAYER_S, step.py: a micro-batch is never faster
  than layers x host time per layer), the launch cost of a layer's ordinary kernels;
* the MoE host time (moe.MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S, FITTED at 109 us per local expert per
  forward): a dropless MoE layer copies its routed-token counts to the host and launches its expert
  kernels at the host's pace.

Kept as they are: the GPU-side per-kernel cost (compute.KERNEL_FIXED_S: prologue, epilogue, last
partial wave — a graph does not shorten a kernel) and everything else of the step. Not modelled:
the memory graphs keep (static input/output buffers, the private memory pool of the captured
region; Megatron-Bridge's CUDA-graph page weighs "performance gain against memory cost" but no source
we read gives a size), and the larger expert buffers of a capacity-sized MoE (below).

Modes (Megatron-Core core_v0.16.1 megatron/training/arguments.py --cuda-graph-impl / --cuda-graph-scope;
TransformerConfig.cuda_graph_impl, cuda_graph_scope):

per-layer      --cuda-graph-impl transformer_engine (TE make_graphed_callables, one graph per layer and
               micro-batch). Dense layers: scope attn + mlp, the whole layer. Dropless MoE layers: scope
               attn moe_router moe_preprocess (Megatron-Bridge's recipe for dropless MoE, skills/perf-cuda-graphs:
               "dropless MoE: attn moe_router moe_preprocess"); the experts themselves cannot be captured
               ("moe cuda graph is only supported with drop-padding MoE", TransformerConfig.__post_init__),
               so the dispatch, grouped GEMMs and combine stay eager: the MoE host time stays, and so does
               the layer's host floor (the eager expert part waits on the token counts, so the host still
               paces the layer). Megatron-Core refuses full recompute with per-layer graphs ("full recompute
               is only supported with full iteration CUDA graph"): validity/graphs.py.
full-iteration --cuda-graph-impl local --cuda-graph-scope full_iteration (MCore FullCudaGraphWrapper, one
               graph for the whole forward-backward of all micro-batches, optimizer excluded): no host
               floor and no MoE host time. A dropless MoE layer can only be captured without its host sync:
               Megatron-Core's sync-free expert path (MoE Paged Stash guide: "--moe-flex-dispatcher-backend
               hybridep, --use-transformer-engine-op-fuser, and --moe-expert-rank-capacity-factor pre-size
               dispatch and fused grouped expert buffers ... avoiding a per-step device query"; a step whose
               tokens exceed the budget "reruns once without capacity padding", so nothing is dropped) —
               the flex dispatcher, priced here as deepep as the calibration does for HybridEP. The older
               route, --moe-pad-expert-input-to-capacity with --moe-expert-capacity-factor, drops tokens and
               pads every expert's all-to-all and GEMMs to the capacity; shardwise does not model that, so
               full-iteration graphs of a MoE model need --moe-dispatcher deepep (validity/graphs.py).
               The flex dispatcher sends the routed tokens, not the capacity, so the dispatch bytes do not
               change; the rank capacity sizes buffers, whose memory is not modelled (see above). Bridge's
               recipe (perf_recipes/deepseek/common.py _enable_deepseek_full_iteration_mxfp8) sets
               cuda_graph_impl "full_iteration", moe_expert_rank_capacity_factor 1.5,
               use_transformer_engine_op_fuser, and paged stashing (moe_paged_stash, buffer factors 1.2 on
               the GPU, 1.0 on the host; Megatron-Core TransformerConfig: a positive factor sizes the buffer
               from the average with that headroom), which packs the saved expert activations back to about
               their dropless size; the 1.5x compute buffers are transient.
"""

from __future__ import annotations

# Fraction of the per-layer host floor that remains, by mode and layer kind.
HOST_FLOOR_KEPT: dict[str, dict[str, float]] = {
    "none": {"dense": 1.0, "moe": 1.0},
    "per-layer": {"dense": 0.0, "moe": 1.0},  # dense layers fully captured; MoE layers' experts stay eager
    "full-iteration": {"dense": 0.0, "moe": 0.0},
}
# Fraction of the dropless MoE layer's host time (moe.MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S) that remains.
MOE_HOST_TIME_KEPT: dict[str, float] = {"none": 1.0, "per-layer": 1.0, "full-iteration": 0.0}
