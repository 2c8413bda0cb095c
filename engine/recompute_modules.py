"""What `recompute=selective` recomputes, by framework and model.

Megatron-Core's selective recompute is a list of modules (--recompute-granularity selective
--recompute-modules …). For dense models the default, `core_attn`, is Korthikanti et al.'s
selective recompute. For MoE and MLA models shardwise follows the fine-grained set Megatron-Core's
MoE guide recommends (megatron/core/transformer/moe/README.md, "Fine-grained Recomputation":
`--recompute-modules mla_up_proj layernorm moe_act`), plus `core_attn`; the DeepSeek-V3 report
(sec. 3.2.3) recomputes the same kind of tensors — all RMSNorms and the MLA up-projections.
What each module drops from memory and adds to the backward: docs/memory.md, "MoE/MLA recipe".
"""

from __future__ import annotations

from .model_spec import ModelSpec
from .training import TrainingSetup

MEGATRON_DENSE_SELECTIVE_MODULES: tuple[str, ...] = ("core_attn",)
MEGATRON_MOE_SELECTIVE_MODULES: tuple[str, ...] = ("core_attn", "layernorm", "mla_up_proj", "moe_act")


def uses_moe_recipe(model: ModelSpec, setup: TrainingSetup) -> bool:
    """True when selective recompute means Megatron-Core's fine-grained MoE/MLA module set."""
    return setup.framework == "megatron" and (model.moe is not None or model.mla is not None)


def selective_modules(model: ModelSpec, setup: TrainingSetup) -> tuple[str, ...]:
    """Megatron-Core --recompute-modules for `recompute=selective`: the setup's own list when it gives one
    (a recipe's `recompute_modules`), else mla_up_proj only with MLA, moe_act only with MoE."""
    if setup.recompute_modules is not None and setup.framework == "megatron":
        return setup.recompute_modules
    if not uses_moe_recipe(model, setup):
        return MEGATRON_DENSE_SELECTIVE_MODULES
    keep = {"mla_up_proj": model.mla is not None, "moe_act": model.moe is not None}
    return tuple(m for m in MEGATRON_MOE_SELECTIVE_MODULES if keep.get(m, True))
