"""Rules for mixture-of-experts layers: EP and ETP, and the expert mesh.

Expert layers reuse the same GPUs with their own layout (Megatron-core "MoE parallel
folding", parallel_state.initialize_model_parallel): EP·ETP·expert-DP·PP = GPUs, beside
the dense layers' TP·CP·DP·PP = GPUs. Both must tile the world, so a plan needs a
multiple of PP·lcm(TP·CP, EP·ETP) GPUs — PP·max(TP·CP, EP·ETP) for powers of two.
"""

from __future__ import annotations

import math

import numpy as np

from ..performance.ep import overlap_allowed  # the time model's own conditions, so warning and numbers agree
from ..plans import RECOMPUTE_FULL, PlanGrid
from ..setting_text import SettingsText, settings_text
from .rule import Plan, Rule, Scenario, divisors, listing


def _dense_ep_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return np.zeros(len(g), dtype=bool) if s.model.is_moe else (g.ep > 1) | (g.etp > 1)


EXPERT_PARALLEL_REQUIRES_MOE = Rule(
    "expert_parallel_requires_moe", "error", "layout", _dense_ep_broken,
    lambda s, p: (f"EP={p.ep}, ETP={p.etp} shard experts, but {s.model.name} is a dense model with no experts; "
                  f"valid: EP=1, ETP=1"),
    short="expert parallelism on a model with no experts",
)


def _ep_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if s.model.moe is None:
        return np.zeros(len(g), dtype=bool)
    return s.model.moe.num_experts % g.ep != 0


def _ep_message(s: Scenario, p: Plan) -> str:
    experts = s.model.moe.num_experts
    valid = [e for e in divisors(experts) if e <= s.cluster.num_gpus]
    return f"EP={p.ep} does not divide {experts} routed experts; valid EP: {listing(valid, p.ep)}"


EP_DIVIDES_EXPERTS = Rule("ep_divides_experts", "error", "layout", _ep_broken, _ep_message,
                          short="EP does not divide the experts")


def _etp_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if s.model.moe is None:
        return np.zeros(len(g), dtype=bool)
    return s.model.moe.expert_ffn_hidden_size % g.etp != 0


def _etp_message(s: Scenario, p: Plan) -> str:
    width = s.model.moe.expert_ffn_hidden_size
    valid = [t for t in divisors(width) if t <= s.cluster.gpus_per_node]
    return f"ETP={p.etp} does not divide the expert FFN width {width:,}; valid ETP: {listing(valid, p.etp)}"


ETP_DIVIDES_EXPERT_FFN = Rule("etp_divides_expert_ffn", "error", "layout", _etp_broken, _etp_message,
                              short="expert-TP does not divide the expert FFN")


def _mesh_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if s.model.moe is None:
        return np.zeros(len(g), dtype=bool)
    return s.cluster.num_gpus % (g.ep * g.etp * g.pp) != 0


def _mesh_message(s: Scenario, p: Plan) -> str:
    n, experts = s.cluster.num_gpus, s.model.moe.num_experts
    need = p.pp * math.lcm(p.tp * p.cp, p.ep * p.etp)
    valid = [e for e in divisors(experts) if n % (e * p.etp * p.pp) == 0]
    return (f"expert layers need EP·ETP·expert-DP·PP = GPUs, but EP·ETP·PP = {p.ep}·{p.etp}·{p.pp} = "
            f"{p.ep * p.etp * p.pp} does not divide {n:,} GPUs; this plan needs a multiple of "
            f"PP·lcm(TP·CP, EP·ETP) = {need:,} GPUs; valid EP with ETP={p.etp}, PP={p.pp}: {listing(valid, p.ep)}")


EXPERT_MESH_DIVIDES_GPUS = Rule("expert_mesh_divides_gpus", "error", "layout", _mesh_broken, _mesh_message,
                                short="the expert mesh does not divide the GPUs")


def _moe_sp_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    if s.model.moe is None or s.setup.framework != "megatron":
        return np.zeros(len(g), dtype=bool)
    return (g.ep > 1) & (g.tp > 1) & ~g.sp


MOE_TP_EP_WITHOUT_SP = Rule(
    "moe_tp_ep_without_sp", "warning", "options", _moe_sp_broken,
    lambda s, p: (f"EP={p.ep} with TP={p.tp} but sequence parallelism off: Megatron-core warns that SP must be "
                  f"used with expert and tensor parallelism (ModelParallelConfig); turn SP on"),
)


# Cross-node expert all-to-all: how the engine prices it (engine/performance/ep.py) follows the
# dispatcher the user runs (--moe-dispatcher): Megatron-core's default alltoall sends every routed copy
# of a token in BF16; DeepEP (flex dispatcher) sends one copy per destination node, FP8 when training in
# FP8, under node-limited routing; EP-A2A overlap (--moe-a2a-overlap) hides it where Megatron-Core allows.
# Of the four H100 calibration runs with EP across nodes, the two priced as alltoall without overlap
# measured 18-29 % more throughput than predicted; the one that ran HybridEP (priced as DeepEP) 9 % less,
# the one with EP-A2A overlap 22 % less (data/bridge_moe_recipes.csv). DeepEP pricing is first-principles.
# Said on every multi-node MoE plan, because the pricing also decides whether the search puts EP across
# nodes at all.
def _moe_multi_node(s: Scenario, g: PlanGrid) -> np.ndarray:
    multi_node = s.model.moe is not None and s.cluster.num_gpus > s.cluster.gpus_per_node
    return np.full(len(g), multi_node, dtype=bool)


def _a2a_message(s: Scenario, p: Plan) -> SettingsText:
    d = s.setup.moe_dispatcher
    if d == "deepep":
        pricing = ("priced as DeepEP (one copy per destination node, then NVLink; node-limited routing; FP8 dispatch "
                   "when training in FP8) — first-principles; the Megatron-Bridge rows that ran HybridEP are "
                   "scored this way (docs/performance.md)")
    elif d == "allgather":
        pricing = "priced as Megatron's allgather dispatcher (every rank gathers the whole EP group's tokens, BF16)"
    else:
        who = "Megatron's default alltoall dispatcher" if s.setup.framework == "megatron" else "an all-to-all"
        pricing = (f"priced as {who} (BF16, every routed copy sent); if you run "
                   "DeepEP, pass {moe_dispatcher} deepep, which sends far less across nodes")
    if s.setup.framework != "megatron":
        # moe_a2a_overlap is Megatron-Core's alone (training.py MEGATRON_ONLY_OPTIONS refuses it elsewhere): the
        # hint to pass it told an fsdp/deepspeed user to set an option the scenario then refused.
        overlap = "; not overlapped"
    elif not s.setup.moe_a2a_overlap:
        overlap = "; not overlapped (pass {moe_a2a_overlap} if you run --overlap-moe-expert-parallel-comm)"
    elif _overlap_blockers(s, p):  # asked for, but this plan cannot: said, not "overlapped" (the time has none)
        overlap = "; not overlapped in this plan although {moe_a2a_overlap} is set (moe_a2a_overlap_not_applied)"
    else:
        overlap = "; overlapped with the other micro-batch (Megatron-Core --overlap-moe-expert-parallel-comm)"
    if p.ep * p.etp > s.cluster.gpus_per_node:
        text = (f"EP={p.ep} spans nodes: its all-to-all is {pricing}{overlap} (H100 calibration runs "
                f"with cross-node EP measured 18-29 % more throughput than the alltoall pricing predicts, 9 % less "
                f"than the DeepEP pricing, 22 % less than the alltoall pricing with overlap)")
    else:
        text = (f"EP={p.ep} stays inside a node; expert parallelism across nodes is {pricing}{overlap} — "
                f"compare plans with EP across nodes under the dispatcher you run")
    return settings_text(text, "moe_dispatcher", "moe_a2a_overlap")  # {…} only where a hint names them


EXPERT_ALL_TO_ALL_PRICING = Rule("expert_all_to_all_pricing", "warning", "layout", _moe_multi_node, _a2a_message)


# --moe-a2a-overlap asked for on a plan Megatron-Core cannot overlap (TransformerConfig: EP > 1, not the
# allgather dispatcher, no full recompute, VPP > 1 with PP; performance/ep.py `overlap_allowed`): the time model
# and the Megatron-LM export leave the overlap out, so the plan says why instead of silently dropping it.
def _overlap_dropped(s: Scenario, g: PlanGrid) -> np.ndarray:
    if not (s.model.is_moe and s.setup.moe_a2a_overlap):
        return np.zeros(len(g), dtype=bool)
    return ~overlap_allowed(s.setup, g)


def _overlap_blockers(s: Scenario, p: Plan) -> list[str]:
    blockers = []
    if s.setup.moe_dispatcher == "allgather":
        blockers.append("the allgather dispatcher (alltoall or deepep only)")
    if p.ep == 1:
        blockers.append("EP=1 (no expert all-to-all to hide)")
    if p.recompute == RECOMPUTE_FULL:
        blockers.append("full recompute")
    if p.pp > 1 and p.vpp == 1:
        blockers.append(f"PP={p.pp} without VPP (needs VPP > 1 with PP)")
    return blockers


def _overlap_dropped_message(s: Scenario, p: Plan) -> SettingsText:
    return settings_text("{moe_a2a_overlap} is set, but this plan cannot overlap the expert all-to-all: "
                         + "; ".join(_overlap_blockers(s, p))
                         + " (Megatron-Core's conditions for --overlap-moe-expert-parallel-comm); it is predicted "
                           "and exported without the overlap", "moe_a2a_overlap")


MOE_A2A_OVERLAP_NOT_APPLIED = Rule("moe_a2a_overlap_not_applied", "warning", "options", _overlap_dropped,
                                   _overlap_dropped_message)
