"""The two plans `explain` compares when none is named: the recommended winner and its runner-up.

One place for the choice, so `shardwise explain` and `POST /api/explain` explain the same pair.
"""

from __future__ import annotations

from .calibration.profile import CalibrationProfile
from .cluster import Cluster
from .explain import compare
from .model_spec import ModelSpec
from .results import Evaluation, StrategySummary
from .search import recommend
from .strategy import Strategy
from .training import TrainingSetup

RUNNER_UP_POOL = 10  # top plans searched for the first one that is not a tie


def strategy_of(s: StrategySummary) -> Strategy:
    """The plan an evaluation reports, as a plan to evaluate again (DP and grad-accum are derived)."""
    return Strategy(tp=s.tp, pp=s.pp, vpp=s.vpp, cp=s.cp, ep=s.ep, etp=s.etp, zero_stage=s.zero_stage,
                    hsdp_replicas=s.hsdp_replicas, micro_batch=s.micro_batch, recompute=s.recompute,
                    sequence_parallel=s.sequence_parallel)


def runner_up(plans: list[Evaluation]) -> Evaluation:
    """The first alternative predicted slower than the winner (a tie explains nothing), else the second."""
    for other in plans[1:]:
        if compare(plans[0], other).decided_by != "tie":
            return other
    return plans[1]


def winner_and_runner_up(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, headroom: float = 0.1,
                         profile: CalibrationProfile | None = None) -> tuple[Strategy, Strategy | None] | None:
    """(winner, runner-up or None when only one plan fits), or None when nothing fits: each surface says
    that in its own words (a flag on the command line, a field in a request)."""
    top = recommend(model, cluster, setup, top_k=RUNNER_UP_POOL, headroom=headroom, profile=profile)
    if not top.plans:
        return None
    b = strategy_of(runner_up(top.plans).strategy) if len(top.plans) > 1 else None
    return strategy_of(top.plans[0].strategy), b
