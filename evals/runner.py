"""Run cases against a target and grade every turn.

A case passes when every turn passes every gating grader. With `repeats` > 1 each case runs
that many times in fresh conversations (a live model is not deterministic); the suite's pass
rate is over all runs, with a Wilson interval.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from .case import Case
from .graders import GATING, TurnContext, grade_turn
from .graders import judge as judge_mod
from .names import catalog_patterns
from .transcript import Reply, Target, TurnRecord, as_reply
from .truth import compute


@dataclass
class TurnResult:
    user: str
    reply: Reply
    failures: dict[str, list[str]]  # grader -> reasons
    seconds: float
    judge: judge_mod.Verdict | None = None

    @property
    def passed(self) -> bool:
        return not any(self.failures.values())


@dataclass
class CaseRun:
    case: Case
    turns: list[TurnResult] = field(default_factory=list)
    error: str | None = None  # the target crashed; the run fails

    @property
    def passed(self) -> bool:
        return self.error is None and all(t.passed for t in self.turns)

    def failures(self) -> list[str]:
        out = [f"error: {self.error}"] if self.error else []
        for i, t in enumerate(self.turns):
            where = f"turn {i + 1} " if len(self.case.turns) > 1 else ""
            out += [f"{where}{grader}: {reason}" for grader, reasons in t.failures.items() for reason in reasons]
        return out

    def failed_graders(self) -> set[str]:
        graders = {g for t in self.turns for g, reasons in t.failures.items() if reasons}
        return graders | ({"error"} if self.error else set())


@dataclass
class SuiteResult:
    target: str
    runs: list[CaseRun]
    repeats: int = 1
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return len(self.runs)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.runs)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        return wilson(self.passed, self.total, z)

    def by_family(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for r in self.runs:
            row = out.setdefault(r.case.family, {"total": 0, "passed": 0})
            row["total"] += 1
            row["passed"] += r.passed
        return out

    def by_tag(self) -> dict[str, dict[str, int]]:
        """Like by_family, for case tags (e.g. the held-out cases)."""
        out: dict[str, dict[str, int]] = {}
        for r in self.runs:
            for tag in r.case.tags:
                row = out.setdefault(tag, {"total": 0, "passed": 0})
                row["total"] += 1
                row["passed"] += r.passed
        return out

    def by_grader(self) -> dict[str, int]:
        """How many runs each grader failed."""
        counts = {g: 0 for g in (*GATING, "error")}
        for r in self.runs:
            for g in r.failed_graders():
                counts[g] = counts.get(g, 0) + 1
        return counts


def wilson(passed: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927): sound at 0 % and 100 %."""
    if total == 0:
        return 0.0, 1.0
    p = passed / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _truth(ctx: TurnContext):
    from ..engine.errors import ShardwiseInputError
    from .truth import Truth
    from .truth_profile import profile_for

    try:
        profile = profile_for(ctx.case, ctx.index)
    except ShardwiseInputError as exc:  # the earlier measurement could not be fitted: say so, per turn
        return Truth(kind=ctx.truth_kind, error=f"the profile of the earlier measured turn: {exc}")
    return compute(ctx.truth_kind, ctx.scenario, ctx.turn.plan, ctx.turn.plans, ctx.turn.measured, profile)


def run_case(case: Case, target: Target, system_prompt: str = "", judge: judge_mod.Complete | None = None,
             names=None) -> CaseRun:
    run = CaseRun(case)
    names = catalog_patterns() if names is None else names
    try:
        conversation = target.start(case.id)
    except Exception as exc:  # a target that cannot open a conversation fails the case, not the suite
        run.error = f"{type(exc).__name__}: {exc}"
        return run
    messages: list[dict] = []
    history: list[TurnRecord] = []
    for index, (turn, scenario) in enumerate(zip(case.turns, case.scenarios())):
        messages.append({"role": "user", "content": turn.user})
        started = time.monotonic()
        try:
            reply = as_reply(conversation(list(messages)))
        except Exception as exc:
            reply = Reply(answer="", error=f"{type(exc).__name__}: {exc}")
        seconds = time.monotonic() - started
        ctx = TurnContext(case=case, index=index, scenario=scenario, reply=reply, history=list(history),
                          system_prompt=system_prompt, truth_fn=_truth, name_patterns=tuple(names))
        result = TurnResult(turn.user, reply, grade_turn(ctx), seconds)
        if judge is not None:
            result.judge = judge_mod.judge(ctx, judge)
        run.turns.append(result)
        messages.append({"role": "assistant", "content": reply.answer})
        history.append(TurnRecord(user=turn.user, reply=reply, seconds=seconds))
    return run


def run_suite(cases: list[Case], target: Target, repeats: int = 1, judge: judge_mod.Complete | None = None,
              progress: Callable[[int, int, CaseRun], None] | None = None) -> SuiteResult:
    started = time.monotonic()
    system_prompt = _system_prompt(target)
    names = catalog_patterns()
    runs: list[CaseRun] = []
    total = len(cases) * repeats
    for _ in range(repeats):
        for case in cases:
            run = run_case(case, target, system_prompt, judge, names)
            runs.append(run)
            if progress:
                progress(len(runs), total, run)
    return SuiteResult(target=target.name, runs=runs, repeats=repeats, seconds=time.monotonic() - started)


def _system_prompt(target: Target) -> str:
    try:
        return target.system_prompt() or ""
    except Exception:
        return ""
