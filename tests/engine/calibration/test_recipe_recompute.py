"""Calibration runs take the recompute modules of the Megatron-Bridge recipe they ran
(engine/calibration/data/bridge_moe_recipes.csv) when the summary row states none."""

from __future__ import annotations

from shardwise.engine.calibration.runs import load_runs


def _run(key: str):
    return next(r for r in load_runs() if r.key == key)


def test_gb200_deepseek_v3_recipe_recomputes_the_mla_up_projections():
    """measured_runs.csv:281, 26.08 GB200 DeepSeek-V3 MXFP8 -> deepseek_v3_pretrain_256gpu_gb200_fp8mx_config:
    `cfg.model.recompute_modules = ["mla_up_proj"]` with recompute_granularity "selective"."""
    run = _run("measured_runs.csv:281")
    assert run.strategy.recompute == "selective"
    assert run.setup.recompute_modules == ("mla_up_proj",)
    assert "rc-none" in run.config  # the row's plan, so repeated releases still deduplicate


def test_gb300_deepseek_v3_recipe_recomputes_nothing():
    """measured_runs.csv:280, 26.08 GB300 -> deepseek_v3_pretrain_256gpu_gb300_fp8mx_config:
    `cfg.model.recompute_modules = []`."""
    run = _run("measured_runs.csv:280")
    assert run.strategy.recompute == "none"
    assert run.setup.recompute_modules is None


def test_rows_without_a_recipe_keep_the_stated_plan():
    run = _run("measured_runs.csv:527")  # 25.11 GB200: no recipe recorded for that release
    assert run.strategy.recompute == "none" and run.setup.recompute_modules is None


def test_bridge_recipe_runs_reduce_gradients_in_bf16_and_keep_fp8_weights():
    """Megatron-Bridge perf recipes: `_benchmark_common` sets ddp.grad_reduce_in_fp32 = False; the MXFP8
    preset `bf16_with_mxfp8_mixed` sets fp8_param_gather = True (training/mixed_precision.py)."""
    fp8 = _run("measured_runs.csv:280")
    assert fp8.setup.grad_reduce_dtype == "bf16" and fp8.setup.fp8_param_gather
    bf16 = _run("measured_runs.csv:372")  # gpt-oss-120b GB200 BF16, 26.04.01 recipe
    assert bf16.setup.grad_reduce_dtype == "bf16" and not bf16.setup.fp8_param_gather
    assert _run("measured_runs.csv:527").setup.grad_reduce_dtype == "fp32"  # no recipe recorded
