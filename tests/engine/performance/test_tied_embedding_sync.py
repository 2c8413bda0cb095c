"""Tied input embedding / LM head with PP > 1: the two copies' gradients are all-reduced between
the first and the last stage after the DP sync, exposed (nanotron src/nanotron/trainer.py
`training_step` -> sync_tied_weights_gradients; Megatron-LM finalize_model_grads ->
_allreduce_word_embedding_grads). Hand calculations with the ring all-reduce over n = 2 ranks:

    t = 2 · ceil(log2 n) · latency + 2 (n − 1)/n · bytes / bandwidth
      = 2 · latency + bytes / bandwidth,      bytes = vocab · hidden / TP · 4 (fp32 gradient)

The bandwidth is the link's datasheet figure × its calibrated achievable fraction
(engine/assumptions/calibrated.py): a NIC's own 50 GB/s when the pipeline spans nodes, NVLink
when the whole pipeline sits in one node (PP is the outermost rank dimension)."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.assumptions import calibrated
from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.performance import step_time
from shardwise.engine.performance.tied_embeddings import tied_embedding_sync_time
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB

# Llama-3.2-1B's shape (16 layers, 2048 wide, 128,256-token vocabulary, tied embeddings).
TIED_1B = ModelSpec(name="tied-1b", num_layers=16, hidden_size=2048, num_attention_heads=32, num_kv_heads=8,
                    ffn_hidden_size=8192, vocab_size=128256, tied_embeddings=True)
SETUP = TrainingSetup(seq_len=4096, global_batch=256, framework="nanotron")
FP32 = 4
IB_BW = 50e9 * calibrated.INFINIBAND_BANDWIDTH_FRACTION  # one NIC per GPU
NVLINK_BW = 450e9 * calibrated.NVLINK_BANDWIDTH_FRACTION


def _sync(model: ModelSpec, num_gpus: int, tp: int, pp: int, setup: TrainingSetup = SETUP) -> float:
    cluster = Cluster(gpu=H100, num_gpus=num_gpus, gpus_per_node=8, network=IB)
    grid = PlanGrid.build(num_gpus, 256, tp=[tp], pp=[pp], micro_batch=[1])
    return float(tied_embedding_sync_time(model, cluster, setup, grid, FP32, DEFAULT_ASSUMPTIONS)[0])


def test_across_nodes_by_hand():
    """64 GPUs, TP 1, PP 2, DP 32: the first and the last stage are 32 ranks apart, on different
    nodes. 128,256 × 2,048 × 4 B = 1,050,673,152 B over the NIC, plus 2 × 10 µs (IB latency):
    1,050,673,152 / (50e9 × 0.98) + 20e-6 = 21.462 ms."""
    assert _sync(TIED_1B, 64, tp=1, pp=2) == pytest.approx(2 * 10e-6 + 128256 * 2048 * 4 / IB_BW, rel=1e-9)
    assert _sync(TIED_1B, 64, tp=1, pp=2) == pytest.approx(21.462e-3, rel=1e-3)
    # TP 2 halves the shard each rank reduces.
    assert _sync(TIED_1B, 64, tp=2, pp=2) == pytest.approx(2 * 10e-6 + 128256 * 2048 * 4 / 2 / IB_BW, rel=1e-9)


def test_inside_one_node_by_hand():
    """8 GPUs, TP 1, PP 2, DP 4: both stages on one node, NVLink (450 GB/s × fraction, 3 µs)."""
    assert _sync(TIED_1B, 8, tp=1, pp=2) == pytest.approx(2 * 3e-6 + 128256 * 2048 * 4 / NVLINK_BW, rel=1e-9)


def test_nothing_to_sync():
    # One stage: the embedding and the LM head are one tensor on one rank.
    assert _sync(TIED_1B, 64, tp=1, pp=1) == 0.0
    # Untied: two independent matrices, nothing to sum.
    assert _sync(TIED_1B.model_copy(update={"tied_embeddings": False}), 64, tp=1, pp=2) == 0.0
    # LoRA trains adapters only; the embedding is frozen.
    assert _sync(TIED_1B, 64, tp=1, pp=2, setup=SETUP.model_copy(update={"mode": "lora"})) == 0.0


def test_step_pays_it_as_data_parallel_time():
    cluster = Cluster(gpu=H100, num_gpus=64, gpus_per_node=8, network=IB)
    grid = PlanGrid.build(64, 256, tp=[1], pp=[2], micro_batch=[1])
    t = step_time(TIED_1B, cluster, SETUP, grid, DEFAULT_ASSUMPTIONS)
    untied = step_time(TIED_1B.model_copy(update={"tied_embeddings": False}), cluster, SETUP, grid, DEFAULT_ASSUMPTIONS)
    assert np.all(t.details["tied_embedding_sync_s"] == pytest.approx(_sync(TIED_1B, 64, tp=1, pp=2)))
    assert float(t.dp_comm[0]) >= float(t.details["tied_embedding_sync_s"][0]) > 0
    assert float(untied.details["tied_embedding_sync_s"][0]) == 0.0
