"""Configs attached to an answer: exported by the server from the answer's plan.

The plan is the one the turn's tools produced (the recommendation first, else the last plan
evaluated or compared); every format the exporters can express is attached, refusals are
kept as notes. Files asked for explicitly with export_config are attached as exported.
The model never writes a config: it only ever sees that one is attached.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.plan_label import plan_label
from ..tools import registry
from ..tools.dispatch import ToolOutcome
from ..tools.scenario import Plan

# Tools whose plan is what an answer is about; the last of them in a turn wins (a compare after
# a search is about the compare's winner, an evaluation after a search is a side look).
DECIDING = ("recommend_plans", "what_if", "compare_plans")


@dataclass
class Attachments:
    configs: dict[str, str] = field(default_factory=dict)  # format -> text
    filenames: dict[str, str] = field(default_factory=dict)  # format -> suggested file name
    notes: dict[str, str] = field(default_factory=dict)  # format -> why it was not exported
    plan: str | None = None  # the plan's label


def answer_plan(outcomes: list[ToolOutcome]) -> ToolOutcome | None:
    with_plan = [o for o in outcomes if o.ok and o.result.plan_evaluation() is not None]
    deciding = [o for o in with_plan if o.name in DECIDING]
    chosen = deciding or with_plan
    return chosen[-1] if chosen else None


def attachments_for(outcomes: list[ToolOutcome], plan_outcome: ToolOutcome | None) -> Attachments:
    from ..engine.export import ExportRefused, export_all

    out = Attachments()
    if plan_outcome is not None:
        tool = registry()[plan_outcome.name]
        scenario = tool.scenario_of(tool.args.model_validate(plan_outcome.arguments)) if tool.scenario_of else None
        evaluation = plan_outcome.result.plan_evaluation()
        if scenario is not None and evaluation.valid and evaluation.memory.fits:
            resolved = scenario.resolve()
            out.plan = plan_label(evaluation.strategy, "tools")
            strategy = Plan.from_strategy(evaluation.strategy).strategy()
            for fmt, exported in export_all(resolved.model, resolved.cluster, resolved.setup, strategy).items():
                if isinstance(exported, ExportRefused):
                    out.notes[fmt] = exported.reason
                else:
                    out.configs[fmt], out.filenames[fmt] = exported.text, exported.filename
    for outcome in outcomes:  # explicit exports win for their format
        if not outcome.ok:
            continue
        for fmt, text in outcome.result.attachments().items():
            out.configs[fmt] = text
            out.filenames[fmt] = getattr(outcome.result, "filename", None) or f"{fmt}.txt"
            out.notes.pop(fmt, None)
            out.plan = out.plan or getattr(outcome.result, "plan", None)
    return out
