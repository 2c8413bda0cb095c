"""TrainingSetup's Megatron-only options (engine/training.py MEGATRON_ONLY_OPTIONS): each is refused on every
other framework with its own sentence, naming the Megatron-Core flag it is (core_v0.16.1
megatron/training/arguments.py); with several set, the first in the table is the one said."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shardwise.engine.training import MEGATRON_ONLY_OPTIONS, TrainingSetup

SET = {"cuda_graphs": {"cuda_graphs": "per-layer"}, "recompute_modules": {"recompute_modules": ("core_attn",)},
       "grad_reduce_dtype": {"grad_reduce_dtype": "bf16"}, "fp8_param_gather": {"fp8_param_gather": True, "precision": "fp8"},
       "moe_a2a_overlap": {"moe_a2a_overlap": True}}
FLAG = {"cuda_graphs": "--cuda-graph-impl", "recompute_modules": "--recompute-modules",
        "grad_reduce_dtype": "--grad-reduce-in-bf16", "fp8_param_gather": "--fp8-param-gather",
        "moe_a2a_overlap": "--overlap-moe-expert-parallel-comm"}


def test_the_table_covers_the_options_in_order():
    assert [o.field for o in MEGATRON_ONLY_OPTIONS] == list(SET)
    assert [o.flag for o in MEGATRON_ONLY_OPTIONS] == [FLAG[field] for field in SET]  # Megatron-Core's own flags


@pytest.mark.parametrize("framework", ["deepspeed", "fsdp", "nanotron"])
@pytest.mark.parametrize("field", list(SET))
def test_each_option_is_refused_off_megatron_with_its_flag(field, framework):
    TrainingSetup(framework="megatron", **SET[field])  # Megatron runs it
    with pytest.raises(ValidationError, match=FLAG[field]) as refused:
        TrainingSetup(framework=framework, **SET[field])
    assert framework in str(refused.value)


def test_the_first_option_in_the_table_is_the_one_said():
    everything = {k: v for option in SET.values() for k, v in option.items()}
    with pytest.raises(ValidationError, match="--cuda-graph-impl"):
        TrainingSetup(framework="deepspeed", **everything)
    without_graphs = {k: v for k, v in everything.items() if k != "cuda_graphs"}
    with pytest.raises(ValidationError, match="--recompute-modules"):
        TrainingSetup(framework="deepspeed", **without_graphs)


def test_fp8_param_gather_also_needs_fp8_on_megatron():
    with pytest.raises(ValidationError, match="needs framework megatron and precision fp8, not megatron / bf16"):
        TrainingSetup(framework="megatron", fp8_param_gather=True)
