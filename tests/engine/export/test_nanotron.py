"""Nanotron exports against Nanotron's config schema as its source defines it.

The registry's Nanotron (0.4) does not import here, so the YAML is checked the way Nanotron's
loader (get_config_from_dict: dacite, strict) checks it — every key a field of the dataclass
it lands in, every required field present, every value of the field's type or value set —
against data/nanotron_schema.json, read from huggingface/nanotron's source. Then the numbers:
Nanotron's global batch is micro_batch_size·batch_accumulation_per_replica·dp (config.py,
Config.global_batch_size), and ParallelContext needs TP·CP·DP·PP = world size.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from shardwise.engine.export import ExportRefused

SCHEMA = json.loads((Path(__file__).parent / "data" / "nanotron_schema.json").read_text())
SCALARS = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool), "float": lambda v: isinstance(v, float),
           "bool": lambda v: isinstance(v, bool), "str": lambda v: isinstance(v, str),
           "Path": lambda v: isinstance(v, str), "xPath": lambda v: isinstance(v, str), "dict": lambda v: isinstance(v, dict)}


def check_value(value, annotation: str, where: str, allowed: list | None) -> None:
    optional = re.fullmatch(r"Optional\[(.*)\]", annotation)
    if optional:
        if value is None:
            return
        annotation = optional.group(1)
    if allowed is not None:  # enums, dtypes, engines, attention kernels: strings cast by Nanotron's type hooks
        assert value in allowed, f"{where}: {value!r} not in {allowed}"
        return
    listed = re.fullmatch(r"(?:List|list)\[(.*)\]", annotation)
    if listed:
        assert isinstance(value, list), where
        for item in value:
            check_value(item, listed.group(1), where, None)
        return
    assert annotation in SCALARS, f"{where}: no rule for annotation {annotation!r}"
    assert SCALARS[annotation](value), f"{where}: {value!r} is not {annotation}"


def validate(data: dict, class_name: str, where: str = "") -> None:
    fields = SCHEMA["classes"][class_name]
    assert isinstance(data, dict), where
    unknown = set(data) - set(fields)
    assert not unknown, f"{where or class_name}: unknown keys {sorted(unknown)} (dacite strict rejects them)"
    missing = {name for name, spec in fields.items() if spec["required"]} - set(data)
    assert not missing, f"{where or class_name}: missing required {sorted(missing)}"
    for name, value in data.items():
        path = f"{where}.{name}" if where else name
        nested = SCHEMA["nested"].get(f"{class_name}.{name}")
        listed = SCHEMA["nested"].get(f"{class_name}.{name}[]")
        if listed and value is not None:
            for i, item in enumerate(value):
                validate(item, listed, f"{path}[{i}]")
        elif nested and value is not None:
            validate(value, nested, path)
        elif not nested and not listed:
            check_value(value, fields[name]["annotation"], path, SCHEMA["values"].get(f"{class_name}.{name}"))


CASES = [
    # Llama-3-8B, 32 GPUs, TP4·PP2 (SP on): DP 4, accumulation 256/(4·2) = 32.
    ("tp4-pp2-sp", dict(model="llama-3-8b", gpus=32, global_batch=256, tp=4, pp=2, micro_batch=2, zero_stage=1,
                        recompute="full"), dict(dp=4, accum=32, tp_mode="REDUCE_SCATTER")),
    # Llama-3-8B, 16 GPUs, CP4 ring attention, ZeRO-0: DP 4, accumulation 32/4 = 8.
    ("cp4-ring", dict(model="llama-3-8b", gpus=16, seq_len=32768, global_batch=32, cp=4, zero_stage=0,
                      recompute="selective"), dict(dp=4, accum=8, tp_mode="ALL_REDUCE")),
    # Mixtral-8x7B (MoE, EP 1), 64 GPUs, TP8 SP off: DP 8, accumulation 128/8 = 16.
    ("moe-tp8", dict(model="mixtral-8x7b", gpus=64, global_batch=128, tp=8, zero_stage=1, sequence_parallel=False,
                     recompute="full"), dict(dp=8, accum=16, tp_mode="ALL_REDUCE")),
]


@pytest.mark.parametrize("case_id,kwargs,want", CASES, ids=[c[0] for c in CASES])
def test_nanotron_yaml_matches_schema_and_plan(scenario, case_id, kwargs, want):
    sc = scenario(**kwargs)
    cfg = yaml.safe_load(sc.export("nanotron").text)
    validate(cfg, SCHEMA["root"])
    p, tok, s = cfg["parallelism"], cfg["tokens"], sc.strategy
    assert (p["dp"], p["tp"], p["pp"], p["context_parallel_size"], p["expert_parallel_size"]) == (
        want["dp"], s.tp, s.pp, s.cp, 1)
    assert p["tp"] * p["context_parallel_size"] * p["dp"] * p["pp"] == sc.cluster.num_gpus  # ParallelContext
    assert p["tp_mode"] == want["tp_mode"] and p["tp_linear_async_communication"] == (want["tp_mode"] == "REDUCE_SCATTER")
    assert p["recompute_layer"] == (s.recompute == "full")
    assert tok["micro_batch_size"] == s.micro_batch and tok["batch_accumulation_per_replica"] == want["accum"]
    assert tok["micro_batch_size"] * tok["batch_accumulation_per_replica"] * p["dp"] == sc.setup.global_batch
    assert tok["sequence_length"] == sc.setup.seq_len
    assert cfg["optimizer"]["zero_stage"] == s.zero_stage and cfg["model"]["dtype"] == "bfloat16"
    model = cfg["model"]["model_config"]
    # Config.__post_init__'s assertions: heads % tp, kv heads >= tp, heads % kv heads.
    assert model["num_attention_heads"] % p["tp"] == 0 and model["num_key_value_heads"] >= p["tp"]
    assert model["num_attention_heads"] % model["num_key_value_heads"] == 0
    assert model["_attn_implementation"] == ("ring" if s.cp > 1 else "flash_attention_2")
    if sc.model.is_moe:
        assert model["moe_config"]["num_experts"] == sc.model.moe.num_experts


def test_validator_rejects_an_unknown_key():
    with pytest.raises(AssertionError, match="unknown keys"):
        validate({"dp": 1, "tp": 1, "pp": 1, "zero_stage": 3}, "ParallelismArgs")


@pytest.mark.parametrize("kwargs,reason", [
    (dict(model="mixtral-8x7b", gpus=64, ep=8, zero_stage=1), "expert parallelism"),
    # Nanotron would silently run ZeRO-1; the framework's own validity rule refuses it first.
    (dict(zero_stage=3), "ZeRO stage 3 is not available with nanotron"),
    (dict(zero_stage=2), "ZeRO stage 2 is not available with nanotron"),
    (dict(pp=2, vpp=2, zero_stage=1), "interleaved"),
    (dict(model="deepseek-v2-lite", zero_stage=1), "latent attention"),
    (dict(precision="fp8", zero_stage=1), "FP8"),
])
def test_nanotron_refusals(scenario, kwargs, reason):
    kwargs = {"model": "llama-3-8b", "gpus": 16, "global_batch": 64, **kwargs}
    with pytest.raises(ExportRefused, match=reason):
        scenario(**kwargs).export("nanotron")


def test_nanotron_export_says_how_much_slower_nanotron_runs_the_plan(scenario):
    """The plan's numbers are Megatron's; the export says what nanotron's measured profile predicts.
    Hand floor for Llama-3-8B, 32 GPUs, TP4 PP2 mb1 (pipeline peers 16 ranks apart: other node):
    16 layers per stage × (host + pipeline host × TP) per micro-batch, m + p − 1 = 64 + 1 slots."""
    from shardwise.engine.assumptions import calibrated as k
    from shardwise.engine.export.nanotron import nanotron_slowdown
    from shardwise.engine.export.plan import ExportPlan
    from shardwise.engine.performance import step_time
    from shardwise.engine.plans import PlanGrid

    sc = scenario("llama-3-8b", 32, global_batch=256, tp=4, pp=2, micro_batch=1, zero_stage=1)
    plan = ExportPlan(sc.model, sc.cluster, sc.setup, sc.strategy)
    slower, host_bound = nanotron_slowdown(plan)
    grid = PlanGrid.from_strategy(sc.strategy, 32, 256)
    planned = step_time(sc.model, sc.cluster, sc.setup, grid).step[0]
    floor = 65 * 16 * (k.HOST_TIME_PER_LAYER_S["nanotron"] + 4 * k.PIPELINE_HOST_TIME_PER_LAYER_PER_TP_S["nanotron"])
    assert host_bound and (1 + slower) * planned >= floor
    text = sc.export("nanotron").text
    assert f"{1 + slower:.1f}× as long" in text and "larger micro-batch" in text
    # the note quotes the fitted host time, not a number of its own
    assert f"~{k.HOST_TIME_PER_LAYER_S['nanotron'] * 1e3:.1f} ms host time per layer" in " ".join(text.split())

    # One node, no TP/PP: GPU-bound under nanotron too -- the gap is the kernel stack only, no advice.
    sc = scenario("llama-3-8b", 8, global_batch=256, micro_batch=4, zero_stage=1)
    slower, host_bound = nanotron_slowdown(ExportPlan(sc.model, sc.cluster, sc.setup, sc.strategy))
    assert not host_bound and 0 < slower < 1
    assert "larger micro-batch" not in sc.export("nanotron").text
