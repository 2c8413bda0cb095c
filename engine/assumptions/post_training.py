"""Constants of the post-training model (DPO, GRPO, PPO), each with where it comes from.

Defaults are verl's, read from its source (volcengine/verl, verl/trainer/config/ppo_trainer.yaml at
commit 008db456, and examples/grpo_trainer/run_qwen2-7b.sh): they are what a co-located verl run
uses when the user sets nothing. Every default the engine fills in is said in the output.
"""

from __future__ import annotations

# --- Rollout shape (verl ppo_trainer.yaml `data:` and `actor_rollout_ref.rollout:`) ---------------
DEFAULT_PROMPT_LEN = 512  # data.max_prompt_length: 512
DEFAULT_RESPONSE_LEN = 512  # data.max_response_length: 512
DEFAULT_GROUP_SIZE = {"grpo": 5, "ppo": 1}  # rollout.n: 1 ("> 1 for grpo"); verl's GRPO example sets n=5
DEFAULT_INFERENCE_TP = 2  # rollout.tensor_model_parallel_size: 2
# data.train_batch_size: 1024 — prompts (ppo_trainer.yaml, and examples/grpo_trainer/run_qwen2-7b.sh); verl trains
# on train_batch_size x rollout.n sequences, so GRPO's default is 1,024 x 5 = 5,120 sequences, PPO's 1,024.
DEFAULT_PROMPTS_PER_STEP = 1024

# vLLM may use this fraction of a GPU's memory for its weights and KV cache (rollout.gpu_memory_utilization:
# 0.5). We size the KV cache to what the batch needs, capped by this budget; the rest waits (waves).
ROLLOUT_GPU_MEMORY_UTILIZATION = 0.5

# --- Decode roofline ---------------------------------------------------------------------------------
# Fraction of the HBM datasheet bandwidth a decode step reaches while streaming the weights and the KV
# cache ("model bandwidth utilisation", MBU). Databricks/MosaicML, "LLM Inference Performance
# Engineering: Best Practices" (2023), define MBU and report about 60 % for optimised decode kernels at
# small batch; we take 0.6 and treat it as uncertain by ±15 % (vLLM under verl runs `enforce_eager: True`
# by default, without CUDA graphs, which can only lower it).
DECODE_HBM_BANDWIDTH_FRACTION = 0.60
# Fraction of the dense BF16 peak reached by the decode GEMMs when a large batch makes them compute-bound
# and by the prefill: the same order as a training GEMM at small shapes; a named guess, not measured.
DECODE_COMPUTE_EFFICIENCY = 0.50
# KV cache element size: vLLM's default kv_cache_dtype "auto" stores it in the model dtype (bf16).
KV_CACHE_BYTES = 2
# Weights of the inference engine: rollout.dtype: bfloat16.
INFERENCE_WEIGHT_BYTES = 2

# --- Reference and reward models ------------------------------------------------------------------
# TRL loads the DPO reference like the policy (bf16); verl's ref worker holds bf16 FSDP parameters.
REFERENCE_WEIGHT_BYTES = {"bf16": 2, "fp32": 4}
# While the reference (or reward/critic) forward runs, one micro-batch's logits are alive in the
# eager log-prob computation: bf16 logits (2) + their fp32 upcast (4) + the fp32 log-softmax (4).
REFERENCE_LOGIT_BYTES_PER_LOGIT = 10
