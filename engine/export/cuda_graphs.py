"""A plan's CUDA graphs (TrainingSetup.cuda_graphs) as Megatron-Core spells them, core_v0.16.1:
TransformerConfig.cuda_graph_impl / cuda_graph_scope, Megatron-LM --cuda-graph-impl / --cuda-graph-scope.

per-layer      transformer_engine (TE make_graphed_callables), scope attn + mlp for a dense model and
               attn + moe_router + moe_preprocess for a dropless MoE (Megatron-Bridge's CUDA-graph guide;
               TransformerConfig refuses "mlp" when every layer is MoE and "moe" without drop-padding),
               plus mlp when the MoE model has dense layers (DeepSeek-V3's first three): the engine
               takes dense layers as fully captured (assumptions/cuda_graphs.py).
full-iteration local with scope full_iteration (FullCudaGraphWrapper).

Both need dropout 0 where a graphed module is recomputed (TransformerConfig: "attention dropout is not
supported with graphed attention recomputation"; the same for hidden dropout and MLP recompute), so the
exports set attention and hidden dropout to 0 — what LLM pre-training recipes run anyway.
"""

from __future__ import annotations

from .plan import ExportPlan
from ..setting_text import settings_text
from .result import ExportRefused

IMPL = {"per-layer": "transformer_engine", "full-iteration": "local"}


def graph_scope(plan: ExportPlan) -> list[str]:
    if plan.setup.cuda_graphs == "full-iteration":
        return ["full_iteration"]
    if not plan.model.is_moe:
        return ["attn", "mlp"]
    dense_mlp = ["mlp"] if plan.model.num_moe_layers < plan.model.num_layers else []
    return ["attn", *dense_mlp, "moe_router", "moe_preprocess"]


def refuse_dropless_moe_full_iteration(plan: ExportPlan, fmt: str) -> None:
    """Megatron-Core 0.16.1 cannot capture a dropless MoE layer in one graph: its dispatchers copy the
    routed-token counts to the host (token_dispatcher.py: tokens_per_expert ... .cpu(); DeepEP returns
    them as a Python list). The sync-free path the plan is priced with (HybridEP,
    --moe-expert-rank-capacity-factor, --use-transformer-engine-op-fuser) came after 0.16.1, so these
    flags cannot say it."""
    if plan.model.is_moe and plan.setup.cuda_graphs == "full-iteration":
        raise ExportRefused(fmt, "full-iteration CUDA graphs of a dropless MoE need Megatron-Core's sync-free expert "
                                 "path (--moe-flex-dispatcher-backend hybridep, --moe-expert-rank-capacity-factor, "
                                 "--use-transformer-engine-op-fuser), which megatron-core 0.16.1 (the flags this export "
                                 "is checked against) does not have",
                            settings_text("export {format} megatron-bridge and use one of its full-iteration MoE "
                                          "perf recipes, or plan with {cuda_graphs} per-layer", "format", "cuda_graphs"))
