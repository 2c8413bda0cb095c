"""recommend(): every valid plan, the ones that fit, ranked by predicted throughput.

One PlanGrid for the whole space (engine/enumerate.py), memory for every valid plan in
one vectorised call, step time only for the plans that fit, then the top K re-assembled
as full Evaluations by `evaluate()` so a recommended plan reads exactly like
`shardwise evaluate` of the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import memory, performance
from .calibration.coverage import RANKING_RESOLUTION
from .calibration.profile import CalibrationProfile, profile_assumptions
from .cluster import Cluster
from .constraints import Constraints, parse_constraints
from .enumerate import Enumeration, enumerate_plans
from .errors import ShardwiseInputError
from .evaluate import cluster_summary, evaluate, model_summary, setup_summary
from .export import FORMATS
from .export.carriers import EXPORT_POOL, Carried, exportable, formats_carrying, refusal
from .model_spec import ModelSpec
from .plans import PlanGrid
from .recommendation import Recommendation
from .training import TrainingSetup
from .validity.rule import Scenario

GIB = 2**30
RANK_RESOLUTION_S = 1e-9  # step times closer than this are ties, broken by memory then by the plan itself


@dataclass(frozen=True)
class MemoryScan:
    """Every valid plan with its peak memory per GPU."""

    enumeration: Enumeration
    total_bytes: np.ndarray  # one per plan of enumeration.grid
    usable_bytes: float

    @property
    def grid(self) -> PlanGrid:
        return self.enumeration.grid

    @property
    def fits(self) -> np.ndarray:
        return self.total_bytes <= self.usable_bytes


@dataclass(frozen=True)
class Ranking:
    scan: MemoryScan
    fitting: PlanGrid  # the plans that fit, fastest first
    step_s: np.ndarray  # their step times, same order
    memory_bytes: np.ndarray  # their peak memory, same order

    @property
    def excluded(self) -> dict[str, int]:
        out = dict(self.scan.enumeration.excluded)
        not_fitting = int((~self.scan.fits).sum())
        if not_fitting:
            out["does_not_fit"] = not_fitting
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def check_headroom(headroom: float) -> float:
    if not isinstance(headroom, (int, float)) or not 0.0 <= headroom < 1.0:
        raise ShardwiseInputError(f"headroom is the share of GPU memory kept free, between 0 and 1 (e.g. 0.1); "
                                  f"got {headroom!r}")
    return float(headroom)


def with_framework(setup: TrainingSetup, c: Constraints) -> TrainingSetup:
    return setup.model_copy(update={"framework": c.framework}) if c.framework else setup


def scan_memory(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints,
                headroom: float, tp_within_node: bool = True) -> MemoryScan:
    enumeration = enumerate_plans(Scenario(model, cluster, setup), c, tp_within_node)
    usable = cluster.gpu.memory_gib * GIB * (1.0 - headroom)
    if len(enumeration.grid) == 0:
        return MemoryScan(enumeration, np.zeros(0), usable)
    total = np.asarray(memory.memory_per_gpu(model, cluster, setup, enumeration.grid).total, dtype=float)
    return MemoryScan(enumeration, total, usable)


def canonical_keys(grid: PlanGrid) -> list[np.ndarray]:
    """The plan itself as sort keys, most significant first: simpler plans first on ties."""
    return [grid.tp, grid.pp, grid.vpp, grid.cp, grid.ep, grid.etp, grid.zero_stage, ~grid.sp,
            grid.micro_batch, grid.recompute, grid.hsdp_replicas]


def rank(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints, headroom: float,
         profile: CalibrationProfile | None = None) -> Ranking:
    """Plans with TP inside a node first; TP across nodes (allowed, warned) only if none of those fits."""
    scan = scan_memory(model, cluster, setup, c, headroom)
    if not scan.fits.any() and "tp" not in c.pins and cluster.num_gpus > cluster.gpus_per_node:
        wider = scan_memory(model, cluster, setup, c, headroom, tp_within_node=False)
        if wider.fits.any():
            scan = wider
    index = np.flatnonzero(scan.fits)
    fitting = scan.grid.take(index)
    if len(fitting) == 0:
        return Ranking(scan, fitting, np.zeros(0), np.zeros(0))
    calibrated = {"assumptions": profile_assumptions(profile, cluster, setup)} if profile else {}
    step = np.asarray(performance.step_time(model, cluster, setup, fitting, **calibrated).step, dtype=float)
    mem = scan.total_bytes[index]
    # Tokens per step are the same for every valid plan (global batch × sequence), so the
    # fastest step is the highest throughput. np.lexsort: last key is the primary one.
    ticks = np.round(step / RANK_RESOLUTION_S)
    order = np.lexsort([*reversed(canonical_keys(fitting)), mem, ticks])
    return Ranking(scan, fitting.take(order), step[order], mem[order])


# GPU memory a plan must leave free to count as fitting: allocator slack, NCCL growth, spikes.
DEFAULT_HEADROOM = 0.1


def near_best(step_s: np.ndarray) -> int:
    """Plans after the best whose step is within RANKING_RESOLUTION of it (step_s fastest first)."""
    if len(step_s) < 2:
        return 0
    return int(np.count_nonzero(step_s[1:] < step_s[0] * (1.0 + RANKING_RESOLUTION)))


def near_best_carried(fmt: str, model: ModelSpec, cluster: Cluster, setup: TrainingSetup, ranking: Ranking,
                      carried: Carried) -> int:
    """near_best among the plans the format writes: the kept ones, then the walk goes on past
    the last plan checked while plans are still within RANKING_RESOLUTION of the best kept."""
    if not carried.kept:
        return 0
    bound = ranking.step_s[carried.kept[0]] * (1.0 + RANKING_RESOLUTION)
    near = sum(1 for i in carried.kept[1:] if ranking.step_s[i] < bound)
    i = carried.checked
    while i < min(len(ranking.fitting), EXPORT_POOL) and ranking.step_s[i] < bound:
        near += refusal(fmt, model, cluster, setup, ranking.fitting.strategy(i)) is None
        i += 1
    return near


def recommend(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, top_k: int = 5,
              headroom: float = DEFAULT_HEADROOM, profile: CalibrationProfile | None = None,
              export_format: str | None = None, list_exports: bool = False,
              **constraints) -> Recommendation:
    """The top_k fastest plans that fit in capacity × (1 − headroom), or what would fit.
    `profile`: a CalibrationProfile from the user's own measured run (None: the shipped calibration).
    `export_format`: rank only plans that format writes (engine/export/carriers.py), counting the
    faster ones it refuses; `list_exports`: name, for each plan returned, the formats that write it."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ShardwiseInputError(f"top_k must be a whole number ≥ 1, got {top_k!r}")
    headroom = check_headroom(headroom)
    c = parse_constraints(constraints)
    setup = with_framework(setup, c)
    ranking = rank(model, cluster, setup, c, headroom, profile)
    indices, carried = list(range(min(top_k, len(ranking.fitting)))), None
    if export_format is not None:
        carried = exportable(check_format(export_format), model, cluster, setup, ranking.fitting, ranking.step_s, top_k)
        indices = carried.kept
    # the setup is stated once, at the recommendation's top level, not in every plan
    plans = [evaluate(model, cluster, setup, ranking.fitting.strategy(i), headroom, profile=profile
                      ).model_copy(update={"setup": None})
             for i in indices]
    if list_exports:
        plans = [p.model_copy(update={"export_formats": formats_carrying(model, cluster, setup,
                                                                         ranking.fitting.strategy(i))})
                 for p, i in zip(plans, indices)]
    risk = None
    if indices:  # the plan recommended may not fit once the memory model's error is counted
        from .memory_risk import memory_risk

        risk = memory_risk(model, cluster, setup, ranking.fitting, ranking.step_s, ranking.memory_bytes, indices[0],
                           headroom, profile, export_format)
    nothing = None
    if not len(ranking.fitting):
        from .nothing_fits import explain_nothing_fits

        nothing = explain_nothing_fits(model, cluster, setup, c, headroom, ranking.scan)
    return Recommendation(
        model=model_summary(model), cluster=cluster_summary(cluster), setup=setup_summary(setup),
        headroom=headroom, constraints=c.as_dict(), plans=plans, searched=ranking.scan.enumeration.searched,
        valid=len(ranking.scan.grid), fitting=len(ranking.fitting), excluded=ranking.excluded,
        near_best=near_best_carried(export_format, model, cluster, setup, ranking, carried) if carried
        else near_best(ranking.step_s),
        ranking_resolution=RANKING_RESOLUTION, nothing_fits=nothing, export_format=export_format,
        set_aside=carried.set_aside if carried else [], export_checked=carried.checked if carried else 0,
        memory_risk=risk,
    )


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ShardwiseInputError(f"unknown export format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    return fmt
