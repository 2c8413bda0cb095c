"""Rules on the global batch: DP·micro-batch must divide it, and pipelines need micro-batches."""

from __future__ import annotations

import numpy as np

from ..plans import PlanGrid
from .rule import Plan, Rule, Scenario, divisors, listing


def _batch_divisible(s: Scenario, g: PlanGrid) -> np.ndarray:
    return s.setup.global_batch % (g.dp * g.micro_batch) == 0


def _batch_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return ~_batch_divisible(s, g)


def _batch_message(s: Scenario, p: Plan) -> str:
    gb, step = s.setup.global_batch, p.dp * p.micro_batch
    text = (f"global batch {gb:,} {'sequence' if gb == 1 else 'sequences'} is not divisible by DP·micro-batch = "
            f"{p.dp}·{p.micro_batch} = {step:,}")
    if step > gb:
        text += " (DP·micro-batch exceeds the global batch)"
    if gb % p.dp == 0:
        text += f"; valid micro-batch with DP={p.dp}: {listing(divisors(gb // p.dp), p.micro_batch)}"
    lower, upper = gb // step * step, (gb // step + 1) * step
    nearby = [b for b in (lower, upper) if b > 0]
    return text + f"; nearest global batches for this plan: {', '.join(f'{b:,}' for b in nearby)}"


DP_MICROBATCH_DIVIDES_GLOBAL_BATCH = Rule("dp_microbatch_divides_global_batch", "error", "batch",
                                          _batch_broken, _batch_message,
                                          short="DP × micro-batch does not divide the global batch")


def _interleaved_group_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    from .frameworks import capabilities

    if not capabilities(s.setup.framework).interleaved_needs_pp_microbatch_groups:
        return np.zeros(len(g), dtype=bool)
    m = g.grad_accum
    return (g.vpp > 1) & _batch_divisible(s, g) & ((m % g.pp != 0) | (m < g.pp))


def _interleaved_group_message(s: Scenario, p: Plan) -> str:
    per_rank = s.setup.global_batch // p.dp
    valid = [mb for mb in divisors(per_rank) if (per_rank // mb) % p.pp == 0]
    return (f"Megatron's interleaved schedule runs micro-batches in groups of PP={p.pp}, so their number per step "
            f"must be a multiple of PP, but it is {p.grad_accum}; valid micro-batch with DP={p.dp}: "
            f"{listing(valid, p.micro_batch)}, or VPP=1")


VPP_MICROBATCH_GROUPS = Rule("vpp_microbatch_groups", "error", "batch", _interleaved_group_broken,
                             _interleaved_group_message,
                             short="micro-batches do not fill the interleaved pipeline's groups")


def _few_microbatches_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return (g.pp > 1) & (g.grad_accum < g.pp) & _batch_divisible(s, g)


def _few_microbatches_message(s: Scenario, p: Plan) -> str:
    m = p.grad_accum
    bubble = (p.pp - 1) / (m + p.pp - 1)  # 1F1B idle fraction, Narayanan et al. 2021, eq. 1
    return (f"only {m} {'micro-batch' if m == 1 else 'micro-batches'} per step for PP={p.pp} stages: each stage idles "
            f"(PP−1)/(M+PP−1) = {bubble:.0%} of the step; a smaller micro-batch or fewer stages gives M ≥ PP")


FEWER_MICROBATCHES_THAN_STAGES = Rule("fewer_microbatches_than_stages", "warning", "batch",
                                      _few_microbatches_broken, _few_microbatches_message)


def _dpo_pairs_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    post = s.setup.post_training
    if post is None or post.algorithm != "dpo":
        return np.zeros(len(g), dtype=bool)
    return g.micro_batch % 2 == 1


def _dpo_pairs_message(s: Scenario, p: Plan) -> str:
    return (f"DPO runs a chosen/rejected pair in one forward (TRL's concatenated_forward), so a micro-batch holds "
            f"whole pairs: micro-batch {p.micro_batch} sequences is odd; use {p.micro_batch + 1} "
            f"({(p.micro_batch + 1) // 2} pair(s) per micro-batch)")


DPO_MICROBATCH_HOLDS_PAIRS = Rule("dpo_microbatch_holds_pairs", "error", "batch", _dpo_pairs_broken, _dpo_pairs_message,
                                  short="an odd DPO micro-batch (it holds whole pairs)")
