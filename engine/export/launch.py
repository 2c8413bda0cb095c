"""A launch script: torchrun on every host, through srun under Slurm, with the plan's
node and process counts.

torchrun starts the same number of processes on every host, so a GPU count that is not a
whole number of hosts is refused. Rack-scale NVLink domains (NVL72) span many hosts; the
process count per host is then the host size (defaults.RACK_SCALE_GPUS_PER_HOST).
"""

from __future__ import annotations

from . import defaults
from .common import result
from .plan import ExportPlan
from .result import ExportRefused, ExportResult

FORMAT = "launch"
FAMILY = None


def gpus_per_host(plan: ExportPlan) -> tuple[int, list[str]]:
    per_node = plan.cluster.gpus_per_node
    if per_node <= defaults.LARGEST_SINGLE_HOST_NVLINK_DOMAIN:
        return per_node, []
    host = defaults.RACK_SCALE_GPUS_PER_HOST
    return host, [f"the NVLink domain has {per_node} GPUs, more than one host holds: assuming {host} GPUs per host "
                  f"(GB200/GB300 NVL72 compute tray); change NPROC_PER_NODE if your hosts differ"]


def counts(plan: ExportPlan, fmt: str = FORMAT) -> tuple[int, int, list[str]]:
    """(hosts, processes per host, notes); `fmt`: the format a refusal names (Megatron-LM, Megatron-Bridge and
    Accelerate write their hosts with this rule too)."""
    per_host, notes = gpus_per_host(plan)
    gpus = plan.cluster.num_gpus
    if gpus % per_host:
        raise ExportRefused(fmt, f"{gpus} GPUs are not a whole number of {per_host}-GPU hosts, and torchrun starts "
                                    f"the same number of processes on every host",
                            f"use a multiple of {per_host} GPUs")
    return gpus // per_host, min(per_host, gpus), notes


def render(hosts: int, per_host: int) -> str:
    torchrun = (f'torchrun --nnodes={hosts} --nproc-per-node={per_host} --rdzv-backend=c10d '
                f'--rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT" --rdzv-id="$RUN_ID"')
    return (
        "set -euo pipefail\n"
        f"NNODES={hosts}\n"
        f"NPROC_PER_NODE={per_host}\n"
        f"MASTER_PORT=${{MASTER_PORT:-{defaults.RDZV_PORT}}}\n"
        "# usage: launch.sh your_training_script.py [its arguments...]\n"
        'if [ -n "${SLURM_JOB_ID:-}" ]; then\n'
        '  mapfile -t HOSTS < <(scontrol show hostnames "$SLURM_JOB_NODELIST")  # no pipe: pipefail-safe\n'
        '  MASTER_ADDR=${MASTER_ADDR:-${HOSTS[0]}}\n'
        '  RUN_ID=$SLURM_JOB_ID\n'
        f"  # one torchrun per host; each starts {per_host} processes\n"
        f'  srun --nodes={hosts} --ntasks-per-node=1 --gpus-per-node={per_host} \\\n'
        f'    {torchrun} "$@"\n'
        "else\n"
        f"  # run this same line on each of the {hosts} host{'s' if hosts != 1 else ''}\n"
        '  MASTER_ADDR=${MASTER_ADDR:?set MASTER_ADDR to the first host}\n'
        '  RUN_ID=${RUN_ID:-shardwise}\n'
        f'  {torchrun} "$@"\n'
        "fi\n"
    )


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    hosts, per_host, own = counts(plan)
    own.append(f"{hosts} host{'s' if hosts != 1 else ''} x {per_host} processes = {hosts * per_host} ranks "
               f"= TP·CP·PP·DP = {plan.strategy.tp}·{plan.strategy.cp}·{plan.strategy.pp}·{plan.dp}")
    return result(FORMAT, "launch.sh", plan, "launch script (torchrun, srun under Slurm)", render(hosts, per_host),
                  notes + own, preamble="#!/usr/bin/env bash\n")
