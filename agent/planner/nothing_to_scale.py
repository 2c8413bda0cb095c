""""Scale the batch with the gpus" with no GPU change to scale it by: said, and the change asked for.

The phrase keeps the batch per GPU while the GPU count changes; it scales the batch of the scenario before a
GPU change — said in the same message ("128 GPUs, scaling the batch with them") or in the what-if just before
(ConversationState.batch_kept_from, applied by the planner before this is asked). As a conversation's first
message, or with no GPU change on the table, there is nothing to scale: it used to run a what-if that changed
nothing ("What if ?", every figure +0.0 %) on the page's form scenario. Now the answer says so and asks for
the scenario, or for the GPU count to go to.
"""

from __future__ import annotations

from ...prompts.render import render
from ...tools.scenario import Scenario
from .entities import Entities


def nothing_to_scale(e: Entities) -> bool:
    """The message asks to scale the batch with the GPUs but names no GPU change and no batch."""
    gpu_change = (e.gpus, e.gpus_factor, e.nodes, e.nodes_added, e.gpus_added)
    return e.batch_with_gpus and not (e.global_batch or e.global_batch_tokens) \
        and all(v is None for v in gpu_change)


def nothing_to_scale_answer(scenario: Scenario | None) -> str:
    whole = scenario is not None and not scenario.missing()
    return render("offline/nothing_to_scale.md.j2", scenario=scenario if whole else None)
