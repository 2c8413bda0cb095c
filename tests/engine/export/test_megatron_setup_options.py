"""TrainingSetup.recompute_modules / grad_reduce_dtype / fp8_param_gather in the Megatron exports, proven with
Megatron's own parsers: the Megatron-LM flags parse with its option table (data/megatron_lm_flags.json,
core_v0.16.1) and the installed megatron-core builds its TransformerConfig / DistributedDataParallelConfig from
them; the Bridge recompute override applies to its struct config (Hydra). BF16 gradients and the FP8 weights
are MixedPrecisionConfig fields in Bridge, which an override of a preset name cannot reach: the export says so
as notes, and the test shows Hydra refusing the override."""

from __future__ import annotations

import warnings

import pytest
import torch

from shardwise.engine.export import ExportRefused, export_plan
from shardwise.engine.export.megatron import arguments
from shardwise.engine.export.plan import ExportPlan
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

from export_megatron_tools import parse
from test_megatron_bridge import apply, overrides_of, recipe_like


def _plan(zero_stage: int = 1, recompute: str = "selective", **setup) -> ExportPlan:
    return ExportPlan(get_model("llama-3-8b"), build_cluster("h100-sxm", 8),
                      TrainingSetup(seq_len=4096, global_batch=256, **setup),
                      Strategy(zero_stage=zero_stage, recompute=recompute))


def test_megatron_lm_flags_carry_the_three_options():
    plan = _plan(precision="fp8", fp8_param_gather=True, grad_reduce_dtype="bf16",
                 recompute_modules=("core_attn", "layernorm"))
    ns = parse(arguments(plan))  # unknown flags fail here
    assert ns.grad_reduce_in_bf16 is True and ns.fp8_param_gather is True
    assert ns.recompute_granularity == "selective" and ns.recompute_modules == ["core_attn", "layernorm"]
    from megatron.core.distributed import DistributedDataParallelConfig
    from megatron.core.transformer.transformer_config import TransformerConfig

    warnings.filterwarnings("ignore")
    m = plan.model
    config = TransformerConfig(num_layers=m.num_layers, hidden_size=m.hidden_size,
                               num_attention_heads=m.num_attention_heads, bf16=True, params_dtype=torch.bfloat16,
                               recompute_granularity=ns.recompute_granularity, recompute_modules=ns.recompute_modules)
    # (FP8 fields are left out: megatron-core's TransformerConfig needs Transformer Engine for them, not installed)
    assert config.recompute_modules == ["core_attn", "layernorm"]
    # Megatron-LM's validate_args: --grad-reduce-in-bf16 turns accumulate_allreduce_grads_in_fp32 off, which
    # training.py passes as DistributedDataParallelConfig.grad_reduce_in_fp32.
    ddp = DistributedDataParallelConfig(grad_reduce_in_fp32=not ns.grad_reduce_in_bf16,
                                        fp8_param_gather=ns.fp8_param_gather, use_distributed_optimizer=True)
    assert ddp.grad_reduce_in_fp32 is False and ddp.fp8_param_gather is True


def test_megatron_lm_defaults_leave_the_flags_out():
    ns = parse(arguments(_plan()))
    assert not ns.grad_reduce_in_bf16 and not ns.fp8_param_gather and ns.recompute_modules is None  # core_attn


def test_fp8_param_gather_on_zero_0_is_refused_as_validate_args_does():
    with pytest.raises(ExportRefused, match="only with the distributed optimizer"):
        arguments(_plan(zero_stage=0, precision="fp8", fp8_param_gather=True))


def _bridge(plan: ExportPlan):
    return export_plan("megatron-bridge", plan.model, plan.cluster, plan.setup, plan.strategy)


def test_bridge_recompute_modules_as_typed():
    result = _bridge(_plan(recompute_modules=("core_attn", "layernorm")))
    cfg = apply(recipe_like(peft=False), overrides_of(result.text))  # a key that is not a field fails here
    assert cfg["model"]["recompute_granularity"] == "selective"
    assert cfg["model"]["recompute_modules"] == ["core_attn", "layernorm"]


def test_bridge_mixed_precision_fields_are_notes_because_hydra_cannot_override_a_preset():
    with pytest.raises(Exception, match="Could not override 'mixed_precision.grad_reduce_in_fp32'"):
        apply(recipe_like(peft=False), ["mixed_precision=bf16_mixed", "mixed_precision.grad_reduce_in_fp32=false"])
    notes = _bridge(_plan(grad_reduce_dtype="bf16")).warnings
    assert any("cfg.mixed_precision.grad_reduce_in_fp32 = False" in n and "cfg.ddp.grad_reduce_in_fp32 = False" in n
               for n in notes)
    # Bridge's bf16_with_fp8_current_scaling_mixed sets fp8_param_gather = True (training/mixed_precision.py).
    without = _bridge(_plan(precision="fp8")).warnings
    assert any("cfg.mixed_precision.fp8_param_gather = False" in n for n in without)
    with_ = _bridge(_plan(precision="fp8", fp8_param_gather=True)).warnings
    assert not any("fp8_param_gather = False" in n for n in with_)


@pytest.mark.parametrize("fmt", ["torchtitan", "deepspeed", "nanotron"])
def test_other_frameworks_say_the_megatron_options_are_gone(fmt):
    plan = _plan(grad_reduce_dtype="bf16", recompute_modules=("core_attn",))
    result = export_plan(fmt, plan.model, plan.cluster, plan.setup, plan.strategy)
    # named as REST and the chat name the settings; the CLI spells its flags (tests/cli/test_setting_flags.py)
    assert any("recompute_modules, grad_reduce_dtype (Megatron-Core options)" in w for w in result.warnings)
    assert any("<recompute_modules>, <grad_reduce_dtype> (Megatron-Core options)" in w
               for w in result.spelled_warnings(lambda name: f"<{name}>"))


def test_an_empty_recompute_module_list_exports_no_recompute_flag():
    # recompute_modules = [] (Bridge's GB300 DeepSeek-V3 MXFP8 recipe: selective granularity, no module) recomputes
    # nothing in Megatron-Core. Megatron-LM's --recompute-modules takes nargs='+' (data/megatron_lm_flags.json), so a
    # bare flag is a parse error there: the export writes no recompute flag, which recomputes nothing too.
    ns = parse(arguments(_plan(recompute_modules=())))
    assert ns.recompute_granularity is None and ns.recompute_modules is None
    cfg = apply(recipe_like(peft=False), overrides_of(_bridge(_plan(recompute_modules=())).text))
    assert cfg["model"]["recompute_modules"] == []
