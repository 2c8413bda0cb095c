"""compare_plans: two plans for one scenario, term by term, with the term that decides."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..engine.evaluate import evaluate
from ..engine.results import Evaluation
from .base import Result, Tool
from .figures import Difference, PlanFigures, ScenarioFacts, differences, plan_figures, r, scenario_facts
from .scenario import Args, Plan, Scenario


class ComparePlansArgs(Args):
    scenario: Scenario
    plan_a: Plan
    plan_b: Plan


class Verdict(BaseModel):
    winner: Literal["a", "b", "tie", "neither"]
    reason: Literal["faster", "only_one_valid", "only_one_fits", "neither_feasible", "equal_speed"]
    winner_label: str | None
    loser_label: str | None
    speedup_percent: float | None = Field(None, description="winner's tokens/s over the loser's, minus 100 %")
    step_ms_saved: float | None = Field(None, description="loser's step time minus the winner's")
    deciding_term: Difference | None = Field(None, description="the time or memory term that decides")
    sentence: str = Field(description="the verdict in one sentence, numbers included")


class ComparePlansResult(Result):
    scenario: ScenarioFacts
    a: PlanFigures
    b: PlanFigures
    verdict: Verdict
    time_differences: list[Difference] = Field(description="b minus a per exposed-time term, largest first")
    memory_differences: list[Difference] = Field(description="b minus a per memory category, largest first")
    evaluation_a: Evaluation
    evaluation_b: Evaluation

    def hidden_from_model(self) -> set[str]:
        return {"evaluation_a", "evaluation_b"}

    def plan_evaluation(self) -> Evaluation | None:
        v = self.verdict
        return self.evaluation_b if v.winner == "b" else self.evaluation_a if v.winner in ("a", "tie") else None

    def summary(self) -> str:
        return f"{self.a.label} vs {self.b.label}: {self.verdict.sentence} [{self.id}]"


def feasible(p: PlanFigures) -> bool:
    return p.valid and p.fits and p.tokens_per_s is not None


def verdict(a: PlanFigures, b: PlanFigures, time_diff: list[Difference], memory_diff: list[Difference]) -> Verdict:
    names = {"a": a.label, "b": b.label}
    if not feasible(a) and not feasible(b):
        return Verdict(winner="neither", reason="neither_feasible", winner_label=None, loser_label=None,
                       sentence=f"Neither plan can run: {a.label} is {_why_not(a)}; {b.label} is {_why_not(b)}.")
    if feasible(a) != feasible(b):
        w, l = ("a", b) if feasible(a) else ("b", a)
        reason = "only_one_valid" if not l.valid else "only_one_fits"
        deciding = None
        if reason == "only_one_fits":  # the memory category that grew most toward the loser
            sign = 1 if w == "a" else -1
            deciding = max(memory_diff, key=lambda d: sign * d.b_minus_a)
        return Verdict(winner=w, reason=reason, winner_label=names[w], loser_label=l.label, deciding_term=deciding,
                       sentence=f"{names[w]} wins because {l.label} is {_why_not(l)}.")
    speed_a, speed_b = a.tokens_per_s, b.tokens_per_s
    if speed_a == speed_b:
        return Verdict(winner="tie", reason="equal_speed", winner_label=None, loser_label=None, speedup_percent=0.0,
                       step_ms_saved=0.0, sentence=f"{a.label} and {b.label} are predicted equally fast.")
    w = "a" if speed_a > speed_b else "b"
    win, lose = (a, b) if w == "a" else (b, a)
    sign = 1 if w == "a" else -1  # b_minus_a > 0 means b spends more: good for a
    deciding = max(time_diff, key=lambda d: sign * d.b_minus_a)
    saved = r(lose.step_ms - win.step_ms)
    speedup = r(100 * (win.tokens_per_s / lose.tokens_per_s - 1), 1)
    return Verdict(winner=w, reason="faster", winner_label=win.label, loser_label=lose.label, speedup_percent=speedup,
                   step_ms_saved=saved, deciding_term=deciding,
                   sentence=(f"{win.label} is {speedup:g}% faster ({win.step_ms:g} ms vs {lose.step_ms:g} ms per step); "
                             f"the deciding term is {deciding.term}: {abs(deciding.b_minus_a):g} ms less per step."))


def _why_not(p: PlanFigures) -> str:
    if not p.valid:
        return "invalid (" + "; ".join(p.violations[:2]) + ")"
    if not p.fits:
        return f"out of memory ({p.memory_gib:g} GiB needed, {p.capacity_gib:g} GiB available)"
    return "not timed"


def compare_plans(args: ComparePlansArgs) -> ComparePlansResult:
    resolved = args.scenario.resolve()
    ea = evaluate(resolved.model, resolved.cluster, resolved.setup, args.plan_a.strategy())
    eb = evaluate(resolved.model, resolved.cluster, resolved.setup, args.plan_b.strategy())
    a, b = plan_figures(ea), plan_figures(eb)
    time_diff, memory_diff = differences(a, b, "time"), differences(a, b, "memory")
    return ComparePlansResult(scenario=scenario_facts(args.scenario, resolved), a=a, b=b,
                              verdict=verdict(a, b, time_diff, memory_diff), time_differences=time_diff,
                              memory_differences=memory_diff, evaluation_a=ea, evaluation_b=eb)


COMPARE_PLANS = Tool(
    "compare_plans", "Compare two plans for the same scenario: each memory and time term side by side, the "
    "difference, which plan wins and the term that decides. Use it for 'why A over B?'.",
    ComparePlansArgs, ComparePlansResult, compare_plans, scenario_of=lambda a: a.scenario)
