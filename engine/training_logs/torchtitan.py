"""torchtitan logs (pytorch/torchtitan).

Formats (torchtitan 0.2.2):
* torchtitan/components/metrics.py `MetricsProcessor.log`:
    f"step: {step:2}  loss: {loss:8.5f}  grad_norm: {grad_norm:7.4f}  memory: {max_reserved_gib:5.2f}GiB"
    f"({max_reserved_pct:.2f}%)  tps: {round(tps):,}  tflops: {tflops:,.2f}  mfu: {mfu:.2f}%"
  (with ANSI colour codes around the fields); tps is tokens per second per device.
* torchtitan/distributed/parallel_dims.py: "Building device mesh with parallelism: pp={pp},
  dp_replicate={r}, dp_shard={s}, cp={cp}, tp={tp}, ep={ep}, etp={etp}".
* torchtitan/trainer.py, once at start-up — the batch as the run used it:
    to 2026-08 (717e9358f): "Trainer is initialized with local batch size {L}, global batch size {G},
      gradient accumulation steps {A}, sequence length {S}, total steps …"
    since 73aed7f6c ("fold batch dim"): "Trainer is initialized with {N} tokens per DP rank, {T} tokens per
      train step, gradient accumulation steps {A}, maximum context length {S}, total steps …"
"""

from __future__ import annotations

import re

from .reading import GROUPED_INT, NUMBER, LogReading, steady

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Releases before mid-2024 printed the same per-device rate as "wps" (train.py: 'wps: {round(wps):,}').
STEP_LINE = re.compile(r"step:\s*(\d+).*?[tw]ps:\s*" + GROUPED_INT)
MEMORY = re.compile(r"memory:\s*" + NUMBER + "GiB")
MESH = re.compile(r"Building device mesh with parallelism: (.*)")
MESH_PART = re.compile(r"(\w+)=(\d+)")
# Older releases (torchtitan/parallelisms/parallel_dims.py, 2024-25): "Building 2-D device mesh with
# ['dp_shard', 'tp'], [4, 2]" (only the dimensions larger than 1).
OLD_MESH = re.compile(r"Building \d+-D device mesh with \[([^\]]*)\],\s*\[([^\]]*)\]")
INIT_SEQUENCES = re.compile(r"Trainer is initialized with local batch size (\d+), global batch size (\d+), "
                            r"gradient accumulation steps \d+, sequence length (\d+)")
INIT_TOKENS = re.compile(r"Trainer is initialized with (\d+) tokens per DP rank, (\d+) tokens per train step, "
                         r"gradient accumulation steps \d+, maximum context length (\d+)")


def batch_from_init_line(text: str) -> tuple[int | None, int | None, int | None]:
    """(sequence length, global batch in sequences, local batch per DP rank) as the start-up line prints them;
    the token form gives sequences only where the tokens divide by the context length."""
    if m := INIT_SEQUENCES.search(text):
        local, global_, seq = (int(x) for x in m.groups())
        return seq, global_, local
    if m := INIT_TOKENS.search(text):
        per_rank, per_step, seq = (int(x) for x in m.groups())
        return (seq, per_step // seq if per_step % seq == 0 else None,
                per_rank // seq if per_rank % seq == 0 else None)
    return None, None, None


def read_torchtitan(text: str) -> LogReading | None:
    text = ANSI.sub("", text)
    steps = [(int(s), float(t.replace(",", ""))) for s, t in STEP_LINE.findall(text)]
    steps = [(s, t) for s, t in steps if t > 0]
    if not steps:
        return None
    tps = [t for _, t in steps]
    memories = [float(x) for x in MEMORY.findall(text) if float(x) > 0]
    plan: dict[str, object] = {}
    num_gpus = None
    mesh, old = MESH.search(text), OLD_MESH.search(text)
    dims: dict[str, int] | None = None
    if mesh:
        dims = {k: int(v) for k, v in MESH_PART.findall(mesh.group(1))}
    elif old:
        names = [n.strip().strip("'\"") for n in old.group(1).split(",") if n.strip()]
        sizes = [int(x) for x in old.group(2).split(",") if x.strip()]
        dims = dict(zip(names, sizes))
    if dims is not None:
        for key in ("pp", "cp", "tp", "ep", "etp"):
            if key in dims:
                plan[key] = dims[key]
        shard, replicate = dims.get("dp_shard", 1), dims.get("dp_replicate", 1)
        plan["zero"] = 3 if shard > 1 else 0  # torchtitan applies FSDP2 full sharding over dp_shard
        if replicate > 1 and shard > 1:
            plan["hsdp"] = replicate
        num_gpus = dims.get("pp", 1) * replicate * shard * dims.get("cp", 1) * dims.get("tp", 1)
    seq_len, global_batch, local_batch = batch_from_init_line(text)
    if local_batch and plan.get("pp", 1) == 1:  # under PP the local batch is split into microbatches (count not printed)
        plan["micro_batch"] = local_batch
    return LogReading(framework="torchtitan", entries=len(tps), tokens_per_s_per_gpu=steady(tps),
                      peak_gib=max(memories[1:] or memories) if memories else None, num_gpus=num_gpus,
                      seq_len=seq_len, global_batch=global_batch, setup_framework="fsdp", plan=plan)
