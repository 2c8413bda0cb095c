"""DeepSpeed's throughput timer (deepspeedai/DeepSpeed).

Format (deepspeed/utils/timer.py, ThroughputTimer.stop, printed every steps_per_print steps):
    "epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, "
    "MemAllocated={}GB, MaxMemAllocated={}GB"
The timer's batch size is the engine's train_batch_size() (deepspeed/runtime/engine.py), the
global batch: samples per second are for the whole job. Memory is torch's allocated / 1024**3.
"""

from __future__ import annotations

import re

from .reading import NUMBER, LogReading

# DeepSpeedConfig.print (deepspeed/runtime/config.py), logged once at start-up as
# "DeepSpeedEngine configuration:": '  {arg} {dots} {value}' with dots = '.' * (29 - len(arg)).
CONFIG_LINE = re.compile(r"\s(zero_optimization_stage|train_batch_size|train_micro_batch_size_per_gpu|world_size)"
                         r" \.* ?(\d+)\s*$", re.MULTILINE)
RUNNING = re.compile(r"RunningAvgSamplesPerSec=" + NUMBER)
MAX_ALLOCATED = re.compile(r"MaxMemAllocated=" + NUMBER + "GB")


def read_deepspeed(text: str) -> LogReading | None:
    running = [float(x) for x in RUNNING.findall(text)]
    running = [x for x in running if x > 0]
    if not running:
        return None
    peaks = [float(x) for x in MAX_ALLOCATED.findall(text)]
    config = {k: int(v) for k, v in CONFIG_LINE.findall(text)}
    plan: dict[str, object] = {}
    if "zero_optimization_stage" in config:
        plan["zero"] = config["zero_optimization_stage"]
    if "train_micro_batch_size_per_gpu" in config:
        plan["micro_batch"] = config["train_micro_batch_size_per_gpu"]
    # The running average already excludes the timer's warm-up steps: its last value is the run's.
    return LogReading(framework="deepspeed", entries=len(running), samples_per_s=running[-1],
                      peak_gib=max(peaks) if peaks and max(peaks) > 0 else None, num_gpus=config.get("world_size"),
                      global_batch=config.get("train_batch_size"), setup_framework="deepspeed", plan=plan)
