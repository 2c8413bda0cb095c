"""compare_plans: two plans for one scenario, term by term, with the term that decides, the
winner's binding constraint and its one-knob alternatives (engine/explain.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..engine.explain import explain
from ..engine.results import Evaluation
from ..engine.validity.whole_mesh import require_whole_mesh
from ..present import duration_ms
from .base import Result, Tool
from .explanations import BindingFacts, CounterfactualFacts, binding_facts, counterfactual_facts, term_name
from .figures import Difference, PlanFigures, ScenarioFacts, differences, plan_figures, r, scenario_facts
from .calibration import active_profile
from .scenario import Args, Plan, Scenario

HEADROOM = 0.1  # the search's default: a plan "fits" in 90 % of GPU memory, as in recommend_plans


class ComparePlansArgs(Args):
    scenario: Scenario
    plan_a: Plan
    plan_b: Plan


class Verdict(BaseModel):
    winner: Literal["a", "b", "tie", "neither"]
    decided_by: Literal["validity", "memory", "throughput", "tie"]
    winner_label: str | None
    loser_label: str | None
    speedup_percent: float | None = Field(None, description="winner's tokens/s over the loser's, minus 100 %")
    step_ms_saved: float | None = Field(None, description="loser's step time minus the winner's")
    deciding_term: Difference | None = Field(None, description="the time term that favours the winner most")
    offsetting_term: Difference | None = Field(None, description="the time term that favours the loser most")
    broken_rules: list[str] = Field(default_factory=list, description="what the loser breaks (validity or memory)")
    sentence: str = Field(description="the verdict in one sentence, numbers included")


class ComparePlansResult(Result):
    scenario: ScenarioFacts
    headroom_percent: float
    a: PlanFigures
    b: PlanFigures
    verdict: Verdict
    time_differences: list[Difference] = Field(description="b minus a per exposed-time term, largest first")
    memory_differences: list[Difference] = Field(description="b minus a per memory category, largest first")
    winner_binding: BindingFacts | None = Field(None, description="what stops the winner from being faster")
    winner_alternatives: list[CounterfactualFacts] = Field(default_factory=list,
                                                           description="the winner with one knob changed")
    evaluation_a: Evaluation
    evaluation_b: Evaluation

    def hidden_from_model(self) -> set[str]:
        return {"evaluation_a", "evaluation_b"}

    def plan_evaluation(self) -> Evaluation | None:
        v = self.verdict.winner
        return self.evaluation_b if v == "b" else self.evaluation_a if v in ("a", "tie") else None

    def summary(self) -> str:
        return f"{self.a.label} vs {self.b.label}: {self.verdict.sentence} [{self.id}]"


def _why_not(p: PlanFigures, usable_gib: float) -> str:
    if not p.valid:
        return "invalid (" + "; ".join(p.violations[:2]) + ")"
    return f"out of memory ({p.memory_gib:,.1f} GiB needed, {usable_gib:g} GiB usable)"  # as every memory figure: 0.1 GiB


def verdict(comparison, a: PlanFigures, b: PlanFigures, time_diff: list[Difference], usable_gib: float) -> Verdict:
    c = comparison
    labels = {"a": a.label, "b": b.label}
    if c.winner == "neither":
        return Verdict(winner="neither", decided_by=c.decided_by, winner_label=None, loser_label=None,
                       broken_rules=c.rules, sentence=f"Neither plan can run: {a.label} is {_why_not(a, usable_gib)}; "
                                                      f"{b.label} is {_why_not(b, usable_gib)}.")
    if c.winner == "tie":
        return Verdict(winner="tie", decided_by="tie", winner_label=None, loser_label=None, speedup_percent=0.0,
                       step_ms_saved=r(abs((a.step_ms or 0) - (b.step_ms or 0))),
                       sentence=f"{a.label} and {b.label} are predicted equally fast.")
    w = c.winner
    win, lose = (a, b) if w == "a" else (b, a)
    if c.decided_by in ("validity", "memory"):
        return Verdict(winner=w, decided_by=c.decided_by, winner_label=labels[w], loser_label=lose.label,
                       broken_rules=c.rules, sentence=f"{win.label} wins because {lose.label} is {_why_not(lose, usable_gib)}.")
    by_term = {d.term: d for d in time_diff}
    decisive = by_term.get(term_name(c.decisive[0].term)) if c.decisive else None
    offsetting = by_term.get(term_name(c.offsetting[0].term)) if c.offsetting else None
    speedup = r(100 * (c.speedup - 1), 1)
    saved = r(lose.step_ms - win.step_ms)
    sentence = f"{win.label} is {speedup:g}% faster ({duration_ms(win.step_ms)} vs {duration_ms(lose.step_ms)} per step)"
    if decisive is not None:
        sentence += f"; the deciding term is {decisive.term}: {duration_ms(abs(decisive.b_minus_a))} less per step"
    if offsetting is not None:
        sentence += f", partly offset by {offsetting.term} ({duration_ms(abs(offsetting.b_minus_a))} more)"
    return Verdict(winner=w, decided_by="throughput", winner_label=labels[w], loser_label=lose.label,
                   speedup_percent=speedup, step_ms_saved=saved, deciding_term=decisive, offsetting_term=offsetting,
                   sentence=sentence + ".")


def compare_plans(args: ComparePlansArgs) -> ComparePlansResult:
    resolved = args.scenario.resolve()
    for which, plan in (("plan_a", args.plan_a), ("plan_b", args.plan_b)):
        require_whole_mesh(resolved.model, resolved.cluster, resolved.setup, plan.strategy(), which)
    ex = explain(resolved.model, resolved.cluster, resolved.setup, args.plan_a.strategy(), args.plan_b.strategy(),
                 headroom=HEADROOM, profile=active_profile())
    c = ex.comparison
    a, b = plan_figures(c.a), plan_figures(c.b)
    usable = r(c.a.memory.capacity_gib * (1 - HEADROOM), 1)
    time_diff, memory_diff = differences(a, b, "time"), differences(a, b, "memory")
    winner_ok = c.winner in ("a", "b", "tie")
    return ComparePlansResult(
        scenario=scenario_facts(args.scenario, resolved), headroom_percent=100 * HEADROOM, a=a, b=b,
        verdict=verdict(c, a, b, time_diff, usable), time_differences=time_diff, memory_differences=memory_diff,
        winner_binding=binding_facts(ex.binding) if winner_ok else None,
        winner_alternatives=[counterfactual_facts(x) for x in ex.counterfactuals] if winner_ok else [],
        evaluation_a=c.a, evaluation_b=c.b)


COMPARE_PLANS = Tool(
    "compare_plans", "Two plans side by side: the winner, by how much, and the deciding term ('why A, not B?').", ComparePlansArgs, ComparePlansResult, compare_plans,
    scenario_of=lambda a: a.scenario)

