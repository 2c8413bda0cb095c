"""Expert-parallel token dispatch and combine, per MoE layer and micro-batch, as each of
Megatron-Core's dispatchers moves the tokens (--moe-token-dispatcher-type):

* alltoall (default; GShard, Lepikhin et al. 2020): every (token, expert) pair is one BF16 copy of
  the hidden state, (b·s/cp/tp)·top_k·h elements per rank each way, on-node share over NVLink,
  off-node share through the rank's NIC (collectives.all_to_all_time).
* allgather: every rank all-gathers the whole EP group's tokens (BF16) and keeps those of its local
  experts; the combine is the matching reduce-scatter — ring collectives over the EP group, whatever
  top_k is (Megatron-Core MoEAllGatherTokenDispatcher).
* deepep (flex dispatcher with DeepEP; DeepSeek-V3 report sec. 3.2.2, DeepEP "normal" kernels): a
  token crosses the network once per destination node (to the same-index GPU there), which forwards
  it over NVLink to the GPUs holding its experts; network and NVLink stages are pipelined, so the
  slower sets the time. Node-limited routing bounds the nodes reached (moe_routing.py). Training in
  FP8, the forward dispatch and the backward of the combine send FP8 with 1x128 scales; the forward
  combine and the backward of the dispatch stay BF16 (assumptions/moe.py).

Forward: dispatch + combine; backward: the two again; full recompute repeats the forward pair.

Overlap (--moe-a2a-overlap = Megatron-Core's --overlap-moe-expert-parallel-comm): in the merged
1F1B schedule a micro-batch's dispatch/combine runs while the other micro-batch's layer computes,
so per layer the exposed time is max(comm − window, 0), window = that layer's compute; and while
they overlap, the communication kernels hold EP_COMM_SMS of the GPU's SMs, slowing the compute
beside them by that share: + min(comm, window)·EP_COMM_SMS/SMs. Megatron-Core allows it only with
EP > 1, the alltoall or flex dispatcher, no full recompute, and VPP > 1 when PP > 1
(TransformerConfig checks); other plans get no overlap.
"""

from __future__ import annotations

import numpy as np

from ..assumptions import moe as a
from ..assumptions.compute import ACTIVATION_BYTES, gpu_generation
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..plans import RECOMPUTE_FULL, PlanGrid
from ..training import TrainingSetup
from .collectives import all_gather_time, all_to_all_time, reduce_scatter_time
from .moe_routing import units_reached
from .topology import GroupLinks, ep_group

ALL_TO_ALLS_FWD = 2  # dispatch + combine
ALL_TO_ALLS_BWD = 2


def _passes(grid: PlanGrid) -> np.ndarray:
    """Dispatch/combine passes per MoE layer and micro-batch: 2 forward, 2 backward, +2 under full recompute."""
    return ALL_TO_ALLS_FWD + ALL_TO_ALLS_BWD + np.where(grid.recompute == RECOMPUTE_FULL, ALL_TO_ALLS_FWD, 0)


def alltoall_time(model: ModelSpec, grid: PlanGrid, tokens: np.ndarray, links: GroupLinks) -> np.ndarray:
    nbytes = tokens / grid.tp * model.moe.top_k * model.hidden_size * ACTIVATION_BYTES
    return _passes(grid) * all_to_all_time(nbytes, links)


def allgather_time(model: ModelSpec, grid: PlanGrid, tokens: np.ndarray, links: GroupLinks) -> np.ndarray:
    """All-gather of the EP group's tokens (the full buffer is EP × the rank's share) and its reduce-scatter."""
    full = grid.ep * tokens / grid.tp * model.hidden_size * ACTIVATION_BYTES
    per_pair = all_gather_time(full, links) + reduce_scatter_time(full, links)
    return per_pair * _passes(grid) / 2


def deepep_pass_bytes(model: ModelSpec, grid: PlanGrid, tokens: np.ndarray, links: GroupLinks,
                      bytes_per_element: float) -> tuple[np.ndarray, np.ndarray]:
    """(network bytes, NVLink bytes) one rank sends in one dispatch (or receives in one combine).

    A token reaches D distinct nodes of the N the EP group spans; its own node is among them with
    probability 1/N of each, so D·(N−1)/N copies leave through the NIC. Inside the destination
    nodes it is forwarded to the R distinct EP ranks holding its experts, all but 1/m of them a
    different GPU than the receiving one (m = EP ranks per node)."""
    moe = model.moe
    per_node = np.maximum(links.members_per_node, 1).astype(float)
    nodes = np.ceil(grid.ep / per_node)
    node_copies = units_reached(moe, nodes) * (nodes - 1) / nodes
    rank_copies = units_reached(moe, grid.ep.astype(float)) * (per_node - 1) / per_node
    element = tokens / grid.tp * model.hidden_size * bytes_per_element
    return element * node_copies, element * rank_copies


def deepep_time(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid, tokens: np.ndarray,
                links: GroupLinks) -> np.ndarray:
    def one(bytes_per_element: float) -> np.ndarray:
        net, nvl = deepep_pass_bytes(model, grid, tokens, links, bytes_per_element)
        t = links.latency + np.maximum(net / links.nic_bandwidth, nvl / links.intra_bandwidth)
        return np.where(grid.ep > 1, t, 0.0)

    low = a.FP8_DISPATCH_BYTES_PER_ELEMENT if setup.precision == "fp8" else a.BF16_BYTES
    full = grid.recompute == RECOMPUTE_FULL
    fp8_passes = a.FP8_PASSES_PER_LAYER + np.where(full, 1, 0)  # recompute repeats the forward dispatch
    bf16_passes = a.BF16_PASSES_PER_LAYER + np.where(full, 1, 0)  # … and the forward combine
    return fp8_passes * one(low) + bf16_passes * one(a.BF16_BYTES)


def overlap_allowed(setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    """Megatron-Core's conditions for --overlap-moe-expert-parallel-comm (TransformerConfig)."""
    if not setup.moe_a2a_overlap or setup.moe_dispatcher == "allgather":
        return np.zeros(len(grid), dtype=bool)
    return (grid.ep > 1) & (grid.recompute != RECOMPUTE_FULL) & ((grid.pp == 1) | (grid.vpp > 1))


def exposed_after_overlap(comm: np.ndarray, window: np.ndarray, sms: int) -> np.ndarray:
    """Communication hidden behind `window` seconds of the other micro-batch's compute, plus the
    SMs it takes from that compute while both run."""
    hidden = np.minimum(comm, window)
    return comm - hidden + hidden * a.EP_COMM_SMS / sms


def ep_time_per_moe_layer(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid,
                          tokens: np.ndarray, assume: PerformanceAssumptions,
                          moe_layer_compute: np.ndarray | None = None) -> np.ndarray:
    """Exposed seconds of one MoE layer's dispatch and combine per micro-batch (forward + backward)."""
    if model.moe is None:
        return np.zeros(len(grid))
    links = ep_group(cluster, grid, assume)
    if setup.moe_dispatcher == "deepep":
        comm = deepep_time(model, setup, grid, tokens, links)
    elif setup.moe_dispatcher == "allgather":
        comm = allgather_time(model, grid, tokens, links)
    else:
        comm = alltoall_time(model, grid, tokens, links)
    comm = (1.0 - assume.ep_overlap) * comm
    if moe_layer_compute is None:
        return comm
    sms = a.SMS_BY_GENERATION.get(gpu_generation(cluster.gpu), a.DEFAULT_SMS)
    return np.where(overlap_allowed(setup, grid), exposed_after_overlap(comm, moe_layer_compute, sms), comm)
