"""What the performance model was validated on, and warnings for inputs far outside it.

The ranges come from the calibration runs themselves (engine/calibration/data), so they grow
when runs are added. `extrapolation_warnings` is cheap after the first call and is meant for
evaluate/recommend to surface next to their numbers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ..assumptions.compute import gpu_generation
from ..assumptions.network import link_kind
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..params import active_params, total_params
from ..training import MODE_WRITTEN, TrainingSetup
from .band_statistics import MIN_RUNS
from .regimes import STACK_NAMES, stack_kind_key, stack_of
from .runs import used_runs

# How far beyond the validated range a number may go before we warn (×).
RANGE_SLACK = 2.0
# Plans whose predicted throughput differs by less than this are not reliably ordered. On the
# calibration runs (`shardwise validate`: pairs of plans measured in one model/cluster group),
# pairs predicted within 5 % of each other come out in the measured order only 61 % of the time
# (999 pairs: little better than a coin toss), 76 % at 5-10 %, 87 % at 10-20 %, 95 % beyond.
RANKING_RESOLUTION = 0.05
GAP_EDGES = (0.0, RANKING_RESOLUTION, 2 * RANKING_RESOLUTION, 0.2, float("inf"))  # for the report


@dataclass(frozen=True)
class Coverage:
    generations: frozenset[str]
    link_kinds: frozenset[str]
    precisions: frozenset[str]
    frameworks: frozenset[str]
    num_gpus: tuple[int, int]
    seq_len: tuple[int, int]
    params: tuple[float, float]
    active_params: tuple[float, float]
    max_experts: int
    has_mla: bool
    # used runs per band key "stack|kind" (regimes.stack_kind_key): a stack with < MIN_RUNS of a kind has no
    # band of its own for it (the band lookup falls past it to the pooled dense/MoE band)
    stack_kind_runs: dict[str, int]


@lru_cache(maxsize=1)
def coverage() -> Coverage:
    runs = used_runs()
    return Coverage(
        generations=frozenset(gpu_generation(r.cluster.gpu) for r in runs),
        link_kinds=frozenset(link_kind(r.cluster.network) for r in runs) | {"nvlink"},
        precisions=frozenset(r.setup.precision for r in runs),
        frameworks=frozenset(r.setup.framework for r in runs),
        num_gpus=(min(r.cluster.num_gpus for r in runs), max(r.cluster.num_gpus for r in runs)),
        seq_len=(min(r.setup.seq_len for r in runs), max(r.setup.seq_len for r in runs)),
        params=(min(total_params(r.model) for r in runs), max(total_params(r.model) for r in runs)),
        active_params=(min(active_params(r.model) for r in runs), max(active_params(r.model) for r in runs)),
        max_experts=max((r.model.moe.num_experts for r in runs if r.model.moe), default=0),
        has_mla=any(r.model.mla is not None for r in runs),
        stack_kind_runs=dict(Counter(stack_kind_key(stack_of(r.host_framework), r.model.moe is not None)
                                     for r in runs)),
    )


def stack_warning(model: ModelSpec, setup: TrainingSetup) -> str | None:
    """A software stack with fewer than MIN_RUNS calibration runs of the scenario's kind (dense/MoE) has no
    band of its own: its prediction and band would be borrowed from other stacks' runs (set 2's PyTorch-native
    MoE rows were given the Megatron MoE band: docs/performance.md, "Protocol for session 8"). The stack is the
    one the band lookup uses (regimes.stack_of), so this fires exactly when that lookup falls past stack|kind."""
    stack, moe = stack_of(setup.framework), model.moe is not None
    n = coverage().stack_kind_runs.get(stack_kind_key(stack, moe), 0)
    if n >= MIN_RUNS:
        return None
    what = "with MoE layers" if moe else "on dense models"
    measured = "no measured runs" if n == 0 else f"only {n} measured run{'s' * (n > 1)}"
    return (f"{STACK_NAMES[stack]} {'MoE' if moe else 'dense'}: {measured} of this software stack {what} in the "
            f"calibration data: the prediction is unchecked there, and its error band is borrowed from other stacks' "
            f"runs and widened")


def extrapolation_warnings(model: ModelSpec, cluster: Cluster, setup: TrainingSetup) -> list[str]:
    """Plain-language warnings for inputs the throughput model was not validated on."""
    c = coverage()
    out = []
    gen = gpu_generation(cluster.gpu)
    if gen not in c.generations:
        out.append(f"{cluster.gpu.name}: no measured runs on {gen} GPUs were available for calibration; "
                   "throughput uses generic efficiency constants (expect larger errors, ±30 % or more)")
    kind = link_kind(cluster.network)
    if cluster.num_gpus > cluster.gpus_per_node and kind not in c.link_kinds:
        out.append(f"network {cluster.network.id}: {kind} links were not in the calibration data; "
                   "communication times use an assumed achievable bandwidth")
    lo, hi = c.num_gpus
    if cluster.num_gpus > hi * RANGE_SLACK:
        out.append(f"{cluster.num_gpus:,} GPUs is beyond the largest validated run ({hi:,} GPUs)")
    lo, hi = c.seq_len
    if setup.seq_len > hi * RANGE_SLACK or setup.seq_len < lo / RANGE_SLACK:
        out.append(f"sequence length {setup.seq_len:,} is outside the validated {lo:,}-{hi:,}")
    n = total_params(model)
    lo, hi = c.params
    if n > hi * RANGE_SLACK or n < lo / RANGE_SLACK:
        out.append(f"{n / 1e9:.3g} B parameters is outside the validated {lo / 1e9:.3g}-{hi / 1e9:.4g} B")
    if model.moe is not None and model.moe.num_experts > c.max_experts * RANGE_SLACK:
        out.append(f"{model.moe.num_experts} experts is beyond the validated maximum of {c.max_experts}")
    if setup.mode != "full":
        written = MODE_WRITTEN[setup.mode]  # as the papers write them (was "LORA")
        dequant = " and adds the 4-bit weights' dequantisation" if setup.mode == "qlora" else ""  # LoRA has none
        out.append(f"{written} fine-tuning: no measured runs in the calibration data; the time model "
                   f"drops the frozen weights' gradient GEMMs{dequant} from first principles")
    if setup.precision not in c.precisions:
        out.append(f"{setup.precision} precision was not in the calibration data")
    if setup.framework not in c.frameworks:
        out.append(f"framework {setup.framework}: its host overhead and overlap behaviour were not calibrated")
    stack = stack_warning(model, setup)
    if stack:
        out.append(stack)
    if model.approximate:
        out.append("the model shape was synthesised from a parameter count; FLOPs and sharding use assumed dimensions")
    return out
