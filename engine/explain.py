"""Explanations as data: two plans term by term, the winner's binding constraint, and
one-knob counterfactuals. Numbers and rule names only — templates and the agent phrase
them without doing arithmetic.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .calibration.coverage import RANKING_RESOLUTION
from .cluster import Cluster
from .calibration.profile import CalibrationProfile
from .evaluate import evaluate
from .explain_ep import ExpertParallelChoice, expert_parallel_choice
from .model_spec import ModelSpec
from .results import Evaluation, StrategySummary, Violation
from .search import RANK_RESOLUTION_S, check_headroom
from .strategy import RECOMPUTE_MODES, Strategy
from .training import TrainingSetup
from .validity.frameworks import capabilities

TIME_TERMS = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_bubble_s", "pp_comm_s", "dp_comm_s",
              "optimizer_s", "optimizer_phase_s")
POST_TRAINING_TIME_TERMS = ("rollout_s", "old_logprob_s", "reference_s", "reward_s", "critic_s")
MEMORY_TERMS = ("weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "other_gib")
KNOBS = ("tp", "pp", "vpp", "cp", "ep", "etp", "dp", "zero_stage", "micro_batch", "grad_accum", "recompute",
         "sequence_parallel")


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True)


class TermDiff(_Result):
    """One named term of two plans: delta = b − a (seconds per step, or GiB per GPU)."""

    term: str
    kind: Literal["time", "memory"]
    a: float
    b: float
    delta: float


class KnobChange(_Result):
    knob: str
    before: Any
    after: Any


class PlanComparison(_Result):
    a: Evaluation
    b: Evaluation
    winner: Literal["a", "b", "tie", "neither"]
    decided_by: Literal["validity", "memory", "throughput", "tie"]
    speedup: float | None = Field(default=None, description="winner's tokens/s ÷ loser's")
    knobs: list[KnobChange] = Field(description="the knobs that differ, a → b")
    time: list[TermDiff]  # every time term and step_s
    memory: list[TermDiff]  # every memory category and total_gib
    decisive: list[TermDiff] = Field(default_factory=list,
                                     description="time terms in the winner's favour, largest advantage first")
    offsetting: list[TermDiff] = Field(default_factory=list,
                                       description="time terms in the loser's favour, largest first")
    rules: list[str] = Field(default_factory=list, description="validity rules the loser breaks, or 'memory_capacity'")
    within_ranking_resolution: bool = Field(
        default=False, description="decided by throughput, but by less than the model's ranking resolution "
                                   "(RANKING_RESOLUTION): measured runs order such pairs little better than chance")


class Counterfactual(_Result):
    """The winner with one knob changed."""

    knob: str
    before: Any
    after: Any
    outcome: Literal["invalid", "does_not_fit", "fits", "faster", "slower", "same"]  # 'fits': base does not
    violations: list[Violation] = Field(default_factory=list)
    memory_total_gib: float
    memory_delta_gib: float
    step_s: float | None = None
    step_delta_s: float | None = None
    throughput_ratio: float | None = Field(default=None, description="tokens/s after ÷ before")
    terms: list[TermDiff] = Field(default_factory=list, description="largest time and memory changes first")
    plan: StrategySummary


class BindingConstraint(_Result):
    """What stops the winner from being faster.

    kind 'memory': a faster neighbour does not fit (rule 'memory_capacity'), or the plan itself
      does not fit (then knob/after name the fastest one-knob change that does);
    kind 'validity': the plan breaks a rule;
    kind 'improvable': a one-knob change that fits is faster (knob/after name the best);
    kind 'time_term': every neighbour that fits is slower (or the same), and `term` is what grows
      most in the cheapest slower move.
    """

    kind: Literal["memory", "validity", "improvable", "time_term", "none"]
    rule: str | None = None
    term: str | None = None
    memory_term: str | None = Field(default=None, description="time_term: the memory category that moves most "
                                                              "(numbers memory_a, memory_b, memory_delta)")
    knob: str | None = None
    before: Any = None
    after: Any = None
    numbers: dict[str, float] = Field(default_factory=dict)


class Explanation(_Result):
    comparison: PlanComparison | None = None
    winner: Evaluation
    binding: BindingConstraint
    counterfactuals: list[Counterfactual]
    expert_parallel: ExpertParallelChoice | None = Field(
        default=None, description="MoE: the winner's EP against EP on the other side of the node boundary")


# --- two plans ----------------------------------------------------------------------------

def _diff(term: str, kind, a: float, b: float) -> TermDiff:
    return TermDiff(term=term, kind=kind, a=a, b=b, delta=b - a)


def time_diffs(a: Evaluation, b: Evaluation) -> list[TermDiff]:
    if a.time is None or b.time is None:
        return []
    post = [t for t in POST_TRAINING_TIME_TERMS if getattr(a.time, t) or getattr(b.time, t)]
    return [_diff(t, "time", getattr(a.time, t), getattr(b.time, t)) for t in (*TIME_TERMS, *post, "step_s")]


def memory_diffs(a: Evaluation, b: Evaluation) -> list[TermDiff]:
    return [_diff(t, "memory", getattr(a.memory, t), getattr(b.memory, t)) for t in (*MEMORY_TERMS, "total_gib")]


def knob_changes(a: StrategySummary, b: StrategySummary) -> list[KnobChange]:
    return [KnobChange(knob=k, before=getattr(a, k), after=getattr(b, k)) for k in KNOBS
            if getattr(a, k) != getattr(b, k)]


def _usable(e: Evaluation) -> bool:
    return e.valid and e.memory.fits and e.throughput is not None


def compare(a: Evaluation, b: Evaluation) -> PlanComparison:
    """Term by term, and which difference decides. A plan that is invalid or does not fit loses."""
    time, mem = time_diffs(a, b), memory_diffs(a, b)
    common = dict(a=a, b=b, knobs=knob_changes(a.strategy, b.strategy), time=time, memory=mem)
    if a.valid != b.valid or not (a.valid or b.valid):
        loser = b if a.valid else a
        winner = "a" if a.valid else "b" if b.valid else "neither"
        return PlanComparison(winner=winner, decided_by="validity", rules=[v.rule for v in loser.violations],
                              **common)
    if a.memory.fits != b.memory.fits or not (a.memory.fits or b.memory.fits):
        winner = "a" if a.memory.fits else "b" if b.memory.fits else "neither"
        return PlanComparison(winner=winner, decided_by="memory", rules=["memory_capacity"], **common)
    step_a, step_b = a.time.step_s, b.time.step_s
    if abs(step_a - step_b) < RANK_RESOLUTION_S:
        return PlanComparison(winner="tie", decided_by="tie", speedup=1.0, **common)
    winner = "a" if step_a < step_b else "b"
    sign = 1.0 if winner == "a" else -1.0  # advantage = loser − winner = sign · delta
    terms = [t for t in time if t.term != "step_s"]
    decisive = sorted((t for t in terms if sign * t.delta > 0), key=lambda t: -abs(t.delta))
    offsetting = sorted((t for t in terms if sign * t.delta < 0), key=lambda t: -abs(t.delta))
    speedup = max(step_a, step_b) / min(step_a, step_b)
    return PlanComparison(winner=winner, decided_by="throughput", speedup=speedup, decisive=decisive,
                          offsetting=offsetting, within_ranking_resolution=speedup - 1 < RANKING_RESOLUTION,
                          **common)


def compare_plans(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, a: Strategy, b: Strategy,
                  headroom: float = 0.1, profile: CalibrationProfile | None = None) -> PlanComparison:
    headroom = check_headroom(headroom)
    return compare(evaluate(model, cluster, setup, a, headroom, profile=profile),
                   evaluate(model, cluster, setup, b, headroom, profile=profile))


# --- one-knob counterfactuals -------------------------------------------------------------

def neighbours(strategy: Strategy, setup: TrainingSetup, is_moe: bool) -> list[tuple[str, Any, Strategy]]:
    """(knob, new value, plan) for each one-knob change worth asking about."""
    s = strategy
    out: list[tuple[str, Any, Strategy]] = []

    def add(knob: str, value, **update):
        if value != getattr(s, knob if knob != "zero" else "zero_stage"):
            out.append((knob, value, s.model_copy(update=update)))

    for knob in ("tp", "pp", "cp", "micro_batch") + (("ep",) if is_moe else ()):
        current = getattr(s, knob)
        for value in (current * 2, current // 2):
            if value >= 1:
                extra = {"vpp": 1} if knob == "pp" and value == 1 else {}
                add(knob, value, **{knob: value, **extra})
    if s.pp > 1:
        for value in (s.vpp * 2, s.vpp // 2):
            if value >= 1:
                add("vpp", value, vpp=value)
    for mode in RECOMPUTE_MODES:
        add("recompute", mode, recompute=mode)
    for stage in capabilities(setup.framework).distinct_zero_stages:
        add("zero_stage", stage, zero_stage=stage)
    if s.tp > 1:
        add("sequence_parallel", not s.sequence_parallel, sequence_parallel=not s.sequence_parallel)
    return out


def _top_terms(base: Evaluation, other: Evaluation, limit: int = 3) -> list[TermDiff]:
    time = [t for t in time_diffs(base, other) if t.term != "step_s"]
    mem = [t for t in memory_diffs(base, other) if t.term != "total_gib"]
    time.sort(key=lambda t: -abs(t.delta))
    mem.sort(key=lambda t: -abs(t.delta))
    return [t for t in time[:limit] + mem[:limit] if t.delta != 0]


def counterfactual(base: Evaluation, knob: str, value, other: Evaluation) -> Counterfactual:
    before = getattr(base.strategy, knob)
    mem_delta = other.memory.total_gib - base.memory.total_gib
    common = dict(knob=knob, before=before, after=value, memory_total_gib=other.memory.total_gib,
                  memory_delta_gib=mem_delta, plan=other.strategy, terms=_top_terms(base, other))
    if not other.valid:
        return Counterfactual(outcome="invalid", violations=other.violations, **common)
    step = other.time.step_s
    timing: dict[str, float] = {"step_s": step}
    if base.time is not None:
        timing.update(step_delta_s=step - base.time.step_s,
                      throughput_ratio=other.throughput.tokens_per_s / base.throughput.tokens_per_s)
    if not other.memory.fits:
        return Counterfactual(outcome="does_not_fit", **timing, **common)
    if base.time is None or not base.memory.fits:
        return Counterfactual(outcome="fits", **timing, **common)  # the base itself cannot run
    delta = timing["step_delta_s"]
    outcome = "same" if abs(delta) < RANK_RESOLUTION_S else "faster" if delta < 0 else "slower"
    return Counterfactual(outcome=outcome, **timing, **common)


def counterfactuals(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, strategy: Strategy,
                    headroom: float = 0.1, base: Evaluation | None = None,
                    profile: CalibrationProfile | None = None) -> list[Counterfactual]:
    base = base or evaluate(model, cluster, setup, strategy, headroom, profile=profile)
    return [counterfactual(base, knob, value, evaluate(model, cluster, setup, plan, headroom, profile=profile))
            for knob, value, plan in neighbours(strategy, setup, model.is_moe)]


def binding_constraint(base: Evaluation, options: list[Counterfactual], headroom: float = 0.1) -> BindingConstraint:
    """Why the plan is not faster (or, if it cannot run, why not and the best one-knob fix)."""
    usable_gib = base.memory.capacity_gib * (1.0 - headroom)
    if not base.valid:
        return BindingConstraint(kind="validity", rule=base.violations[0].rule)
    if not base.memory.fits:
        largest = max(MEMORY_TERMS, key=lambda t: getattr(base.memory, t))
        fixes = [c for c in options if c.outcome == "fits"]
        fix = min(fixes, key=lambda c: c.step_s) if fixes else None
        return BindingConstraint(
            kind="memory", rule="memory_capacity", term=largest, knob=fix.knob if fix else None,
            before=fix.before if fix else None, after=fix.after if fix else None,
            numbers={"memory_gib": base.memory.total_gib, "usable_gib": usable_gib,
                     "over_gib": base.memory.total_gib - usable_gib, largest: getattr(base.memory, largest)})
    better = [c for c in options if c.outcome == "faster"]
    if better:
        c = min(better, key=lambda c: c.step_delta_s)
        return BindingConstraint(kind="improvable", knob=c.knob, before=c.before, after=c.after,
                                 numbers={"step_delta_s": c.step_delta_s, "throughput_ratio": c.throughput_ratio,
                                          "memory_delta_gib": c.memory_delta_gib})
    blocked = [c for c in options if c.outcome == "does_not_fit" and c.step_delta_s < 0]
    if blocked:
        c = min(blocked, key=lambda c: c.step_delta_s)
        grows = max((t for t in c.terms if t.kind == "memory"), key=lambda t: t.delta, default=None)
        return BindingConstraint(
            kind="memory", rule="memory_capacity", term=grows.term if grows else "total_gib", knob=c.knob,
            before=c.before, after=c.after,
            numbers={"memory_gib": c.memory_total_gib, "usable_gib": usable_gib,
                     "capacity_gib": base.memory.capacity_gib, "step_delta_s": c.step_delta_s,
                     "throughput_ratio": c.throughput_ratio,
                     **({"a": grows.a, "b": grows.b, "delta": grows.delta} if grows else {})})
    slower = [c for c in options if c.outcome == "slower"]
    if slower:
        c = min(slower, key=lambda c: c.step_delta_s)  # the cheapest move, first in neighbour order on ties
        grows = max((t for t in c.terms if t.kind == "time"), key=lambda t: t.delta, default=None)
        moves = max((t for t in c.terms if t.kind == "memory"), key=lambda t: abs(t.delta), default=None)
        return BindingConstraint(
            kind="time_term", term=grows.term if grows else "step_s", knob=c.knob, before=c.before, after=c.after,
            memory_term=moves.term if moves else None,
            numbers={"step_delta_s": c.step_delta_s, "throughput_ratio": c.throughput_ratio,
                     "memory_delta_gib": c.memory_delta_gib,
                     **({"a": grows.a, "b": grows.b, "delta": grows.delta} if grows else {}),
                     **({"memory_a": moves.a, "memory_b": moves.b, "memory_delta": moves.delta} if moves else {})})
    invalid = [c for c in options if c.outcome == "invalid"]
    if invalid:
        c = invalid[0]
        return BindingConstraint(kind="validity", rule=c.violations[0].rule, knob=c.knob, before=c.before,
                                 after=c.after)
    return BindingConstraint(kind="none")


def explain(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, a: Strategy, b: Strategy | None = None,
            headroom: float = 0.1, profile: CalibrationProfile | None = None) -> Explanation:
    """Compare a and b (if given), then explain the winner: binding constraint and counterfactuals."""
    headroom = check_headroom(headroom)
    ea = evaluate(model, cluster, setup, a, headroom, profile=profile)
    comparison = None
    winner = ea
    if b is not None:
        eb = evaluate(model, cluster, setup, b, headroom, profile=profile)
        comparison = compare(ea, eb)
        winner = eb if comparison.winner == "b" else ea
    winner_plan = a if winner is ea else b
    options = (counterfactuals(model, cluster, setup, winner_plan, headroom, base=winner, profile=profile)
               if winner.valid else [])
    ep_choice = expert_parallel_choice(model, cluster, setup, winner_plan, winner, headroom, profile=profile)
    return Explanation(comparison=comparison, winner=winner, binding=binding_constraint(winner, options, headroom),
                       counterfactuals=options, expert_parallel=ep_choice)
