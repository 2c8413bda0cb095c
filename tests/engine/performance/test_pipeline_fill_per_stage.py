"""1F1B fill and drain at each stage's own pace (nanotron; assumptions/compute.py
PIPELINE_FILL_PER_STAGE). A permutation flow shop of m identical jobs through stages of times
t_1..t_p finishes at sum(t_r) + (m − 1) · max(t_r) (Johnson 1954; the fill passes every stage
once, then the busiest stage sets the pace). With equal stages it is (m + p − 1) · t, the
uniform form (Narayanan et al. 2021)."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.cluster import Cluster
from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.performance import step_time
from shardwise.engine.performance import step as step_module
from shardwise.engine.performance.pp import pipeline_time, pipeline_time_uneven
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB


def test_flow_shop_by_hand():
    """p = 4, m = 8 (dp 8, global batch 64). Stages of 3, 3, 3 and 1 s (sum 10, busiest 3):
    10 + 7 × 3 = 31 s; the uniform form would charge (8 + 3) × 3 = 33 s."""
    grid = PlanGrid.build(32, 64, pp=[4])
    assert list(grid.num_microbatches) == [8]
    avg, busiest = np.array([2.5]), np.array([3.0])
    assert pipeline_time_uneven(avg, busiest, np.array([10.0]), grid)[0] == pytest.approx(31.0)
    assert pipeline_time(avg, busiest, grid)[0] == pytest.approx(33.0)


def test_equal_stages_give_the_uniform_form_and_host_floor_holds():
    grid = PlanGrid.build(32, 64, pp=[4, 1])  # dp 8 -> m = 8; dp 32 -> m = 2
    one = np.array([1.0, 1.0])
    # Four stages of 1 s: 4 + 7 × 1 = 11 = (8 + 3) × 1. PP 1: m × average = 2 × 1.
    assert pipeline_time_uneven(one, one, np.array([4.0, 4.0]), grid) == pytest.approx([11.0, 2.0])
    # A stage is never faster than its host floor: the fill is at least p average stages.
    assert pipeline_time_uneven(one, one, np.array([2.0, 2.0]), grid)[0] == pytest.approx(11.0)


def test_nanotron_uses_it_megatron_does_not(monkeypatch):
    """A 32-layer model on 32 stages (1 layer each, logits on the last): the flow-shop fill is
    cheaper than 31 slots of the busiest (logit) stage, so nanotron's step is shorter than the
    same plan priced as Megatron prices its pipeline, with every other part equal."""
    model = ModelSpec(name="m", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                      ffn_hidden_size=14336, vocab_size=131072)
    cluster = Cluster(gpu=H100, num_gpus=256, gpus_per_node=8, network=IB)
    grid = PlanGrid.build(256, 256, tp=[1], pp=[32], micro_batch=[1])
    setup = TrainingSetup(seq_len=4096, global_batch=256, framework="nanotron")
    nanotron = step_time(model, cluster, setup, grid, DEFAULT_ASSUMPTIONS)
    # The same constants, with the uniform (Megatron) pipeline form.
    monkeypatch.setattr(step_module, "PIPELINE_FILL_PER_STAGE", ())
    priced_uniform = step_time(model, cluster, setup, grid, DEFAULT_ASSUMPTIONS)
    assert float(nanotron.pp_bubble[0]) < float(priced_uniform.pp_bubble[0])
    assert float(nanotron.compute[0]) == pytest.approx(float(priced_uniform.compute[0]))
