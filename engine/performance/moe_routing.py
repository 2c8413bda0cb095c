"""Where a token's top-k experts live: how many distinct nodes and expert-parallel ranks one token
reaches, on average, under uniform (balanced) routing, with or without DeepSeek's group-limited
(node-limited) routing.

Experts are placed in contiguous blocks (Megatron-Core: EP rank r holds experts r·E/EP …
(r+1)·E/EP − 1), so a node of the EP group holds E/N consecutive experts. Choosing k of E experts
uniformly without replacement, a unit (node or rank) holding E/n of them is missed with probability
C(E − E/n, k) / C(E, k) (hypergeometric); the expected number of distinct units reached is
n · (1 − C(E − E/n, k) / C(E, k)).

Group-limited routing (DeepSeek-V2 sec. 2.2.2 "device-limited routing", DeepSeek-V3 sec. 2.1.2
"node-limited routing": n_group groups of E/n_group consecutive experts, a token picks topk_group
groups, then its top-k experts among them): when groups cover whole units (n_group <= n), only
topk_group·n/n_group units hold eligible experts, and the k experts are drawn from those
E·topk_group/n_group. When a unit holds several groups, the token's groups fall on at most
topk_group units (groups drawn uniformly, the same hypergeometric count over groups).
"""

from __future__ import annotations

import numpy as np

from ..model_spec import MoESpec


def miss_probability(total: np.ndarray, held: np.ndarray, k: int) -> np.ndarray:
    """C(total − held, k) / C(total, k): no pick among `held` of `total` items, k picks without replacement."""
    total = np.asarray(total, dtype=float)
    held = np.asarray(held, dtype=float)
    p = np.ones(np.broadcast(total, held).shape)
    for i in range(k):
        p = p * np.clip((total - held - i) / np.maximum(total - i, 1.0), 0.0, 1.0)
    return p


def expected_units_reached(units: np.ndarray, experts: float, k: int) -> np.ndarray:
    """Distinct units (of `units`, each holding experts/units of the `experts`) that k uniform picks reach."""
    units = np.maximum(np.asarray(units, dtype=float), 1.0)
    return units * (1.0 - miss_probability(np.full_like(units, experts), experts / units, min(k, int(experts))))


def units_reached(moe: MoESpec, units: np.ndarray) -> np.ndarray:
    """Expected distinct units (nodes or ranks of the EP group) one token's top-k experts sit on."""
    units = np.maximum(np.asarray(units, dtype=float), 1.0)
    E, k = float(moe.num_experts), moe.top_k
    free = expected_units_reached(units, E, k)
    if not moe.group_limited:
        return free
    g, tg = float(moe.n_group), float(moe.topk_group)
    # Groups cover whole units: the eligible units and their experts.
    eligible_units = np.maximum(units * tg / g, 1.0)
    whole_groups = expected_units_reached(eligible_units, E * tg / g, k)
    # Several groups per unit: the units the token's topk_group groups fall on bound the count.
    group_units = units * (1.0 - miss_probability(np.full_like(units, g), g / units, int(tg)))
    return np.where(units >= g, whole_groups, np.minimum(free, group_units))
