"""evaluate_plan and estimate_memory: one given plan through the engine's evaluate()."""

from __future__ import annotations

from pydantic import Field

from ..engine.errors import ShardwiseInputError
from ..engine.evaluate import evaluate
from ..engine.results import Evaluation
from ..engine.validity.whole_mesh import require_whole_mesh
from .base import Result, Tool
from .calibration import active_profile
from ..engine.calibration.intervals import memory_band
from .figures import PlanFigures, ScenarioFacts, Term, plan_figures, r, scenario_facts
from .measured_peak import MeasuredPeak, measured_peak_of_plan
from .scenario import Args, Plan, Scenario


class EvaluatePlanArgs(Args):
    scenario: Scenario
    plan: Plan


class EvaluatePlanResult(Result):
    scenario: ScenarioFacts
    plan: PlanFigures
    evaluation: Evaluation = Field(description="the engine's full report (what `evaluate --json` prints)")

    def hidden_from_model(self) -> set[str]:
        return {"evaluation"}

    def plan_evaluation(self) -> Evaluation:
        return self.evaluation

    def summary(self) -> str:
        p = self.plan
        if not p.valid:
            return f"{p.label}: invalid ({len(p.violations)} violations) [{self.id}]"
        speed = f", {p.tokens_per_s:,.0f} tokens/s" if p.tokens_per_s else ""
        return f"{p.label}: {p.memory_gib:.1f} of {p.capacity_gib:g} GiB{speed} [{self.id}]"


def evaluate_plan(args: EvaluatePlanArgs) -> EvaluatePlanResult:
    resolved = args.scenario.resolve()
    strategy = args.plan.strategy()
    require_whole_mesh(resolved.model, resolved.cluster, resolved.setup, strategy)
    e = evaluate(resolved.model, resolved.cluster, resolved.setup, strategy, profile=active_profile())
    return EvaluatePlanResult(scenario=scenario_facts(args.scenario, resolved), plan=plan_figures(e), evaluation=e)


class EstimateMemoryArgs(Args):
    scenario: Scenario
    plan: Plan | None = Field(None, description="default: recommended plan")
    measured_peak_gib: float | None = None  # a peak the user measured, set against the band (system prompt rule 10)


class EstimateMemoryResult(Result):
    scenario: ScenarioFacts
    plan_label: str
    fits: bool
    memory_gib: float
    capacity_gib: float
    memory_free_gib: float = Field(description="negative = over capacity by that much")
    memory_percent_of_capacity: float
    memory_gib_likely: list[float] | None = Field(None, description="[low, high]: 80 % interval of the peak, GiB")
    memory_likely_basis: str | None = None
    measured_peak: MeasuredPeak | None = None
    terms: list[Term] = Field(description="weights, gradients, optimizer, activations, other: largest first")
    largest_term: Term
    details_gib: dict[str, float] = Field(description="finer terms, named after what they hold")
    violations: list[str]
    evaluation: Evaluation
    post_training_terms: list[Term] = Field(default_factory=list, description="DPO/GRPO/PPO: the reference, reward, "
                                            "critic, rollout-engine and KV-cache parts inside the categories")
    peak_phase: str | None = Field(None, description="DPO/GRPO/PPO: the phase of the step that sets the peak")

    def hidden_from_model(self) -> set[str]:
        return {"evaluation"}

    def plan_evaluation(self) -> Evaluation:
        return self.evaluation

    def summary(self) -> str:
        return f"{self.plan_label}: {self.memory_gib:.1f} of {self.capacity_gib:g} GiB per GPU [{self.id}]"


POST_TRAINING_TERMS = {
    "weights.reference": "reference model weights", "weights.reward_model": "reward model weights",
    "weights.critic": "critic weights", "gradients.critic": "critic gradients", "optimizer.critic": "critic optimizer states",
    "weights.inference_engine": "rollout engine weights", "activations.kv_cache": "rollout KV cache",
    "activations.reference_logits": "reference logits",
}
PEAK_PHASES = {"policy_training": "the policy's training step", "rollout": "rollout generation",
               "reference_forward": "the reference forward"}


def post_training_terms(e: Evaluation) -> list[Term]:
    d, total = e.memory.details_gib, e.memory.total_gib
    return [Term(name=name, value=r(d[key]), percent=r(100 * d[key] / total, 1))
            for key, name in POST_TRAINING_TERMS.items() if d.get(key, 0.0) > 0]


def _default_plan(scenario: Scenario) -> Plan:
    from .recommend import run_recommend

    rec = run_recommend(scenario, top_k=1).recommendation
    if rec.plans:
        return Plan.from_strategy(rec.plans[0].strategy)
    if rec.nothing_fits is not None and rec.nothing_fits.lowest_memory_plan is not None:
        return Plan.from_strategy(rec.nothing_fits.lowest_memory_plan)
    return Plan()


def estimate_memory(args: EstimateMemoryArgs) -> EstimateMemoryResult:
    if args.measured_peak_gib is not None and args.measured_peak_gib <= 0:
        raise ShardwiseInputError(f"measured_peak_gib must be a positive GiB figure, not {args.measured_peak_gib}")
    resolved = args.scenario.resolve()
    plan = args.plan or _default_plan(args.scenario)
    require_whole_mesh(resolved.model, resolved.cluster, resolved.setup, plan.strategy())
    e = evaluate(resolved.model, resolved.cluster, resolved.setup, plan.strategy(), profile=active_profile())
    f = plan_figures(e)
    return EstimateMemoryResult(
        scenario=scenario_facts(args.scenario, resolved), plan_label=f.label, fits=f.fits, memory_gib=f.memory_gib,
        capacity_gib=f.capacity_gib, memory_free_gib=f.memory_free_gib,
        memory_percent_of_capacity=f.memory_percent_of_capacity, memory_gib_likely=f.memory_gib_likely,
        memory_likely_basis=memory_band(resolved.setup).basis if f.memory_gib_likely else None,
        measured_peak=(measured_peak_of_plan(args.measured_peak_gib, resolved, plan.strategy(), f)
                       if args.measured_peak_gib is not None else None),
        terms=f.memory_terms, largest_term=f.memory_terms[0],
        details_gib={k: round(v, 3) for k, v in e.memory.details_gib.items()}, violations=f.violations, evaluation=e,
        post_training_terms=post_training_terms(e),
        peak_phase=PEAK_PHASES.get(e.memory.peak_phase or "", e.memory.peak_phase))


EVALUATE_PLAN = Tool(
    "evaluate_plan", "Predict one plan: validity, memory per GPU, step time by term, tokens/s, MFU.", EvaluatePlanArgs, EvaluatePlanResult, evaluate_plan,
    scenario_of=lambda a: a.scenario)
ESTIMATE_MEMORY = Tool(
    "estimate_memory", "Memory per GPU of one plan by category, and whether it fits.", EstimateMemoryArgs, EstimateMemoryResult, estimate_memory,
    scenario_of=lambda a: a.scenario)
