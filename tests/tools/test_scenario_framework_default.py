"""The chat's scenario leaves the framework to the mode when none is given (session 13): Megatron-LM and
Megatron-Bridge have no 4-bit QLoRA (their exporters refuse it), so a QLoRA question is planned on PyTorch FSDP2, as the
CLI, REST and the page plan it (engine/post_training/modes.py DEFAULT_FRAMEWORK); full training stays Megatron."""

from shardwise.tools.scenario import Scenario


def _framework(**fields) -> str:
    return Scenario(model="qwen2.5-14b", gpu="h100", gpus=8, seq_len=4096, **fields).resolve().setup.framework


def test_qlora_without_a_framework_is_planned_on_fsdp():
    assert _framework(mode="qlora") == "fsdp"


def test_full_training_without_a_framework_stays_megatron_and_a_stated_one_is_kept():
    assert _framework() == "megatron"
    assert _framework(mode="qlora", framework="deepspeed") == "deepspeed"
