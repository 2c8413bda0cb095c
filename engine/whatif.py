"""What-if: re-run the recommendation with one input changed, and say what changed and why.

Inputs that can change: gpu, num_gpus, gpus_per_node, network, seq_len, global_batch,
global_batch_tokens, mode, lora_rank, precision, framework, moe_dispatcher, moe_a2a_overlap, cuda_graphs,
recompute_modules (core_attn,layernorm or none = the model's default set), grad_reduce_dtype (fp32/bf16),
fp8_param_gather, and for GRPO/PPO prompt_len, response_len, group_size, inference_tp. The answer is data: the two
recommendations, how the best plan's knobs moved, each time/memory term before and after,
and named reasons with their numbers.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .cluster import Cluster
from .errors import SettingsInputError, ShardwiseInputError
from .explain import KnobChange, TermDiff, knob_changes, memory_diffs, time_diffs
from .inputs import global_batch_from_tokens, parse_count, parse_seq_len
from .model_spec import ModelSpec
from .recommendation import Recommendation
from .calibration.profile import CalibrationProfile
from .search import recommend
from .training import TrainingSetup

INPUTS = ("gpu", "num_gpus", "gpus_per_node", "network", "seq_len", "global_batch", "global_batch_tokens", "mode",
          "lora_rank", "precision", "framework", "moe_dispatcher", "moe_a2a_overlap", "cuda_graphs", "prompt_len", "response_len",
          "group_size", "inference_tp", "mean_doc_len", "recompute_modules", "grad_reduce_dtype", "fp8_param_gather")
ROLLOUT_INPUTS = ("prompt_len", "response_len", "group_size", "inference_tp")
ALIASES = {"gpus": "num_gpus", "seq": "seq_len", "seq_length": "seq_len", "sequence_length": "seq_len",
           "batch": "global_batch", "tokens": "global_batch_tokens", "per_node": "gpus_per_node"}
# The inputs as a user types them in a change (`gpus=16`, the CLI's --gpus): every refusal lists these.
TYPED = {"num_gpus": "gpus"}


def typed_inputs() -> str:
    return ", ".join(TYPED.get(n, n) for n in INPUTS)


# A plan knob's flags (cli/evaluate.py, cli/recommend.py): what-if names them when a change is a knob.
_KNOB_FLAGS = {"zero_stage": ("--zero Z", "--zero Z"), "sequence_parallel": ("--no-sp", "--sp on|off"),
               "micro_batch": ("--micro-batch N", "--micro-batch N"), "recompute": ("--recompute MODE",) * 2,
               "hsdp_replicas": ("--hsdp R", "--hsdp R")}


def _plan_knob_refusal(key: str) -> str | None:
    """`tp=4` is a plan knob, not a scenario input: say where a knob goes instead of listing inputs."""
    from .constraints import ALIASES as KNOB_ALIASES, KNOBS

    name = key.strip().lower().replace("-", "_")
    knob = KNOB_ALIASES.get(name, name)
    if knob not in KNOBS:
        return None
    evaluate, pin = _KNOB_FLAGS.get(knob, (f"--{knob} N",) * 2)
    return (f"what-if changes the scenario, not the plan, and {key!r} is a plan knob: look at a plan with it "
            f"(`evaluate {evaluate}`), compare two plans (`explain --a PLAN --b PLAN`), or pin it in the search "
            f"(`{pin}` on recommend or what-if)")


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True)


class InputChange(_Result):
    input: str
    before: Any
    after: Any


class Reason(_Result):
    """A named cause with its numbers, e.g. rule 'gpu_memory' {'before_gib': 80, 'after_gib': 141}."""

    rule: str
    numbers: dict[str, Any] = Field(default_factory=dict)


class WhatIf(_Result):
    changes: list[InputChange]
    before: Recommendation
    after: Recommendation
    fits_before: bool
    fits_after: bool
    tokens_per_s_before: float | None = None
    tokens_per_s_after: float | None = None
    throughput_ratio: float | None = Field(default=None, description="best tokens/s after ÷ before")
    tokens_per_s_per_gpu_ratio: float | None = None
    plan_changes: list[KnobChange] = Field(default_factory=list, description="how the best plan's knobs moved")
    time: list[TermDiff] = Field(default_factory=list, description="best plan's time terms, before → after")
    memory: list[TermDiff] = Field(default_factory=list, description="best plan's memory terms, before → after")
    reasons: list[Reason] = Field(default_factory=list)


def _parse_seq(value, name: str = "seq_len") -> int:
    """'8k' -> 8192: the reading every surface shares (inputs.parse_seq_len); the refusal names the change."""
    try:
        return parse_seq_len(value, name)
    except SettingsInputError as exc:
        raise ShardwiseInputError(str(exc)) from None


@contextmanager
def _named_as_changes():
    """A what-if change is `name=value` on every surface, the CLI's included: a refusal that would name the
    setting as a flag names it as the change does."""
    try:
        yield
    except SettingsInputError as exc:
        raise ShardwiseInputError(str(exc)) from None


def _parse_int(name: str, value) -> int:
    try:
        number = parse_count(value, name)
    except SettingsInputError:
        # parse_count's refusal gave a parameter count's examples ("such as 70e9 or 70B") for a GPU count.
        raise ShardwiseInputError(f"{name} expects a positive whole number such as 128, got {value!r}") from None
    if not number.is_integer():
        raise ShardwiseInputError(f"{name} must be a whole number, got {value!r}")
    return int(number)


def parse_changes(change: dict[str, Any] | str) -> dict[str, Any]:
    """'gpu=h200,gpus=128' or {'gpu': 'h200'} -> {'gpu': 'h200', 'num_gpus': 128}."""
    out: dict[str, Any] = {}
    for _, name, value in typed_changes(change):
        out[name] = value
    return out


def typed_changes(change: dict[str, Any] | str) -> list[tuple[str, str, Any]]:
    """(as typed, input name, value) per change: refusals quote what the user wrote (`gpus`, not num_gpus)."""
    if isinstance(change, str):
        pairs = []
        for part in filter(None, (p.strip() for p in change.split(","))):
            if "=" not in part and pairs and pairs[-1][0].replace("-", "_") == "recompute_modules":
                pairs[-1] = (pairs[-1][0], f"{pairs[-1][1]},{part}")  # recompute_modules=core_attn,layernorm
                continue
            if "=" not in part:
                raise ShardwiseInputError(f"what-if change {part!r} must look like input=value, e.g. gpu=h200")
            key, value = part.split("=", 1)
            pairs.append((key.strip(), value.strip()))
    else:
        pairs = list(change.items())
    if not pairs:
        raise ShardwiseInputError(f"what-if needs a change such as gpu=h200; inputs: {typed_inputs()}")
    out: dict[str, Any] = {}
    typed: list[tuple[str, str, Any]] = []
    for key, value in pairs:
        key = str(key).strip()
        name = ALIASES.get(key.lower().replace("-", "_"), key.lower().replace("-", "_"))
        if name not in INPUTS:
            raise ShardwiseInputError(_plan_knob_refusal(key)
                                      or f"what-if cannot change {key!r}; inputs: {typed_inputs()}")
        if name in out:  # gpu=h200,gpu=b200: which one?
            raise ShardwiseInputError(f"what-if changes {key} twice ({out[name]} and {value}); "
                                      f"ask one what-if per value")
        out[name] = value
        typed.append((key, name, value))
    if "global_batch" in out and "global_batch_tokens" in out:
        raise ShardwiseInputError("what-if: change global_batch (sequences) or global_batch_tokens, not both")
    return typed


def apply_changes(cluster: Cluster, setup: TrainingSetup, changes: dict[str, Any],
                  batch_set: bool = True) -> tuple[Cluster, TrainingSetup]:
    """`batch_set`: the user gave the batch (sequences or tokens). One that was never set is the default of
    the scenario as it stands (default_global_batch, engine/training.py): a change of mode or sequence length
    re-derives it, as `recommend` would for the new scenario (docs/search.md, "A batch you never set")."""
    from .hardware_catalog import get_gpu, get_network

    gpu = get_gpu(str(changes["gpu"])) if "gpu" in changes else cluster.gpu
    num_gpus = _parse_int("gpus", changes["num_gpus"]) if "num_gpus" in changes else cluster.num_gpus
    if "gpus_per_node" in changes:
        per_node = _parse_int("gpus_per_node", changes["gpus_per_node"])
        if per_node > num_gpus:
            raise ShardwiseInputError(f"gpus_per_node {per_node} is larger than the cluster ({num_gpus} GPUs): "
                                      f"give at most {num_gpus} GPUs per node, or more GPUs")
    elif "gpu" in changes:
        per_node = gpu.gpus_per_node  # a different GPU comes in its own kind of node
    else:
        per_node = cluster.gpus_per_node if cluster.num_gpus > cluster.gpus_per_node else gpu.gpus_per_node
    network = get_network(str(changes["network"])) if "network" in changes else cluster.network
    new_cluster = Cluster(gpu=gpu, num_gpus=num_gpus, gpus_per_node=min(per_node, num_gpus), network=network)

    update: dict[str, Any] = {}
    if "seq_len" in changes:
        update["seq_len"] = _parse_seq(changes["seq_len"])
    seq = update.get("seq_len", setup.seq_len)
    if "global_batch" in changes:
        update["global_batch"] = _parse_int("global_batch", changes["global_batch"])
    elif "global_batch_tokens" in changes:
        with _named_as_changes():
            update["global_batch"] = global_batch_from_tokens(changes["global_batch_tokens"], seq)
    elif not batch_set and ("mode" in changes or "seq_len" in changes):
        pass  # the new scenario's default, set below once its mode is known
    elif "seq_len" in changes:
        # A batch the user set keeps its tokens per step, as a recipe would when it changes the context length.
        update["global_batch"] = max(1, round(setup.global_batch_tokens / seq))
    for name in ("precision", "framework", "moe_dispatcher", "cuda_graphs"):
        if name in changes:
            update[name] = str(changes[name]).lower()
    if "moe_a2a_overlap" in changes:
        update["moe_a2a_overlap"] = _parse_bool("moe_a2a_overlap", changes["moe_a2a_overlap"])
    if "grad_reduce_dtype" in changes:
        update["grad_reduce_dtype"] = str(changes["grad_reduce_dtype"]).lower()
    if "fp8_param_gather" in changes:
        update["fp8_param_gather"] = _parse_bool("fp8_param_gather", changes["fp8_param_gather"])
    if "recompute_modules" in changes:
        update["recompute_modules"] = _parse_modules(changes["recompute_modules"])
    update.update(_post_training_update(setup, changes, seq))
    if update.get("mode") == "qlora" and "framework" not in changes and setup.framework == "megatron":
        # Megatron has no 4-bit QLoRA (post_training/modes.py DEFAULT_FRAMEWORK): the what-if moves to the stack
        # that runs it, and its changes list says so (framework: megatron → fsdp)
        from .post_training.modes import DEFAULT_FRAMEWORK

        update["framework"] = DEFAULT_FRAMEWORK["qlora"]
    if "lora_rank" in changes:
        update["lora_rank"] = _parse_int("lora_rank", changes["lora_rank"])
    if "mean_doc_len" in changes:  # "none" unpacks: one document per sequence
        doc = changes["mean_doc_len"]
        update["mean_doc_len"] = None if doc is None or str(doc).lower() == "none" else _parse_int("mean_doc_len", doc)
    if not batch_set and "global_batch" not in update and ("mode" in changes or "seq_len" in changes):
        from .post_training.modes import mode_name
        from .training import default_global_batch

        changed = TrainingSetup.model_validate({**setup.model_dump(), **update})
        post = changed.post_training  # GRPO/PPO: whole prompts of the scenario's group size
        update["global_batch"] = default_global_batch(mode_name(changed), post.group_size if post else None)
    new_setup = TrainingSetup.model_validate({**setup.model_dump(), **update})
    return new_cluster, new_setup


def _post_training_update(setup: TrainingSetup, changes: dict[str, Any], seq: int) -> dict[str, Any]:
    """mode=dpo / grpo-lora / full …: the weights mode and the post-training algorithm; GRPO/PPO keep
    their prompt length and take the response from a changed sequence length."""
    from .post_training import post_training
    from .post_training.modes import split_mode

    update: dict[str, Any] = {}
    post = setup.post_training
    if "mode" in changes:
        weights, algorithm = split_mode(str(changes["mode"]))
        update["mode"] = weights
        if algorithm is None:
            update["post_training"] = None
        elif post is None or post.algorithm != algorithm:
            update["post_training"] = post_training(algorithm, seq_len=seq if algorithm != "dpo" else None)
    new_post = update.get("post_training", post)
    rollout = {k: (_parse_seq(changes[k], k) if k.endswith("_len") else _parse_int(k, changes[k]))
               for k in ROLLOUT_INPUTS if k in changes}
    if rollout and (new_post is None or not new_post.generates):
        raise ShardwiseInputError(f"what-if: {', '.join(rollout)} describe rollout generation and apply only to "
                                  f"mode grpo or ppo (change mode=grpo with them)")
    if rollout:
        kept = {k: getattr(new_post, k) for k in ROLLOUT_INPUTS if k not in rollout}
        if "seq_len" in changes and not ("prompt_len" in rollout and "response_len" in rollout):
            kept.pop("response_len" if "prompt_len" in rollout or "response_len" not in rollout else "prompt_len")
            fresh = post_training(new_post.algorithm, **kept, **rollout, seq_len=seq)
        else:
            fresh = post_training(new_post.algorithm, **kept, **rollout)
        still_default = tuple(d for d in new_post.defaults_used if d not in rollout)
        update["post_training"] = fresh.model_copy(update={"defaults_used": still_default})
        update["seq_len"] = fresh.sequence_len
    elif new_post is not None and new_post.generates and new_post.sequence_len != seq:
        update["post_training"] = post_training(new_post.algorithm, prompt_len=new_post.prompt_len,
                                                group_size=new_post.group_size,
                                                inference_tp=new_post.inference_tp, seq_len=seq)
    return update


def _parse_modules(value: Any) -> tuple[str, ...] | None:
    """'core_attn,layernorm' (or a list) -> a tuple TrainingSetup checks; 'none'/'default' -> None, the
    model's default selective set."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "default", "")):
        return None
    names = value.replace("+", ",").replace(" ", ",").split(",") if isinstance(value, str) else list(value)
    return tuple(str(n).strip() for n in names if str(n).strip())


def _shown(value: Any) -> Any:
    """A tuple of recompute modules as typed (core_attn,layernorm); None as 'default'."""
    return ",".join(value) if isinstance(value, tuple) else value


def _parse_bool(name: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ShardwiseInputError(f"{name} expects true or false, got {value!r}")


def _input_changes(cluster: Cluster, setup: TrainingSetup, new_cluster: Cluster,
                   new_setup: TrainingSetup) -> list[InputChange]:
    pairs = [("gpu", cluster.gpu.id, new_cluster.gpu.id), ("num_gpus", cluster.num_gpus, new_cluster.num_gpus),
             ("gpus_per_node", cluster.gpus_per_node, new_cluster.gpus_per_node),
             ("network", cluster.network.id, new_cluster.network.id)]
    from .post_training.modes import mode_name

    pairs += [(n, getattr(setup, n), getattr(new_setup, n))
              for n in ("seq_len", "global_batch", "lora_rank", "precision", "framework", "moe_dispatcher",
                        "moe_a2a_overlap", "cuda_graphs", "mean_doc_len", "grad_reduce_dtype", "fp8_param_gather")]
    pairs.append(("recompute_modules", _shown(setup.recompute_modules) or "default",
                  _shown(new_setup.recompute_modules) or "default"))
    pairs.insert(6, ("mode", mode_name(setup), mode_name(new_setup)))
    return [InputChange(input=n, before=b, after=a) for n, b, a in pairs if b != a]


def _reasons(cluster: Cluster, new_cluster: Cluster, setup: TrainingSetup, new_setup: TrainingSetup,
             before: Recommendation, after: Recommendation, ratio: float | None,
             time: list[TermDiff], batch_set: bool = True, changes: dict[str, Any] | None = None) -> list[Reason]:
    out: list[Reason] = []
    fits_b, fits_a = bool(before.plans), bool(after.plans)
    if fits_b != fits_a:
        out.append(Reason(rule="now_fits" if fits_a else "no_longer_fits",
                          numbers={"fitting_before": before.fitting, "fitting_after": after.fitting}))
    g0, g1 = cluster.gpu, new_cluster.gpu
    if g0.memory_gib != g1.memory_gib:
        out.append(Reason(rule="gpu_memory", numbers={"before_gib": g0.memory_gib, "after_gib": g1.memory_gib,
                                                      "fitting_before": before.fitting,
                                                      "fitting_after": after.fitting}))
    p0, p1 = g0.peak_tflops(setup.precision), g1.peak_tflops(new_setup.precision)
    if p0 != p1:
        out.append(Reason(rule="peak_tflops", numbers={"before": p0, "after": p1, "ratio": p1 / p0}))
    if g0.hbm_bandwidth_gbs != g1.hbm_bandwidth_gbs:
        out.append(Reason(rule="hbm_bandwidth", numbers={"before_gbs": g0.hbm_bandwidth_gbs,
                                                         "after_gbs": g1.hbm_bandwidth_gbs}))
    if cluster.network.bandwidth_gbs != new_cluster.network.bandwidth_gbs:
        out.append(Reason(rule="network_bandwidth", numbers={"before_gbs": cluster.network.bandwidth_gbs,
                                                             "after_gbs": new_cluster.network.bandwidth_gbs}))
    if cluster.num_gpus != new_cluster.num_gpus and ratio is not None:
        scale = new_cluster.num_gpus / cluster.num_gpus
        out.append(Reason(rule="gpu_count", numbers={"before": cluster.num_gpus, "after": new_cluster.num_gpus,
                                                     "gpu_ratio": scale, "throughput_ratio": ratio,
                                                     "scaling_efficiency": ratio / scale}))
    if setup.seq_len != new_setup.seq_len:
        out.append(Reason(rule="sequence_length", numbers={"before": setup.seq_len, "after": new_setup.seq_len}))
    if setup.global_batch != new_setup.global_batch:
        numbers: dict[str, Any] = {"before": setup.global_batch, "after": new_setup.global_batch}
        if not batch_set and not {"global_batch", "global_batch_tokens"} & set(changes or {}):
            from .post_training.modes import mode_name

            numbers["why"] = f"none was set, so it is mode {mode_name(new_setup)}'s default"
        out.append(Reason(rule="global_batch", numbers=numbers))
    from .post_training.modes import mode_name

    if mode_name(setup) != mode_name(new_setup):
        out.append(Reason(rule="training_mode", numbers={"before": mode_name(setup), "after": mode_name(new_setup)}))
    if before.plans and after.plans:
        changed = knob_changes(before.plans[0].strategy, after.plans[0].strategy)
        if changed:
            out.append(Reason(rule="plan_changed", numbers={c.knob: f"{c.before} -> {c.after}" for c in changed}))
        moved = [t for t in time if t.term != "step_s" and t.delta != 0]
        if moved:
            t = max(moved, key=lambda t: abs(t.delta))
            out.append(Reason(rule="largest_time_change", numbers={"term": t.term, "before_s": t.a, "after_s": t.b,
                                                                   "delta_s": t.delta}))
    return out


def what_if(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, change: dict[str, Any] | str,
            top_k: int = 3, headroom: float = 0.1, profile: CalibrationProfile | None = None,
            batch_set: bool = True, **constraints) -> WhatIf:
    """`batch_set=False`: the setup's batch is the default, not the user's; a change of mode or sequence
    length then takes the new scenario's default batch (apply_changes)."""
    typed = typed_changes(change)
    changes = {name: value for _, name, value in typed}
    new_cluster, new_setup = apply_changes(cluster, setup, changes, batch_set)
    if not _input_changes(cluster, setup, new_cluster, new_setup):
        asked = ", ".join(f"{k}={v}" for k, _, v in typed)
        raise ShardwiseInputError(f"what-if {asked} changes nothing: the scenario already has it; "
                                  f"name a different value")
    # A profile applies only where it was measured (same GPU/precision/framework, same network):
    # each side says in its plans' `calibration` what of it applied.
    before = recommend(model, cluster, setup, top_k=top_k, headroom=headroom, profile=profile, **constraints)
    after = recommend(model, new_cluster, new_setup, top_k=top_k, headroom=headroom, profile=profile, **constraints)
    b, a = (before.plans[0] if before.plans else None), (after.plans[0] if after.plans else None)
    tps_b = b.throughput.tokens_per_s if b else None
    tps_a = a.throughput.tokens_per_s if a else None
    ratio = tps_a / tps_b if (tps_a and tps_b) else None
    per_gpu = (a.throughput.tokens_per_s_per_gpu / b.throughput.tokens_per_s_per_gpu) if (a and b) else None
    time = time_diffs(b, a) if (a and b) else []
    return WhatIf(
        changes=_input_changes(cluster, setup, new_cluster, new_setup), before=before, after=after,
        fits_before=b is not None, fits_after=a is not None, tokens_per_s_before=tps_b, tokens_per_s_after=tps_a,
        throughput_ratio=ratio, tokens_per_s_per_gpu_ratio=per_gpu,
        plan_changes=knob_changes(b.strategy, a.strategy) if (a and b) else [],
        time=time, memory=memory_diffs(b, a) if (a and b) else [],
        reasons=_reasons(cluster, new_cluster, setup, new_setup, before, after, ratio, time, batch_set, changes),
    )
