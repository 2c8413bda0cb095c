"""Validity: every rule that makes a plan impossible (error) or pointless (warning).

Two forms over the same rules:
- `violations(model, cluster, setup, strategy) -> (errors, warnings)`: one plan, with messages;
- `valid_mask(model, cluster, setup, grid) -> bool array`: a whole PlanGrid, for the search.
An invalid plan is a result, never an exception.
"""

from __future__ import annotations

import numpy as np

from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..results import Violation
from ..strategy import Strategy
from ..training import TrainingSetup
from . import batch, deepspeed_config, dispatchers, experts, frameworks, graphs, mesh, shapes
from .rule import STAGES, Plan, Rule, Scenario, Stage

# Order matters only for the search's `excluded` counts: a plan is counted under the first
# rule it breaks, most fundamental first.
RULES: tuple[Rule, ...] = (
    frameworks.FRAMEWORK_SUPPORTS_SETUP,  # the setup itself (precision, mode, attention), before any plan knob
    graphs.MOE_FULL_ITERATION_GRAPHS_NEED_SYNC_FREE_DISPATCH,  # the setup too (CUDA graphs and dispatcher)
    deepspeed_config.DEEPSPEED_CONFIG_SETUP,  # the setup too (FP8 under deepspeed)
    # layout
    experts.EXPERT_PARALLEL_REQUIRES_MOE,
    mesh.TP_CP_PP_DIVIDES_GPUS,
    mesh.PIPELINE_STAGES_LE_LAYERS,
    mesh.VPP_REQUIRES_PP,
    frameworks.FRAMEWORK_SUPPORTS_VPP,
    shapes.TP_DIVIDES_HEADS,
    shapes.TP_DIVIDES_KV_HEADS,
    shapes.TP_DIVIDES_FFN,
    shapes.CP_DIVIDES_SEQ,
    frameworks.ULYSSES_DIVIDES_HEADS,
    experts.EP_DIVIDES_EXPERTS,
    experts.ETP_DIVIDES_EXPERT_FFN,
    experts.EXPERT_MESH_DIVIDES_GPUS,
    frameworks.FRAMEWORK_SUPPORTS_ETP,
    frameworks.FRAMEWORK_SUPPORTS_EP,
    deepspeed_config.DEEPSPEED_CONFIG_LAYOUT,
    dispatchers.MOE_DISPATCHER_OFFERED,
    dispatchers.DEEPEP_WITH_ETP,
    mesh.UNEVEN_PIPELINE_SPLIT,
    mesh.TP_CROSSES_NODE,
    mesh.GPUS_NOT_MULTIPLE_OF_NODE,
    shapes.KV_HEADS_REPLICATED,
    shapes.SEQ_LEN_PAST_CONTEXT,
    # batch
    batch.DP_MICROBATCH_DIVIDES_GLOBAL_BATCH,
    batch.DPO_MICROBATCH_HOLDS_PAIRS,
    batch.VPP_MICROBATCH_GROUPS,
    batch.FEWER_MICROBATCHES_THAN_STAGES,
    # options
    frameworks.FRAMEWORK_SUPPORTS_ZERO,
    frameworks.PIPELINE_ZERO_STAGE,
    shapes.SP_DIVIDES_SEQ,
    frameworks.HSDP_DIVIDES_DP,
    frameworks.HSDP_REQUIRES_SHARDING,
    deepspeed_config.DEEPSPEED_CONFIG_OPTIONS,
    frameworks.ZERO_WITHOUT_DP,
    frameworks.ZERO_STAGE_ALIAS,
    graphs.PER_LAYER_GRAPHS_WITHOUT_FULL_RECOMPUTE,
    experts.MOE_TP_EP_WITHOUT_SP,
    experts.EXPERT_ALL_TO_ALL_PRICING,
    experts.MOE_A2A_OVERLAP_NOT_APPLIED,
    dispatchers.MOE_DISPATCHER_NOT_OFFERED,
    frameworks.FP8_UNSUPPORTED,
)
RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
ERROR_RULES: tuple[Rule, ...] = tuple(r for r in RULES if r.severity == "error")
# The search's own reason for leaving a valid plan out (engine/search.py, Ranking.excluded), said beside the rules'.
DOES_NOT_FIT = "does_not_fit"
SHORT_REASONS: dict[str, str] = {**{r.name: r.short for r in RULES if r.short},
                                 DOES_NOT_FIT: "too large for the GPU's memory"}


def short_reason(name: str) -> str:
    """Why plans were left out, in a few words (a Recommendation's `excluded` key: a rule's name or does_not_fit);
    a name the engine does not know is returned as it is, as docs/search.md's rule table names it."""
    return SHORT_REASONS.get(name, name)


def violations(model: ModelSpec, cluster: Cluster, setup: TrainingSetup,
               strategy: Strategy) -> tuple[list[Violation], list[Violation]]:
    """Errors (the plan cannot run) and warnings (it runs, but something is wasted or slow)."""
    scenario = Scenario(model, cluster, setup)
    grid = PlanGrid.from_strategy(strategy, cluster.num_gpus, setup.global_batch)
    plan = Plan.row(grid)
    errors, warnings = [], []
    for rule in RULES:
        if bool(rule.broken(scenario, grid)[0]):
            found = Violation.of(rule.name, rule.message(scenario, plan))
            (errors if rule.severity == "error" else warnings).append(found)
    return errors, warnings


def valid_mask(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    """True where a plan breaks no error rule; the same rules as `violations`."""
    return first_error(Scenario(model, cluster, setup), grid) < 0


def first_error(scenario: Scenario, grid: PlanGrid, stages: tuple[Stage, ...] = STAGES) -> np.ndarray:
    """Index into ERROR_RULES of the first error rule each plan breaks, -1 where none.

    `stages` limits the check to rules that read only the knobs fixed so far (the search
    checks layouts before multiplying them by micro-batch and options)."""
    first = np.full(len(grid), -1, dtype=np.int64)
    for index, rule in enumerate(ERROR_RULES):
        if rule.stage not in stages:
            continue
        broken = rule.broken(scenario, grid) & (first < 0)
        first[broken] = index
    return first


def broken_mask(scenario: Scenario, grid: PlanGrid, rule_name: str) -> np.ndarray:
    """Where one named rule (error or warning) fires, vectorised."""
    return np.asarray(RULES_BY_NAME[rule_name].broken(scenario, grid), dtype=bool)


__all__ = ["violations", "valid_mask", "first_error", "broken_mask", "RULES", "RULES_BY_NAME", "ERROR_RULES",
           "Scenario", "Rule"]
