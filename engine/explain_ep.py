"""Why a plan's expert parallelism is what it is: the plan against the same plan with EP inside one
node and with EP across nodes, priced with the dispatcher the user runs (setup.moe_dispatcher)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .calibration.profile import CalibrationProfile
from .cluster import Cluster
from .evaluate import evaluate
from .model_spec import ModelSpec
from .results import Evaluation
from .strategy import Strategy
from .training import TrainingSetup


class ExpertParallelAlternative(BaseModel):
    model_config = ConfigDict(frozen=True)

    ep: int
    crosses_nodes: bool
    outcome: Literal["invalid", "does_not_fit", "faster", "slower", "same"]
    rules: list[str] = Field(default_factory=list, description="validity rules it breaks")
    step_delta_s: float | None = None
    ep_comm_delta_s: float | None = None
    memory_delta_gib: float | None = None
    memory_total_gib: float | None = None


class ExpertParallelChoice(BaseModel):
    """The plan's EP, where its group sits, and the nearest EP on the other side of the node boundary."""

    model_config = ConfigDict(frozen=True)

    ep: int
    crosses_nodes: bool
    dispatcher: str
    a2a_overlap: bool
    ep_comm_s: float | None = None
    alternatives: list[ExpertParallelAlternative]


def crosses_nodes(cluster: Cluster, ep: int, etp: int) -> bool:
    """The EP group (stride ETP, topology.py) leaves the node when EP·ETP exceeds the node."""
    return ep > 1 and ep * etp > cluster.gpus_per_node


def _alternative_eps(model: ModelSpec, cluster: Cluster, s: Strategy) -> list[int]:
    in_node = max(min(cluster.gpus_per_node // s.etp, model.moe.num_experts), 1)
    across = in_node * 2
    out = []
    if crosses_nodes(cluster, s.ep, s.etp):
        out.append(in_node)
    elif across <= model.moe.num_experts and across * s.etp <= cluster.num_gpus:
        out.append(across)
    return [e for e in out if e != s.ep]


def _alternative(base: Evaluation, other: Evaluation, cluster: Cluster) -> ExpertParallelAlternative:
    s = other.strategy
    common = dict(ep=s.ep, crosses_nodes=crosses_nodes(cluster, s.ep, s.etp),
                  memory_total_gib=other.memory.total_gib,
                  memory_delta_gib=other.memory.total_gib - base.memory.total_gib)
    if not other.valid:
        return ExpertParallelAlternative(outcome="invalid", rules=[v.rule for v in other.violations], **common)
    step = other.time.step_s - base.time.step_s if base.time is not None else None
    ep_comm = other.time.ep_comm_s - base.time.ep_comm_s if base.time is not None else None
    if not other.memory.fits:
        return ExpertParallelAlternative(outcome="does_not_fit", step_delta_s=step, ep_comm_delta_s=ep_comm, **common)
    outcome = "same" if step is None or abs(step) < 1e-3 else "faster" if step < 0 else "slower"
    return ExpertParallelAlternative(outcome=outcome, step_delta_s=step, ep_comm_delta_s=ep_comm, **common)


def expert_parallel_choice(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, plan: Strategy,
                           base: Evaluation, headroom: float = 0.1,
                           profile: CalibrationProfile | None = None) -> ExpertParallelChoice | None:
    if model.moe is None or not base.valid:
        return None
    s = base.strategy
    alternatives = [_alternative(base, evaluate(model, cluster, setup, plan.model_copy(update={"ep": ep}), headroom,
                                                  profile=profile),
                                 cluster)
                    for ep in _alternative_eps(model, cluster, plan)]
    return ExpertParallelChoice(ep=s.ep, crosses_nodes=crosses_nodes(cluster, s.ep, s.etp),
                                dispatcher=setup.moe_dispatcher, a2a_overlap=setup.moe_a2a_overlap,
                                ep_comm_s=base.time.ep_comm_s if base.time is not None else None,
                                alternatives=alternatives)
