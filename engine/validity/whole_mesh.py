"""A plan whose degrees do not divide the GPUs has no data-parallel degree: input to refuse, not a plan to price.

Any other broken rule leaves a plan the engine can still price, and the answer says it is invalid and why. When
TP·CP·PP (or, in MoE layers, EP·ETP·PP) does not divide the GPU count, DP = GPUs / (TP·CP·PP) is not a whole
number: the engine would price the rounded-down DP, and a reader would see "DP=5" for TP=3 on 16 GPUs — a plan
no framework can launch. The surfaces that take a user's plan (CLI evaluate, explain, export; the REST API; the
chat's tools) refuse it with the rule's own message: what is wrong and the degrees that divide.
The engine's own plans (the search, one-knob counterfactuals) still meet these rules as data.
"""

from __future__ import annotations

from ..cluster import Cluster
from ..errors import ShardwiseInputError
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..strategy import Strategy
from ..training import TrainingSetup
from . import experts, mesh
from .rule import Plan, Scenario

# The rules whose breach leaves no whole DP (dense, or expert) for the plan.
NO_WHOLE_DP_RULES = (mesh.TP_CP_PP_DIVIDES_GPUS, experts.EXPERT_MESH_DIVIDES_GPUS)


def require_whole_mesh(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, strategy: Strategy,
                       which: str = "the plan") -> None:
    """Raise ShardwiseInputError when `strategy` cannot be laid out on the cluster's GPUs at all."""
    scenario = Scenario(model, cluster, setup)
    grid = PlanGrid.from_strategy(strategy, cluster.num_gpus, setup.global_batch)
    for rule in NO_WHOLE_DP_RULES:
        if bool(rule.broken(scenario, grid)[0]):
            raise ShardwiseInputError(f"{which} cannot be laid out on {cluster.num_gpus:,} GPUs: [{rule.name}] "
                                      f"{rule.message(scenario, Plan.row(grid))}")
