"""Accelerate exports go through Accelerate's own loader and launcher preparation.

Each YAML is read by load_config_from_file (unknown top-level keys are errors), then taken
through `accelerate launch`'s own steps — launch_command_parser, _validate_launch_command (which
copies every nested key onto the launcher's arguments, silently, known or not) and the
launcher's environment (prepare_multi_gpu_env / prepare_deepspeed_cmd_env) — and the plugins
are built from that environment as the training process builds them. The degrees and batch
numbers they end up with must be the plan's (hand arithmetic beside each case).
"""

from __future__ import annotations

import os
import warnings
from unittest import mock

import pytest
import yaml

from shardwise.engine.export import ExportRefused


def launch(path):
    """What `accelerate launch --config_file path train.py` prepares (accelerate/commands/launch.py,
    launch_command): parsed arguments and the environment the training process starts with."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils.launch import prepare_deepspeed_cmd_env, prepare_multi_gpu_env

    args = launch_command_parser().parse_args(["--config_file", str(path), "train.py"])
    args, defaults, mp_from_config_flag = _validate_launch_command(args)
    if args.use_deepspeed:
        fields = list(defaults.deepspeed_config.keys()) + (["mixed_precision"] if mp_from_config_flag else [])
        args.deepspeed_fields_from_accelerate_config = ",".join(fields)
        _, env = prepare_deepspeed_cmd_env(args)
    else:
        env = prepare_multi_gpu_env(args)
    return args, env


def nested_keys_are_launcher_options(cfg: dict) -> None:
    """_validate_launch_command sets every nested key as an argument (fsdp_config keys get an
    `fsdp_` prefix, fp8_config keys `fp8_`); only those the parser defines are ever read."""
    from accelerate.commands.launch import launch_command_parser

    dests = {action.dest for action in launch_command_parser()._actions}
    prefixes = {"fsdp_config": "fsdp_", "fp8_config": "fp8_"}
    for section, value in cfg.items():
        if isinstance(value, dict):
            for key in value:
                prefix = prefixes.get(section, "")
                name = key if key.startswith(prefix) else prefix + key
                assert name in dests, f"{section}.{key}: `accelerate launch` has no option {name}"


def export_yaml(sc, tmp_path):
    text = sc.export("accelerate").text
    path = tmp_path / "accelerate.yaml"
    path.write_text(text)
    return path, yaml.safe_load(text)


CASES = [
    # Llama-3-70B, 64 GPUs, TP8·PP2: DP 4, GA 512/4 = 128 -> Megatron-LM plugin.
    ("megatron-tp8-pp2", dict(model="llama-3-70b", gpus=64, global_batch=512, tp=8, pp=2, zero_stage=1,
                              recompute="full"), dict(plugin="megatron", dp=4, ga=128)),
    # Mixtral, 64 GPUs, TP2·EP8: DP 32, GA 256/32 = 8.
    ("megatron-ep8", dict(model="mixtral-8x7b", gpus=64, global_batch=256, tp=2, ep=8, zero_stage=1,
                          recompute="full"), dict(plugin="megatron", dp=32, ga=8)),
    # Llama-3-8B, 64 GPUs, TP2·CP2, HSDP 2 x 8, ZeRO-3: DP 16 -> FSDP2 + parallelism_config, 2·8·2·2 = 64.
    ("fsdp2-tp2-cp2-hsdp", dict(model="llama-3-8b", gpus=64, seq_len=8192, global_batch=512, tp=2, cp=2,
                                zero_stage=3, hsdp_replicas=2, recompute="full", framework="fsdp"),
     dict(plugin="fsdp", dp=16, replicate=2, shard=8)),
    # Llama-3-8B, 64 GPUs, ZeRO-1 data-parallel, micro 2: GA 512/(64·2) = 4 -> DeepSpeed plugin.
    ("deepspeed-zero1", dict(model="llama-3-8b", gpus=64, global_batch=512, micro_batch=2, zero_stage=1,
                             recompute="selective", framework="deepspeed"), dict(plugin="deepspeed", dp=64, ga=4)),
    # Llama-3-8B, 8 GPUs, ZeRO-0: DDP over 8 processes on 1 machine.
    ("ddp", dict(model="llama-3-8b", gpus=8, global_batch=64, zero_stage=0, recompute="none", framework="fsdp"),
     dict(plugin="multi_gpu", dp=8)),
]


@pytest.mark.parametrize("case_id,kwargs,want", CASES, ids=[c[0] for c in CASES])
def test_accelerate_config_loads_and_launches_the_plan(scenario, tmp_path, case_id, kwargs, want):
    warnings.filterwarnings("ignore")
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.parallelism_config import ParallelismConfig
    from accelerate.utils import DeepSpeedPlugin, FullyShardedDataParallelPlugin, MegatronLMPlugin

    sc = scenario(**kwargs)
    s = sc.strategy
    path, cfg = export_yaml(sc, tmp_path)
    loaded = load_config_from_file(str(path))
    assert loaded.num_processes == sc.cluster.num_gpus and loaded.mixed_precision == "bf16"
    nested_keys_are_launcher_options(cfg)
    args, env = launch(path)
    assert env["ACCELERATE_MIXED_PRECISION"] == "bf16"
    with mock.patch.dict(os.environ, env, clear=True):
        if want["plugin"] == "megatron":
            assert args.use_megatron_lm
            plugin = MegatronLMPlugin()
            assert (plugin.tp_degree, plugin.pp_degree, plugin.context_parallel_size) == (s.tp, s.pp, s.cp)
            assert (plugin.expert_model_parallel_size, plugin.expert_tensor_parallel_size) == (s.ep, s.etp)
            assert plugin.sequence_parallelism == (s.tp > 1) and plugin.use_distributed_optimizer
            assert plugin.recompute_granularity == "full" and plugin.num_micro_batches == want["ga"]
            plugin.set_training_args(micro_batch_size=s.micro_batch, dp_degree=want["dp"])
            assert plugin.global_batch_size == sc.setup.global_batch
        elif want["plugin"] == "fsdp":
            assert args.use_fsdp
            plugin, parallelism = FullyShardedDataParallelPlugin(), ParallelismConfig()
            assert plugin.fsdp_version == 2 and plugin.reshard_after_forward == (s.zero_stage == 3)
            assert plugin.activation_checkpointing == (s.recompute == "full")
            assert (parallelism.dp_replicate_size, parallelism.dp_shard_size, parallelism.tp_size,
                    parallelism.cp_size) == (want["replicate"], want["shard"], s.tp, s.cp)
            assert parallelism.total_size == sc.cluster.num_gpus
        elif want["plugin"] == "deepspeed":
            assert args.use_deepspeed
            plugin = DeepSpeedPlugin()
            assert plugin.zero_stage == s.zero_stage and plugin.gradient_accumulation_steps == want["ga"]
        else:
            assert args.multi_gpu and int(args.num_processes) == want["dp"]


def test_megatron_plugin_uses_cp_2_when_the_yaml_omits_it(scenario, tmp_path):
    """The trap: leave megatron_lm_context_parallel_size out and the plugin runs CP = 2."""
    from accelerate.utils import MegatronLMPlugin

    sc = scenario("llama-3-70b", 64, global_batch=512, tp=8, pp=2, zero_stage=1, recompute="full")
    path, cfg = export_yaml(sc, tmp_path)
    assert cfg["megatron_lm_config"]["megatron_lm_context_parallel_size"] == 1  # we state it
    del cfg["megatron_lm_config"]["megatron_lm_context_parallel_size"]
    path.write_text(yaml.safe_dump(cfg))
    _, env = launch(path)
    with mock.patch.dict(os.environ, env, clear=True):
        assert MegatronLMPlugin().context_parallel_size == 2


def test_megatron_plugin_cannot_turn_recompute_off(scenario, tmp_path):
    """Why recompute 'none'/'selective' are refused: unset, the plugin recomputes 'full' / 'uniform'."""
    from accelerate.utils import MegatronLMPlugin

    sc = scenario("llama-3-70b", 64, global_batch=512, tp=8, pp=2, zero_stage=1, recompute="full")
    path, cfg = export_yaml(sc, tmp_path)
    for key in ("megatron_lm_recompute_granularity", "megatron_lm_recompute_method", "megatron_lm_recompute_num_layers"):
        del cfg["megatron_lm_config"][key]
    path.write_text(yaml.safe_dump(cfg))
    _, env = launch(path)
    with mock.patch.dict(os.environ, env, clear=True):
        plugin = MegatronLMPlugin()
        assert (plugin.recompute_granularity, plugin.recompute_method) == ("full", "uniform")
    for recompute in ("none", "selective"):
        with pytest.raises(ExportRefused, match="recompute"):
            scenario("llama-3-70b", 64, global_batch=512, tp=8, pp=2, zero_stage=1, recompute=recompute).export("accelerate")


def test_fp8_fsdp_config_loads(scenario, tmp_path):
    """FP8 goes through torchao (fp8_config backend AO); launching it needs torchao, so only the loader here."""
    from accelerate.commands.config.config_args import load_config_from_file

    sc = scenario("llama-3-8b", 16, zero_stage=3, precision="fp8", framework="fsdp", recompute="full")
    path, cfg = export_yaml(sc, tmp_path)
    loaded = load_config_from_file(str(path))
    assert loaded.mixed_precision == "fp8" and loaded.fp8_config["backend"] == "AO"
    nested_keys_are_launcher_options(cfg)


@pytest.mark.parametrize("kwargs,reason", [
    (dict(tp=8, pp=2, vpp=5, zero_stage=1, recompute="full"), "virtual-pipeline"),
    (dict(tp=8, pp=2, zero_stage=3, recompute="full"), "Megatron-FSDP"),
    (dict(tp=8, pp=2, zero_stage=1, recompute="full", precision="fp8"), "bf16/fp16"),
])
def test_accelerate_refusals(scenario, kwargs, reason):
    with pytest.raises(ExportRefused, match=reason):
        scenario("llama-3-70b", 64, global_batch=512, **kwargs).export("accelerate")
