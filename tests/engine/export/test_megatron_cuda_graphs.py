"""CUDA graphs in the Megatron exports, proven with Megatron's own parsers: the Megatron-LM flags parse
with its option table (data/megatron_lm_flags.json, core_v0.16.1) and the installed megatron-core 0.16.1
TransformerConfig accepts the impl/scope/recompute/dropout they set; the Bridge overrides apply to its
struct config (Hydra) and build the same TransformerConfig."""

from __future__ import annotations

import warnings

import pytest
import torch

from shardwise.engine.export import ExportRefused
from shardwise.engine.export.megatron import arguments
from shardwise.engine.export.plan import ExportPlan
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

from export_megatron_tools import parse
from test_megatron_bridge import apply, overrides_of, recipe_like


def _plan(model: str, graphs: str, recompute: str, **strategy) -> ExportPlan:
    setup = TrainingSetup(seq_len=4096, global_batch=256, cuda_graphs=graphs,
                          moe_dispatcher="deepep" if get_model(model).is_moe else "alltoall")
    return ExportPlan(get_model(model), build_cluster("h100-sxm", 8), setup,
                      Strategy(zero_stage=1, recompute=recompute, **strategy))


def _core_config(plan: ExportPlan, **graph_fields):
    """megatron-core's TransformerConfig with the exported graph fields (its __post_init__ checks them)."""
    from megatron.core.transformer.transformer_config import TransformerConfig

    m = plan.model
    moe = dict(num_moe_experts=m.moe.num_experts, moe_router_topk=m.moe.top_k, moe_token_dispatcher_type="flex",
               moe_flex_dispatcher_backend="deepep", expert_model_parallel_size=plan.strategy.ep,
               moe_layer_freq=parse(arguments(plan)).moe_layer_freq) if m.is_moe else {}
    recompute = {"none": {}, "full": dict(recompute_granularity="full", recompute_method="uniform",
                                          recompute_num_layers=1),
                 "selective": dict(recompute_granularity="selective",
                                   recompute_modules=["core_attn"])}[plan.strategy.recompute]
    warnings.filterwarnings("ignore")
    return TransformerConfig(num_layers=m.num_layers, hidden_size=m.hidden_size, num_attention_heads=m.num_attention_heads,
                             bf16=True, params_dtype=torch.bfloat16, **moe, **recompute, **graph_fields)


CASES = [
    # Dense, per-layer: TE graphs of the whole layer (attn + mlp), selective recompute of core_attn inside them.
    ("llama-3-8b", "per-layer", "selective", {}, "transformer_engine", ["attn", "mlp"]),
    # Dense, full-iteration with full recompute (the one graph mode megatron-core allows full recompute with).
    ("llama-3-8b", "full-iteration", "full", {}, "local", ["full_iteration"]),
    # Dropless MoE, per-layer: Bridge's dropless scope (the experts stay eager).
    ("qwen3-30b-a3b", "per-layer", "none", {"ep": 8}, "transformer_engine", ["attn", "moe_router", "moe_preprocess"]),
    # DeepSeek-V3: its 3 dense layers' MLP graphed too (megatron-core allows mlp when some layer is dense).
    ("deepseek-v3", "per-layer", "none", {"ep": 8}, "transformer_engine",
     ["attn", "mlp", "moe_router", "moe_preprocess"]),
]


@pytest.mark.parametrize("model,graphs,recompute,strategy,impl,scope", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_megatron_lm_flags_carry_the_graphs(model, graphs, recompute, strategy, impl, scope):
    plan = _plan(model, graphs, recompute, **strategy)
    ns = parse(arguments(plan))  # unknown flags, wrong choices fail here
    assert ns.cuda_graph_impl == impl and ns.cuda_graph_scope == scope
    assert ns.te_rng_tracker and ns.attention_dropout == 0.0 and ns.hidden_dropout == 0.0
    # validate_args: "--no-check-for-nan-in-loss-and-grad should be set with full_iteration CUDA graph"
    assert ns.check_for_nan_in_loss_and_grad == (graphs != "full-iteration")
    config = _core_config(plan, cuda_graph_impl=ns.cuda_graph_impl, cuda_graph_scope=ns.cuda_graph_scope,
                          attention_dropout=ns.attention_dropout, hidden_dropout=ns.hidden_dropout)
    assert [s.name for s in config.cuda_graph_scope] == scope


def test_no_graph_flags_without_graphs():
    ns = parse(arguments(_plan("llama-3-8b", "none", "selective")))
    assert ns.cuda_graph_impl == "none" and not ns.te_rng_tracker and ns.attention_dropout == 0.1  # Megatron's default


def test_megatron_core_refuses_what_the_rules_refuse():
    """The validity rule per_layer_graphs_without_full_recompute says what megatron-core asserts, and the
    dropout the exports zero is what it asserts against."""
    plan = _plan("llama-3-8b", "per-layer", "full")
    with pytest.raises(AssertionError, match="full recompute is only supported with full iteration CUDA graph"):
        _core_config(plan, cuda_graph_impl="transformer_engine", cuda_graph_scope=["attn", "mlp"],
                     attention_dropout=0.0, hidden_dropout=0.0)
    with pytest.raises(AssertionError, match="attention dropout is not supported with graphed attention recomputation"):
        _core_config(_plan("llama-3-8b", "per-layer", "selective"), cuda_graph_impl="transformer_engine",
                     cuda_graph_scope=["attn", "mlp"])


def test_megatron_core_refuses_mlp_graphs_when_every_layer_is_moe():
    """Why the all-MoE scope leaves out mlp and DeepSeek-V3's keeps it."""
    with pytest.raises(AssertionError, match="mlp cuda graph is only supported for dense layers"):
        _core_config(_plan("qwen3-30b-a3b", "per-layer", "none", ep=8), cuda_graph_impl="transformer_engine",
                     cuda_graph_scope=["attn", "mlp", "moe_router", "moe_preprocess"], attention_dropout=0.0,
                     hidden_dropout=0.0)


def test_dropless_moe_full_iteration_is_refused_for_megatron_lm_with_the_reason():
    with pytest.raises(ExportRefused, match="sync-free expert path"):
        arguments(_plan("qwen3-30b-a3b", "full-iteration", "none", ep=8))


@pytest.mark.parametrize("model,graphs,recompute,strategy,impl,scope", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_bridge_overrides_carry_the_graphs(model, graphs, recompute, strategy, impl, scope):
    from shardwise.engine.export import export_plan

    plan = _plan(model, graphs, recompute, **strategy)
    text = export_plan("megatron-bridge", plan.model, plan.cluster, plan.setup, plan.strategy).text
    cfg = apply(recipe_like(peft=False), overrides_of(text))  # a key that is not a field fails here
    m = cfg["model"]
    assert m["cuda_graph_impl"] == impl and m["cuda_graph_scope"] == scope and m["use_te_rng_tracker"] is True
    assert cfg["ddp"]["check_for_nan_in_grad"] == (False if graphs == "full-iteration" else None)
    config = _core_config(plan, cuda_graph_impl=m["cuda_graph_impl"], cuda_graph_scope=m["cuda_graph_scope"],
                          attention_dropout=m["attention_dropout"], hidden_dropout=m["hidden_dropout"])
    assert [s.name for s in config.cuda_graph_scope] == scope


def test_bridge_pins_no_graphs_and_notes_the_moe_sync_free_path():
    from shardwise.engine.export import export_plan

    plan = _plan("llama-3-8b", "none", "selective")
    text = export_plan("megatron-bridge", plan.model, plan.cluster, plan.setup, plan.strategy).text
    assert apply(recipe_like(peft=False), overrides_of(text))["model"]["cuda_graph_impl"] == "none"
    plan = _plan("qwen3-30b-a3b", "full-iteration", "none", ep=8)
    result = export_plan("megatron-bridge", plan.model, plan.cluster, plan.setup, plan.strategy)
    assert any("moe_expert_rank_capacity_factor" in n for n in result.warnings)


@pytest.mark.parametrize("fmt", ["torchtitan", "deepspeed", "nanotron"])
def test_other_frameworks_say_the_graphs_are_gone(fmt):
    """A plan priced with graphs, exported where there are none: the note says the host time is back."""
    from shardwise.engine.export import export_plan

    plan = _plan("llama-3-8b", "full-iteration", "none")
    result = export_plan(fmt, plan.model, plan.cluster, plan.setup, plan.strategy)
    assert any("priced with full-iteration CUDA graphs" in w and "cuda_graphs none" in w for w in result.warnings)
