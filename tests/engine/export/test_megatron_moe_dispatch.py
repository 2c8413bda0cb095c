"""Megatron-LM flags for the MoE setup options: the dispatcher the plan was priced with, EP-A2A
overlap when Megatron-Core allows it, and the MoE recipe's recompute modules — parsed with
Megatron-LM's own option table (data/megatron_lm_flags.json, core_v0.16.1)."""

from __future__ import annotations

import pytest

from shardwise.engine.export.megatron import arguments
from shardwise.engine.export.plan import ExportPlan
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

from export_megatron_tools import parse


def _parsed(dispatcher: str, overlap: bool = False, **plan):
    setup = TrainingSetup(seq_len=4096, global_batch=1024, precision="fp8", moe_dispatcher=dispatcher,
                          moe_a2a_overlap=overlap)
    strategy = Strategy(**{"tp": 1, "pp": 16, "ep": 64, "zero_stage": 1, **plan})
    return parse(arguments(ExportPlan(get_model("deepseek-v3"), build_cluster("h800", 2048), setup, strategy)))


@pytest.mark.parametrize("dispatcher,megatron_type,backend", [
    ("alltoall", "alltoall", None), ("allgather", "allgather", None), ("deepep", "flex", "deepep")])
def test_dispatcher_flags(dispatcher, megatron_type, backend):
    ns = _parsed(dispatcher)
    assert ns.moe_token_dispatcher_type == megatron_type
    if backend is not None:  # the flex dispatcher's backend only matters with --moe-token-dispatcher-type flex
        assert ns.moe_flex_dispatcher_backend == backend


def test_a2a_overlap_only_where_megatron_core_allows_it():
    """TransformerConfig: PP > 1 needs VPP; full recompute and the allgather dispatcher are refused."""
    assert not _parsed("deepep", overlap=True).overlap_moe_expert_parallel_comm  # PP16 without VPP
    assert _parsed("deepep", overlap=True, pp=1).overlap_moe_expert_parallel_comm
    assert not _parsed("deepep", overlap=True, pp=1, recompute="full").overlap_moe_expert_parallel_comm
    assert not _parsed("allgather", overlap=True, pp=1).overlap_moe_expert_parallel_comm
    assert not _parsed("deepep", pp=1).overlap_moe_expert_parallel_comm


def test_selective_recompute_writes_the_moe_recipe_modules():
    ns = _parsed("deepep", recompute="selective")
    assert ns.recompute_granularity == "selective"
    assert ns.recompute_modules == ["core_attn", "layernorm", "mla_up_proj", "moe_act"]
