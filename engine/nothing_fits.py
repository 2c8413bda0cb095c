"""When no plan fits: say so, and say what would — more GPUs (the fewest), recompute,
ZeRO-3, LoRA/QLoRA, or a GPU with more memory.

Each answer is a memory-only search ("probe") with one thing changed. A probe looks only
at micro-batch 1 and full recompute (unless the user pinned them; selective under per-layer CUDA
graphs, which refuse full recompute): every memory term
either grows with the micro-batch or shrinks with recompute, so those settings hold the
least memory a layout can need, and they are the least restrictive for the batch rules.
Probes also let TP span nodes (allowed, with a warning), since the question is what fits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cluster import Cluster
from .constraints import KNOBS, Constraints
from .evaluate import strategy_summary
from .model_spec import ModelSpec
from .recommendation import FixOption, NothingFits
from .results import StrategySummary, Violation
from .strategy import RECOMPUTE_MODES
from .post_training.modes import mode_name
from .training import TrainingSetup
from .validity import violations

GIB = 2**30
MAX_GPUS = 1_048_576  # Cluster's own limit
REFINE_STEPS = 8  # between the last count that does not fit and the first that does, try 8 even steps
FULL = RECOMPUTE_MODES.index("full")
SELECTIVE = RECOMPUTE_MODES.index("selective")
CONSTRAINTS_EXCLUDE_ALL = "constraints_exclude_every_value"  # a blocking reason that is not a validity rule


@dataclass(frozen=True)
class Probe:
    valid: int
    lowest_bytes: float | None
    plan: StrategySummary | None
    fits: bool

    @property
    def lowest_gib(self) -> float | None:
        return None if self.lowest_bytes is None else self.lowest_bytes / GIB


def _least_memory_constraints(c: Constraints, setup: TrainingSetup) -> Constraints:
    if "recompute" not in c.pins:
        # Per-layer CUDA graphs refuse full recompute (validity/graphs.py): selective is their leanest.
        c = c.pinned("recompute", SELECTIVE if setup.cuda_graphs == "per-layer" else FULL)
    return c


def probe(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints, headroom: float) -> Probe:
    from .search import scan_memory

    c = _least_memory_constraints(c, setup)
    scan = scan_memory(model, cluster, setup, c, headroom, tp_within_node=False)
    if len(scan.grid) and "micro_batch" not in c.pins:
        smallest = scan.grid.micro_batch == scan.grid.micro_batch.min()
        total, grid = scan.total_bytes[smallest], scan.grid.take(np.flatnonzero(smallest))
    else:
        total, grid = scan.total_bytes, scan.grid
    if len(grid) == 0:
        return Probe(0, None, None, False)
    best = int(np.argmin(total))
    return Probe(len(grid), float(total[best]), strategy_summary(grid, best), bool(total[best] <= scan.usable_bytes))


def _cluster_with(cluster: Cluster, num_gpus: int, gpu=None) -> Cluster:
    gpu = gpu or cluster.gpu
    multi_node = cluster.num_gpus > cluster.gpus_per_node
    node = cluster.gpus_per_node if (multi_node and gpu is cluster.gpu) else gpu.gpus_per_node
    return Cluster(gpu=gpu, num_gpus=num_gpus, gpus_per_node=min(node, num_gpus), network=cluster.network)


def min_gpus(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints,
             headroom: float) -> tuple[int | None, Probe | None]:
    """Double the GPU count until a plan fits, then refine between the last two counts
    in REFINE_STEPS even steps (counts with many divisors, so layouts exist)."""
    def fits(n: int) -> Probe:
        return probe(model, _cluster_with(cluster, n), setup, c, headroom)

    low, n = cluster.num_gpus, cluster.num_gpus * 2
    while n <= MAX_GPUS:
        found = fits(n)
        if found.fits:
            break
        low, n = n, n * 2
    else:
        return None, None
    step = low // REFINE_STEPS
    if step >= 1 and low % REFINE_STEPS == 0:
        for candidate in range(low + step, n, step):
            refined = fits(candidate)
            if refined.fits:
                return candidate, refined
    return n, found


def _larger_gpus(cluster: Cluster):
    from .hardware_catalog import list_gpus

    return sorted((g for g in list_gpus() if g.memory_gib > cluster.gpu.memory_gib),
                  key=lambda g: (g.memory_gib, g.id))


def _option(rule, change, found: Probe | None, note: str = "", applicable: bool = True) -> FixOption:
    if found is None:
        return FixOption(rule=rule, change=change, applicable=False, fits=False, note=note)
    return FixOption(rule=rule, change=change, applicable=applicable, fits=found.fits,
                     lowest_memory_gib=found.lowest_gib, plan=found.plan, note=note)


def fix_options(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints,
                headroom: float) -> tuple[list[FixOption], str | None]:
    options: list[FixOption] = []
    if setup.cuda_graphs == "per-layer":
        # Per-layer graphs refuse full recompute (validity/graphs.py): the fix changes the graphs too,
        # to full-iteration where the setup allows it, else none.
        moe_blocked = model.moe is not None and setup.moe_dispatcher != "deepep"
        graphs = "none" if moe_blocked else "full-iteration"
        options.append(_option("recompute_full", {"recompute": "full", "cuda_graphs": graphs},
                               probe(model, cluster, setup.model_copy(update={"cuda_graphs": graphs}),
                                     c.pinned("recompute", FULL), headroom),
                               "per-layer CUDA graphs cannot run with full recompute"))
    elif c.allows("recompute", FULL):
        options.append(_option("recompute_full", {"recompute": "full"}, None,
                               "already searched: full recompute is in the search space", applicable=False))
    else:
        options.append(_option("recompute_full", {"recompute": "full"},
                               probe(model, cluster, setup, c.pinned("recompute", FULL), headroom)))
    if c.allows("zero_stage", 3):
        options.append(_option("zero3", {"zero_stage": 3}, None,
                               "already searched: ZeRO-3 is in the search space", applicable=False))
    else:
        options.append(_option("zero3", {"zero_stage": 3},
                               probe(model, cluster, setup, c.pinned("zero_stage", 3), headroom)))
    for mode in ("lora", "qlora"):
        if setup.mode == mode or (mode == "lora" and setup.mode == "qlora"):
            options.append(_option(mode, {"mode": mode_name(setup)}, None, f"the setup already uses {setup.mode}",
                                   applicable=False))
            continue
        adapted = setup.model_copy(update={"mode": mode})  # a post-training algorithm stays, with adapters
        options.append(_option(mode, {"mode": mode_name(adapted)}, probe(model, cluster, adapted, c, headroom)))
    options += _inference_tp_options(model, cluster, setup, c, headroom)
    larger = None
    for gpu in _larger_gpus(cluster):
        found = probe(model, _cluster_with(cluster, cluster.num_gpus, gpu), setup, c, headroom)
        if found.fits:
            larger = gpu.id
            options.append(_option("larger_gpu", {"gpu": gpu.id}, found,
                                   f"{gpu.name}: {gpu.memory_gib:g} GiB instead of {cluster.gpu.memory_gib:g} GiB"))
            break
    else:
        options.append(_option("larger_gpu", {"gpu": None}, None,
                               "no catalog GPU with more memory fits this at the same GPU count", applicable=False))
    return options, larger


def _inference_tp_options(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints,
                          headroom: float) -> list[FixOption]:
    """GRPO/PPO: a wider rollout engine spreads its weights and KV cache over more GPUs. The smallest
    larger inference TP (within a node, dividing the GPUs and the heads) that lets a plan fit."""
    post = setup.post_training
    if post is None or not post.generates:
        return []
    wider = [t for t in (2, 4, 8, 16, 32, 64, 72) if post.inference_tp < t <= cluster.gpus_per_node
             and cluster.num_gpus % t == 0 and model.num_attention_heads % t == 0]
    for t in wider:
        found = probe(model, cluster, setup.model_copy(update={"post_training": post.model_copy(
            update={"inference_tp": t, "defaults_used": tuple(d for d in post.defaults_used if d != "inference_tp")})}),
                      c, headroom)
        if found.fits:
            return [_option("inference_tp", {"inference_tp": t}, found, f"rollout engines of {t} GPUs")]
    note = "no wider rollout engine within a node fits" if wider else "the rollout engine already spans a node"
    return [_option("inference_tp", {"inference_tp": None}, None, note, applicable=False)]


def _blocking(model, cluster, setup, excluded: dict[str, int], examples) -> list[Violation]:
    out = []
    for name, _ in sorted(excluded.items(), key=lambda kv: -kv[1])[:3]:
        if name in examples:
            errors, _w = violations(model, cluster, setup, examples[name])
            out += [v for v in errors if v.rule == name][:1]
    return out


def _empty_knobs(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints) -> list[Violation]:
    """Knobs the user's constraints leave with no value to try (e.g. min_tp=100 on 64 GPUs):
    nothing was searched, so no validity rule can be the reason."""
    from .enumerate import search_space
    from .validity.rule import Scenario, listing

    s = Scenario(model, cluster, setup)
    constrained = search_space(s, c, tp_within_node=False)
    free = search_space(s, c.without(*KNOBS), tp_within_node=False)
    out = []
    for knob in KNOBS:
        if getattr(constrained, knob):
            continue
        asked = ", ".join(f"{k}={v}" for k, v in c.as_dict().items() if k.removeprefix("min_").removeprefix("max_") == knob)
        tried = getattr(free, knob)
        shown = ", ".join(RECOMPUTE_MODES[v] for v in tried) if knob == "recompute" else listing(list(tried))
        out.append(Violation(rule=CONSTRAINTS_EXCLUDE_ALL,
                             message=f"the constraint {asked} leaves no {knob} value to try; for this model, "
                                     f"cluster and batch the search tries {knob} in: {shown}"))
    return out


def explain_nothing_fits(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, c: Constraints,
                         headroom: float, scan) -> NothingFits:
    capacity = cluster.gpu.memory_gib
    common = dict(capacity_gib=capacity, usable_gib=capacity * (1.0 - headroom))
    if len(scan.grid) == 0:
        e = scan.enumeration
        blocking = _empty_knobs(model, cluster, setup, c) if e.searched == 0 else []
        blocking = blocking or _blocking(model, cluster, setup, e.excluded, e.examples)
        return NothingFits(reason="no_valid_plan", blocking=blocking, **common)
    best = int(np.argmin(scan.total_bytes))
    n, found = min_gpus(model, cluster, setup, c, headroom)
    plan = found.plan if found else None
    options, larger = fix_options(model, cluster, setup, c, headroom)
    options.insert(0, FixOption(rule="more_gpus", change={"num_gpus": n}, applicable=True, fits=n is not None,
                                lowest_memory_gib=found.lowest_gib if found else None, plan=plan,
                                note="" if n else f"nothing fits even on {MAX_GPUS:,} GPUs"))
    return NothingFits(
        reason="out_of_memory", lowest_memory_gib=float(scan.total_bytes[best]) / GIB,
        lowest_memory_plan=strategy_summary(scan.grid, best), min_gpus=n, min_gpus_plan=plan,
        larger_gpu=larger, options=options, **common,
    )
