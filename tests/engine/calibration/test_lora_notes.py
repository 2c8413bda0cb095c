"""Row parsers: a LoRA row's stated rank, targets and CUDA graphs (the notes spelling shared with the
external sets' collectors), and the Megatron-stack default when nothing is stated."""

from __future__ import annotations

from shardwise.engine.calibration.runs import (BRIDGE_LORA_RANK, BRIDGE_LORA_TARGETS, cuda_graphs_for_row,
                                               lora_for_row)


def test_stated_rank_and_targets_are_read():
    row = {"notes": "task=LoRA (MLPerf); LORA RANK: 16; LORA TARGETS: linear_qkv,linear_proj (train.py)"}
    assert lora_for_row(row, "lora", "megatron") == {"lora_rank": 16, "lora_targets": ("linear_qkv", "linear_proj")}


def test_megatron_default_is_bridges_four_fused_modules():
    """Megatron-Bridge's LoRA: rank 32 on linear_qkv, linear_proj, linear_fc1, linear_fc2."""
    got = lora_for_row({"notes": "task=lora"}, "lora", "megatron")
    assert got == {"lora_rank": 32, "lora_targets": ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2")}
    assert (BRIDGE_LORA_RANK, len(BRIDGE_LORA_TARGETS)) == (32, 4)


def test_other_frameworks_keep_peft_targets_and_full_runs_nothing():
    assert lora_for_row({"notes": "task=lora; LORA RANK: 8"}, "lora", "fsdp") == {"lora_rank": 8}
    assert lora_for_row({"notes": "LORA RANK: 8"}, "full", "megatron") == {}


def test_cuda_graphs_phrase():
    assert cuda_graphs_for_row({"notes": "x; CUDA GRAPHS: yes"}) == {"cuda_graphs": "per-layer"}
    assert cuda_graphs_for_row({"notes": "CUDA GRAPHS: no; y"}) == {"cuda_graphs": "none"}
    assert cuda_graphs_for_row({"notes": "nothing stated"}) == {}


def test_cp_comm_type_phrase():
    from shardwise.engine.calibration.runs import cp_comm_type_for_row

    assert cp_comm_type_for_row({"notes": "CP COMM TYPE: a2a; x"}) == {"cp_comm_type": "a2a"}
    assert cp_comm_type_for_row({"notes": "CP COMM TYPE: a2a+p2p"}) == {"cp_comm_type": "a2a+p2p"}
    assert cp_comm_type_for_row({"notes": "CP COMM TYPE: all_gather"}) == {"cp_comm_type": "all_gather"}
    assert cp_comm_type_for_row({"notes": "nothing"}) == {}
