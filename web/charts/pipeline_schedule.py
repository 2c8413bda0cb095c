"""Simulate a pipeline schedule (1F1B, or Megatron's interleaved 1F1B when vpp > 1) to draw it.

Each pipeline rank runs its forward and backward passes in Megatron's order
(megatron/core/pipeline_parallel/schedules.py: warm-up forwards, steady one-forward-one-backward,
cool-down backwards); a pass starts when its rank is free and the pass it depends on has finished
on the neighbouring rank. Point-to-point transfer time is left out: the diagram shows the bubble,
the idle time the schedule itself forces (Narayanan et al. 2021, "Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM", section 2.2).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pass:
    stage: int  # pipeline rank, 0 = first
    kind: str  # "F" forward or "B" backward
    microbatch: int
    chunk: int  # model chunk (virtual stage) on this rank, 0..vpp-1
    start: float
    end: float


def rank_order(stage: int, pp: int, vpp: int, microbatches: int) -> list[tuple[str, int, int]]:
    """(kind, microbatch, chunk) in the order rank `stage` runs them."""
    total = microbatches * vpp
    if vpp == 1:
        warmup = min(pp - stage - 1, total)
    else:
        warmup = min((pp - stage - 1) * 2 + (vpp - 1) * pp, total)

    def ids(k: int, forward: bool) -> tuple[int, int]:
        chunk = (k % (pp * vpp)) // pp
        if not forward:
            chunk = vpp - 1 - chunk
        return (k // (pp * vpp)) * pp + k % pp, chunk

    order = [("F", *ids(k, True)) for k in range(warmup)]
    for i in range(total - warmup):
        order.append(("F", *ids(warmup + i, True)))
        order.append(("B", *ids(i, False)))
    order += [("B", *ids(k, False)) for k in range(total - warmup, total)]
    return order


def simulate(pp: int, vpp: int, microbatches: int, forward_s: float, backward_s: float) -> list[Pass]:
    """All passes with start and end times. `forward_s`/`backward_s` are for one micro-batch through one
    whole pipeline rank (all its chunks); a chunk takes 1/vpp of that."""
    if pp < 1 or vpp < 1 or microbatches < 1:
        raise ValueError("pp, vpp and micro-batches must be at least 1")
    if vpp > 1 and microbatches % pp:
        raise ValueError(f"the interleaved schedule needs micro-batches ({microbatches}) divisible by pp ({pp})")
    f, b = forward_s / vpp, backward_s / vpp
    orders = [rank_order(s, pp, vpp, microbatches) for s in range(pp)]
    done: dict[tuple[str, int, int, int], float] = {}  # (kind, mb, chunk, stage) -> end time
    passes: list[Pass] = []
    cursor, free = [0] * pp, [0.0] * pp
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(pp):
            while cursor[s] < len(orders[s]):
                kind, mb, chunk = orders[s][cursor[s]]
                dep = _dependency(kind, mb, chunk, s, pp, vpp)
                if dep is not None and dep not in done:
                    break
                start = max(free[s], done[dep] if dep is not None else 0.0)
                end = start + (f if kind == "F" else b)
                done[(kind, mb, chunk, s)] = end
                passes.append(Pass(s, kind, mb, chunk, start, end))
                free[s], cursor[s] = end, cursor[s] + 1
                remaining -= 1
                progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("pipeline schedule deadlocked")
    return passes


def _dependency(kind: str, mb: int, chunk: int, stage: int, pp: int, vpp: int):
    """The pass whose output this one consumes (on the previous/next rank), or None."""
    if kind == "F":
        if stage > 0:
            return ("F", mb, chunk, stage - 1)
        return ("F", mb, chunk - 1, pp - 1) if chunk > 0 else None
    if stage < pp - 1:
        return ("B", mb, chunk, stage + 1)
    if chunk < vpp - 1:
        return ("B", mb, chunk + 1, 0)
    return ("F", mb, vpp - 1, pp - 1)


def makespan(passes: list[Pass]) -> float:
    return max(p.end for p in passes)


def bubble_fraction(passes: list[Pass], pp: int) -> float:
    """Share of rank-time spent idle between the first pass starting and the last one ending."""
    busy = sum(p.end - p.start for p in passes)
    return 1.0 - busy / (pp * makespan(passes))
