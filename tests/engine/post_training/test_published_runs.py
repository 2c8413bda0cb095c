"""A published measured GRPO run as a bracket check of the step model (not a calibration).

NeMo RL v0.4 performance summary (NVIDIA-NeMo/RL, docs/about/performance-summary.md): Llama-3.1-8B,
GRPO on OpenMathInstruct-2, on-policy, 16 x DGX-H100, BF16, generation TP 1, Megatron-core training
at TP 1; 2,048 generated sequences per step (G-GBS), T-max sequence length 4,096, generation average
sequence length 1,060; measured total step time 97.7 s.

Caveats, why this can only bracket: responses vary in length and shardwise runs every response to
`response_len`; NeMo RL takes 4 optimizer steps of 512 per rollout (T-GBS), shardwise one; the prompt
length is not published (we take 256 tokens, OpenMathInstruct-2 problems are short). So all responses
at the average length must predict a step shorter than measured, all at the maximum a longer one.
"""

from __future__ import annotations

from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.post_training.modes import training_setup
from shardwise.engine.search import recommend

MEASURED_STEP_S = 97.7
PROMPT, AVERAGE_SEQ, MAX_SEQ, GENERATED = 256, 1060, 4096, 2048


def predicted_step(seq_len: int) -> float:
    setup = training_setup("grpo", prompt_len=PROMPT, response_len=seq_len - PROMPT, group_size=16, inference_tp=1,
                           global_batch=GENERATED)
    best = recommend(get_model("llama-3.1-8b"), build_cluster("h100", 16), setup, top_k=1).plans[0]
    return best.time.step_s


def test_measured_nemo_rl_step_lies_between_average_and_maximum_length_predictions():
    shortest, longest = predicted_step(AVERAGE_SEQ), predicted_step(MAX_SEQ)
    assert shortest < MEASURED_STEP_S < longest
