"""export_plan as a whole: formats, headers, refusals."""

from __future__ import annotations

import json

import pytest

from shardwise import __version__
from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.export import FORMATS, ExportRefused, export_all, export_plan


def test_formats_are_the_cli_choices():
    assert FORMATS == ("deepspeed", "torchtitan", "fsdp", "accelerate", "megatron", "megatron-bridge", "nanotron",
                       "launch")


def test_every_export_carries_the_header(scenario):
    # A plan every format can express: Llama-3-8B, 8 GPUs, data-parallel, ZeRO-1 for Nanotron/DeepSpeed.
    sc = scenario("llama-3-8b", 8, global_batch=64, zero_stage=1, recompute="full")
    results = export_all(sc.model, sc.cluster, sc.setup, sc.strategy)
    refused = {fmt: str(r) for fmt, r in results.items() if isinstance(r, ExportRefused)}
    assert refused == {}
    for fmt, result in results.items():
        header = result.header
        assert f"shardwise {__version__}" in header and "Llama-3-8B" in header
        assert "8 x h100-sxm" in header and "TP=1 PP=1 VPP=1 CP=1 EP=1 ETP=1 DP=8" in header
        assert "ZeRO-1, micro-batch 1, grad-accum 8" in header
        if fmt == "deepspeed":  # JSON: no comments, so the header stays outside the file
            assert not result.header_in_text and json.loads(result.text)
        else:
            assert result.header_in_text and f"shardwise {__version__}" in result.text


def test_unknown_format_is_refused_with_the_list(scenario):
    sc = scenario("llama-3-8b", 8)
    with pytest.raises(ExportRefused, match="valid formats: deepspeed, torchtitan"):
        export_plan("jax", sc.model, sc.cluster, sc.setup, sc.strategy)


def test_an_invalid_plan_is_refused_with_the_engines_reason(scenario):
    # TP 3 does not divide Llama-3-8B's 32 heads (nor 8 GPUs).
    sc = scenario("llama-3-8b", 8, tp=3)
    with pytest.raises(ExportRefused, match=r"invalid for megatron: \[") as refused:
        sc.export("megatron")
    assert isinstance(refused.value, ShardwiseInputError)


def test_export_all_returns_refusals_as_values(scenario):
    sc = scenario("mixtral-8x7b", 64, global_batch=256, ep=8, zero_stage=1, recompute="full")
    results = export_all(sc.model, sc.cluster, sc.setup, sc.strategy)
    assert isinstance(results["nanotron"], ExportRefused)  # Nanotron cannot run EP > 1
    assert not isinstance(results["megatron"], ExportRefused)
