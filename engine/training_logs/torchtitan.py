"""torchtitan logs (pytorch/torchtitan).

Formats (torchtitan 0.2.2):
* torchtitan/components/metrics.py `MetricsProcessor.log`:
    f"step: {step:2}  loss: {loss:8.5f}  grad_norm: {grad_norm:7.4f}  memory: {max_reserved_gib:5.2f}GiB"
    f"({max_reserved_pct:.2f}%)  tps: {round(tps):,}  tflops: {tflops:,.2f}  mfu: {mfu:.2f}%"
  (with ANSI colour codes around the fields); tps is tokens per second per device.
* torchtitan/distributed/parallel_dims.py: "Building device mesh with parallelism: pp={pp},
  dp_replicate={r}, dp_shard={s}, cp={cp}, tp={tp}, ep={ep}, etp={etp}".
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
    return LogReading(framework="torchtitan", entries=len(tps), tokens_per_s_per_gpu=steady(tps),
                      peak_gib=max(memories[1:] or memories) if memories else None, num_gpus=num_gpus,
                      setup_framework="fsdp", plan=plan)
