"""Rules for CUDA graphs (TrainingSetup.cuda_graphs; what they remove: assumptions/cuda_graphs.py).

Megatron-Core core_v0.16.1 TransformerConfig.__post_init__: "full recompute is only supported with
full iteration CUDA graph" — per-layer graphs and full recompute cannot run together. A dropless MoE
layer syncs on its routed-token counts, so a full-iteration graph needs Megatron-Core's sync-free
expert path (flex dispatcher, HybridEP, --moe-expert-rank-capacity-factor; MoE Paged Stash guide),
priced here as the deepep dispatcher; the drop-and-pad route (--moe-pad-expert-input-to-capacity)
is not modelled.
"""

from __future__ import annotations

import numpy as np

from ..plans import RECOMPUTE_FULL, PlanGrid
from ..setting_text import SettingsText, settings_text
from .rule import Plan, Rule, Scenario


def _per_layer_full_recompute(s: Scenario, g: PlanGrid) -> np.ndarray:
    return (g.recompute == RECOMPUTE_FULL) & (s.setup.cuda_graphs == "per-layer")


PER_LAYER_GRAPHS_WITHOUT_FULL_RECOMPUTE = Rule(
    "per_layer_graphs_without_full_recompute", "error", "options", _per_layer_full_recompute,
    lambda s, p: ("per-layer CUDA graphs cannot run with full recompute (Megatron-Core: \"full recompute is only "
                  "supported with full iteration CUDA graph\"); valid recompute with per-layer graphs: none or "
                  "selective, or cuda graphs full-iteration for full recompute"),
    short="full recompute, which per-layer CUDA graphs cannot run",
)


def _moe_full_iteration_needs_sync_free(s: Scenario, g: PlanGrid) -> np.ndarray:
    broken = (s.model.moe is not None and s.setup.cuda_graphs == "full-iteration"
              and s.setup.moe_dispatcher != "deepep")
    return np.full(len(g), broken)


def _sync_free_message(s: Scenario, p: Plan) -> SettingsText:
    return settings_text(
        f"full-iteration CUDA graphs of a dropless MoE need Megatron-Core's sync-free expert path (flex "
        f"dispatcher, HybridEP, --moe-expert-rank-capacity-factor), not the {s.setup.moe_dispatcher} "
        f"dispatcher, whose token counts sync with the host; valid: {{moe_dispatcher}} deepep (the flex "
        f"dispatcher as shardwise prices it), or cuda graphs per-layer/none. The drop-and-pad route "
        f"(--moe-pad-expert-input-to-capacity) drops tokens and pads the all-to-all: not modelled",
        "moe_dispatcher")


# Reads no plan knob: checked first with the other setup rules.
MOE_FULL_ITERATION_GRAPHS_NEED_SYNC_FREE_DISPATCH = Rule(
    "moe_full_iteration_graphs_need_sync_free_dispatch", "error", "layout", _moe_full_iteration_needs_sync_free,
    _sync_free_message,
    short="full-iteration CUDA graphs with a dispatcher that syncs with the host")
