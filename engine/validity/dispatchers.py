"""Which framework offers which MoE token dispatcher, and the rules that follow.

Read in the installed packages (the versions engine/validity/frameworks.py describes):
- Megatron-Core 0.16: alltoall (the default), allgather, and DeepEP as the flex dispatcher's backend
  (--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep; engine/export/megatron.py writes it).
- torchtitan 0.2.2 (the fsdp flavour): `parallelism.expert_parallel_comm_backend` "standard" (PyTorch
  all-to-all) or "deepep" (config/job_config.py, "still an experimental feature"); with deepep,
  models/deepseek_v3/infra/parallelize.py raises "DeepEP with Expert Tensor Parallelism (ETP) is not supported
  yet" (and "DeepEP requires expert parallelism (ep_degree > 1)" — not a rule here: the fsdp flavour also stands
  for NeMo AutoModel's FSDP2 runs in the calibration data, and with EP = 1 nothing is priced for the dispatcher).
- DeepSpeed 0.19.8 AutoEP: `expert_parallel.comm_backend` "comm" (all-to-all) or "deepep"
  (module_inject/auto_ep_config.py); `comm_backend="deepep" does not support folded tensor parallelism`
  (expert_tensor_parallel_size > 1, module_inject/auto_ep_layer.py).
- nanotron: no expert parallelism at all (frameworks.CAPABILITIES), so no dispatcher to choose.
No framework but Megatron-Core has an allgather dispatcher. A dispatcher a framework lacks is an error where it
would be priced (an MoE plan with EP > 1); with EP = 1 there is no expert all-to-all to price, so it is a warning.
"""

from __future__ import annotations

import numpy as np

from ..plans import PlanGrid
from ..setting_text import SettingsText, settings_text
from .rule import Plan, Rule, Scenario

DISPATCHERS: dict[str, tuple[str, ...]] = {
    "megatron": ("alltoall", "allgather", "deepep"),
    "deepspeed": ("alltoall", "deepep"),
    "fsdp": ("alltoall", "deepep"),
    "nanotron": ("alltoall",),
}
# How each framework turns DeepEP on, for the messages.
DEEPEP_SWITCH = {
    "megatron": "Megatron-Core's flex dispatcher, --moe-flex-dispatcher-backend deepep",
    "deepspeed": "DeepSpeed AutoEP, expert_parallel.comm_backend deepep",
    "fsdp": "torchtitan, parallelism.expert_parallel_comm_backend deepep",
}
DEEPEP_NEEDS_ETP_1 = ("deepspeed", "fsdp")


def _offered(s: Scenario) -> bool:
    return s.setup.moe_dispatcher in DISPATCHERS[s.setup.framework]


def _offered_by(dispatcher: str) -> str:
    if dispatcher == "deepep":
        return "; ".join(f"{fw} ({how})" for fw, how in DEEPEP_SWITCH.items())
    return ", ".join(fw for fw, offered in DISPATCHERS.items() if dispatcher in offered)


def _not_offered_text(s: Scenario) -> str:
    fw, d = s.setup.framework, s.setup.moe_dispatcher
    return (f"{fw} has no {d} dispatcher; it is offered by {_offered_by(d)}; valid {{moe_dispatcher}} with {fw}: "
            f"{', '.join(DISPATCHERS[fw])}")


def _unoffered_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return (g.ep > 1) & (s.model.is_moe and not _offered(s))


def _unoffered_message(s: Scenario, p: Plan) -> SettingsText:
    return settings_text(_not_offered_text(s), "moe_dispatcher")


MOE_DISPATCHER_OFFERED = Rule("moe_dispatcher_offered", "error", "layout", _unoffered_broken, _unoffered_message,
                              short="an MoE dispatcher the framework lacks")


def _unused_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return (g.ep == 1) & (s.model.is_moe and not _offered(s))


def _unused_message(s: Scenario, p: Plan) -> SettingsText:
    return settings_text(_not_offered_text(s) + " (with EP=1 there is no expert all-to-all, so the plan is "
                         "predicted without one)", "moe_dispatcher")


MOE_DISPATCHER_NOT_OFFERED = Rule("moe_dispatcher_not_offered", "warning", "layout", _unused_broken,
                                  _unused_message)


def _deepep_limits_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    limited = s.model.is_moe and s.setup.moe_dispatcher == "deepep" and s.setup.framework in DEEPEP_NEEDS_ETP_1
    return (g.ep > 1) & (g.etp > 1) & limited


def _deepep_limits_message(s: Scenario, p: Plan) -> SettingsText:
    fw = s.setup.framework
    return settings_text(f"DeepEP with {fw} ({DEEPEP_SWITCH[fw]}) does not support expert tensor parallelism, but "
                         f"ETP={p.etp}; valid: ETP=1, or {{moe_dispatcher}} alltoall (megatron runs DeepEP with "
                         f"ETP > 1: its flex dispatcher spans the ETP·EP group)", "moe_dispatcher")


DEEPEP_WITH_ETP = Rule("deepep_with_etp", "error", "layout", _deepep_limits_broken, _deepep_limits_message,
                       short="expert-TP, which DeepEP with this framework lacks")
