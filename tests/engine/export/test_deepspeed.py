"""DeepSpeed exports load in DeepSpeed's own DeepSpeedConfig, at the world size they imply.

Each case runs deepspeed_probe.py in a fresh process: torch.distributed on its fake backend
with the plan's GPU count, and DeepSpeed's own model-parallel unit for the plan (AutoTP
groups, the pipeline grid, Ulysses groups). The expected numbers are worked out by hand
beside each case: DP = GPUs / (TP·CP·PP), grad-accum = global batch / (DP·micro-batch).
DeepSpeed ignores top-level keys it never looks up, so every key written must be one
DeepSpeedConfig actually asked for.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shardwise.engine.export import ExportRefused

PROBE = Path(__file__).with_name("deepspeed_probe.py")

# (id, scenario kwargs, expected DP, expected grad-accum)
CASES = [
    # 64 GPUs, pure DP: DP = 64; GA = 512 / (64·2) = 4.
    ("dp-zero3", dict(model="llama-3-8b", gpus=64, global_batch=512, zero_stage=3, micro_batch=2,
                      recompute="none", framework="deepspeed"), 64, 4),
    # AutoTP 4: DP = 64/4 = 16; GA = 256 / (16·2) = 8.
    # (AutoTP has no Megatron sequence parallelism: SP off, as --framework deepspeed ranks it)
    ("autotp4-zero1", dict(model="llama-3-8b", gpus=64, global_batch=256, tp=4, sequence_parallel=False, zero_stage=1,
                           micro_batch=2, recompute="full", framework="deepspeed"), 16, 8),
    # PP 4: DP = 64/4 = 16; GA = 256 / (16·1) = 16.
    ("pp4-zero1", dict(model="llama-3-8b", gpus=64, global_batch=256, pp=4, zero_stage=1, micro_batch=1,
                       recompute="full", framework="deepspeed"), 16, 16),
    # Ulysses 4 on 32 GPUs: DP = 32/4 = 8; GA = 64 / (8·1) = 8. 32 heads / 4 = 8 per rank.
    ("ulysses4-zero2", dict(model="llama-3-8b", gpus=32, seq_len=32768, global_batch=64, cp=4, zero_stage=2,
                            micro_batch=1, recompute="selective", framework="deepspeed"), 8, 8),
    # AutoEP 8 (Mixtral, 8 experts): dense DP = 64; GA = 256 / 64 = 4.
    ("autoep8-zero2", dict(model="mixtral-8x7b", gpus=64, global_batch=256, ep=8, zero_stage=2, micro_batch=1,
                           recompute="full", framework="deepspeed"), 64, 4),
]


def probe(config: dict, world: int, tp: int, pp: int, cp: int) -> dict:
    request = json.dumps({"config": config, "world_size": world, "tp": tp, "pp": pp, "cp": cp})
    done = subprocess.run([sys.executable, str(PROBE)], input=request, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    return json.loads(lines[-1][len("PROBE"):])


def pipeline_keys_deepspeed_reads() -> set[str]:
    """The `pipeline` keys PipelineEngine looks up, read from DeepSpeed's installed source."""
    import deepspeed.runtime.pipe.engine as pipe_engine

    source = Path(pipe_engine.__file__).read_text()
    return set(re.findall(r"\.pipeline\[['\"](\w+)['\"]\]", source))


@pytest.mark.parametrize("case_id,kwargs,dp,grad_accum", CASES, ids=[c[0] for c in CASES])
def test_deepspeed_config_loads_with_the_plans_numbers(scenario, case_id, kwargs, dp, grad_accum):
    sc = scenario(**kwargs)
    exported = sc.export("deepspeed")
    config = json.loads(exported.text)
    s = sc.strategy
    loaded = probe(config, sc.cluster.num_gpus, s.tp, s.pp, s.cp)

    assert loaded["world_size"] == dp  # DeepSpeed counts the same data-parallel ranks as the plan
    if s.cp > 1:
        assert loaded["ulysses_world_size"] == dp
    assert loaded["train_micro_batch_size_per_gpu"] == s.micro_batch
    assert loaded["gradient_accumulation_steps"] == grad_accum
    assert loaded["train_batch_size"] == s.micro_batch * grad_accum * dp == sc.setup.global_batch
    assert loaded["zero_stage"] == s.zero_stage
    assert loaded["bf16"] is True and loaded["fp16"] is False
    assert loaded["autotp_size"] == (s.tp if s.tp > 1 else 0)
    assert loaded["autoep_enabled"] == (s.ep > 1) and loaded["autoep_size"] == s.ep
    if s.zero_stage >= 1:
        # overlap on; bucket = hidden² (Transformers' "auto" rule): Llama-3-8B 4096² and Mixtral 4096².
        assert loaded["overlap_comm"] is True and loaded["reduce_bucket_size"] == 4096 * 4096
    if s.pp > 1:
        assert loaded["pipeline"]["activation_checkpoint_interval"] == (1 if s.recompute == "full" else 0)
        assert set(config["pipeline"]) <= pipeline_keys_deepspeed_reads()
    assert ("activation_checkpointing" in config) == (s.recompute == "full")

    # Every key written is one DeepSpeedConfig looked up (it ignores the rest silently).
    seen = set(loaded["seen"])
    for key, value in config.items():
        assert key in seen, f"DeepSpeed never reads top-level key {key!r}"
        if key in ("activation_checkpointing", "expert_parallel"):
            for inner in value:
                assert f"{key}.{inner}" in seen, f"DeepSpeed never reads {key}.{inner}"
    assert exported.header_in_text is False and "{" == exported.text.lstrip()[0]


def test_unknown_top_level_keys_load_silently():
    """Why the test above records lookups: a misspelt key loads without a word."""
    from deepspeed.runtime.config import DeepSpeedConfig

    loaded = DeepSpeedConfig({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
                              "train_batchsize": 999, "_comment": "shardwise header"})
    assert loaded.train_batch_size == 2  # world size 1 without torch.distributed; 999 was ignored


@pytest.mark.parametrize("kwargs,reason", [
    (dict(tp=2, pp=2, zero_stage=1), "pipeline engine"),          # AutoTP with PP
    (dict(model="mixtral-8x7b", ep=8, pp=2, zero_stage=1), "pipeline engine"),  # AutoEP with PP
    (dict(cp=2, pp=2, zero_stage=1, seq_len=8192), "pipeline engine"),        # Ulysses with PP
    (dict(zero_stage=3, hsdp_replicas=2), "MiCS"),
    (dict(precision="fp8"), "FP8"),
    (dict(tp=2, cp=2, zero_stage=1, seq_len=8192), "Ulysses"),
    (dict(model="mixtral-8x7b", tp=2, ep=4, etp=2, zero_stage=1), "expert tensor"),
])
def test_deepspeed_refuses_what_it_cannot_express(scenario, kwargs, reason):
    kwargs = {"model": "llama-3-8b", "gpus": 64, "framework": "deepspeed", "micro_batch": 1, **kwargs}
    with pytest.raises(ExportRefused, match=reason) as refused:
        scenario(**kwargs).export("deepspeed")
    assert "\n" not in str(refused.value) and str(refused.value).startswith("cannot export this plan to deepspeed")
