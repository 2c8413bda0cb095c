"""Training modes as users type them: `full`, `lora`, `qlora`, and the post-training algorithms with
the policy trained fully or through adapters — `dpo`, `dpo-lora`, `grpo-qlora`, `ppo`, … — and the
one builder every front end (CLI, tools, web) uses to turn them into a TrainingSetup."""

from __future__ import annotations

from ..errors import SettingsInputError, ShardwiseInputError
from ..inputs import global_batch_from_tokens
from ..training import TrainingSetup, default_global_batch
from .spec import ALGORITHMS, PostTraining, post_training

WEIGHT_MODES = ("full", "lora", "qlora")
TRAINING_MODES: tuple[str, ...] = WEIGHT_MODES + tuple(
    f"{algorithm}{'' if weights == 'full' else '-' + weights}" for algorithm in ALGORITHMS for weights in WEIGHT_MODES)
DEFAULT_SEQ_LEN = TrainingSetup.model_fields["seq_len"].default
# The framework modelled when none is given, by how the weights train. QLoRA's 4-bit NF4 base is bitsandbytes
# through PEFT on a PyTorch/Hugging Face stack (Dettmers et al. 2023; FSDP-QLoRA, Answer.AI 2024); Megatron-LM and
# Megatron-Bridge have no 4-bit QLoRA (engine/export/megatron*.py refuse it), so a QLoRA plan ranked as Megatron
# could be exported by none of its formats. LoRA keeps Megatron: Megatron-Bridge's PEFT writes it.
DEFAULT_FRAMEWORK = {"full": "megatron", "lora": "megatron", "qlora": "fsdp"}


def default_framework(mode: str) -> str:
    """The framework for a mode as typed ('qlora', 'dpo-qlora', 'full'): DEFAULT_FRAMEWORK by its weights."""
    return DEFAULT_FRAMEWORK[split_mode(mode)[0]]


def split_mode(text: str) -> tuple[str, str | None]:
    """'dpo-lora' -> ('lora', 'dpo'); 'grpo' -> ('full', 'grpo'); 'qlora' -> ('qlora', None)."""
    t = str(text).strip().lower().replace("_", "-").replace("+", "-").replace(" ", "-")
    if t in WEIGHT_MODES:
        return t, None
    algorithm, _, weights = t.partition("-")
    if algorithm in ALGORITHMS and weights in ("", *WEIGHT_MODES):
        return weights or "full", algorithm
    raise ShardwiseInputError(f"unknown training mode {text!r}; allowed: {', '.join(TRAINING_MODES)}")


def mode_name(setup: TrainingSetup) -> str:
    """The mode as typed: 'full', 'lora', 'dpo', 'grpo-lora', …"""
    if setup.post_training is None:
        return setup.mode
    algorithm = setup.post_training.algorithm
    return algorithm if setup.mode == "full" else f"{algorithm}-{setup.mode}"


def training_setup(mode: str = "full", *, seq_len: int | None = None, global_batch: int | None = None,
                   global_batch_tokens: float | str | None = None, prompt_len: int | None = None,
                   response_len: int | None = None, group_size: int | None = None,
                   inference_tp: int | None = None, reference_dtype: str | None = None, **rest) -> TrainingSetup:
    """A TrainingSetup from what a user typed; `rest` are TrainingSetup fields (lora_rank, precision, …)."""
    weights, algorithm = split_mode(mode)
    rollout_inputs = {"prompt_len": prompt_len, "response_len": response_len, "group_size": group_size,
                      "inference_tp": inference_tp}
    post = None
    if algorithm in ("grpo", "ppo"):
        post = post_training(algorithm, prompt_len, response_len, group_size, inference_tp, seq_len=seq_len)
        seq_len = post.sequence_len
    else:
        given = [k for k, v in rollout_inputs.items() if v is not None]
        if given:
            raise SettingsInputError(", ".join("{" + k + "}" for k in given) + " describe rollout generation and "
                                     f"apply only to {{mode}} grpo or ppo (and their -lora/-qlora variants), not {mode}",
                                     *given, "mode")
        if algorithm == "dpo":
            post = post_training("dpo")
        seq_len = seq_len or DEFAULT_SEQ_LEN
    if reference_dtype is not None:
        if post is None:
            raise SettingsInputError(f"a reference dtype applies to {{mode}} dpo, grpo or ppo, not {mode}", "mode")
        post = post.model_copy(update={"reference_dtype": reference_dtype})
        PostTraining.model_validate(post.model_dump())  # bf16 or fp32 only
    if global_batch_tokens is not None:
        global_batch = global_batch_from_tokens(global_batch_tokens, seq_len)
        if algorithm == "dpo" and global_batch % 2:
            global_batch += 1  # whole chosen/rejected pairs
    global_batch = global_batch or default_global_batch(weights if algorithm is None else mode,
                                                        post.group_size if post is not None else None)
    rest["framework"] = rest.get("framework") or DEFAULT_FRAMEWORK[weights]  # none given: one that runs the mode
    return TrainingSetup(seq_len=seq_len, global_batch=global_batch, mode=weights,
                         post_training=post, **rest)
