"""Rules of the device mesh: TP·CP·PP·DP = GPUs, pipeline stages vs layers, node boundaries.

Megatron lays ranks out TP innermost, then CP, then DP, PP outermost
(megatron/core/parallel_state.py, `initialize_model_parallel`), which is why a TP group
larger than a node — or one that does not tile the node — crosses the scale-out network.
"""

from __future__ import annotations

import math

import numpy as np

from ..plans import PlanGrid
from .rule import Plan, Rule, Scenario, divisors, listing


def _gpus(s: Scenario) -> int:
    return s.cluster.num_gpus


# --- TP·CP·PP·DP = GPUs -------------------------------------------------------------------

def _mesh_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return _gpus(s) % (g.tp * g.cp * g.pp) != 0


def _mesh_message(s: Scenario, p: Plan) -> str:
    n, mp = _gpus(s), p.tp * p.cp * p.pp
    text = (f"TP·CP·PP = {p.tp}·{p.cp}·{p.pp} = {mp} does not divide {n:,} GPUs, "
            f"so DP = GPUs / (TP·CP·PP) would not be a whole number")
    if n % (p.tp * p.cp) == 0:
        return text + f"; valid PP with TP={p.tp}, CP={p.cp}: {listing(divisors(n // (p.tp * p.cp)), p.pp)}"
    if n % (p.cp * p.pp) == 0:
        return text + f"; valid TP with CP={p.cp}, PP={p.pp}: {listing(divisors(n // (p.cp * p.pp)), p.tp)}"
    return text + f"; TP·CP·PP must be one of: {listing(divisors(n), mp)}"


TP_CP_PP_DIVIDES_GPUS = Rule("tp_cp_pp_divides_gpus", "error", "layout", _mesh_broken, _mesh_message,
                             short="TP·CP·PP does not divide the GPUs")


# --- pipeline stages vs layers ------------------------------------------------------------

def _stages_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return g.pp * g.vpp > s.model.num_layers


def _stages_message(s: Scenario, p: Plan) -> str:
    layers = s.model.num_layers
    if p.pp > layers:
        valid = [d for d in divisors(_gpus(s)) if d <= layers]
        return (f"PP={p.pp} exceeds the model's {layers} layers, so some stages would hold no layer; "
                f"valid PP: {listing(valid, p.pp)}")
    return (f"PP·VPP = {p.pp}·{p.vpp} = {p.pp * p.vpp} model chunks for {layers} layers leaves chunks empty; "
            f"with PP={p.pp} use VPP ≤ {layers // p.pp}")


PIPELINE_STAGES_LE_LAYERS = Rule("pipeline_stages_le_layers", "error", "layout", _stages_broken, _stages_message,
                                 short="more pipeline stages than layers")


def _vpp_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return (g.vpp > 1) & (g.pp == 1)


VPP_REQUIRES_PP = Rule(
    "vpp_requires_pp", "error", "layout", _vpp_broken,
    lambda s, p: (f"VPP={p.vpp} interleaves virtual stages of a pipeline, but PP=1 has no pipeline; "
                  f"use PP ≥ 2 with VPP={p.vpp}, or VPP=1"),
    short="virtual stages without a pipeline",
)


def _uneven_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    chunks = g.pp * g.vpp
    return (g.pp > 1) & (chunks <= s.model.num_layers) & (s.model.num_layers % chunks != 0)


def heaviest_stage_layers(layers: int, pp: int, vpp: int) -> tuple[int, int]:
    """(layers per chunk, layers on the heaviest rank) when chunks of
    ceil(L/(PP·VPP)) layers are filled in order and rank r holds chunks r, r+PP, … — the
    assignment engine/memory/stages.py models, so the warning quotes the memory model's numbers.
    Rank 0 fills first, so it is the heaviest."""
    chunks = pp * vpp
    chunk = math.ceil(layers / chunks)
    heaviest = sum(min(chunk, max(0, layers - v * pp * chunk)) for v in range(vpp))
    return chunk, heaviest


def _uneven_message(s: Scenario, p: Plan) -> str:
    layers, chunks = s.model.num_layers, p.pp * p.vpp
    chunk, heaviest = heaviest_stage_layers(layers, p.pp, p.vpp)
    even = [d for d in divisors(layers) if d > 1]
    split = f"PP·VPP = {p.pp}·{p.vpp} = {chunks} chunks" if p.vpp > 1 else f"PP = {p.pp} stages"
    unit = "chunk" if p.vpp > 1 else "stage"
    return (f"{layers} layers do not split evenly over {split}: {unit}s of up to {chunk} layers, the heaviest "
            f"stage holds {heaviest} layers vs {layers / p.pp:.2f} on average; the heaviest stage sets "
            f"memory and step time (Megatron and Nanotron allow uneven splits); even splits need "
            f"{'PP·VPP' if p.vpp > 1 else 'PP'} in: {listing(even, chunks)}")


UNEVEN_PIPELINE_SPLIT = Rule("uneven_pipeline_split", "warning", "layout", _uneven_broken, _uneven_message)


# --- node boundaries ----------------------------------------------------------------------

def _tp_node_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    node = s.cluster.gpus_per_node
    return (g.tp > node) | ((node % g.tp != 0) & (_gpus(s) > node))


def _tp_node_message(s: Scenario, p: Plan) -> str:
    c = s.cluster
    why = (f"spans {math.ceil(p.tp / c.gpus_per_node)} nodes" if p.tp > c.gpus_per_node
           else f"does not tile the {c.gpus_per_node}-GPU nodes, so some TP groups straddle two of them")
    inside = [d for d in divisors(c.gpus_per_node)]
    return (f"TP={p.tp} {why}: its per-layer collectives cross the {c.network.name} network "
            f"({c.network.bandwidth_gbs:g} GB/s per GPU instead of {c.gpu.intra_node.bandwidth_gbs:g} GB/s "
            f"inside a node); TP inside one node: {listing(inside, p.tp)}")


TP_CROSSES_NODE = Rule("tp_crosses_node", "warning", "layout", _tp_node_broken, _tp_node_message)


def _partial_node_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return np.full(len(g), _gpus(s) % s.cluster.gpus_per_node != 0)


def _partial_node_message(s: Scenario, p: Plan) -> str:
    n, node = _gpus(s), s.cluster.gpus_per_node
    full, rest = n // node, n % node
    return (f"{n:,} GPUs are {full} full {'node' if full == 1 else 'nodes'} of {node} plus {rest} "
            f"{'GPU' if rest == 1 else 'GPUs'}: allowed, but groups that span the partial node use the scale-out "
            f"network")


GPUS_NOT_MULTIPLE_OF_NODE = Rule("gpus_not_multiple_of_node", "warning", "layout", _partial_node_broken,
                                 _partial_node_message)
