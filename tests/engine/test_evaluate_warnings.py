"""evaluate() flags inputs outside what the time model was calibrated on.

The calibration data (shared/calibration/README.md) holds NVIDIA runs only (A100, H100, B200,
B300, GB200, GB300) and no LoRA runs; Llama-3.1-8B on 8 H100s at 4K is squarely inside it."""

from shardwise.engine.evaluate import evaluate
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup


def rules(e):
    return [w.rule for w in e.warnings]


def test_amd_gpu_and_lora_are_flagged_as_outside_the_validated_range():
    e = evaluate(get_model("llama-3.1-8b"), build_cluster("mi300x", 8), TrainingSetup(mode="lora"), Strategy())
    messages = [w.message for w in e.warnings if w.rule == "outside_validated_range"]
    assert any("MI300X" in m for m in messages) and any(m.startswith("LoRA fine-tuning:") for m in messages)


def test_a_calibrated_setup_has_no_such_warning():
    e = evaluate(get_model("llama-3.1-8b"), build_cluster("h100-sxm", 8), TrainingSetup(global_batch=64),
                 Strategy(tp=1))
    assert "outside_validated_range" not in rules(e)
