"""recommend_plans: search every valid plan, keep those that fit, rank by predicted throughput."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..engine.plan_label import plan_label
from ..engine.recommendation import NothingFits, Recommendation
from ..engine.results import Evaluation
from ..engine.explain import explain
from ..engine.export.carriers import formats_carrying
from ..engine.search import RANK_RESOLUTION_S, recommend
from .base import Result, Tool
from .explanations import BindingFacts, CounterfactualFacts, binding_facts, counterfactual_facts
from .figures import Difference, PlanFigures, ScenarioFacts, differences, plan_figures, r, scenario_facts
from .calibration import active_profile
from .cost_facts import CostFacts, cost_facts
from .scenario import Args, Plan, Scenario

DEFAULT_TOP_K = 3
MAX_TOP_K = 10
# The runner-up "why it wins" compares against: the fastest plan that differs in a knob that
# changes the parallel layout, searched among this many (plans differing only in VPP or SP
# are near-duplicates, not alternatives worth explaining).
RUNNER_UP_POOL = 25
LAYOUT_KNOBS = ("tp", "pp", "cp", "ep", "zero_stage", "micro_batch", "recompute")


class Constraints(Args):
    """Pin or bound knobs the user has decided"""

    tp: int | None = None
    pp: int | None = None
    cp: int | None = None
    ep: int | None = None
    zero: int | None = None
    micro_batch: int | None = None
    recompute: Literal["none", "selective", "full"] | None = None
    max_tp: int | None = None
    max_pp: int | None = None

    def as_engine(self) -> dict:
        return self.model_dump(exclude_none=True)


class RecommendArgs(Args):
    scenario: Scenario
    export_format: str | None = Field(None, description="only plans it writes")
    top_k: int | None = Field(None, description=f"plans to return, 1-{MAX_TOP_K}; default {DEFAULT_TOP_K}")
    headroom: float | None = Field(None, description="GPU memory fraction kept free, 0-0.5; default 0.1")
    constraints: Constraints | None = None
    train_tokens: str | None = Field(None, description="token budget for time, GPU-hours and cost: 200B")
    price_per_gpu_hour: float | None = Field(None, description="USD; default a listed price")


class WhyItWins(BaseModel):
    """The best plan against the runner-up, precomputed."""

    runner_up: str
    speedup_percent: float = Field(description="best tokens/s over the runner-up's, minus 100 %")
    step_ms_saved: float
    deciding_term: Difference = Field(description="the exposed-time term that differs most in the best plan's favour")
    time_differences: list[Difference] = Field(description="runner-up minus best, per term (a = best, b = runner-up)")
    memory_differences: list[Difference]


class FixFacts(BaseModel):
    change: str
    fits: bool
    lowest_memory_gib: float | None
    plan: str | None


class SetAsideFacts(BaseModel):
    """Faster plans the chosen export format refuses, by cause."""

    count: int
    reason: str
    hint: str
    fastest: str | None = Field(None, description="the fastest plan set aside for this cause")
    faster_percent: float | None = Field(None, description="its tokens/s over the best plan kept, minus 100 %; "
                                         "negative when it is slower (set aside while ranking below the best kept)")


class NothingFitsFacts(BaseModel):
    reason: str
    capacity_gib: float
    usable_gib: float
    lowest_memory_gib: float | None = Field(None, description="the least memory any valid plan needs")
    over_capacity_gib: float | None = Field(None, description="lowest_memory_gib minus usable_gib")
    lowest_memory_plan: str | None
    min_gpus: int | None = Field(None, description="the fewest GPUs of this type at which a plan fits")
    larger_gpu: str | None = Field(None, description="the smallest catalog GPU on which a plan fits")
    fixes: list[FixFacts]
    blocking: list[str]


class MemoryRiskFacts(BaseModel):
    """The best plan fits at its point estimate, but the top of its 80 % memory band is above the usable memory."""

    upper_gib: float = Field(description="the best plan's memory band, upper end")
    usable_gib: float
    capacity_gib: float
    band_fits: PlanFigures | None = Field(None, description="the fastest plan within ranking_resolution_percent of "
                                                            "the best whose whole band fits capacity_gib")
    band_fits_slower_percent: float | None = Field(None, description="its tokens/s below the best's, in percent")


def memory_risk_facts(rec: Recommendation) -> MemoryRiskFacts | None:
    m = rec.memory_risk
    if m is None:
        return None
    return MemoryRiskFacts(upper_gib=r(m.upper_gib), usable_gib=r(m.usable_gib, 1), capacity_gib=r(m.capacity_gib, 1),
                           band_fits=plan_figures(m.band_fits) if m.band_fits is not None else None,
                           band_fits_slower_percent=r(m.band_fits_slower_percent, 1)
                           if m.band_fits_slower_percent is not None else None)


class RecommendResult(Result):
    scenario: ScenarioFacts
    headroom_percent: float = Field(description="GPU memory kept free when deciding what fits")
    usable_gib: float = Field(description="GPU memory a plan may use: capacity minus headroom")
    searched: int
    valid: int
    fitting: int
    excluded: dict[str, int]
    best: PlanFigures | None
    alternatives: list[PlanFigures] = Field(description="the next best plans, fastest first")
    why_best: WhyItWins | None = None
    near_best: int = Field(0, description="other fitting plans predicted within ranking_resolution_percent of the "
                                          "best: closer than the model can rank them")
    ranking_resolution_percent: float = Field(description="predicted gap below which measured runs order plans "
                                                          "little better than chance")
    binding: BindingFacts | None = Field(None, description="what stops the best plan from being faster")
    counterfactuals: list[CounterfactualFacts] = Field(default_factory=list,
                                                       description="the best plan with one knob changed")
    nothing_fits: NothingFitsFacts | None = None
    export_format: str | None = Field(None, description="when asked: only plans this format writes are ranked")
    set_aside: list[SetAsideFacts] = Field(default_factory=list,
                                           description=f"fitting plans that export_format refuses, by cause, "
                                                       f"among those faster than the last of the {RUNNER_UP_POOL} "
                                                       f"best plans it writes")
    cost: CostFacts | None = Field(None, description="the best plan's time, GPU-hours and cost, when asked")
    memory_risk: MemoryRiskFacts | None = Field(None, description="set when the best plan may not fit: the top of its "
                                                                  "memory band is above the GPU's capacity_gib")
    recommendation: Recommendation

    def hidden_from_model(self) -> set[str]:
        return {"recommendation"}

    def plan_evaluation(self) -> Evaluation | None:
        return self.recommendation.plans[0] if self.recommendation.plans else None

    def summary(self) -> str:
        if self.best is None and self.export_format and self.fitting:
            return f"{self.export_format} writes none of the {self.fitting:,} fitting plans [{self.id}]"
        if self.best is None:
            return f"nothing fits among {self.searched:,} plans [{self.id}]"
        return (f"best of {self.fitting:,} fitting plans: {self.best.label}, "
                f"{self.best.tokens_per_s:,.0f} tokens/s [{self.id}]")


def runner_up(plans: list[Evaluation], figures: list[PlanFigures]) -> PlanFigures | None:
    """The fastest plan with another layout that is predicted slower than the best; a tie (same
    step time, e.g. CP=2 with twice the micro-batch) explains nothing. Failing that, a tied
    plan with another layout, then simply the second."""
    if len(plans) < 2:
        return None
    best = plans[0]
    other_layout = [i for i in range(1, len(plans))
                    if any(getattr(plans[i].strategy, k) != getattr(best.strategy, k) for k in LAYOUT_KNOBS)]
    slower = [i for i in other_layout if plans[i].time.step_s - best.time.step_s > RANK_RESOLUTION_S]
    return figures[(slower or other_layout or [1])[0]]


def why_it_wins(best: PlanFigures, runner: PlanFigures) -> WhyItWins:
    time_diff, memory_diff = differences(best, runner, "time"), differences(best, runner, "memory")
    return WhyItWins(runner_up=runner.label, speedup_percent=r(100 * (best.tokens_per_s / runner.tokens_per_s - 1), 1),
                     step_ms_saved=r(runner.step_ms - best.step_ms),
                     deciding_term=max(time_diff, key=lambda d: d.b_minus_a),
                     time_differences=time_diff, memory_differences=memory_diff)


def nothing_fits_facts(n: NothingFits) -> NothingFitsFacts:
    over = r(n.lowest_memory_gib - n.usable_gib) if n.lowest_memory_gib is not None else None
    fixes = [FixFacts(change=", ".join(f"{k}={v}" for k, v in o.change.items()), fits=o.fits,
                      lowest_memory_gib=r(o.lowest_memory_gib), plan=plan_label(o.plan, "tools") if o.plan else None)
             for o in n.options if o.applicable]
    return NothingFitsFacts(reason=n.reason, capacity_gib=r(n.capacity_gib), usable_gib=r(n.usable_gib),
                            lowest_memory_gib=r(n.lowest_memory_gib), over_capacity_gib=over,
                            lowest_memory_plan=plan_label(n.lowest_memory_plan, "tools") if n.lowest_memory_plan else None,
                            min_gpus=n.min_gpus, larger_gpu=n.larger_gpu, fixes=fixes,
                            blocking=[f"[{v.rule}] {v.message}" for v in n.blocking])


def set_aside_facts(rec: Recommendation) -> list[SetAsideFacts]:
    best_step = rec.plans[0].time.step_s if rec.plans else None
    return [SetAsideFacts(count=a.count, reason=a.reason, hint=a.hint,
                          fastest=plan_label(a.fastest, "tools") if a.fastest else None,
                          faster_percent=r(100 * (best_step / a.fastest_step_s - 1), 1)
                          if best_step and a.fastest_step_s else None)
            for a in rec.set_aside]


def with_export_formats(rec: Recommendation, k: int, scenario) -> Recommendation:
    """The first k plans (those shown) name the export formats that write them (asked of the
    exporters); the rest, kept only to find the runner-up, are left as they are."""
    shown = [p.model_copy(update={"export_formats": formats_carrying(
        scenario.model, scenario.cluster, scenario.setup, Plan.from_strategy(p.strategy).strategy())})
        for p in rec.plans[:k]]
    return rec.model_copy(update={"plans": shown + rec.plans[k:]})


def run_recommend(scenario: Scenario, top_k: int | None = None, headroom: float | None = None,
                  constraints: Constraints | None = None, explain_best: bool = True,
                  rec: Recommendation | None = None, export_format: str | None = None,
                  train_tokens: str | None = None, price_per_gpu_hour: float | None = None) -> RecommendResult:
    """The recommendation as a tool result; `rec` when the engine already made it (what-if).
    `export_format`: rank only plans that format writes (the engine counts what it set aside);
    a token budget or a price adds the best plan's time, GPU-hours and cost."""
    resolved = scenario.resolve()
    k = max(1, min(top_k or DEFAULT_TOP_K, MAX_TOP_K))
    kwargs = constraints.as_engine() if constraints else {}
    if headroom is not None:
        kwargs["headroom"] = headroom
    if rec is None:
        rec = recommend(resolved.model, resolved.cluster, resolved.setup, top_k=max(k, RUNNER_UP_POOL),
                        profile=active_profile(), export_format=export_format, **kwargs)
    rec = with_export_formats(rec, k, resolved)
    figures = [plan_figures(e) for e in rec.plans]
    best = figures[0] if figures else None
    runner = runner_up(rec.plans, figures)
    why = why_it_wins(best, runner) if runner is not None and runner.tokens_per_s else None
    binding, options = None, []
    if explain_best and rec.plans:
        ex = explain(resolved.model, resolved.cluster, resolved.setup,
                     Plan.from_strategy(rec.plans[0].strategy).strategy(), headroom=rec.headroom,
                     profile=active_profile())
        binding, options = binding_facts(ex.binding), [counterfactual_facts(c) for c in ex.counterfactuals]
    return RecommendResult(
        scenario=scenario_facts(scenario, resolved), headroom_percent=r(100 * rec.headroom, 1),
        usable_gib=r(rec.cluster.gpu_memory_gib * (1 - rec.headroom), 1), searched=rec.searched, valid=rec.valid,
        fitting=rec.fitting, excluded=rec.excluded, best=best, alternatives=figures[1:k], why_best=why,
        near_best=rec.near_best, ranking_resolution_percent=r(100 * rec.ranking_resolution, 1), binding=binding, counterfactuals=options,
        nothing_fits=nothing_fits_facts(rec.nothing_fits) if rec.nothing_fits else None,
        export_format=rec.export_format, set_aside=set_aside_facts(rec),
        cost=(cost_facts(rec.plans[0], train_tokens, price_per_gpu_hour, rec.setup.global_batch_tokens)
              if rec.plans and (train_tokens is not None or price_per_gpu_hour is not None) else None),
        memory_risk=memory_risk_facts(rec),
        recommendation=rec.model_copy(update={"plans": rec.plans[:k]}))


def recommend_plans(args: RecommendArgs) -> RecommendResult:
    if args.headroom is not None and not 0 <= args.headroom <= 0.5:
        from ..engine.errors import ShardwiseInputError
        raise ShardwiseInputError(f"headroom is a fraction between 0 and 0.5, got {args.headroom}")
    return run_recommend(args.scenario, args.top_k, args.headroom, args.constraints,
                         export_format=args.export_format, train_tokens=args.train_tokens,
                         price_per_gpu_hour=args.price_per_gpu_hour)


RECOMMEND_PLANS = Tool(
    "recommend_plans", "The fastest plans that fit a scenario (every plan searched), why the best beats the "
    "runner-up, or what would make one fit.",
    RecommendArgs, RecommendResult, recommend_plans, scenario_of=lambda a: a.scenario)
