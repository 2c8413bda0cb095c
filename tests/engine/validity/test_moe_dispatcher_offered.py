"""Which framework offers which MoE dispatcher (engine/validity/dispatchers.py), read in the installed packages:
Megatron-Core 0.16 (alltoall, allgather, flex + DeepEP), torchtitan 0.2.2 (`expert_parallel_comm_backend`
standard or deepep; DeepEP refuses ETP > 1), DeepSpeed 0.19.8 AutoEP (`comm_backend` comm or deepep; DeepEP refuses
folded ETP > 1), nanotron (no EP at all). `--moe-dispatcher deepep` was accepted silently everywhere; a dispatcher
a framework lacks is now an error where it would be priced (EP > 1) and a warning where nothing is priced (EP = 1).
"""

from __future__ import annotations

import json

import pytest

from shardwise.engine import validity
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

MIXTRAL = get_model("mixtral-8x7b")  # 8 experts
ON_16 = build_cluster("h100-sxm", 16)


def rules(framework: str, dispatcher: str, model=MIXTRAL, **plan) -> tuple[set[str], set[str], list]:
    setup = TrainingSetup(framework=framework, moe_dispatcher=dispatcher, global_batch=256)
    errors, warnings = validity.violations(model, ON_16, setup, Strategy(**plan))
    return {v.rule for v in errors}, {v.rule for v in warnings}, errors + warnings


@pytest.mark.parametrize("framework", ["megatron", "deepspeed", "fsdp"])
def test_deepep_is_offered_by_megatron_deepspeed_and_torchtitan(framework):
    errors, warnings, _ = rules(framework, "deepep", ep=8, zero_stage=3 if framework == "fsdp" else 1)
    assert not {"moe_dispatcher_offered", "deepep_with_etp"} & errors and "moe_dispatcher_not_offered" not in warnings


@pytest.mark.parametrize("framework", ["deepspeed", "fsdp", "nanotron"])
def test_allgather_is_megatrons_alone(framework):
    errors, _, found = rules(framework, "allgather", ep=8)
    assert "moe_dispatcher_offered" in errors
    text = next(v.message for v in found if v.rule == "moe_dispatcher_offered")
    assert f"{framework} has no allgather dispatcher; it is offered by megatron" in text
    assert "moe_dispatcher_offered" not in rules("megatron", "allgather", ep=8)[0]


def test_nanotron_has_no_deepep_and_the_message_names_who_does():
    errors, _, found = rules("nanotron", "deepep", ep=8)
    assert "moe_dispatcher_offered" in errors
    text = next(v.message for v in found if v.rule == "moe_dispatcher_offered")
    assert "megatron (Megatron-Core's flex dispatcher" in text and "deepspeed (DeepSpeed AutoEP" in text
    assert "fsdp (torchtitan" in text and "valid moe_dispatcher with nanotron: alltoall" in text


def test_with_ep_1_an_unoffered_dispatcher_is_a_warning_not_an_error():
    # nothing is priced for a dispatcher without expert parallelism (nanotron cannot have EP > 1 at all)
    errors, warnings, _ = rules("nanotron", "deepep", tp=8)
    assert "moe_dispatcher_offered" not in errors and "moe_dispatcher_not_offered" in warnings


def test_a_dense_model_ignores_the_dispatcher():
    errors, warnings, _ = rules("nanotron", "deepep", model=get_model("llama-3.1-8b"), tp=8)
    assert not {"moe_dispatcher_offered"} & errors and "moe_dispatcher_not_offered" not in warnings


@pytest.mark.parametrize("framework, refused", [("deepspeed", True), ("fsdp", True), ("megatron", False)])
def test_deepep_with_expert_tensor_parallelism(framework, refused):
    # torchtitan: "DeepEP with Expert Tensor Parallelism (ETP) is not supported yet"; DeepSpeed AutoEP:
    # comm_backend="deepep" does not support folded tensor parallelism; Megatron's flex dispatcher spans TP×EP
    errors, _, _ = rules(framework, "deepep", tp=2, ep=4, etp=2, zero_stage=3 if framework == "fsdp" else 1)
    assert ("deepep_with_etp" in errors) == refused


def test_the_cli_names_the_flag_and_json_the_field(capsys):
    from support.cli_runner import run

    argv = ["evaluate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "16", "--framework", "deepspeed",
            "--moe-dispatcher", "allgather", "--ep", "8"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and "[moe_dispatcher_offered] deepspeed has no allgather dispatcher" in out
    assert "valid --moe-dispatcher with deepspeed: alltoall, deepep" in out
    code, out, err = run(capsys, *argv, "--json")  # the REST API's object: the body's field name
    found = {v["rule"]: v["message"] for v in json.loads(out)["violations"]}
    assert "valid moe_dispatcher with deepspeed: alltoall, deepep" in found["moe_dispatcher_offered"]


@pytest.mark.parametrize("framework, fmt, setting", [
    ("deepspeed", "deepspeed", '"comm_backend": "deepep"'),  # AutoEP's expert_parallel section
    ("fsdp", "torchtitan", 'expert_parallel_comm_backend = "deepep"'),  # 0.2.2 [parallelism]
])
def test_the_frameworks_exports_switch_deepep_on(framework, fmt, setting):
    from shardwise.engine.export import export_plan

    setup = TrainingSetup(framework=framework, moe_dispatcher="deepep", global_batch=256)
    out = export_plan(fmt, MIXTRAL, ON_16, setup, Strategy(ep=8, zero_stage=3 if framework == "fsdp" else 2))
    assert setting in out.text
    plain = export_plan(fmt, MIXTRAL, ON_16, setup.model_copy(update={"moe_dispatcher": "alltoall"}),
                        Strategy(ep=8, zero_stage=3 if framework == "fsdp" else 2))
    assert setting not in plain.text
