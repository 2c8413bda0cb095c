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
from .world_size import deepspeed_gpu_count, padded_ints, summary_line

# DeepSpeedConfig.print (deepspeed/runtime/config.py), logged once at start-up as "DeepSpeedEngine configuration:":
# '  {arg} {dots} {value}' with dots = '.' * (29 - len(arg)); its world_size is read by world_size.py.
CONFIG_KEYS = ("zero_optimization_stage", "train_batch_size", "train_micro_batch_size_per_gpu")
RUNNING = re.compile(r"RunningAvgSamplesPerSec=" + NUMBER)
MAX_ALLOCATED = re.compile(r"MaxMemAllocated=" + NUMBER + "GB")
PIPE_STEP = re.compile(r"\bsteps:\s*\d+\s+loss:.*?iter time \(s\):\s*" + NUMBER + r"\s+samples/sec:\s*" + NUMBER)
PIPE_STAGE = re.compile(r"\bRANK=\d+\s+STAGE=(\d+)\s+LAYERS=")


def _config(text: str) -> tuple[dict[str, int], dict[str, object]]:
    values, _ = padded_ints(text)  # DeepSpeed's keys and Megatron's argument names do not overlap (but world_size)
    config = {k: v for k, v in values.items() if k in CONFIG_KEYS}
    _, degrees = summary_line(text)
    plan: dict[str, object] = {k: v for k, v in degrees.items() if k in ("tp", "pp")}
    # Megatron-DeepSpeed prints Megatron's arguments too: its TP and PP degrees (the summary line says the same).
    for flag, name in (("tp", "tensor_model_parallel_size"), ("pp", "pipeline_model_parallel_size")):
        if values.get(name, 0) > 0:
            plan[flag] = values[name]
    if "zero_optimization_stage" in config:
        plan["zero"] = config["zero_optimization_stage"]
    if "train_micro_batch_size_per_gpu" in config:
        plan["micro_batch"] = config["train_micro_batch_size_per_gpu"]
    return config, plan


def _pipeline(text: str) -> LogReading | None:
    """The pipeline engine's step lines. Its grid makes DeepSpeedConfig's world_size the data-parallel size
    (world_size.py): the GPU count is read by the one rule both paths use."""
    steps = [(float(t), float(s)) for t, s in PIPE_STEP.findall(text)]
    steps = [(t, s) for t, s in steps if t > 0 and s > 0]
    if not steps:
        return None
    config, plan = _config(text)
    stages = [int(s) for s in PIPE_STAGE.findall(text)]
    if stages:
        plan["pp"] = max(stages) + 1
    num_gpus, notes = deepspeed_gpu_count(text, pipeline=True)
    batch = config.get("train_batch_size")
    # The first printed line averages the warm-up steps in: steady() drops it when there are enough lines.
    return LogReading(framework="deepspeed", entries=len(steps), samples_per_s=steady([s for _, s in steps]),
                      step_s=steady([t for t, _ in steps]) if batch else None, global_batch=batch,
                      num_gpus=num_gpus, setup_framework="deepspeed", plan=plan, notes=notes)


def read_deepspeed(text: str) -> LogReading | None:
    running = [float(x) for x in RUNNING.findall(text)]
    running = [x for x in running if x > 0]
    if not running:
        return _pipeline(text)
    peaks = [float(x) for x in MAX_ALLOCATED.findall(text)]
    config, plan = _config(text)
    num_gpus, notes = deepspeed_gpu_count(text, pipeline=bool(PIPE_STAGE.search(text) or PIPE_STEP.search(text)))
    # The running average already excludes the timer's warm-up steps: its last value is the run's.
    return LogReading(framework="deepspeed", entries=len(running), samples_per_s=running[-1],
                      peak_gib=max(peaks) if peaks and max(peaks) > 0 else None, num_gpus=num_gpus,
                      global_batch=config.get("train_batch_size"), setup_framework="deepspeed", plan=plan, notes=notes)
