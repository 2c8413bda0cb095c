"""The numbers of the explain entry on MoE token dispatchers ("which frameworks let me use DeepEP?"), all read from
the engine's own rule (engine/validity/dispatchers.py: which framework offers which dispatcher and how DeepEP is
switched on; engine/validity/frameworks.py: which has expert parallelism at all), so the answer follows the rule
when it changes; none is written here. With a scenario, the plan's step time under each dispatcher its framework
offers (engine evaluate()), as the CUDA-graphs entry does for its modes."""

from __future__ import annotations

from ..engine.evaluate import evaluate
from ..engine.validity.dispatchers import DEEPEP_NEEDS_ETP_1, DEEPEP_SWITCH, DISPATCHERS
from ..engine.validity.frameworks import CAPABILITIES
from .calibration import active_profile
from .figures import r
from .scenario import Plan, ResolvedScenario


def _offers(framework: str, dispatcher: str) -> bool:
    """Offered where it can be used: a framework without expert parallelism has no expert dispatch to choose."""
    return dispatcher in DISPATCHERS[framework] and CAPABILITIES[framework].expert_parallel


def framework_numbers() -> dict:
    """Per framework: its dispatchers, whether it has expert parallelism, and how it turns DeepEP on ("no" when it
    does not offer it); and the frameworks offering DeepEP, in the rule's order."""
    n: dict = {"frameworks": ", ".join(DISPATCHERS),
               "deepep_frameworks": ", ".join(fw for fw in DISPATCHERS if _offers(fw, "deepep")),
               "no_deepep_frameworks": ", ".join(fw for fw in DISPATCHERS if not _offers(fw, "deepep"))}
    for fw, offered in DISPATCHERS.items():
        n[f"{fw}_expert_parallel"] = "yes" if CAPABILITIES[fw].expert_parallel else "no"
        n[f"{fw}_dispatchers"] = ", ".join(offered) if CAPABILITIES[fw].expert_parallel else "none"
        n[f"{fw}_deepep"] = DEEPEP_SWITCH[fw] if _offers(fw, "deepep") else "no"
        n[f"{fw}_deepep_etp_1_only"] = "yes" if fw in DEEPEP_NEEDS_ETP_1 and _offers(fw, "deepep") else "no"
    return n


def dispatcher_numbers(s: ResolvedScenario | None, plan: Plan | None = None) -> dict:
    """framework_numbers, and with a scenario its framework, dispatcher, and the plan's step time under each
    dispatcher the framework offers (None with the engine's reason when the plan cannot run it)."""
    n = framework_numbers()
    if s is None or plan is None:
        return n
    fw = s.setup.framework
    n.update(framework=fw, current=s.setup.moe_dispatcher, moe="yes" if s.model.is_moe else "no", ep=plan.strategy().ep)
    if not s.model.is_moe or not CAPABILITIES[fw].expert_parallel:
        return n
    for dispatcher in DISPATCHERS[fw]:
        setup = s.setup.model_copy(update={"moe_dispatcher": dispatcher})
        e = evaluate(s.model, s.cluster, setup, plan.strategy(), profile=active_profile())
        n[f"{dispatcher}_step_ms"] = r(1e3 * e.time.step_s, 1) if e.valid and e.time is not None else None
        if not e.valid:
            n[f"{dispatcher}_invalid"] = e.violations[0].message
    return n
