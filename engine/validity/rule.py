"""A validity rule: one named condition, checked for a whole PlanGrid at once.

Each rule says which knobs it reads (its `stage`), so the search can check layout rules
on a few thousand (TP, CP, PP, VPP, EP, ETP) layouts before it multiplies them by
micro-batch, ZeRO stage, SP and recompute. `violations()` and `valid_mask()` run the
same rules, so a single plan and the search can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np

from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..setting_text import SettingsText
from ..training import TrainingSetup

Severity = Literal["error", "warning"]
# layout: reads tp, cp, pp, vpp, ep, etp (and the derived dp); batch: adds micro_batch;
# options: adds zero_stage, sequence parallel, recompute, hsdp_replicas.
Stage = Literal["layout", "batch", "options"]
STAGES: tuple[Stage, ...] = ("layout", "batch", "options")


@dataclass(frozen=True)
class Scenario:
    """Everything a rule may read besides the plan."""

    model: ModelSpec
    cluster: Cluster
    setup: TrainingSetup


@dataclass(frozen=True)
class Plan:
    """One row of a PlanGrid as plain ints, for writing messages."""

    tp: int
    pp: int
    vpp: int
    cp: int
    ep: int
    etp: int
    dp: int
    zero_stage: int
    hsdp_replicas: int
    sp: bool
    micro_batch: int
    grad_accum: int
    recompute: int  # RECOMPUTE_NONE / _SELECTIVE / _FULL (engine/plans.py)

    @classmethod
    def row(cls, grid: PlanGrid, i: int = 0) -> "Plan":
        return cls(**{name: (bool if name == "sp" else int)(getattr(grid, name)[i])
                      for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Rule:
    name: str  # stable: tests, the agent and templates refer to it
    severity: Severity
    stage: Stage
    broken: Callable[[Scenario, PlanGrid], np.ndarray]  # True where the plan violates the rule
    message: Callable[[Scenario, Plan], str | SettingsText]  # what is wrong and the nearest valid values
    # Why plans are left out, in a few words beside their count (the page's "Not shown" line: "1,665: TP does not
    # divide the attention heads"); `message` says it in full for one plan. Every error rule has one; a warning
    # that leaves plans out of the search (zero_without_dp, a duplicate of ZeRO-0) has one too.
    short: str = ""

    def __post_init__(self):
        if self.severity == "error" and not self.short:
            raise ValueError(f"validity rule {self.name}: an error rule needs its `short` phrase")


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def nearest(values: list[int], target: int, limit: int = 8) -> list[int]:
    """The `limit` values closest to target (ties to the smaller), in ascending order."""
    return sorted(sorted(values, key=lambda v: (abs(v - target), v))[:limit])


def listing(values: list[int], target: int | None = None, limit: int = 8) -> str:
    """'1, 2, 4, 8' — the nearest few to target when the list is long; 'none' when empty."""
    if not values:
        return "none"
    shown = nearest(values, target, limit) if target is not None and len(values) > limit else sorted(values)[:limit]
    text = ", ".join(f"{v:,}" for v in shown)
    return text + (", …" if len(values) > len(shown) else "")
