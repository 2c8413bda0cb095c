"""Hugging Face Trainer logs (huggingface/transformers).

Format: Trainer._finalize_training logs speed_metrics("train", ...) (transformers/trainer_utils.py:
{split}_runtime, {split}_samples_per_second rounded to 3 decimals, {split}_steps_per_second)
plus train_loss; the ProgressCallback prints the dict, e.g.
    {'train_runtime': 1234.5678, 'train_samples_per_second': 41.47, 'train_steps_per_second': 0.324, ...}
train_samples_per_second counts every sample of the job over the whole runtime (all ranks,
warm-up and evaluation pauses included).
"""

from __future__ import annotations

import re

from .reading import NUMBER, LogReading

SAMPLES = re.compile(r"""['"]train_samples_per_second['"]\s*:\s*""" + NUMBER)


def read_hf_trainer(text: str) -> LogReading | None:
    values = [float(x) for x in SAMPLES.findall(text)]
    values = [v for v in values if v > 0]
    if not values:
        return None
    return LogReading(framework="hf-trainer", entries=len(values), samples_per_s=values[-1])
