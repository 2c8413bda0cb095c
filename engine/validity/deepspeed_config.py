"""Plans DeepSpeed's own JSON config cannot express, so `--framework deepspeed` never ranks them.

The engine's `deepspeed` framework is plain DeepSpeed 0.19 driven by its JSON config (what
`export --format deepspeed` writes, engine/export/deepspeed.py). Read in the installed package:
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
The exporter refuses exactly these (refuse_unexpressible); these rules keep the search from ranking them.
Only scenarios with framework "deepspeed" are touched; no calibration row reads that framework
(engine/calibration/stacks.py gives it to external sets' DeepSpeed and Colossal-AI rows only, none with PP).
"""

from __future__ import annotations

import numpy as np

from ..plans import PlanGrid
from .rule import Plan, Rule, Scenario


def _is_deepspeed(s: Scenario) -> bool:
    return s.setup.framework == "deepspeed"


def _layout_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if not _is_deepspeed(s):
        return np.zeros(len(g), dtype=bool)
    pipeline_with_other = (g.pp > 1) & ((g.tp > 1) | (g.ep > 1) | (g.cp > 1))
    return pipeline_with_other | ((g.tp > 1) & (g.cp > 1)) | (g.etp > 1)


def _layout_message(s: Scenario, p: Plan) -> str:
    if p.pp > 1 and (p.tp > 1 or p.ep > 1 or p.cp > 1):
        used = ", ".join(f"{n}={v}" for n, v in (("TP", p.tp), ("EP", p.ep), ("CP", p.cp)) if v > 1)
        return (f"DeepSpeed's pipeline engine (PP={p.pp}) runs with neither AutoTP, AutoEP nor Ulysses ({used}); "
                f"valid with deepspeed: PP=1, or TP=EP=CP=1 with PP (TP with PP is Megatron-DeepSpeed: "
                f"framework megatron)")
    if p.tp > 1 and p.cp > 1:
        return (f"DeepSpeed's Ulysses (CP={p.cp}) splits the ranks into SP x DP only, leaving no group for AutoTP "
                f"(TP={p.tp}); valid with deepspeed: TP=1 with CP, or CP=1")
    return f"DeepSpeed's AutoEP does not support expert tensor parallelism (ETP={p.etp}); valid ETP: 1"


DEEPSPEED_CONFIG_LAYOUT = Rule("deepspeed_config_layout", "error", "layout", _layout_broken, _layout_message)


def _options_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if not _is_deepspeed(s):
        return np.zeros(len(g), dtype=bool)
    return (g.hsdp_replicas > 1) | ((g.ep > 1) & (g.cp > 1) & (g.zero_stage == 3))


def _options_message(s: Scenario, p: Plan) -> str:
    if p.hsdp_replicas > 1:
        return (f"HSDP ({p.hsdp_replicas} replicas) needs hierarchical ZeRO-3, and DeepSpeed 0.19 removed MiCS; "
                f"valid with deepspeed: 1 replica (or framework fsdp)")
    return (f"DeepSpeed's AutoEP with ZeRO-3 does not support Ulysses (EP={p.ep}, CP={p.cp}); valid with "
            f"deepspeed: ZeRO 0-2, or CP=1")


DEEPSPEED_CONFIG_OPTIONS = Rule("deepspeed_config_options", "error", "options", _options_broken, _options_message)
