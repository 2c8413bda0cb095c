"""export_config: a plan as a framework's config file. The text is attached to the answer by the
server; the model sees only what the file says about the plan, so it never types config JSON."""

from __future__ import annotations

import re

from typing import Literal

from pydantic import Field

from ..engine.plan_label import plan_label
from ..engine.export import FORMATS, ExportRefused, export_plan, planning_framework
from .base import Result, Tool
from .calibration import active_profile
from .scenario import Args, Plan, Scenario

Format = Literal[FORMATS]  # deepspeed, torchtitan, fsdp, accelerate, megatron, megatron-bridge, nanotron, launch


class ExportArgs(Args):
    scenario: Scenario
    format: Format
    plan: Plan | None = Field(None, description="default: recommended plan")


class ExportConfigResult(Result):
    format: str
    plan: str
    exported: bool
    filename: str | None = None
    lines: int | None = None
    header: str | None = Field(None, description="what the file configures: plan, model, cluster, version")
    warnings: list[str] = Field(default_factory=list, description="what the user must know for the file to match the plan")
    refused_reason: str | None = Field(None, description="why this framework cannot express the plan")
    hint: str | None = None
    substituted_for: str | None = Field(None, description="the plan that was asked for but this format cannot express; "
                                                          "`plan` is then the best plan the format can run")
    planned_for: str | None = Field(None, description="the framework the substitute plan was searched for")
    slowdown_percent: float | None = Field(None, description="how much slower the substitute is predicted to be")
    text: str | None = Field(None, description="the file; attached to the answer, never shown to the model")

    def hidden_from_model(self) -> set[str]:
        return {"text"}

    def for_model(self) -> dict:
        body = super().for_model()
        if self.exported:
            body["attached"] = f"the {self.format} file ({self.filename}, {self.lines} lines) is attached to your answer"
        return body

    def attachments(self) -> dict[str, str]:
        return {self.format: self.text} if self.exported and self.text else {}

    def summary(self) -> str:
        if self.exported:
            return f"{self.format} config for {self.plan} ({self.lines} lines) [{self.id}]"
        return f"{self.format} cannot express {self.plan}: {self.refused_reason} [{self.id}]"


def export_config(args: ExportArgs) -> ExportConfigResult:
    resolved = args.scenario.resolve()
    plan = args.plan
    if plan is None:
        from .recommend import run_recommend

        searched = run_recommend(args.scenario, top_k=1)
        best = searched.best
        if best is None:
            return _nothing_to_export(args.format, searched.nothing_fits)
        plan = Plan.from_strategy(best.strategy)
    strategy = plan.strategy()
    label = plan_label(strategy, "tools")
    try:
        out = export_plan(args.format, resolved.model, resolved.cluster, resolved.setup, strategy)
    except ExportRefused as refused:
        substitute = best_exportable(args.format, resolved, strategy)
        if substitute is None:
            return ExportConfigResult(format=args.format, plan=label, exported=False, refused_reason=refused.reason,
                                      hint=refused.hint or None)
        out, sub_strategy, framework, slowdown = substitute
        return ExportConfigResult(format=args.format, plan=plan_label(sub_strategy, "tools"), exported=True,
                                  filename=out.filename, lines=len(out.text.splitlines()), header=out.header,
                                  warnings=list(out.warnings), text=out.text, substituted_for=label,
                                  refused_reason=refused.reason, planned_for=framework, slowdown_percent=slowdown)
    return ExportConfigResult(format=args.format, plan=label, exported=True, filename=out.filename,
                        lines=len(out.text.splitlines()), header=out.header, warnings=list(out.warnings), text=out.text)


def _nothing_to_export(fmt: str, nothing) -> ExportConfigResult:
    """No plan to write. When no plan is valid at all, the rule that excluded them is the answer ("DeepSpeed's
    config has no FP8 training switch; use bf16 …"), not a bare "nothing fits", which reads as out of memory."""
    blocking = [re.sub(r"^\[[\w-]+\]\s*", "", b) for b in (nothing.blocking if nothing is not None else [])]
    if nothing is not None and nothing.reason == "no_valid_plan" and blocking:
        return ExportConfigResult(format=fmt, plan="(none)", exported=False,
                                  refused_reason="no plan is valid for this scenario: " + " / ".join(blocking),
                                  hint=None)  # the rule says what would work
    return ExportConfigResult(format=fmt, plan="(none)", exported=False,
                              refused_reason="no plan fits this scenario, so there is nothing to export",
                              hint="call recommend_plans to see what would fit")


def best_exportable(fmt: str, resolved, refused_strategy):
    """When a format cannot express the plan asked for: the fastest plan, searched for the framework
    that format runs, that it can express — with how much slower it is than the plan asked for.
    Near-ties crowd the top of a ranking (many plans within 5 %), so the walk goes deep: the same
    walk as `recommend --export` (engine/export/carriers.py), so both name the same plan."""
    from ..engine.constraints import parse_constraints
    from ..engine.evaluate import evaluate
    from ..engine.export.carriers import exportable
    from ..engine.search import DEFAULT_HEADROOM, rank

    framework = planning_framework(fmt, resolved.setup.framework)
    setup = resolved.setup.model_copy(update={"framework": framework})
    profile = active_profile()
    ranking = rank(resolved.model, resolved.cluster, setup, parse_constraints({}), DEFAULT_HEADROOM, profile)
    carried = exportable(fmt, resolved.model, resolved.cluster, setup, ranking.fitting, ranking.step_s, want=1)
    if not carried.kept:
        return None
    strategy = ranking.fitting.strategy(carried.kept[0])
    out = export_plan(fmt, resolved.model, resolved.cluster, setup, strategy)
    asked = evaluate(resolved.model, resolved.cluster, resolved.setup, refused_strategy, profile=profile)
    found = evaluate(resolved.model, resolved.cluster, setup, strategy, DEFAULT_HEADROOM, profile=profile)
    slowdown = None
    if asked.throughput and found.throughput:
        slowdown = round(100 * (1 - found.throughput.tokens_per_s / asked.throughput.tokens_per_s), 1)
    return out, Plan.from_strategy(found.strategy).strategy(), framework, slowdown


EXPORT_CONFIG = Tool(
    "export_config", "A plan as a framework's config file or launch line, or why the framework "
    "cannot express it.",
    ExportArgs, ExportConfigResult, export_config, scenario_of=lambda a: a.scenario)
