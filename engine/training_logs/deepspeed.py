"""DeepSpeed logs (deepspeedai/DeepSpeed): the throughput timer, or the pipeline engine's step line.

Formats (commit edaa7221267243c7be7fb49c5d5f5c4fb97b4641):
* deepspeed/utils/timer.py, ThroughputTimer.stop, printed every steps_per_print steps:
    "epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, "
    "MemAllocated={}GB, MaxMemAllocated={}GB"
  The timer's batch size is the engine's train_batch_size() (deepspeed/runtime/engine.py), the
  global batch: samples per second are for the whole job. Memory is torch's allocated / 1024**3.
* deepspeed/runtime/pipe/engine.py, PipelineEngine.train_batch, printed by rank 0 every steps_per_print steps:
    f'steps: {self.global_steps} loss: {self.agg_train_loss:0.4f} ' [f'{name}: {value:0.4f} ' ...]
    f'iter time (s): {iter_time:0.3f} samples/sec: {tput:0.3f}'
  iter_time is the mean step time over those steps and tput = train_batch_size() / iter_time (whole job).
  The pipeline stages are logged at start-up by each stage's first data-parallel rank:
    f'RANK={rank} STAGE={stage_id} LAYERS=... STAGE_PARAMS=...'.
"""

from __future__ import annotations

import re

from .reading import NUMBER, LogReading, steady

# DeepSpeedConfig.print (deepspeed/runtime/config.py), logged once at start-up as
# "DeepSpeedEngine configuration:": '  {arg} {dots} {value}' with dots = '.' * (29 - len(arg)).
CONFIG_LINE = re.compile(r"\s(zero_optimization_stage|train_batch_size|train_micro_batch_size_per_gpu|world_size)"
                         r" \.* ?(\d+)\s*$", re.MULTILINE)
RUNNING = re.compile(r"RunningAvgSamplesPerSec=" + NUMBER)
MAX_ALLOCATED = re.compile(r"MaxMemAllocated=" + NUMBER + "GB")
PIPE_STEP = re.compile(r"\bsteps:\s*\d+\s+loss:.*?iter time \(s\):\s*" + NUMBER + r"\s+samples/sec:\s*" + NUMBER)
PIPE_STAGE = re.compile(r"\bRANK=\d+\s+STAGE=(\d+)\s+LAYERS=")


def _config(text: str) -> tuple[dict[str, int], dict[str, object]]:
    config = {k: int(v) for k, v in CONFIG_LINE.findall(text)}
    plan: dict[str, object] = {}
    if "zero_optimization_stage" in config:
        plan["zero"] = config["zero_optimization_stage"]
    if "train_micro_batch_size_per_gpu" in config:
        plan["micro_batch"] = config["train_micro_batch_size_per_gpu"]
    return config, plan


def _pipeline(text: str) -> LogReading | None:
    """The pipeline engine's step lines. DeepSpeedConfig's world_size is the data-parallel size when the engine
    has a model-parallel grid (config.py: mpu.get_data_parallel_world_size()), as a pipeline does: no GPU count."""
    steps = [(float(t), float(s)) for t, s in PIPE_STEP.findall(text)]
    steps = [(t, s) for t, s in steps if t > 0 and s > 0]
    if not steps:
        return None
    config, plan = _config(text)
    stages = [int(s) for s in PIPE_STAGE.findall(text)]
    if stages:
        plan["pp"] = max(stages) + 1
    batch = config.get("train_batch_size")
    # The first printed line averages the warm-up steps in: steady() drops it when there are enough lines.
    return LogReading(framework="deepspeed", entries=len(steps), samples_per_s=steady([s for _, s in steps]),
                      step_s=steady([t for t, _ in steps]) if batch else None, global_batch=batch,
                      setup_framework="deepspeed", plan=plan)


def read_deepspeed(text: str) -> LogReading | None:
    running = [float(x) for x in RUNNING.findall(text)]
    running = [x for x in running if x > 0]
    if not running:
        return _pipeline(text)
    peaks = [float(x) for x in MAX_ALLOCATED.findall(text)]
    config, plan = _config(text)
    # The running average already excludes the timer's warm-up steps: its last value is the run's.
    return LogReading(framework="deepspeed", entries=len(running), samples_per_s=running[-1],
                      peak_gib=max(peaks) if peaks and max(peaks) > 0 else None, num_gpus=config.get("world_size"),
                      global_batch=config.get("train_batch_size"), setup_framework="deepspeed", plan=plan)
