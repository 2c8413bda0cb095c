"""PostTraining: what a DPO, GRPO or PPO step adds around the policy's training step.

- dpo: the policy trains on chosen/rejected pairs (a global batch of N sequences is N/2 pairs); a
  frozen reference model (forward only) scores the same sequences. With LoRA/QLoRA the reference is the
  base with the adapters switched off, so it costs time but no memory.
- grpo / ppo, co-located as verl and OpenRLHF run them by default (every model on the same GPUs, one
  after the other): rollout generation (an inference engine of `inference_tp` GPUs generates
  `response_len` tokens after a `prompt_len`-token prompt, `group_size` samples per prompt), the
  policy's own log-prob forward, the reference forward (ppo: also the reward model's and the critic's
  value forward), then the policy (ppo: and the critic) trains with the plan searched as usual.
  A training sequence is prompt + response tokens.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..assumptions import post_training as a

Algorithm = Literal["dpo", "grpo", "ppo"]
ALGORITHMS: tuple[str, ...] = ("dpo", "grpo", "ppo")
RL_ALGORITHMS: tuple[str, ...] = ("grpo", "ppo")


class PostTraining(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    algorithm: Algorithm
    prompt_len: int = Field(default=a.DEFAULT_PROMPT_LEN, gt=0, le=16_777_216, description="rollout prompt tokens")
    response_len: int = Field(default=a.DEFAULT_RESPONSE_LEN, gt=0, le=16_777_216, description="generated tokens")
    group_size: int = Field(default=1, gt=0, le=4096, description="samples per prompt (GRPO group)")
    inference_tp: int = Field(default=a.DEFAULT_INFERENCE_TP, gt=0, le=1024, description="GPUs per inference engine")
    reference_dtype: Literal["bf16", "fp32"] = "bf16"
    defaults_used: tuple[str, ...] = Field(default=(), description="inputs not given, filled with documented defaults")

    @property
    def generates(self) -> bool:
        return self.algorithm in RL_ALGORITHMS

    @property
    def has_critic(self) -> bool:
        return self.algorithm == "ppo"

    @property
    def sequence_len(self) -> int:
        return self.prompt_len + self.response_len


def post_training(algorithm: str, prompt_len: int | None = None, response_len: int | None = None,
                  group_size: int | None = None, inference_tp: int | None = None,
                  seq_len: int | None = None) -> PostTraining:
    """A PostTraining with verl's defaults for what is not given, and the list of what was defaulted.
    GRPO/PPO train on prompt + response tokens: a `seq_len` given with one of the two fixes the other
    (with neither, the prompt takes its default and the response the rest)."""
    from ..errors import SettingsInputError, ShardwiseInputError

    if algorithm == "dpo":
        return PostTraining(algorithm="dpo")
    prompt_defaulted = prompt_len is None and response_len is None or prompt_len is None and seq_len is None
    if seq_len is not None:
        if prompt_len is not None and response_len is not None and prompt_len + response_len != seq_len:
            raise ShardwiseInputError(f"sequence length {seq_len:,} is not prompt + response = {prompt_len:,} + "
                                      f"{response_len:,}; give the prompt and response lengths only")
        if response_len is None:
            response_len = seq_len - (prompt_len if prompt_len is not None else a.DEFAULT_PROMPT_LEN)
            if prompt_len is None:
                prompt_len = a.DEFAULT_PROMPT_LEN
        elif prompt_len is None:
            prompt_len = seq_len - response_len
        if prompt_len <= 0 or response_len <= 0:
            raise SettingsInputError(f"sequence length {seq_len:,} leaves no room for a prompt and a response "
                                     f"(prompt {prompt_len:,}, response {response_len:,} tokens); give "
                                     "{prompt_len} and {response_len}", "prompt_len", "response_len")
    given = {"prompt_len": prompt_len, "response_len": response_len, "group_size": group_size,
             "inference_tp": inference_tp}
    defaults = {"prompt_len": a.DEFAULT_PROMPT_LEN, "response_len": a.DEFAULT_RESPONSE_LEN,
                "group_size": a.DEFAULT_GROUP_SIZE[algorithm], "inference_tp": a.DEFAULT_INFERENCE_TP}
    used = tuple(k for k, v in given.items() if v is None or (k == "prompt_len" and prompt_defaulted))
    values = {k: (defaults[k] if v is None else v) for k, v in given.items()}
    return PostTraining(algorithm=algorithm, defaults_used=used, **values)
