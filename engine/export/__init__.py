"""Export a plan as files the frameworks load: DeepSpeed, torchtitan, FSDP2, Accelerate,
Megatron-LM, Megatron-Bridge, Nanotron and a launch line.

    export_plan(fmt, model, cluster, setup, strategy) -> ExportResult

A framework that cannot express the plan raises `ExportRefused` (a ShardwiseInputError) with
the reason and what would work; nothing is exported with a dimension silently dropped. The
plan is first checked with engine.validity for the framework family the target runs on.
How each format is proven to load: docs/export.md.
"""

from __future__ import annotations

from types import ModuleType

from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..strategy import Strategy
from ..training import TrainingSetup
from . import accelerate, deepspeed, fsdp, launch, megatron, megatron_bridge, nanotron, torchtitan
from .plan import ExportPlan, checked_plan
from .post_training import post_training_notes, refuse_unsupported
from .result import ExportRefused, ExportResult

EXPORTERS: dict[str, ModuleType] = {
    "deepspeed": deepspeed,
    "torchtitan": torchtitan,
    "fsdp": fsdp,
    "accelerate": accelerate,
    "megatron": megatron,
    "megatron-bridge": megatron_bridge,
    "nanotron": nanotron,
    "launch": launch,
}
FORMATS: tuple[str, ...] = tuple(EXPORTERS)


def export_plan(fmt: str, model: ModelSpec, cluster: Cluster, setup: TrainingSetup,
                strategy: Strategy) -> ExportResult:
    """One plan as one framework's file. Raises ExportRefused when the framework cannot run it."""
    if fmt not in EXPORTERS:
        raise ExportRefused(fmt, "unknown export format", f"valid formats: {', '.join(FORMATS)}")
    module = EXPORTERS[fmt]
    family = module.family_for(strategy) if hasattr(module, "family_for") else module.FAMILY
    if module is deepspeed:  # its limits by their own names, before the search rules that group them
        deepspeed.refuse_unexpressible(setup, strategy)
    plan, notes = checked_plan(fmt, family, model, cluster, setup, strategy)
    refuse_unsupported(fmt, plan)
    return module.export(plan, notes + post_training_notes(plan))


def planning_framework(fmt: str, default: str) -> str:
    """The framework whose plans a format runs (DeepSpeed JSON runs DeepSpeed plans, a torchtitan
    TOML runs FSDP2 plans); `default` for formats that follow the plan (accelerate, launch)."""
    module = EXPORTERS[fmt]
    return getattr(module, "FAMILY", None) or default


def export_all(model: ModelSpec, cluster: Cluster, setup: TrainingSetup,
               strategy: Strategy) -> dict[str, ExportResult | ExportRefused]:
    """Every format for one plan; a refusal is a value here, not an exception."""
    out: dict[str, ExportResult | ExportRefused] = {}
    for fmt in FORMATS:
        try:
            out[fmt] = export_plan(fmt, model, cluster, setup, strategy)
        except ExportRefused as refused:
            out[fmt] = refused
    return out


__all__ = ["export_plan", "export_all", "planning_framework", "FORMATS", "ExportPlan", "ExportResult", "ExportRefused"]
