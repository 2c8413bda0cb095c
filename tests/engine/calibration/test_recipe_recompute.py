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
