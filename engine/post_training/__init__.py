"""Post-training (DPO, GRPO, PPO): the reference, reward and critic models, rollout generation with a
KV cache, and what they add to a step's memory and time. See docs/post_training.md."""

from .spec import ALGORITHMS, RL_ALGORITHMS, PostTraining, post_training

__all__ = ["ALGORITHMS", "RL_ALGORITHMS", "PostTraining", "post_training"]
