"""What each framework flavour can run, as data, and the rules that follow from it.

Sources (read in the installed packages):
- Megatron-core 0.16: distributed optimizer (ZeRO-1), Megatron-FSDP `optim_grads` /
  `optim_grads_params` (ZeRO-2/3, megatron/core/distributed/distributed_data_parallel_config.py);
  interleaved 1F1B needs micro-batches in groups of PP (pipeline_parallel/schedules.py,
  `microbatch_group_size_per_vp_stage` defaults to PP); KV groups may be a divisor of TP.
- DeepSpeed: "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"
  (deepspeed/runtime/pipe/engine.py); its pipeline has no interleaved schedule; its CP is
  Ulysses, an all-to-all over attention heads; expert tensor slicing uses the TP group.
- PyTorch FSDP2 / torchtitan 0.2.2: fully_shard (ZeRO-3), reshard_after_forward=False
  (ZeRO-2), replicate/DDP (ZeRO-0), no optimizer-only sharding, so ZeRO-1 runs as ZeRO-2
  (engine/memory/layouts.py models it so); "Currently we only support
  ETP=TP or ETP=1" (torchtitan/distributed/parallel_dims.py); interleaved schedules from
  torch.distributed.pipelining.
- nanotron (huggingface/nanotron main): ZeroDistributedOptimizer is ZeRO-1 and any zero_stage > 0
  builds it (helpers.py `if optimizer_args.zero_stage > 0`), so 2/3 are not offered; pipeline
  engines "1f1b" and "afab" (no interleaving); attention asserts num_key_value_heads % TP == 0
  (models/llama.py), so no KV replication; no expert tensor parallelism of its own (export refuses EP).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..plans import PlanGrid
from .rule import Plan, Rule, Scenario, listing


@dataclass(frozen=True)
class FrameworkCapabilities:
    zero_stages: tuple[int, ...]
    zero_stages_with_pp: tuple[int, ...]
    interleaved_pp: bool
    interleaved_needs_pp_microbatch_groups: bool
    expert_tp_is_1_or_tp: bool
    cp_is_ulysses: bool  # all-to-all over heads instead of a K/V ring
    replicates_kv_heads: bool  # TP may exceed the KV heads
    zero_names: dict[int, str]
    zero_aliases: dict[int, int] = field(default_factory=dict)  # accepted stage -> the stage it runs as
    fp8: bool = True  # an FP8 training recipe exists
    adapters: bool = True  # LoRA/QLoRA fine-tuning exists
    expert_parallel: bool = True  # EP > 1 possible
    mla: bool = True  # multi-head latent attention models exist

    @property
    def distinct_zero_stages(self) -> tuple[int, ...]:
        """The stages worth searching: aliases run as another stage."""
        return tuple(z for z in self.zero_stages if z not in self.zero_aliases)


CAPABILITIES: dict[str, FrameworkCapabilities] = {
    "megatron": FrameworkCapabilities(
        zero_stages=(0, 1, 2, 3), zero_stages_with_pp=(0, 1, 2, 3), interleaved_pp=True,
        interleaved_needs_pp_microbatch_groups=True, expert_tp_is_1_or_tp=False, cp_is_ulysses=False,
        replicates_kv_heads=True,
        zero_names={0: "DDP", 1: "distributed optimizer", 2: "Megatron-FSDP optim_grads",
                    3: "Megatron-FSDP optim_grads_params"},
    ),
    "deepspeed": FrameworkCapabilities(
        zero_stages=(0, 1, 2, 3), zero_stages_with_pp=(0, 1), interleaved_pp=False,
        interleaved_needs_pp_microbatch_groups=False, expert_tp_is_1_or_tp=True, cp_is_ulysses=True,
        replicates_kv_heads=False,
        zero_names={0: "ZeRO-0", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3"},
    ),
    "fsdp": FrameworkCapabilities(
        zero_stages=(0, 1, 2, 3), zero_stages_with_pp=(0, 1, 2, 3), interleaved_pp=True,
        interleaved_needs_pp_microbatch_groups=False, expert_tp_is_1_or_tp=True, cp_is_ulysses=False,
        replicates_kv_heads=False,
        zero_names={0: "replicate (DDP)", 1: "runs as 2", 2: "fully_shard, reshard_after_forward=False",
                    3: "fully_shard (FULL_SHARD)"},
        zero_aliases={1: 2},
    ),
    "nanotron": FrameworkCapabilities(
        zero_stages=(0, 1), zero_stages_with_pp=(0, 1), interleaved_pp=False,
        interleaved_needs_pp_microbatch_groups=False, expert_tp_is_1_or_tp=True, cp_is_ulysses=False,
        replicates_kv_heads=False,
        zero_names={0: "DDP", 1: "ZeroDistributedOptimizer (ZeRO-1)"},
        # Its config has no FP8 recipe, no adapters and no MLA model; ParallelContext asserts
        # TP·CP·DP·PP = world size, so EP must be 1 (engine/export/nanotron.py refuses the same).
        fp8=False, adapters=False, expert_parallel=False, mla=False,
    ),
}


def capabilities(framework: str) -> FrameworkCapabilities:
    return CAPABILITIES[framework]


def _caps(s: Scenario) -> FrameworkCapabilities:
    return capabilities(s.setup.framework)


def _none(g: PlanGrid) -> np.ndarray:
    return np.zeros(len(g), dtype=bool)


# --- ZeRO stages --------------------------------------------------------------------------

def _zero_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return ~np.isin(g.zero_stage, _caps(s).zero_stages)


def _zero_message(s: Scenario, p: Plan) -> str:
    caps = _caps(s)
    offered = "; ".join(f"{z} = {caps.zero_names[z]}" for z in caps.zero_stages)
    return (f"ZeRO stage {p.zero_stage} is not available with {s.setup.framework} (it offers {offered}); "
            f"valid ZeRO: {listing(list(caps.zero_stages))}")


FRAMEWORK_SUPPORTS_ZERO = Rule("framework_supports_zero", "error", "options", _zero_broken, _zero_message,
                               short="a ZeRO stage the framework lacks")


def _alias_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    aliases = list(_caps(s).zero_aliases)
    return np.isin(g.zero_stage, aliases) if aliases else _none(g)


ZERO_STAGE_ALIAS = Rule(
    "zero_stage_alias", "warning", "options", _alias_broken,
    lambda s, p: (f"{s.setup.framework} has no ZeRO-{p.zero_stage} of its own: it runs as ZeRO-"
                  f"{_caps(s).zero_aliases[p.zero_stage]} ({_caps(s).zero_names[_caps(s).zero_aliases[p.zero_stage]]}), "
                  f"and is predicted as such"),
)


def _setup_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    caps = _caps(s)
    unsupported = ((s.setup.precision == "fp8" and not caps.fp8)
                   or (s.setup.mode != "full" and not caps.adapters)
                   or (s.model.mla is not None and not caps.mla))
    return np.full(len(g), unsupported)


def _setup_message(s: Scenario, p: Plan) -> str:
    caps, fw = _caps(s), s.setup.framework
    if s.setup.precision == "fp8" and not caps.fp8:
        return f"{fw} has no FP8 training recipe; valid precision with {fw}: bf16 (or another framework for fp8)"
    if s.model.mla is not None and not caps.mla:
        return (f"{fw} has no multi-head latent attention (MLA) model, which {s.model.name} uses; valid "
                f"frameworks for it: megatron, fsdp, deepspeed")
    mode = {"lora": "LoRA", "qlora": "QLoRA"}.get(s.setup.mode, s.setup.mode)
    return (f"{fw} trains no {mode} adapters; valid mode with {fw}: full "
            f"(or another framework for {s.setup.mode})")


# Reads no plan knob: checked first, so a setup the framework cannot run is reported as such for every plan.
FRAMEWORK_SUPPORTS_SETUP = Rule("framework_supports_setup", "error", "layout", _setup_broken, _setup_message,
                                short="a setup the framework cannot train")


def _pp_zero_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    allowed = _caps(s).zero_stages_with_pp
    return (g.pp > 1) & ~np.isin(g.zero_stage, allowed) & np.isin(g.zero_stage, _caps(s).zero_stages)


PIPELINE_ZERO_STAGE = Rule(
    "pipeline_zero_stage", "error", "options", _pp_zero_broken,
    lambda s, p: (f"{s.setup.framework}'s pipeline engine rejects ZeRO-{p.zero_stage} with PP={p.pp} "
                  f"(ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism); valid ZeRO with PP>1: "
                  f"{listing(list(_caps(s).zero_stages_with_pp))}, or PP=1"),
    short="a ZeRO stage the pipeline engine rejects",
)


# --- pipeline schedule, expert TP, Ulysses ------------------------------------------------

def _vpp_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return _none(g) if _caps(s).interleaved_pp else g.vpp > 1


FRAMEWORK_SUPPORTS_VPP = Rule(
    "framework_supports_vpp", "error", "layout", _vpp_broken,
    lambda s, p: (f"{s.setup.framework} has no interleaved pipeline schedule, so VPP={p.vpp} is unavailable; "
                  f"valid VPP: 1 (megatron and fsdp support VPP > 1)"),
    short="virtual pipeline stages the framework lacks",
)


def _etp_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if not _caps(s).expert_tp_is_1_or_tp or not s.model.is_moe:
        return _none(g)
    return (g.etp != 1) & (g.etp != g.tp)


FRAMEWORK_SUPPORTS_ETP = Rule(
    "framework_supports_etp", "error", "layout", _etp_broken,
    lambda s, p: (f"{s.setup.framework} shards experts either not at all or over the TP group, so ETP={p.etp} "
                  f"with TP={p.tp} is unavailable; valid ETP: 1, {p.tp}"),
    short="expert-TP the framework lacks",
)


def _ep_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return _none(g) if _caps(s).expert_parallel else g.ep > 1


FRAMEWORK_SUPPORTS_EP = Rule(
    "framework_supports_ep", "error", "layout", _ep_broken,
    lambda s, p: (f"{s.setup.framework} cannot run expert parallelism (EP={p.ep}): its ParallelContext requires "
                  f"TP·CP·DP·PP = world size; valid EP: 1"),
    short="expert parallelism the framework lacks",
)


def _ulysses_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if not _caps(s).cp_is_ulysses:
        return _none(g)
    return (g.cp > 1) & (s.model.num_attention_heads % (g.tp * g.cp) != 0)


def _ulysses_message(s: Scenario, p: Plan) -> str:
    heads = s.model.num_attention_heads
    valid = [c for c in range(1, heads // p.tp + 1) if heads % (p.tp * c) == 0] if heads % p.tp == 0 else [1]
    return (f"DeepSpeed's context parallelism (Ulysses) splits the {heads} attention heads over TP·CP = "
            f"{p.tp}·{p.cp} = {p.tp * p.cp} ranks, which does not divide them; valid CP with TP={p.tp}: "
            f"{listing(valid, p.cp)}")


ULYSSES_DIVIDES_HEADS = Rule("ulysses_divides_heads", "error", "layout", _ulysses_broken, _ulysses_message,
                             short="Ulysses CP does not divide the heads")


# --- ZeRO that shards nothing, HSDP -------------------------------------------------------

def _zero_useless_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    # ZeRO shards over the data-parallel ranks that hold the same weights: DP·CP for dense
    # weights (Megatron's dp-cp group, torchtitan's fsdp mesh), expert-DP for experts.
    useless = (g.zero_stage > 0) & (g.dp * g.cp == 1)
    if s.model.is_moe:
        useless &= g.expert_dp == 1
    return useless


ZERO_WITHOUT_DP = Rule(
    "zero_without_dp", "warning", "options", _zero_useless_broken,
    lambda s, p: (f"ZeRO-{p.zero_stage} shards over data-parallel ranks, but DP·CP = {p.dp}·{p.cp} = 1: it shards "
                  f"nothing and changes nothing; ZeRO-0 is equivalent"),
    short="ZeRO with nothing to shard over (DP·CP = 1)",
)


def _hsdp_divides_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return (g.hsdp_replicas > 1) & (g.dp % g.hsdp_replicas != 0)


HSDP_DIVIDES_DP = Rule(
    "hsdp_divides_dp", "error", "options", _hsdp_divides_broken,
    lambda s, p: (f"HSDP with {p.hsdp_replicas} replicas needs them to divide DP={p.dp}; valid replicas: "
                  f"{listing([r for r in range(1, p.dp + 1) if p.dp % r == 0], p.hsdp_replicas)}"),
    short="HSDP replicas do not divide DP",
)


def _hsdp_sharding_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return (g.hsdp_replicas > 1) & (g.zero_stage < 2)


HSDP_REQUIRES_SHARDING = Rule(
    "hsdp_requires_sharding", "error", "options", _hsdp_sharding_broken,
    lambda s, p: (f"HSDP shards parameters within a replica and replicates across {p.hsdp_replicas}, which needs "
                  f"ZeRO-2 or ZeRO-3 (FSDP), not ZeRO-{p.zero_stage}; valid: ZeRO 2, 3, or 1 replica"),
    short="HSDP without ZeRO-2/3 sharding",
)


def _fp8_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return np.full(len(g), s.setup.precision == "fp8" and s.cluster.gpu.fp8_tflops is None)


FP8_UNSUPPORTED = Rule(
    "fp8_unsupported", "warning", "options", _fp8_broken,
    lambda s, p: (f"{s.cluster.gpu.name} has no FP8 tensor cores: FP8 would run at BF16 speed; valid precision "
                  f"for a speed-up: bf16 here, fp8 on H100/H200/B200/MI300X-class GPUs"),
)
