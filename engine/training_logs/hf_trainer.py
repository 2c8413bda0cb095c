"""Hugging Face Trainer logs (huggingface/transformers).

Format: Trainer._finalize_training logs speed_metrics("train", ...) (transformers/trainer_utils.py:
{split}_runtime, {split}_samples_per_second rounded to 3 decimals, {split}_steps_per_second)
plus train_loss; the ProgressCallback prints the dict, e.g.
    {'train_runtime': 1234.5678, 'train_samples_per_second': 41.47, 'train_steps_per_second': 0.324, ...}
train_samples_per_second counts every sample of the job over the whole runtime (all ranks,
warm-up and evaluation pauses included).

The log cannot say which backend ran: the Trainer runs PyTorch DDP or FSDP itself (TrainingArguments `fsdp`), and
DeepSpeed only when given a `deepspeed` config. Its kernels are PyTorch's either way, so the run is modelled as the
PyTorch-native stack (shardwise's `fsdp`) unless the user names the framework; the CLI and the chat say so.
"""

from __future__ import annotations

import re

from .reading import NUMBER, LogReading

PYTORCH_NATIVE = "fsdp"  # shardwise's PyTorch-native framework (FSDP/DDP kernels and memory layout)
SAMPLES = re.compile(r"""['"]train_samples_per_second['"]\s*:\s*""" + NUMBER)


def read_hf_trainer(text: str) -> LogReading | None:
    values = [float(x) for x in SAMPLES.findall(text)]
    values = [v for v in values if v > 0]
    if not values:
        return None
    return LogReading(framework="hf-trainer", entries=len(values), samples_per_s=values[-1],
                      default_framework=PYTORCH_NATIVE)
