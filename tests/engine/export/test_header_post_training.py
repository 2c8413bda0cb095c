"""The export header names the post-training algorithm: a DPO/GRPO/PPO export said "setup: full training" (the
policy's weights mode), as if it were pre-training."""

import pytest

from shardwise.engine.export.header import header_lines
from shardwise.engine.export.plan import ExportPlan
from shardwise.engine.inputs import build_cluster, resolve_model
from shardwise.engine.post_training.modes import training_setup
from shardwise.engine.strategy import Strategy


def setup_line(mode: str) -> str:
    plan = ExportPlan(resolve_model("llama-3.1-8b"), build_cluster("h100-sxm", 16), training_setup(mode),
                      Strategy(zero_stage=2, micro_batch=2))
    return next(line for line in header_lines(plan, "x") if line.startswith("setup:"))


@pytest.mark.parametrize("mode,said", [
    ("full", "setup:   full training,"), ("lora", "setup:   lora training,"),
    ("dpo", "setup:   dpo post-training (policy trained fully),"),
    ("grpo-lora", "setup:   grpo-lora post-training (policy trained through LoRA adapters),"),
    ("ppo-qlora", "setup:   ppo-qlora post-training (policy trained through QLoRA adapters),"),
])
def test_the_setup_line_names_the_mode(mode, said):
    assert setup_line(mode).startswith(said)
