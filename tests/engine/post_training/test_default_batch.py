"""GRPO/PPO without a batch train on verl's default: data.train_batch_size 1,024 prompts x rollout.n samples
(verl ppo_trainer.yaml and examples/grpo_trainer/run_qwen2-7b.sh: train_batch_size=1024, n=5 for GRPO; n=1 for PPO).
It was the engine's 1,024 sequences: 204.8 prompts of GRPO's own default group of 5."""

from shardwise.engine.post_training.modes import training_setup
from shardwise.engine.training import default_global_batch


def test_grpo_and_ppo_default_to_whole_prompts_of_their_group():
    assert training_setup("grpo").global_batch == 1024 * 5
    assert training_setup("grpo", group_size=8).global_batch == 1024 * 8
    assert training_setup("ppo").global_batch == 1024 * 1
    assert training_setup("grpo-lora").global_batch == 1024 * 5
    assert training_setup("grpo", global_batch=640).global_batch == 640  # a batch given is kept
    assert default_global_batch("full") == 1024 and default_global_batch("lora") == 128
    assert default_global_batch("dpo") == 1024
