"""CUDA-graph rules (validity/graphs.py) and the setup's framework check, on hand-chosen plans.
Expectations come from the sources the rules cite: megatron-core core_v0.16.1 TransformerConfig
("full recompute is only supported with full iteration CUDA graph" — also checked against the installed
megatron-core in tests/engine/export/test_megatron_cuda_graphs.py) and the dropless-MoE host sync."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shardwise.engine import validity
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

DENSE, MOE = get_model("llama-3-8b"), get_model("qwen3-30b-a3b")


def _errors(model, recompute="none", **setup):
    errors, _ = validity.violations(model, build_cluster("h100-sxm", 8), TrainingSetup(global_batch=64, **setup),
                                    Strategy(tp=1, ep=8 if model.is_moe else 1, zero_stage=1, recompute=recompute))
    return [e.rule for e in errors]


@pytest.mark.parametrize("graphs,recompute,refused", [
    ("per-layer", "full", True), ("per-layer", "selective", False), ("per-layer", "none", False),
    ("full-iteration", "full", False), ("none", "full", False)])
def test_per_layer_graphs_refuse_full_recompute(graphs, recompute, refused):
    assert ("per_layer_graphs_without_full_recompute" in _errors(DENSE, recompute, cuda_graphs=graphs)) == refused


@pytest.mark.parametrize("model,dispatcher,graphs,refused", [
    (MOE, "alltoall", "full-iteration", True), (MOE, "allgather", "full-iteration", True),
    (MOE, "deepep", "full-iteration", False), (MOE, "alltoall", "per-layer", False),
    (DENSE, "alltoall", "full-iteration", False)])  # a dense model has no routed-token sync
def test_dropless_moe_full_iteration_needs_the_sync_free_dispatcher(model, dispatcher, graphs, refused):
    errors = _errors(model, moe_dispatcher=dispatcher, cuda_graphs=graphs)
    assert ("moe_full_iteration_graphs_need_sync_free_dispatch" in errors) == refused


def test_the_sync_free_message_names_the_valid_choices():
    errors, _ = validity.violations(MOE, build_cluster("h100-sxm", 8), TrainingSetup(cuda_graphs="full-iteration"),
                                    Strategy(ep=8))
    message = next(e.message for e in errors if e.rule == "moe_full_iteration_graphs_need_sync_free_dispatch")
    assert "valid: moe_dispatcher deepep" in message and "per-layer/none" in message


@pytest.mark.parametrize("framework", ["fsdp", "deepspeed", "nanotron"])
@pytest.mark.parametrize("graphs", ["per-layer", "full-iteration"])
def test_graphs_are_a_megatron_option(framework, graphs):
    with pytest.raises(ValidationError, match=f"use framework megatron with cuda graphs, or cuda_graphs none with {framework}"):
        TrainingSetup(framework=framework, cuda_graphs=graphs)
    assert TrainingSetup(framework=framework).cuda_graphs == "none"
