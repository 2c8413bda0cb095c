"""What DeepSpeed's own JSON config cannot express: one set of named limits for the search and the exporter.

The engine's `deepspeed` framework is plain DeepSpeed 0.19 driven by its JSON config (what
`export --format deepspeed` writes, engine/export/deepspeed.py). Read in the installed package (0.19.8):
- FP8 training: the config's precision sections are `bf16` and `fp16` only (runtime/precision_config.py)
  and `torch_autocast.dtype` takes fp16/fp32/int8/bf16 (runtime/config.py `DtypeEnum`); FP8 GEMMs come
  from Transformer Engine layers in the model code, which the engine's deepspeed kernel stack ("pytorch",
  engine/assumptions/compute.py) does not price;
- its pipeline engine is a `PipelineModule` (runtime/pipe/engine.py) whose process groups come from the
  module's topology; AutoTP (`tensor_parallel.autotp_size`) replaces `self.mpu` with its own TP mesh
  (runtime/engine.py `_configure_tensor_parallel_states`), and neither AutoEP nor Ulysses is wired into
  the pipeline engine, so PP > 1 runs with TP = EP = CP = 1 (TP with PP is Megatron-DeepSpeed, i.e. the
  `megatron` framework here);
- Ulysses' groups split the world into SP x DP only (runtime/sequence_parallel/parallel_state_sp.py),
  leaving no TP group: TP and CP are not combined;
- AutoEP reserves expert_tensor_parallel_size != 1 (module_inject/auto_ep_folding.py): ETP = 1;
- "AutoEP with ZeRO Stage 3 does not support sequence parallelism yet" (runtime/engine.py
  `_validate_zero3_moe_compatibility`);
- MiCS (hierarchical ZeRO-3, i.e. HSDP) was removed in 0.19 (runtime/config.py `_REMOVED_ZERO_CONFIG_KEYS`).
Each limit is written once (`LIMITS`): the search's rules below keep `--framework deepspeed` from ranking
what breaks one, and the exporter refuses through the same limits with the same words (`refusal`), so the
two cannot drift. Only scenarios with framework "deepspeed" are touched by the rules; no calibration row
reads that framework (engine/calibration/stacks.py gives it to external sets' DeepSpeed and Colossal-AI rows
only, none with PP).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..plans import PlanGrid
from ..setting_text import SettingsText, settings_text
from ..training import TrainingSetup
from .rule import Plan, Rule, Scenario, Stage


@dataclass(frozen=True)
class DeepSpeedLimit:
    """One thing ds_config cannot express. `broken(setup, knobs)` reads tp/pp/cp/ep/etp/zero_stage/
    hsdp_replicas from a PlanGrid (arrays), a Plan or a Strategy (ints) alike, so it is written with & and |."""

    name: str  # stable: the exporter's refusal rule (counted by cause in `recommend --export deepspeed`)
    broken: Callable[[TrainingSetup, Any], Any]
    reason: Callable[[Any], str]  # what DeepSpeed lacks, with the plan's numbers
    fix: Callable[[Any], str | SettingsText]  # the nearest valid values (or another framework/format)


def _used(k: Any) -> str:
    return ", ".join(f"{n}={v}" for n, v in (("TP", k.tp), ("EP", k.ep), ("CP", k.cp)) if v > 1)


LIMITS: tuple[DeepSpeedLimit, ...] = (
    DeepSpeedLimit(
        "fp8", lambda setup, k: setup.precision == "fp8",
        lambda k: ("DeepSpeed's config has no FP8 training switch (FP8 comes from Transformer Engine layers in "
                   "the model code)"),
        lambda k: settings_text("use {precision} bf16 for DeepSpeed, or export {format} "
                                "megatron/torchtitan/accelerate", "precision", "format")),
    DeepSpeedLimit(
        "pp_with_tp_ep_cp", lambda setup, k: (k.pp > 1) & ((k.tp > 1) | (k.ep > 1) | (k.cp > 1)),
        lambda k: (f"DeepSpeed's pipeline engine (PP={k.pp}) cannot be combined with its automatic tensor/expert "
                   f"parallelism or Ulysses ({_used(k)})"),
        lambda k: settings_text("use PP=1, or TP=EP=CP=1 with PP; TP with PP needs Megatron-DeepSpeed: "
                                "{framework} megatron, export {format} megatron", "framework", "format")),
    DeepSpeedLimit(
        "etp", lambda setup, k: k.etp > 1,
        lambda k: f"DeepSpeed's AutoEP does not support expert tensor parallelism (ETP={k.etp})",
        lambda k: "use ETP=1 for DeepSpeed"),
    DeepSpeedLimit(
        "tp_with_ulysses_cp", lambda setup, k: (k.tp > 1) & (k.cp > 1),
        lambda k: (f"DeepSpeed's Ulysses sequence parallelism (CP={k.cp}) splits the ranks into SP x DP only, "
                   f"leaving no group for AutoTP (TP={k.tp})"),
        lambda k: settings_text("use TP=1 with CP, or CP=1; or export {format} megatron/torchtitan", "format")),
    DeepSpeedLimit(
        "megatron_sequence_parallel", lambda setup, k: k.sp,
        lambda k: (f"DeepSpeed's AutoTP (TP={k.tp}) shards the linear layers only: it has no Megatron sequence "
                   f"parallelism, so the activations between them are not sharded over TP"),
        lambda k: ("use sequence parallelism off with DeepSpeed's TP (the plan's activations are then priced "
                   "unsharded), or TP with sequence parallelism under Megatron")),
    DeepSpeedLimit(
        "hsdp", lambda setup, k: k.hsdp_replicas > 1,
        lambda k: (f"HSDP ({k.hsdp_replicas} replicas) needs hierarchical ZeRO-3 sharding, and DeepSpeed 0.19 "
                   f"removed MiCS (zero_optimization.mics_shard_size)"),
        lambda k: settings_text("use hsdp_replicas=1, or {framework} fsdp (export {format} "
                                "torchtitan/fsdp/accelerate)", "framework", "format")),
    DeepSpeedLimit(
        "ep_zero3_with_ulysses_cp", lambda setup, k: (k.ep > 1) & (k.cp > 1) & (k.zero_stage == 3),
        lambda k: (f"DeepSpeed's AutoEP with ZeRO-3 does not support Ulysses sequence parallelism "
                   f"(EP={k.ep}, CP={k.cp})"),
        lambda k: settings_text("use ZeRO-1/2, or CP=1; or export {format} megatron", "format")),
)
LIMITS_BY_NAME: dict[str, DeepSpeedLimit] = {limit.name: limit for limit in LIMITS}


def said(limit: DeepSpeedLimit, knobs: Any) -> SettingsText:
    """The limit as one sentence: what DeepSpeed lacks; what would work."""
    return settings_text(limit.reason(knobs)) + "; " + limit.fix(knobs)


def refusal(setup: TrainingSetup, knobs: Any) -> DeepSpeedLimit | None:
    """The first limit one plan (a Strategy or Plan) breaks, whatever framework it was planned for."""
    return next((limit for limit in LIMITS if bool(limit.broken(setup, knobs))), None)


def _rule(name: str, stage: Stage, names: tuple[str, ...], short: str) -> Rule:
    limits = tuple(LIMITS_BY_NAME[n] for n in names)

    def broken(s: Scenario, g: PlanGrid) -> np.ndarray:
        out = np.zeros(len(g), dtype=bool)
        if s.setup.framework != "deepspeed":
            return out
        for limit in limits:
            out |= np.broadcast_to(np.asarray(limit.broken(s.setup, g), dtype=bool), out.shape)
        return out

    def message(s: Scenario, p: Plan) -> SettingsText:
        first = next(limit for limit in limits if bool(limit.broken(s.setup, p)))
        return said(first, p)

    return Rule(name, "error", stage, broken, message, short=short)


# FP8 reads no plan knob: its own rule, checked right after the framework's setup, so a search at
# `--precision fp8 --framework deepspeed` reports that one cause for every plan.
DEEPSPEED_CONFIG_SETUP = _rule("deepspeed_config_setup", "layout", ("fp8",),
                               short="a setup DeepSpeed's config cannot express")
DEEPSPEED_CONFIG_LAYOUT = _rule("deepspeed_config_layout", "layout", ("pp_with_tp_ep_cp", "etp", "tp_with_ulysses_cp"),
                                short="a layout DeepSpeed's config cannot express")
DEEPSPEED_CONFIG_OPTIONS = _rule("deepspeed_config_options", "options",
                                 ("megatron_sequence_parallel", "hsdp", "ep_zero3_with_ulysses_cp"),
                                 short="options DeepSpeed's config cannot express")
