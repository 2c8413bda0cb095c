"""Megatron-Bridge overrides applied the way Bridge applies them, to a recipe-shaped config.

Bridge parses run_recipe.py's trailing KEY=VALUE with Hydra's OverridesParser and applies them
to the recipe as a struct OmegaConf config (training/utils/omegaconf_utils.py,
parse_hydra_overrides), so a key that is not a field fails. Bridge itself needs a newer
megatron-core than the installed 0.16 and is not installed: the config here has Bridge's
sections with their real fields — model.* from megatron-core's TransformerConfig (installed)
plus GPTModelProvider's own, ddp.* / optimizer.* from megatron-core's DDP and optimizer
configs, train/dataset/checkpoint/peft from Bridge's and Megatron-LM's source
(data/megatron_bridge_schema.json) — and recipe values where a recipe sets them (Llama-3's H100
recipes: context_parallel_size 2 on some, pipeline_dtype None, sequence_parallel False).
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from pathlib import Path

import pytest
import torch

from shardwise.engine.export import ExportRefused

SCHEMA = json.loads((Path(__file__).parent / "data" / "megatron_bridge_schema.json").read_text())

# Every dimension of a plan, which an override must pin or the recipe's value stays.
PINNED = {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
          "model.virtual_pipeline_model_parallel_size", "model.context_parallel_size",
          "model.expert_model_parallel_size", "model.expert_tensor_parallel_size", "model.sequence_parallel",
          "model.seq_length", "dataset.seq_length", "train.micro_batch_size", "train.global_batch_size",
          "model.recompute_granularity", "model.recompute_method", "model.recompute_num_layers",
          "ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer", "ddp.use_megatron_fsdp",
          "ddp.data_parallel_sharding_strategy", "ddp.num_distributed_optimizer_instances", "mixed_precision"}


def recipe_like(peft: bool):
    """Bridge's config sections with their fields; the values a Llama-3 H100 recipe sets
    (recipes/llama/h100/llama3.py), None elsewhere."""
    from megatron.core.distributed import DistributedDataParallelConfig
    from megatron.core.optimizer import OptimizerConfig
    from megatron.core.transformer.transformer_config import TransformerConfig

    def blank(names):
        return {name: None for name in names}

    model = blank([f.name for f in dataclasses.fields(TransformerConfig)] + SCHEMA["fields"]["model_provider_only"])
    model.update(tensor_model_parallel_size=1, pipeline_model_parallel_size=1, pipeline_dtype=None,
                 virtual_pipeline_model_parallel_size=None, context_parallel_size=2, sequence_parallel=False,
                 seq_length=8192, recompute_granularity=None)
    return {
        "model": model,
        "ddp": blank(f.name for f in dataclasses.fields(DistributedDataParallelConfig)) | {"use_distributed_optimizer": True},
        "optimizer": blank(f.name for f in dataclasses.fields(OptimizerConfig)) | {"use_distributed_optimizer": True},
        "train": blank(SCHEMA["fields"]["train"]) | {"global_batch_size": 512, "micro_batch_size": 1},
        "dataset": blank(SCHEMA["fields"]["dataset"]) | {"seq_length": 8192},
        "checkpoint": blank(SCHEMA["fields"]["checkpoint"]),
        "peft": blank(SCHEMA["fields"]["peft"]) | {"dim": 32} if peft else None,
        "mixed_precision": "bf16_mixed",
    }


def overrides_of(text: str) -> list[str]:
    return re.findall(r"^\s+([\w.]+=\S+?)(?: \\)?$", text, re.M)


def apply(base: dict, overrides: list[str]) -> dict:
    """Bridge's parse_hydra_overrides: Hydra's parser, applied to a struct config."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    cfg = OmegaConf.create(base)
    OmegaConf.set_struct(cfg, True)
    parsed = OverridesParser.create().parse_overrides(overrides=overrides)
    ConfigLoaderImpl._apply_overrides_to_config(overrides=parsed, cfg=cfg)
    return OmegaConf.to_container(cfg)


CASES = [
    # Llama-3-70B, 64 GPUs, TP8·PP2·VPP5: DP 4.
    ("tp8-pp2-vpp5", dict(model="llama-3-70b", gpus=64, seq_len=8192, global_batch=512, tp=8, pp=2, vpp=5,
                          zero_stage=1, recompute="selective"), dict(dp=4, recipe="llama3_70b_pretrain_config")),
    # Llama-3-8B, 16 GPUs, ZeRO-3 as Megatron-FSDP with 2 replicas: DP 16; CP pinned back to 1.
    ("fsdp-hsdp2", dict(model="llama-3-8b", gpus=16, global_batch=128, zero_stage=3, hsdp_replicas=2,
                        recompute="full"), dict(dp=16, recipe="llama3_8b_pretrain_config")),
    # Qwen3-30B-A3B, 32 GPUs, PP2·EP8, FP8: DP 16; EP 8 over TP·CP·DP = 16 ranks.
    ("moe-ep8-fp8", dict(model="qwen3-30b-a3b", gpus=32, global_batch=256, pp=2, ep=8, zero_stage=1,
                         recompute="none", precision="fp8"), dict(dp=16, recipe="qwen3_30b_a3b_pretrain_config")),
    # LoRA on 8 GPUs: the PEFT recipe, adapter rank pinned.
    ("lora", dict(model="llama-3-8b", gpus=8, global_batch=64, zero_stage=1, mode="lora", recompute="none"),
     dict(dp=8, recipe="llama3_8b_peft_config")),
]


@pytest.fixture
def fake_world():
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    def start(n):
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=n)
        from megatron.core import parallel_state

        return parallel_state

    yield start
    from megatron.core import parallel_state

    parallel_state.destroy_model_parallel()
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.mark.parametrize("case_id,kwargs,want", CASES, ids=[c[0] for c in CASES])
def test_bridge_overrides_pin_every_dimension(scenario, fake_world, case_id, kwargs, want):
    warnings.filterwarnings("ignore")
    from megatron.core.transformer.transformer_config import TransformerConfig

    sc = scenario(**kwargs)
    s, lora = sc.strategy, sc.setup.mode == "lora"
    text = sc.export("megatron-bridge").text
    assert f"--recipe {want['recipe']}" in text
    overrides = overrides_of(text)
    assert PINNED <= {o.split("=")[0] for o in overrides}
    cfg = apply(recipe_like(peft=lora), overrides)
    m, t = cfg["model"], cfg["train"]

    assert (m["tensor_model_parallel_size"], m["pipeline_model_parallel_size"], m["context_parallel_size"],
            m["expert_model_parallel_size"], m["expert_tensor_parallel_size"]) == (s.tp, s.pp, s.cp, s.ep, s.etp)
    assert m["virtual_pipeline_model_parallel_size"] == (s.vpp if s.vpp > 1 else None)
    assert m["sequence_parallel"] == (s.tp > 1 and s.sequence_parallel)
    assert m["seq_length"] == cfg["dataset"]["seq_length"] == sc.setup.seq_len
    assert (t["micro_batch_size"], t["global_batch_size"]) == (s.micro_batch, sc.setup.global_batch)
    assert m["recompute_granularity"] == {"none": None, "selective": "selective", "full": "full"}[s.recompute]
    ddp = cfg["ddp"]
    assert ddp["use_distributed_optimizer"] == cfg["optimizer"]["use_distributed_optimizer"] == (s.zero_stage >= 1)
    assert ddp["use_megatron_fsdp"] == (s.zero_stage >= 2)
    assert ddp["data_parallel_sharding_strategy"] == {0: "no_shard", 1: "no_shard", 2: "optim_grads",
                                                      3: "optim_grads_params"}[s.zero_stage]
    assert ddp["num_distributed_optimizer_instances"] == s.hsdp_replicas
    assert cfg["mixed_precision"] in SCHEMA["mixed_precision_recipes"]
    assert cfg["mixed_precision"] == ("bf16_with_fp8_current_scaling_mixed" if sc.setup.precision == "fp8"
                                      else "bf16_mixed")
    if lora:
        assert cfg["peft"]["dim"] == sc.setup.lora_rank

    # megatron-core takes the result; both mixed-precision recipes set pipeline_dtype = torch.bfloat16
    # (training/mixed_precision.py, bf16_mixed), which PP > 1 requires. FP8 fields are left out:
    # TransformerConfig checks Transformer Engine's version, absent on CPU.
    model_kwargs = {k: m[k] for k in ("tensor_model_parallel_size", "pipeline_model_parallel_size",
                                      "virtual_pipeline_model_parallel_size", "context_parallel_size",
                                      "expert_model_parallel_size", "expert_tensor_parallel_size", "sequence_parallel",
                                      "recompute_granularity", "recompute_method", "recompute_num_layers",
                                      "recompute_modules") if m[k] is not None}
    moe = {"num_moe_experts": sc.model.moe.num_experts, "moe_router_topk": sc.model.moe.top_k} if sc.model.is_moe else {}
    TransformerConfig(num_layers=sc.model.num_layers, hidden_size=sc.model.hidden_size,
                      num_attention_heads=sc.model.num_attention_heads, bf16=True, params_dtype=torch.bfloat16,
                      pipeline_dtype=torch.bfloat16, **moe, **model_kwargs)
    parallel_state = fake_world(sc.cluster.num_gpus)
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=m["tensor_model_parallel_size"],
        pipeline_model_parallel_size=m["pipeline_model_parallel_size"],
        virtual_pipeline_model_parallel_size=m["virtual_pipeline_model_parallel_size"],
        context_parallel_size=m["context_parallel_size"], expert_model_parallel_size=m["expert_model_parallel_size"],
        expert_tensor_parallel_size=m["expert_tensor_parallel_size"],
        num_distributed_optimizer_instances=ddp["num_distributed_optimizer_instances"], create_gloo_process_groups=False)
    assert parallel_state.get_data_parallel_world_size() == want["dp"]


def test_an_unpinned_dimension_keeps_the_recipes_value(scenario):
    """The trap: drop the CP override and the recipe's context_parallel_size = 2 stays."""
    sc = scenario("llama-3-8b", 16, global_batch=128, zero_stage=1)
    overrides = [o for o in overrides_of(sc.export("megatron-bridge").text)
                 if not o.startswith("model.context_parallel_size=")]
    assert apply(recipe_like(peft=False), overrides)["model"]["context_parallel_size"] == 2


def test_a_key_that_is_not_a_field_fails():
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException, match="Could not override"):
        apply(recipe_like(peft=False), ["model.context_parallel_degree=2"])


@pytest.mark.parametrize("kwargs,reason", [
    (dict(model="llama-3-8b", gpus=8, mode="qlora"), "QLoRA"),
])
def test_bridge_refusals(scenario, kwargs, reason):
    with pytest.raises(ExportRefused, match=reason):
        scenario(**kwargs).export("megatron-bridge")


def test_a_vpp_that_does_not_split_the_layers_is_refused_as_megatron_bridge(scenario):
    """Llama-3-70B, 80 layers, PP=4 x VPP=3 = 12 virtual stages: 80 / 12 is not whole. The refusal names the
    format asked for (it said "cannot export this plan to megatron", the check being shared with Megatron-LM)."""
    with pytest.raises(ExportRefused, match="VPP=3") as refused:
        scenario("llama-3-70b", 64, tp=4, pp=4, vpp=3, zero_stage=1).export("megatron-bridge")
    assert refused.value.format == "megatron-bridge"
    assert str(refused.value).startswith("cannot export this plan to megatron-bridge:")


def test_an_uneven_pipeline_split_puts_the_extra_layers_on_the_end_stages(scenario):
    """Llama-3-70B, 80 layers over PP=3: 80 = 3·26 + 2, so first 26 + 1 = 27, last 26 + 1 = 27 and the
    middle stage 26 (the split Megatron-LM's --decoder-first/last-pipeline-num-layers make);
    megatron-core requires (80 − 27 − 27) % (3 − 2) == 0."""
    text = scenario("llama-3-70b", 48, tp=8, pp=3, zero_stage=1).export("megatron-bridge").text
    found = dict(o.split("=", 1) for o in overrides_of(text))
    assert found["model.num_layers_in_first_pipeline_stage"] == "27"
    assert found["model.num_layers_in_last_pipeline_stage"] == "27"
    apply(recipe_like(peft=False), overrides_of(text))  # the keys exist in Bridge's strict config
    # megatron-core's own TransformerConfig checks the split (it rejects e.g. 20 + 39 + 21 over PP=4).
    import torch
    from megatron.core.transformer.transformer_config import TransformerConfig
    TransformerConfig(num_layers=80, hidden_size=8192, num_attention_heads=64, pipeline_model_parallel_size=3,
                      num_layers_in_first_pipeline_stage=27, num_layers_in_last_pipeline_stage=27,
                      pipeline_dtype=torch.bfloat16)
    odd = scenario("gemma-2-27b", 24, pp=3, cp=2, zero_stage=1).export("megatron-bridge").text  # 46 = 3·15 + 1
    found = dict(o.split("=", 1) for o in overrides_of(odd))
    assert (found["model.num_layers_in_first_pipeline_stage"], found["model.num_layers_in_last_pipeline_stage"]) == (
        "16", "15")
    # An even split says nothing.
    even = scenario("llama-3-70b", 64, tp=8, pp=4, zero_stage=1).export("megatron-bridge").text
    assert "num_layers_in_first_pipeline_stage" not in even


@pytest.mark.parametrize("pp, said", [(1, False), (2, True)])
def test_the_pipeline_dtype_note_appears_only_with_a_pipeline(scenario, pp, said):
    """megatron-core's ModelParallelConfig.__post_init__ (installed 0.16, model_parallel_config.py) raises
    "When using pipeline parallelism, pipeline_dtype must be specified" only when pipeline_model_parallel_size > 1;
    Bridge's GPT provider is that config. The note used to appear at PP 1 too."""
    from megatron.core.model_parallel_config import ModelParallelConfig

    ModelParallelConfig(pipeline_model_parallel_size=1)  # PP 1 without pipeline_dtype: accepted
    with pytest.raises(ValueError, match="pipeline_dtype must be specified"):
        ModelParallelConfig(pipeline_model_parallel_size=2)
    sc = scenario("llama-3-8b", 16, global_batch=128, pp=pp)
    assert ("pipeline_dtype" in " ".join(sc.export("megatron-bridge").warnings)) == said
