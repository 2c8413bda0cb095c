"""Text lines for post-training results (DPO, GRPO, PPO): the terms they add, the phase that sets the
memory peak, and the inputs that were filled with defaults."""

from __future__ import annotations

from ..engine.results import Evaluation
from ..present import count_noun

MEMORY_TERMS = {
    "weights.reference": "  of which reference model weights",
    "weights.reward_model": "  of which reward model weights",
    "weights.critic": "  of which critic weights",
    "weights.inference_engine": "  of which rollout engine weights",
    "gradients.critic": "  of which critic gradients",
    "optimizer.critic": "  of which critic optimizer states",
    "activations.kv_cache": "  of which rollout KV cache",
    "activations.reference_logits": "  of which reference logits",
}
TIME_TERMS = (("rollout_s", "rollout generation"), ("old_logprob_s", "policy log-prob forward"),
              ("reference_s", "reference forward"), ("reward_s", "reward model forward"),
              ("critic_s", "critic (values + training)"))
PHASES = {"policy_training": "the policy's training step", "rollout": "rollout generation",
          "reference_forward": "the reference forward"}
DEFAULT_NAMES = {"prompt_len": "prompt length", "response_len": "response length", "group_size": "group size",
                 "inference_tp": "inference TP"}


def memory_detail_lines(e: Evaluation, category: str) -> list[str]:
    """The post-training terms inside one memory category ('weights', 'activations', …)."""
    if e.post_training is None:
        return []
    d = e.memory.details_gib
    return [f"  {label:<38}{d[key]:>8.2f}" for key, label in MEMORY_TERMS.items()
            if key.startswith(category + ".") and d.get(key, 0.0) > 0]


def peak_phase_lines(e: Evaluation) -> list[str]:
    if e.post_training is None or not e.memory.peak_phase:
        return []
    return [f"  peak during {PHASES.get(e.memory.peak_phase, e.memory.peak_phase)}"]


def time_rows(e: Evaluation) -> list[tuple[str, float]]:
    if e.time is None:
        return []
    return [(label, getattr(e.time, key)) for key, label in TIME_TERMS if getattr(e.time, key) > 0]


def _prompts(n: float) -> str:
    """128.0 -> '128'; 204.8 -> '204.8' (a fraction only where the batch is not whole prompts)."""
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.1f}"


def post_training_lines(e: Evaluation) -> list[str]:
    p = e.post_training
    if p is None:
        return []
    if p.algorithm == "dpo":
        return [f"post     DPO: {p.pairs_per_step:,} chosen/rejected pairs per step; reference: {p.reference}"]
    r = p.rollout or {}
    lines = [f"post     {p.algorithm.upper()} co-located: {_prompts(p.prompts_per_step)} prompts x "
             f"{count_noun(p.group_size, 'sample')}, "
             f"prompt {p.prompt_len:,} + response {p.response_len:,} tokens, inference TP {p.inference_tp}; "
             f"reference: {p.reference}",
             f"rollout  {r.get('sequences_per_engine', 0):,.0f} sequences per engine, "
             f"{r.get('concurrent_sequences', 0):,.0f} at once ({count_noun(round(r.get('waves', 0)), 'wave')}), KV cache "
             f"{r.get('kv_cache_gib', 0):.2f} of {r.get('kv_budget_gib', 0):.2f} GiB budget per GPU, "
             f"prefill {r.get('prefill_s', 0):.2f} s + decode {r.get('decode_s', 0):.2f} s"]
    if p.prompts_per_step is not None and not float(p.prompts_per_step).is_integer():
        # The nearest whole numbers of prompts, as --global-batch values (sequences = prompts x group size).
        below, above = int(p.prompts_per_step) * p.group_size, (int(p.prompts_per_step) + 1) * p.group_size
        lines.append(f"note     the global batch is not a multiple of the group size {p.group_size}: "
                     f"{p.prompts_per_step:,.1f} prompts per step; whole prompts: --global-batch {below:,} or {above:,}")
    if p.defaults_used:
        names = ", ".join(DEFAULT_NAMES.get(k, k) for k in p.defaults_used)
        lines.append(f"defaults {names} not given: verl's defaults used (docs/post_training.md)")
    return lines
