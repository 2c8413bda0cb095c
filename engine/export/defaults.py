"""Values an export must write that the plan does not decide, each with where it comes from.

Plan numbers (degrees, batch, precision, recompute) never come from here. These are the
framework settings a runnable file needs anyway; the training-schedule ones are marked as
placeholders in every export's warnings so nobody mistakes them for advice.
"""

from __future__ import annotations

# Gradient clipping at global L2 norm 1.0: the default of Megatron-LM (--clip-grad),
# torchtitan (training.max_norm) and Nanotron's example configs.
GRADIENT_CLIP_NORM = 1.0

# Training-schedule placeholders: required by Megatron-LM (--train-iters), Nanotron
# (tokens.train_steps, learning_rate_scheduler.learning_rate) and torchtitan; not chosen by shardwise.
PLACEHOLDER_TRAIN_STEPS = 1000
PLACEHOLDER_LEARNING_RATE = 3.0e-4
PLACEHOLDER_WARMUP_STEPS = 100
ADAM_BETAS = (0.9, 0.95)  # Llama/GPT-3 pretraining recipes
ADAM_EPS = 1.0e-8
WEIGHT_DECAY = 0.1

# DeepSpeed ZeRO buckets sized from the hidden size, as Hugging Face Transformers fills the
# "auto" values (transformers/integrations/deepspeed.py, HfTrainerDeepSpeedConfig.trainer_config_finalize):
# reduce_bucket_size = h², stage3_prefetch_bucket_size = 0.9·h², stage3_param_persistence_threshold = 10·h.
def deepspeed_reduce_bucket(hidden: int) -> int:
    return hidden * hidden


def deepspeed_stage3_prefetch_bucket(hidden: int) -> int:
    return int(0.9 * hidden * hidden)


def deepspeed_stage3_persistence_threshold(hidden: int) -> int:
    return 10 * hidden


# Rack-scale NVLink domains (GB200/GB300 NVL72) are larger than one host: each compute tray
# holds 4 GPUs (NVIDIA GB200 NVL72 datasheet: 18 compute trays, 72 GPUs). A launcher starts
# one process per GPU of a host, so beyond 8 GPUs per NVLink domain this is the host size.
RACK_SCALE_GPUS_PER_HOST = 4
LARGEST_SINGLE_HOST_NVLINK_DOMAIN = 8

# Rendezvous defaults for the launch line (torchrun's own default port).
RDZV_PORT = 29500
