"""Enumerate the search space as PlanGrids, checking validity stage by stage.

Layouts (TP, CP, PP, VPP, EP, ETP) are few — thousands even on 16,384 GPUs — so the
layout rules run on them first; only valid layouts are multiplied by micro-batch, then by
ZeRO stage, SP, recompute. Every excluded plan is counted under the first rule it
breaks, weighted by the number of full plans it stands for, so `searched` is the size of
the whole product and `searched = sum(excluded) + len(grid)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .constraints import Constraints
from .plans import PlanGrid
from .strategy import RECOMPUTE_MODES, Strategy
from .validity import ERROR_RULES, broken_mask, first_error
from .validity.frameworks import capabilities
from .validity.rule import Scenario, divisors

# Search-space pruning: values the search does not try unless the user pins them.
# They are choices about where good plans live, not physics.
MAX_MICRO_BATCH = 64  # sequences; beyond this GEMMs are already large and activations only grow
MAX_TOKENS_PER_MICRO_BATCH = 65_536  # GEMM efficiency saturates long before M = 64K rows
MIN_TOKENS_PER_CP_RANK = 1024  # ring attention cannot hide its K/V exchange behind less work
MAX_VPP = 8  # the interleaved bubble shrinks as 1/VPP; past 8 the extra P2P outweighs it
# The search interleaves only when the layers split into PP·VPP equal chunks: Megatron's
# --num-layers-per-virtual-pipeline-stage and torchtitan's schedule both need it (an uneven
# layout needs Megatron's explicit --pipeline-model-parallel-layout), and the bubble formula
# (p−1)/(m·v) assumes equal chunks. `evaluate` still accepts an uneven VPP, with a warning.
INTERLEAVE_ONLY_EVEN_CHUNKS = True
TP_WITHIN_NODE = True  # TP's per-layer collectives belong on NVLink; the search widens TP past a
# node only when nothing fits otherwise (search.rank) and in the nothing-fits probes
ETP_IS_1_OR_TP = True  # expert TP either off or equal to TP (torchtitan's and DeepSpeed's only options)

LAYOUT_KNOBS = ("tp", "cp", "pp", "vpp", "ep", "etp")


@dataclass(frozen=True)
class SearchSpace:
    tp: tuple[int, ...]
    cp: tuple[int, ...]
    pp: tuple[int, ...]
    vpp: tuple[int, ...]
    ep: tuple[int, ...]
    etp: tuple[int, ...]
    micro_batch: tuple[int, ...]
    zero_stage: tuple[int, ...]
    sequence_parallel: tuple[bool, ...]
    recompute: tuple[int, ...]
    hsdp_replicas: tuple[int, ...]


@dataclass(frozen=True)
class Enumeration:
    grid: PlanGrid  # every plan that breaks no error rule and is not a duplicate
    searched: int
    excluded: dict[str, int]
    space: SearchSpace
    examples: dict[str, Strategy]  # one excluded plan per rule, to explain "no valid plan"


def search_space(s: Scenario, c: Constraints, tp_within_node: bool = TP_WITHIN_NODE) -> SearchSpace:
    model, n, setup = s.model, s.cluster.num_gpus, s.setup
    caps = capabilities(setup.framework)
    gpus = divisors(n)
    moe = model.moe
    return SearchSpace(
        tp=c.filter("tp", [d for d in gpus if d <= model.num_attention_heads
                           and (d <= s.cluster.gpus_per_node or not tp_within_node)]),
        cp=c.filter("cp", [d for d in gpus if d == 1 or setup.seq_len // d >= MIN_TOKENS_PER_CP_RANK]),
        pp=c.filter("pp", [d for d in gpus if d <= model.num_layers]),
        vpp=c.filter("vpp", list(range(1, MAX_VPP + 1)) if caps.interleaved_pp else [1]),
        ep=c.filter("ep", [d for d in divisors(moe.num_experts) if n % d == 0] if moe else [1]),
        etp=c.filter("etp", [d for d in gpus if d <= s.cluster.gpus_per_node] if moe else [1]),
        micro_batch=c.filter("micro_batch", [d for d in divisors(setup.global_batch) if d == 1 or (
            d <= MAX_MICRO_BATCH and d * setup.seq_len <= MAX_TOKENS_PER_MICRO_BATCH)]),
        zero_stage=c.filter("zero_stage", list(caps.distinct_zero_stages)),
        sequence_parallel=c.filter("sequence_parallel", [True, False]),
        recompute=c.filter("recompute", list(range(len(RECOMPUTE_MODES)))),
        hsdp_replicas=c.filter("hsdp_replicas", [1]),
    )


def _product(**values: tuple) -> dict[str, np.ndarray]:
    grids = np.meshgrid(*[np.asarray(v) for v in values.values()], indexing="ij")
    return {k: g.ravel() for k, g in zip(values, grids)}


def _expand(columns: dict[str, np.ndarray], **values: tuple) -> dict[str, np.ndarray]:
    """Every row times every combination of the new knobs' values."""
    extra = _product(**values)
    rows, combos = len(next(iter(columns.values()))), len(next(iter(extra.values())))
    out = {k: np.repeat(v, combos) for k, v in columns.items()}
    out.update({k: np.tile(v, rows) for k, v in extra.items()})
    return out


def _grid(s: Scenario, columns: dict[str, np.ndarray]) -> PlanGrid:
    return PlanGrid.build(s.cluster.num_gpus, s.setup.global_batch, **columns)


def _sp_choices(space: SearchSpace, tp: np.ndarray) -> np.ndarray:
    """SP has no effect at TP=1 (PlanGrid turns it off), so it counts once there."""
    return np.where(tp > 1, len(space.sequence_parallel), 1)


def _count(excluded: dict[str, int], examples: dict[str, Strategy], grid: PlanGrid, first: np.ndarray,
           weight: np.ndarray) -> None:
    for index in np.unique(first[first >= 0]):
        name = ERROR_RULES[int(index)].name
        hits = first == index
        excluded[name] = excluded.get(name, 0) + int(weight[hits].sum())
        examples.setdefault(name, grid.strategy(int(np.argmax(hits))))


def enumerate_plans(s: Scenario, c: Constraints, tp_within_node: bool = TP_WITHIN_NODE) -> Enumeration:
    space = search_space(s, c, tp_within_node)
    excluded: dict[str, int] = {}
    examples: dict[str, Strategy] = {}
    options = len(space.zero_stage) * len(space.recompute) * len(space.hsdp_replicas)

    # Stage 1: layouts. VPP > 1 only where there is a pipeline with layers to interleave,
    # and ETP ∈ {1, TP} (unless pinned).
    cols = _product(**{k: getattr(space, k) for k in LAYOUT_KNOBS})
    keep = np.ones(len(cols["tp"]), dtype=bool)
    if "vpp" not in c.pins:
        keep &= (cols["vpp"] == 1) | ((cols["pp"] > 1) & (cols["pp"] * cols["vpp"] <= s.model.num_layers))
        if INTERLEAVE_ONLY_EVEN_CHUNKS:
            keep &= (cols["vpp"] == 1) | (s.model.num_layers % (cols["pp"] * cols["vpp"]) == 0)
    if "etp" not in c.pins and ETP_IS_1_OR_TP:
        keep &= (cols["etp"] == 1) | (cols["etp"] == cols["tp"])
    cols = {k: v[keep] for k, v in cols.items()}
    layouts = _grid(s, cols)
    weight = len(space.micro_batch) * options * _sp_choices(space, layouts.tp)
    searched = int(weight.sum())
    first = first_error(s, layouts, ("layout",))
    _count(excluded, examples, layouts, first, weight)
    cols = {k: v[first < 0] for k, v in cols.items()}

    # Stage 2: micro-batch against the global batch.
    cols = _expand(cols, micro_batch=space.micro_batch)
    batched = _grid(s, cols)
    first = first_error(s, batched, ("batch",))
    _count(excluded, examples, batched, first, options * _sp_choices(space, batched.tp))
    cols = {k: v[first < 0] for k, v in cols.items()}

    # Stage 3: ZeRO, SP, recompute (and HSDP replicas when pinned).
    cols = _expand(cols, zero_stage=space.zero_stage, sequence_parallel=space.sequence_parallel,
                   recompute=space.recompute, hsdp_replicas=space.hsdp_replicas)
    if len(space.sequence_parallel) > 1:
        once = (cols["tp"] > 1) | (cols["sequence_parallel"] == space.sequence_parallel[0])
        cols = {k: v[once] for k, v in cols.items()}
    plans = _grid(s, cols)
    first = first_error(s, plans, ("options",))
    _count(excluded, examples, plans, first, np.ones(len(plans), dtype=np.int64))
    plans = plans.take(np.flatnonzero(first < 0))

    # Duplicates: ZeRO over a single data-parallel rank equals ZeRO-0.
    if 0 in space.zero_stage and len(plans):
        same = broken_mask(s, plans, "zero_without_dp")
        if same.any():
            excluded["zero_without_dp"] = int(same.sum())
            plans = plans.take(np.flatnonzero(~same))
    return Enumeration(plans, searched, excluded, space, examples)
