"""Which export formats can write a plan — asked of the exporters themselves.

recommend ranks plans by predicted speed for a framework's capabilities, and DeepSpeed's
include Megatron-DeepSpeed layouts (TP with PP, TP with Ulysses CP) that its ds_config
cannot write. So the answer to "can this format carry the plan" is the exporter's own
refusal, never a second copy of its rules that could drift from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..cluster import Cluster
from ..evaluate import strategy_summary
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..recommendation import SetAside
from ..strategy import Strategy
from ..training import TrainingSetup
from . import FORMATS, export_plan
from .result import ExportRefused


def refusal(fmt: str, model: ModelSpec, cluster: Cluster, setup: TrainingSetup,
            strategy: Strategy) -> ExportRefused | None:
    """Why `fmt` cannot write the plan, or None when it can."""
    try:
        export_plan(fmt, model, cluster, setup, strategy)
    except ExportRefused as refused:
        return refused
    return None


def formats_carrying(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, strategy: Strategy) -> list[str]:
    """The export formats (in FORMATS order) that write this plan without refusing it."""
    return [fmt for fmt in FORMATS if refusal(fmt, model, cluster, setup, strategy) is None]


# Fitting plans tried against the format, fastest first, before giving up: every plan of a
# 64-GPU search is a few hundred; one check costs ~1 ms (the exporter builds the file).
EXPORT_POOL = 5000


@dataclass(frozen=True)
class Carried:
    """The ranking walked for one format: which plans it writes, and what it set aside."""

    kept: list[int]  # indices into the fitting plans, fastest first
    set_aside: list[SetAside]  # refused plans ranked above the last kept one, by cause
    checked: int


def exportable(fmt: str, model: ModelSpec, cluster: Cluster, setup: TrainingSetup, fitting: PlanGrid,
               step_s: Sequence[float], want: int) -> Carried:
    """The first `want` fitting plans (fastest first, `step_s` their step times) that `fmt`
    writes; refusals before the last one kept are counted by the exporter's rule. Refusals after
    it are not counted: they are slower than every plan shown, so they cost the user nothing."""
    kept: list[int] = []
    refused: dict[str, list] = {}
    checked = 0
    for i in range(min(len(fitting), EXPORT_POOL)):
        if len(kept) == want:
            break
        checked += 1
        why = refusal(fmt, model, cluster, setup, fitting.strategy(i))
        if why is None:
            kept.append(i)
        else:
            refused.setdefault(why.rule, [why, i, 0])[2] += 1
    set_aside = [SetAside.of(why, rule=rule, count=count,
                          fastest=strategy_summary(fitting, first), fastest_step_s=float(step_s[first]))
                 for rule, (why, first, count) in sorted(refused.items(), key=lambda kv: (-kv[1][2], kv[1][1]))]
    return Carried(kept, set_aside, checked)
