"""torchtitan exports: the TOML loads in torchtitan 0.2.2's ConfigManager, the degrees pass its
ParallelDims and build its device mesh (fake process group at the plan's GPU count), the
pipeline split is torchtitan's own, and the 0.3+ flags parse with tyro against torchtitan
0.3.0's config fields as its source defines them (0.3 needs triton for its model registries).

Expected numbers beside each case: DP = GPUs / (TP·CP·PP); grad-accum = global / (DP·micro);
torchtitan's own grad-accum = global / (local·DP) (train.py), its pipeline micro-batches =
local / pipeline_parallel_microbatch_size (distributed/pipeline_parallel.py).
"""

from __future__ import annotations

import math
import warnings

import pytest
import tomllib

from shardwise.engine.export import ExportRefused
from shardwise.engine.export.torchtitan import v03_command
from shardwise.engine.export.plan import ExportPlan

from export_torchtitan_tools import import_torchtitan, v03_config_class

CASES = [
    # Llama-3-70B, 64 GPUs, TP8: DP 8, GA 256/8 = 32; FSDP over 8, reshard always (ZeRO-3).
    ("fsdp8-tp8", dict(model="llama-3-70b", gpus=64, global_batch=256, tp=8, zero_stage=3, recompute="full",
                       framework="fsdp"),
     dict(dp=8, replicate=1, shard=8, local=1, ga=32, reshard="always", ac="full")),
    # Llama-3-8B, 16 GPUs, HSDP 2 x 8, ZeRO-2: DP 16, GA 256/(16·2) = 8.
    ("hsdp2x8-zero2", dict(model="llama-3-8b", gpus=16, global_batch=256, micro_batch=2, zero_stage=2,
                           hsdp_replicas=2, recompute="selective", framework="fsdp"),
     dict(dp=16, replicate=2, shard=8, local=2, ga=8, reshard="never", ac="none")),
    # Llama-3-70B, 64 GPUs, TP8·PP4·VPP2: DP 2, GA 128/2 = 64 -> local = 64 micro-batches of 1;
    # 80 layers / (4·2) = 10 per virtual stage.
    ("tp8-pp4-vpp2", dict(model="llama-3-70b", gpus=64, global_batch=128, tp=8, pp=4, vpp=2, zero_stage=2,
                          recompute="full", framework="fsdp"),
     dict(dp=2, replicate=1, shard=2, local=64, ga=64, reshard="never", ac="full", layers_per_stage=10)),
    # Qwen3-30B-A3B, 32 GPUs, CP2·EP8, fp8: DP 16, GA 64/16 = 4; experts over dp_shard·CP·TP = 32 ranks,
    # EP 8 -> efsdp 4.
    ("moe-cp2-ep8-fp8", dict(model="qwen3-30b-a3b", gpus=32, seq_len=16384, global_batch=64, cp=2, ep=8,
                             zero_stage=3, recompute="full", precision="fp8", framework="fsdp"),
     dict(dp=16, replicate=1, shard=16, local=1, ga=4, reshard="always", ac="full", efsdp=4)),
    # Llama-3-8B, 8 GPUs, DDP (ZeRO-0): replicate 8, GA 64/(8·4) = 2.
    ("ddp8", dict(model="llama-3-8b", gpus=8, global_batch=64, micro_batch=4, zero_stage=0, recompute="none",
                  framework="fsdp"),
     dict(dp=8, replicate=8, shard=1, local=4, ga=2, reshard="never", ac="none")),
]


@pytest.fixture
def fake_world():
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    yield lambda n: dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=n)
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.mark.parametrize("case_id,kwargs,want", CASES, ids=[c[0] for c in CASES])
def test_torchtitan_toml_loads_and_builds_the_mesh(scenario, fake_world, tmp_path, case_id, kwargs, want):
    warnings.filterwarnings("ignore")
    import_torchtitan()
    from torchtitan.config import ConfigManager
    from torchtitan.distributed.parallel_dims import ParallelDims
    from torchtitan.distributed.pipeline_parallel import generate_llm_fqn_per_model_part
    from torchtitan.protocols.model_converter import _registry_model_converter_cls

    sc = scenario(**kwargs)
    s, gpus = sc.strategy, sc.cluster.num_gpus
    exported = sc.export("torchtitan")
    assert tomllib.loads(exported.text)  # comments and all, valid TOML
    path = tmp_path / "job.toml"
    path.write_text(exported.text)
    job = ConfigManager().parse_args(["--job.config_file", str(path)])
    p, t = job.parallelism, job.training

    assert (p.data_parallel_replicate_degree, p.data_parallel_shard_degree) == (want["replicate"], want["shard"])
    assert (p.tensor_parallel_degree, p.pipeline_parallel_degree, p.context_parallel_degree) == (s.tp, s.pp, s.cp)
    assert (p.expert_parallel_degree, p.expert_tensor_parallel_degree) == (s.ep, s.etp)
    assert p.fsdp_reshard_after_forward == want["reshard"]
    assert job.activation_checkpoint.mode == want["ac"]
    assert t.seq_len == sc.setup.seq_len and t.local_batch_size == want["local"]
    assert t.global_batch_size == sc.setup.global_batch
    assert t.mixed_precision_param == "bfloat16"

    dims = ParallelDims(dp_replicate=p.data_parallel_replicate_degree, dp_shard=p.data_parallel_shard_degree,
                        cp=p.context_parallel_degree, tp=p.tensor_parallel_degree, pp=p.pipeline_parallel_degree,
                        ep=p.expert_parallel_degree, etp=p.expert_tensor_parallel_degree, world_size=gpus)
    fake_world(gpus)
    dims.build_mesh()
    batch_degree = dims.get_mesh("batch").size() if dims.dp_replicate * dims.dp_shard > 1 else 1
    assert batch_degree == want["dp"]
    if "efsdp" in want:
        assert dims.get_mesh("efsdp").size() == want["efsdp"] and dims.get_mesh("ep").size() == s.ep

    # torchtitan's own batch arithmetic (train.py): grad-accum = global / (local·batch degree).
    assert t.global_batch_size % (t.local_batch_size * batch_degree) == 0
    torchtitan_ga = t.global_batch_size // (t.local_batch_size * batch_degree)
    if s.pp > 1:
        assert torchtitan_ga == 1
        assert t.local_batch_size // p.pipeline_parallel_microbatch_size == want["ga"]
        stages = s.pp * s.vpp
        if p.pipeline_parallel_layers_per_stage:  # pipeline_llm's stage count
            assert p.pipeline_parallel_layers_per_stage == want["layers_per_stage"]
            assert math.ceil((sc.model.num_layers + p.pipeline_parallel_first_stage_less_layers
                              + p.pipeline_parallel_last_stage_less_layers)
                             / p.pipeline_parallel_layers_per_stage) == stages
        parts = generate_llm_fqn_per_model_part(stages, sc.model.num_layers,
                                                p.pipeline_parallel_first_stage_less_layers,
                                                p.pipeline_parallel_last_stage_less_layers)
        per_stage = [sum(name.startswith("layers.") for name in part) for part in parts]
        assert per_stage == [sc.model.num_layers // stages] * stages
    else:
        assert torchtitan_ga == want["ga"]
    if sc.setup.precision == "fp8":
        assert job.model.converters == ["quantize.linear.float8"]
        assert set(job.model.converters) <= set(_registry_model_converter_cls)


@pytest.mark.parametrize("case_id,kwargs,want", CASES, ids=[c[0] for c in CASES])
def test_torchtitan_03_flags_parse(scenario, case_id, kwargs, want):
    import tyro

    sc = scenario(**kwargs)
    args, _ = v03_command(ExportPlan(sc.model, sc.cluster, sc.setup, sc.strategy))
    assert args[:2] == ["--module", args[1]] and args[2] == "--config"
    flags = args[4:]  # --module/--config are read by ConfigManager before tyro
    config_class, full_ac, selective_ac = v03_config_class()
    parsed = tyro.cli(config_class, args=flags)
    p, t, s = parsed.parallelism, parsed.training, sc.strategy
    assert (p.data_parallel_replicate_degree, p.data_parallel_shard_degree) == (want["replicate"], want["shard"])
    assert (p.tensor_parallel_degree, p.pipeline_parallel_degree, p.context_parallel_degree,
            p.expert_parallel_degree) == (s.tp, s.pp, s.cp, s.ep)
    assert p.enable_sequence_parallel == (s.tp == 1 or s.sequence_parallel)
    assert p.fsdp_reshard_after_forward == want["reshard"]
    assert (t.local_batch_size, t.global_batch_size, t.seq_len) == (want["local"], sc.setup.global_batch, sc.setup.seq_len)
    assert (parsed.activation_checkpoint is None) == (want["ac"] == "none")
    if want["ac"] == "full":
        assert isinstance(parsed.activation_checkpoint, full_ac)
    assert (f"--parallelism.tensor_parallel_degree {s.tp}") in sc.export("torchtitan").text


def test_sequence_parallel_off_is_a_flag_in_03(scenario):
    import tyro

    sc = scenario("llama-3-8b", 8, tp=2, zero_stage=2, sequence_parallel=False, framework="fsdp")
    args, _ = v03_command(ExportPlan(sc.model, sc.cluster, sc.setup, sc.strategy))
    assert tyro.cli(v03_config_class()[0], args=args[4:]).parallelism.enable_sequence_parallel is False


def test_unknown_toml_keys_are_rejected(tmp_path):
    """torchtitan's TOML loader is strict, so a loaded file means every key was a real field."""
    import_torchtitan()
    from torchtitan.config import ConfigManager

    path = tmp_path / "bad.toml"
    path.write_text("[parallelism]\ntensor_parallel_size = 2\n")
    with pytest.raises(ValueError, match="tensor_parallel_size"):
        ConfigManager().parse_args(["--job.config_file", str(path)])


@pytest.mark.parametrize("kwargs,reason", [
    (dict(tp=2, zero_stage=0), "DDP"),
    (dict(mode="lora"), "LoRA"),
])
def test_torchtitan_refusals(scenario, kwargs, reason):
    with pytest.raises(ExportRefused, match=reason):
        scenario("llama-3-8b", 16, framework="fsdp", **kwargs).export("torchtitan")


def test_the_adapter_refusal_names_only_formats_that_write_the_mode(scenario):
    # Megatron-Bridge has LoRA (peft=lora) but no 4-bit QLoRA (it refuses it), so torchtitan's QLoRA refusal no
    # longer sends the user there; each format it names writes the same data-parallel QLoRA plan.
    with pytest.raises(ExportRefused, match="megatron-bridge/accelerate"):
        scenario("llama-3-8b", 8, mode="lora", zero_stage=2).export("torchtitan")
    with pytest.raises(ExportRefused) as refused:
        scenario("llama-3-8b", 8, mode="qlora", zero_stage=2).export("torchtitan")
    assert "megatron-bridge" not in str(refused.value)
    for fmt in ("accelerate", "deepspeed", "fsdp"):
        assert fmt in str(refused.value)
        scenario("llama-3-8b", 8, mode="qlora", zero_stage=2).export(fmt)  # writes it
