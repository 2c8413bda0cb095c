"""Megatron-LM logs: the training_log() line and the printed arguments.

Formats (NVIDIA/Megatron-LM, megatron/training/training.py `training_log`):
    ' iteration {:8d}/{:8d} |' ... ' elapsed time per iteration (ms): {:.1f} |'
    ' throughput per GPU (TFLOP/s/GPU): {:.1f} |' ... ' global batch size: {:5d} |'
and megatron/training/arguments.py `_print_args`: '  {arg} {dots} {value}' with dots = '.' * (48 - len(arg))
between '------------------------ arguments ------------------------' and '-------------------- end of arguments'.
`validate_args` also prints a one-line summary, 'using world size: {}, data-parallel size: {}, …' (world_size.py):
the GPU count and the degrees when the arguments block's world_size is not in the log.
Memory: megatron/training/utils.py `report_memory`: '... memory (MB) | allocated: … | max allocated: {} | …',
each torch byte count / mega_bytes with `mega_bytes = 1024.0 * 1024.0`: its "MB" is MiB, read as such.
The printed 'global batch size' is the current one (micro_batch_size x data_parallel_size x
get_num_microbatches(), training.py `training_log`): with `--rampup-batch-size START INCREMENT SAMPLES`
it grows during the ramp-up, and only the iterations at the last printed batch are the run's steady state.
"""

from __future__ import annotations

import re
import statistics

from .reading import NUMBER, LogReading, steady
from .world_size import padded_ints, summary_line

ITERATION_MS = re.compile(r"elapsed time per iteration \(ms\):\s*" + NUMBER)
# One training_log() line: its step time and, further on, the global batch it ran at.
ITERATION_LINE = re.compile(r"elapsed time per iteration \(ms\):\s*" + NUMBER + r"(?:.*?global batch size:\s*(\d+))?")
# Lines may carry a launcher's prefix ("[default0]:", "[rank0]:", "0: ") before the two spaces.
ARG_LINE = re.compile(r"(?:^|[\s:\]])([a-z_][a-z_0-9]*) \.{2,} (.*?)\s*$")
MAX_ALLOCATED_MB = re.compile(r"max allocated:\s*" + NUMBER)
MIB_PER_GIB = 1024.0


def _int(args: dict[str, str], name: str) -> int | None:
    """A positive integer argument, or None (unset, "None", or 0: nothing a run's size can be)."""
    v = args.get(name)
    return int(v) if v is not None and re.fullmatch(r"\d+", v) and int(v) > 0 else None


def _arguments(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    # An excerpt of the block (some argument lines, copied without the header) is read line by line.
    inside = "------------------------ arguments ------------------------" not in text
    for line in text.splitlines():
        if "------------------------ arguments ------------------------" in line:
            inside = True
            continue
        if "end of arguments" in line:
            inside = False
            continue
        if inside:
            m = ARG_LINE.search(line)
            if m:
                out[m.group(1)] = m.group(2)
    return out


def _steady_iterations(text: str, configured_batch: int | None) -> tuple[list[float], int | None, str | None]:
    """The step times (s) of the iterations at the last printed global batch, that batch, and a note when a
    batch ramp-up was set aside. A zero time (a line cut off, a skipped iteration) measures nothing: not a step."""
    lines = [(float(ms) / 1e3, int(b) if b else None) for ms, b in ITERATION_LINE.findall(text)]
    lines = [(t, b) for t, b in lines if t > 0]
    batches = [b for _, b in lines if b]
    final = batches[-1] if batches else None
    if final is None or len(set(batches)) == 1:
        return [t for t, _ in lines], final, None
    kept = [t for t, b in lines if b == final]
    ramp = sorted(set(batches) - {final})
    note = (f"batch ramp-up: read the {len(kept)} iteration{'s' if len(kept) != 1 else ''} at the final global batch "
            f"{final} and set aside {len(lines) - len(kept)} at {', '.join(str(b) for b in ramp)}")
    if configured_batch is not None and final != configured_batch:
        note += f" (the log ends before the ramp-up reaches the configured {configured_batch})"
    return kept, final, note


def read_megatron(text: str) -> LogReading | None:
    if not [t for t in ITERATION_MS.findall(text) if float(t) > 0]:
        return None
    args = _arguments(text)
    times, final_batch, ramp_note = _steady_iterations(text, _int(args, "global_batch_size"))
    # After a ramp-up the run is warm: every iteration at the final batch is steady state, none dropped as warm-up.
    step_s = float(statistics.median(times)) if ramp_note else steady(times)
    summary_world_size, summary_degrees = summary_line(text)
    # A Megatron-DeepSpeed excerpt can hold DeepSpeed's config print too, whose world_size is the data-parallel
    # size: a world_size line padded as DeepSpeed pads is not the job's (world_size.py).
    world_size = padded_ints(text)[0].get("world_size") or summary_world_size
    plan: dict[str, object] = dict(summary_degrees)  # the arguments block, when printed, says the same and wins
    for flag, name in (("tp", "tensor_model_parallel_size"), ("pp", "pipeline_model_parallel_size"),
                       ("vpp", "virtual_pipeline_model_parallel_size"), ("cp", "context_parallel_size"),
                       ("ep", "expert_model_parallel_size"), ("etp", "expert_tensor_parallel_size"),
                       ("micro_batch", "micro_batch_size")):
        value = _int(args, name)
        if value is not None:
            plan[flag] = value
    if "use_distributed_optimizer" in args:
        plan["zero"] = 1 if args["use_distributed_optimizer"] == "True" else 0
    if "recompute_granularity" in args:
        plan["recompute"] = args["recompute_granularity"] if args["recompute_granularity"] in ("full", "selective") else "none"
    if "sequence_parallel" in args:
        plan["no_sp"] = args["sequence_parallel"] != "True"
    precision = None
    if args.get("fp8") not in (None, "None"):
        precision = "fp8"
    elif args.get("bf16") == "True":
        precision = "bf16"
    peaks = [float(x) / MIB_PER_GIB for x in MAX_ALLOCATED_MB.findall(text) if float(x) > 0]
    return LogReading(
        framework="megatron-lm", entries=len(times), step_s=step_s, peak_gib=max(peaks) if peaks else None,
        num_gpus=world_size, seq_len=_int(args, "seq_length"),
        global_batch=final_batch if final_batch else _int(args, "global_batch_size"), precision=precision,
        setup_framework="megatron", plan=plan, notes=(ramp_note,) if ramp_note else ())
