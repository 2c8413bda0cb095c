"""The `post_training` section of an Evaluation: what the step was modelled with, said in the output."""

from __future__ import annotations

from ..assumptions.memory import GIB
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..results import PostTrainingReport, Violation
from ..training import TrainingSetup
from .rollout import rollout, rollout_warnings


def post_training_report(model: ModelSpec, cluster: Cluster, setup: TrainingSetup) -> PostTrainingReport | None:
    post = setup.post_training
    if post is None:
        return None
    adapters = setup.mode != "full"
    reference = ("the base weights with the adapters disabled (no extra memory)" if adapters
                 else f"a frozen copy of the policy in {post.reference_dtype}, sharded like the policy")
    if post.algorithm == "dpo":
        return PostTrainingReport(algorithm="dpo", pairs_per_step=setup.global_batch // 2, reference=reference)
    r = rollout(model, cluster, post, setup.global_batch)
    return PostTrainingReport(
        algorithm=post.algorithm, prompt_len=post.prompt_len, response_len=post.response_len,
        group_size=post.group_size, prompts_per_step=setup.global_batch / post.group_size,
        inference_tp=post.inference_tp, reference=reference, defaults_used=list(post.defaults_used),
        rollout={"sequences_per_engine": float(r.sequences_per_engine),
                 "concurrent_sequences": float(r.concurrent_sequences), "waves": float(r.waves),
                 "inference_weights_gib": r.inference_weights_bytes / GIB, "kv_cache_gib": r.kv_cache_bytes / GIB,
                 "kv_budget_gib": r.kv_budget_bytes / GIB, "prefill_s": r.prefill_s, "decode_s": r.decode_s},
    )


def post_training_warnings(model: ModelSpec, cluster: Cluster, setup: TrainingSetup) -> list[Violation]:
    """What the post-training numbers are not checked against (docs/post_training.md, limits)."""
    post = setup.post_training
    if post is None:
        return []
    found = []
    if post.generates:
        found = [Violation(rule="rollout_layout", message=m)
                 for m in rollout_warnings(cluster, post, rollout(model, cluster, post, setup.global_batch))]
    text = (f"{post.algorithm.upper()}: the reference memory is checked against PyTorch's tracker, but no measured "
            f"{post.algorithm.upper()} run calibrates the time of the extra passes")
    if post.generates:
        text += ("; the rollout is a decode roofline with every response at response_len (real rollouts vary; "
                 "the step waits for the longest)")
    return found + [Violation(rule="post_training_uncalibrated", message=text)]
