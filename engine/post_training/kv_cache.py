"""KV cache of the rollout engine (vLLM's PagedAttention layout), per token and per GPU.

Per layer a token keeps a key and a value of kv_heads · head_dim elements (GQA: Ainslie et al. 2023);
tensor parallelism splits the KV heads over the engine's GPUs, and when TP exceeds the KV heads every
GPU keeps one head (vLLM replicates them: `num_kv_heads // tp`, at least 1). MLA (DeepSeek-V2/V3)
caches one compressed latent of kv_lora_rank + qk_rope_head_dim per layer, the same on every TP rank.
Elements are KV_CACHE_BYTES (vLLM's kv_cache_dtype "auto" = the model dtype, bf16).
"""

from __future__ import annotations

import math

from ..assumptions.post_training import KV_CACHE_BYTES
from ..model_spec import ModelSpec


def kv_heads_per_gpu(model: ModelSpec, inference_tp: int) -> int:
    return max(model.kv_heads // inference_tp, 1)


def kv_cache_bytes_per_token(model: ModelSpec, inference_tp: int) -> float:
    """Bytes one cached token occupies on one GPU of an engine of `inference_tp` GPUs."""
    if model.mla is not None:
        per_layer = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    else:
        per_layer = 2 * kv_heads_per_gpu(model, inference_tp) * model.head_size
    return float(model.num_layers * per_layer * KV_CACHE_BYTES)


def kv_cache_bytes(model: ModelSpec, inference_tp: int, sequences: int, tokens_per_sequence: int) -> float:
    """Bytes per GPU to hold `sequences` sequences of `tokens_per_sequence` tokens at once."""
    return sequences * tokens_per_sequence * kv_cache_bytes_per_token(model, inference_tp)


def sequences_per_engine(global_batch: int, num_gpus: int, inference_tp: int) -> int:
    """The rollout batch is spread evenly over ⌊num_gpus / inference_tp⌋ engines (the busiest gets the ceiling)."""
    engines = max(num_gpus // inference_tp, 1)
    return math.ceil(global_batch / engines)
