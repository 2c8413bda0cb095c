from __future__ import annotations

import pytest

from shardwise.engine.constraints import parse_constraints
from shardwise.engine.errors import ShardwiseInputError


def test_pins_bounds_and_aliases():
    c = parse_constraints({"tp": 8, "max_pp": 4, "zero": "1,3", "sp": "off", "recompute": "full", "mb": [1, 2]})
    assert c.pins == {"tp": (8,), "zero_stage": (1, 3), "sequence_parallel": (False,), "recompute": (2,),
                      "micro_batch": (1, 2)}
    assert c.maximum == {"pp": 4}
    assert c.filter("pp", [1, 2, 4, 8, 16]) == (1, 2, 4)
    assert c.filter("tp", [1, 2, 4]) == (8,)  # a pinned value is used even if the search would skip it


@pytest.mark.parametrize("raw,needle", [
    ({"tpp": 8}, "unknown search constraint 'tpp'"),
    ({"tp": "eight"}, "whole numbers"),
    ({"tp": 0}, "out of range"),
    ({"zero": 4}, "out of range"),
    ({"recompute": "some"}, "allowed values are none, selective, full"),
    ({"framework": "jax"}, "allowed: megatron, deepspeed, fsdp"),
    ({"min_tp": 8, "max_tp": 4}, "min_tp=8 > max_tp=4"),
    ({"max_recompute": 1}, "unknown search constraint"),
])
def test_bad_constraints_are_clear_errors(raw, needle):
    with pytest.raises(ShardwiseInputError, match=needle):
        parse_constraints(raw)
