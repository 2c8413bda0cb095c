"""Packed sequences (`mean_doc_len`): the attention core's FLOPs, time and scores by document
length, against hand calculations. Intra-document (varlen) masking: a query of a document of
length d sees, causally, d/2 keys on average instead of s/2 (FlashAttention's varlen kernels
compute each document's diagonal block only; Dao 2023, `flash_attn_varlen_func`)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.memory import ActivationOptions
from shardwise.engine.memory.activations import layer_activations
from shardwise.engine.performance import step_time
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB, LLAMA3_8B, NVLINK

CLUSTER = Cluster(gpu=H100, num_gpus=8, gpus_per_node=8, network=IB)
# 8 GPUs, DP 8, one 8192-token sequence per GPU per step: one micro-batch of M = 8192 tokens.
GRID = PlanGrid.build(8, 8, tp=[1], pp=[1], micro_batch=[1], recompute=[0])


def _setup(doc: int | None) -> TrainingSetup:
    return TrainingSetup(seq_len=8192, global_batch=8, mean_doc_len=doc)


def test_model_flops_count_attention_by_document_length():
    """Llama-3-8B at 8192 tokens: 6 × 7,504,658,432 GEMM weights = 45,027,950,592 FLOPs/token
    (tests/engine/test_flops.py). Causal attention core, forward, per token and layer:
    2 GEMMs (QKᵀ, PV) × 2 FLOPs × heads·head_dim (32·128) × keys seen; keys = d/2 within a
    512-token document = 256: 4·4096·256 = 4,194,304; × 32 layers = 134,217,728; × 3 (forward +
    backward) = 402,653,184. Per step: (45,027,950,592 + 402,653,184) × 8 GPUs × 8192 tokens."""
    per_token = 45_027_950_592 + 3 * 32 * 4 * 4096 * 256
    assert per_token == 45_430_603_776
    t = step_time(LLAMA3_8B, CLUSTER, _setup(512), GRID)
    assert t.model_flops_per_step[0] == pytest.approx(per_token * 8 * 8192, rel=1e-12)


def test_no_documents_is_one_document_per_sequence():
    """mean_doc_len = seq_len is the unpacked case: the same step, FLOPs and time."""
    packed, plain = step_time(LLAMA3_8B, CLUSTER, _setup(8192), GRID), step_time(LLAMA3_8B, CLUSTER, _setup(None), GRID)
    assert packed.step[0] == plain.step[0]
    assert packed.model_flops_per_step[0] == plain.model_flops_per_step[0]


def test_attention_time_by_document_length():
    """The attention core's forward per layer and micro-batch is its FLOPs at the attention
    efficiency plus one fixed kernel cost (engine/performance/compute.py):
    M·4·heads·head_dim·(d/2) / (989e12 · eff) + k, with M = 8192 tokens, 32 layers, one micro-batch.
    For d = 512 that is 8192·4·4096·256 = 34,359,738,368 FLOPs per layer."""
    eff = DEFAULT_ASSUMPTIONS.attention_eff(H100, "megatron")
    k = DEFAULT_ASSUMPTIONS.kernel_fixed_s
    for doc, flops in ((512, 34_359_738_368), (8192, 34_359_738_368 * 16)):
        expected = 32 * (flops / (989e12 * eff) + k)
        t = step_time(LLAMA3_8B, CLUSTER, _setup(doc), GRID)
        assert t.details["attention_s"][0] == pytest.approx(expected, rel=1e-9)


def test_shorter_documents_make_the_step_faster_by_the_attention_saved():
    """Only the attention core depends on the document length: the step shrinks by the saved
    forward time × (1 + backward ratio 2.5) per layer (no recompute, one micro-batch, DP overlap
    unaffected here), i.e. 3.5 × the change in `attention_s`."""
    long, short = step_time(LLAMA3_8B, CLUSTER, _setup(None), GRID), step_time(LLAMA3_8B, CLUSTER, _setup(512), GRID)
    saved_forward = long.details["attention_s"][0] - short.details["attention_s"][0]
    assert saved_forward > 0
    assert long.step[0] - short.step[0] == pytest.approx(3.5 * saved_forward, rel=1e-6)


def test_materialised_scores_by_document_length():
    """Eager attention keeps the softmax, 2 bytes per score: heads · keys per query per token. A
    varlen (per-document) computation materialises each document's block only: keys = d, not s.
    Difference per token between s = 8192 and d = 512 at TP 1: 2 · 32 · (8192 − 512) = 491,520 bytes."""
    options = ActivationOptions(attention="materialised")
    full = layer_activations(LLAMA3_8B, _setup(None), GRID, options)
    packed = layer_activations(LLAMA3_8B, _setup(512), GRID, options)
    assert full.dense_all[0] - packed.dense_all[0] == pytest.approx(2 * 32 * (8192 - 512))
    flash_full = layer_activations(LLAMA3_8B, _setup(None), GRID, ActivationOptions())
    flash_packed = layer_activations(LLAMA3_8B, _setup(512), GRID, ActivationOptions())
    assert flash_full.dense_all[0] == flash_packed.dense_all[0]  # flash keeps output + LSE per token


def test_a_document_longer_than_the_sequence_is_refused():
    with pytest.raises(ValidationError, match="mean document length 9,000 is longer than the sequence"):
        TrainingSetup(seq_len=8192, mean_doc_len=9000)
    with pytest.raises(ValidationError):
        TrainingSetup(seq_len=8192, mean_doc_len=0)


def test_sliding_window_layers_see_the_window_or_the_document():
    """A 4096-token window over 512-token documents: every query sees its document's causal half,
    d/2 = 256 keys, as for full attention; so windowed and full layers cost the same."""
    mistral = LLAMA3_8B.model_copy(update={"name": "windowed", "sliding_window": 4096,
                                           "sliding_window_layer_fraction": 1.0})
    a = step_time(mistral, CLUSTER, _setup(512), GRID)
    b = step_time(LLAMA3_8B, CLUSTER, _setup(512), GRID)
    assert np.isclose(a.details["attention_s"][0], b.details["attention_s"][0])
