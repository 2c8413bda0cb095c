"""Rules from the model's shapes: what TP, CP and SP must divide.

Megatron-core checks heads and KV groups against TP in TransformerConfig.__post_init__,
and ColumnParallelLinear/RowParallelLinear split the FFN width with `divide()`, which
asserts divisibility (megatron/core/tensor_parallel/layers.py).
"""

from __future__ import annotations

import numpy as np

from ..plans import PlanGrid
from .rule import Plan, Rule, Scenario, divisors, listing


def _valid_tp(s: Scenario, ok) -> list[int]:
    return [t for t in divisors(s.cluster.num_gpus) if ok(t)]


# --- attention heads ----------------------------------------------------------------------

def _heads_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return s.model.num_attention_heads % g.tp != 0


def _heads_message(s: Scenario, p: Plan) -> str:
    heads = s.model.num_attention_heads
    valid = [t for t in divisors(heads) if t <= s.cluster.num_gpus]
    return f"TP={p.tp} does not divide {heads} attention heads; valid TP: {listing(valid, p.tp)}"


TP_DIVIDES_HEADS = Rule("tp_divides_heads", "error", "layout", _heads_broken, _heads_message,
                        short="TP does not divide the attention heads")


def _kv_replication_allowed(s: Scenario) -> bool:
    """Megatron-core 0.16 accepts TP a multiple of the KV groups and replicates them
    (TransformerConfig: 'num_query_groups must be a multiple or divisor of TP')."""
    from .frameworks import capabilities

    return capabilities(s.setup.framework).replicates_kv_heads


def _kv_ok(s: Scenario, tp):
    kv = s.model.kv_heads
    ok = kv % tp == 0
    if _kv_replication_allowed(s):
        ok = ok | (tp % kv == 0)
    return ok


def _kv_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return ~_kv_ok(s, g.tp)


def _kv_message(s: Scenario, p: Plan) -> str:
    kv, heads = s.model.kv_heads, s.model.num_attention_heads
    valid = [t for t in divisors(heads) if t <= s.cluster.num_gpus and _kv_ok(s, t)]
    rule = ("divide, or be a multiple of," if _kv_replication_allowed(s) else "divide")
    return f"TP={p.tp} does not {rule} {kv} KV heads ({s.setup.framework}); valid TP: {listing(valid, p.tp)}"


TP_DIVIDES_KV_HEADS = Rule("tp_divides_kv_heads", "error", "layout", _kv_broken, _kv_message,
                           short="TP does not divide the KV heads")


def _kv_replicated_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    kv = s.model.kv_heads
    return (g.tp > kv) & (g.tp % kv == 0) & (s.model.num_attention_heads % g.tp == 0) & _kv_replication_allowed(s)


KV_HEADS_REPLICATED = Rule(
    "kv_heads_replicated", "warning", "layout", _kv_replicated_broken,
    lambda s, p: (f"TP={p.tp} exceeds the {s.model.kv_heads} KV heads: each KV head is replicated on "
                  f"{p.tp // s.model.kv_heads} TP ranks (more K/V weights and activations per GPU); "
                  f"TP ≤ {s.model.kv_heads} shards them"),
)


# --- FFN width ----------------------------------------------------------------------------

def _tp_sharded_ffn_widths(s: Scenario) -> list[int]:
    """FFN widths split by TP: the dense MLP, and the shared experts (TP-sharded in Megatron)."""
    m = s.model
    widths = [m.ffn_hidden_size] if m.num_dense_layers > 0 else []
    if m.moe is not None and m.moe.num_shared_experts:
        widths.append(m.moe.shared_ffn * m.moe.num_shared_experts)
    return widths


def _ffn_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    broken = np.zeros(len(g), dtype=bool)
    for width in _tp_sharded_ffn_widths(s):
        broken |= width % g.tp != 0
    return broken


def _ffn_message(s: Scenario, p: Plan) -> str:
    widths = _tp_sharded_ffn_widths(s)
    bad = [w for w in widths if w % p.tp]
    valid = _valid_tp(s, lambda t: all(w % t == 0 for w in widths))
    return f"TP={p.tp} does not divide the FFN width {bad[0]:,}; valid TP: {listing(valid, p.tp)}"


TP_DIVIDES_FFN = Rule("tp_divides_ffn", "error", "layout", _ffn_broken, _ffn_message,
                      short="TP does not divide the FFN width")


# --- sequence: CP and SP ------------------------------------------------------------------

def _cp_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    # Load-balanced causal ring attention cuts the sequence into 2·CP chunks
    # (Megatron-core context parallelism; torchtitan's ring attention does the same).
    return (g.cp > 1) & (s.setup.seq_len % (2 * g.cp) != 0)


def _cp_message(s: Scenario, p: Plan) -> str:
    seq = s.setup.seq_len
    valid = [c for c in divisors(s.cluster.num_gpus) if c == 1 or seq % (2 * c) == 0]
    return (f"sequence length {seq:,} is not divisible by 2·CP = {2 * p.cp} (causal load balancing gives each "
            f"CP rank two chunks); valid CP: {listing(valid, p.cp)}")


CP_DIVIDES_SEQ = Rule("cp_divides_seq", "error", "layout", _cp_broken, _cp_message,
                      short="CP does not divide the sequence")


def _sp_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    return g.sp & (s.setup.seq_len % (g.cp * g.tp) != 0)


def _sp_message(s: Scenario, p: Plan) -> str:
    seq = s.setup.seq_len
    valid = [t for t in divisors(s.cluster.num_gpus) if seq % (p.cp * t) == 0]
    return (f"with sequence parallelism each TP rank holds seq/(CP·TP) tokens, but {seq:,}/({p.cp}·{p.tp}) is not "
            f"whole; valid TP with CP={p.cp}: {listing(valid, p.tp)}, or turn SP off")


SP_DIVIDES_SEQ = Rule("sp_divides_seq", "error", "options", _sp_broken, _sp_message,
                      short="sequence parallelism: TP does not divide the sequence")


# --- sequence: the model's context ---------------------------------------------------------

def _past_context_broken(s: Scenario, g: PlanGrid) -> np.ndarray:
    # Not an error: memory and time at the length given are what the engine predicts, and long-context
    # training past the original window is a real workload. The user must know the model was not trained there.
    context = s.model.max_position_embeddings
    return np.full(len(g), bool(context) and s.setup.seq_len > context, dtype=bool)


def _past_context_message(s: Scenario, p: Plan) -> str:
    m, seq = s.model, s.setup.seq_len
    if m.learned_position_embeddings:
        how = (f"its learned position table has {m.learned_position_embeddings:,} rows and none past them, so the run "
               f"needs a longer table (its extra rows are not counted here)")
    else:
        how = ("positions past it were never trained (RoPE models extend them with scaling such as YaRN and "
               "long-context data; ALiBi extrapolates but was not trained there); memory and time here are for the "
               "length given")
    return (f"sequence length {seq:,} is longer than the {m.max_position_embeddings:,}-token context {m.name} was "
            f"trained with (max_position_embeddings); {how}")


SEQ_LEN_PAST_CONTEXT = Rule("seq_len_past_context", "warning", "layout", _past_context_broken, _past_context_message)
