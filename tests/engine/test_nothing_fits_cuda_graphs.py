"""When nothing fits under per-layer CUDA graphs: the probes use selective recompute (full recompute is
refused with per-layer graphs, validity/graphs.py), and the full-recompute fix changes the graphs too."""

from __future__ import annotations

from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.search import recommend
from shardwise.engine.training import TrainingSetup


def test_per_layer_graphs_still_get_a_gpu_count_and_a_recompute_fix():
    """Llama-3-70B on 8 H100: 70.55 B params x (2 weights + 2 gradients + 12 Adam) bytes / 8 GPUs = 131 GiB
    per GPU before activations, so nothing fits at any recompute; more GPUs do."""
    r = recommend(get_model("llama-3-70b"), build_cluster("h100-sxm", 8), TrainingSetup(cuda_graphs="per-layer"))
    nf = r.nothing_fits
    assert r.plans == [] and nf.reason == "out_of_memory"
    assert nf.min_gpus is not None and nf.min_gpus_plan.recompute == "selective"
    options = {o.rule: o for o in nf.options}
    assert options["recompute_full"].change == {"recompute": "full", "cuda_graphs": "full-iteration"}
    assert options["recompute_full"].applicable and not options["recompute_full"].fits
