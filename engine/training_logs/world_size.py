"""The GPU count a log states, and which `world_size` is one.

Megatron-LM and its forks print the job's world size twice: the `world_size` argument in `_print_args`
('  {arg} {dots} {value}', dots = '.' * (48 - len(arg))) and validate_args' summary line, which
NVIDIA/Megatron-LM (megatron/training/arguments.py, d98e8a64 line 567) prints as
    'using world size: {}, data-parallel size: {}, context-parallel size: {}, hierarchical context-parallel
    sizes: {}, tensor-model-parallel size: {}, pipeline-model-parallel size: {}'
(older releases: no hierarchical field and 'context-parallel size: {} ' without a comma; some add encoder sizes)
and deepspeedai/Megatron-DeepSpeed (megatron/arguments.py, 207b2d5a) as
    'using world size: {}, data-parallel-size: {}, sequence-parallel size: {}, tensor-model-parallel size: {},
    pipeline-model-parallel size: {} '.
DeepSpeed's config print (deepspeed/runtime/config.py DeepSpeedConfig.print, edaa7221: '  {arg} {dots} {value}',
dots = '.' * (29 - len(arg))) also has a `world_size`, but DeepSpeedConfig sets it to
mpu.get_data_parallel_world_size() whenever the engine has a model-parallel unit (config.py, the `mpu is not None`
branch): Megatron-DeepSpeed's TP/PP grid or the pipeline engine's own. There it is the data-parallel size.
"""

from __future__ import annotations

import re

from ..setting_text import SettingsText, settings_text

# DeepSpeed's config print pads '{arg} {dots}' to exactly 29 characters (none for longer names); Megatron's
# _print_args to 48. A world_size line padded exactly as DeepSpeed pads is DeepSpeed's; any other (Megatron's, or an
# excerpt retyped with other dots) is read as the job's, as it always was.
DEEPSPEED_PADDING = 29
PADDED_INT = re.compile(r"(?:^|[\s:\]])([a-z_][a-z_0-9]*) (\.*) ?(\d+)\s*$", re.MULTILINE)
SUMMARY = re.compile(r"using world size:\s*(\d+),\s*data-parallel[- ]size:\s*(\d+)(.*)")
# (?<!-) skips 'encoder-tensor-model-parallel size'; 'hierarchical context-parallel sizes' does not match 'size:'.
SUMMARY_DEGREES = {"tp": re.compile(r"(?<!-)tensor-model-parallel size:\s*(\d+)"),
                   "pp": re.compile(r"(?<!-)pipeline-model-parallel size:\s*(\d+)"),
                   "cp": re.compile(r"(?<![-\w])context-parallel size:\s*(\d+)")}


def padded_ints(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """Integer '{arg} {dots} {value}' lines by name: (every one, the world_size lines DeepSpeed's config print
    padded, under "world_size" only). The last line of a name wins."""
    values: dict[str, int] = {}
    deepspeed: dict[str, int] = {}
    for name, dots, value in PADDED_INT.findall(text):
        if name == "world_size" and len(dots) == max(0, DEEPSPEED_PADDING - len(name)):
            deepspeed[name] = int(value)
        else:
            values[name] = int(value)
    return values, deepspeed


def summary_line(text: str) -> tuple[int | None, dict[str, int]]:
    """The world size and the tp/pp/cp degrees validate_args printed; (None, {}) when the line is not there."""
    m = SUMMARY.search(text)
    if not m or int(m.group(1)) <= 0:
        return None, {}
    degrees: dict[str, int] = {}
    for flag, pattern in SUMMARY_DEGREES.items():
        part = pattern.search(m.group(3))
        if part and int(part.group(1)) > 0:
            degrees[flag] = int(part.group(1))
    return int(m.group(1)), degrees


def deepspeed_gpu_count(text: str, pipeline: bool) -> tuple[int | None, tuple[SettingsText, ...]]:
    """The GPU count of a DeepSpeed log, one rule for the throughput-timer and pipeline-engine paths:
    Megatron's world size when the log prints it; else DeepSpeed's config world_size only when nothing in the log
    shows a model-parallel grid (a pipeline, Megatron's TP/PP arguments > 1); else none, and a note saying why."""
    megatron, config = padded_ints(text)
    summary, _ = summary_line(text)
    total = megatron.get("world_size") or summary
    if total:
        return total, ()
    grid = [f"{n} {v}" for n, v in (("tensor_model_parallel_size", megatron.get("tensor_model_parallel_size", 1)),
                                      ("pipeline_model_parallel_size", megatron.get("pipeline_model_parallel_size", 1)))
            if v > 1]
    if pipeline:
        grid.insert(0, "the pipeline engine")
    data_parallel = config.get("world_size") or None
    if not grid:
        return data_parallel, ()
    if data_parallel is None:
        return None, ()
    return None, (settings_text(
        f"DeepSpeed's world_size {data_parallel} is the data-parallel size under a model-parallel grid "
        f"({', '.join(grid)}), not the GPU count, which the log does not print: the run's GPU count is "
        "the one given ({gpus})", "gpus"),)
