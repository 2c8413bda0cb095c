"""The simulated pipeline schedule against the closed forms of Narayanan et al. 2021 (Megatron-LM, §2.2).

1F1B with p stages, m micro-batches, forward time t_f and backward t_b per stage:
    step = (m + p − 1)·(t_f + t_b),  bubble share = (p − 1)/(m + p − 1).
Interleaved with v chunks per rank (each chunk t_f/v, t_b/v):
    step = (m + (p − 1)/v)·(t_f + t_b),  bubble share = ((p − 1)/v)/(m + (p − 1)/v).
"""

from __future__ import annotations

import pytest

from shardwise.web.charts.pipeline_schedule import bubble_fraction, makespan, rank_order, simulate

TF, TB = 1.0, 2.0  # backward ≈ 2× forward (§3.1); any values work for the closed forms


@pytest.mark.parametrize("p,m", [(2, 1), (2, 4), (4, 4), (4, 8), (8, 16), (3, 7)])
def test_1f1b_step_and_bubble_match_closed_form(p, m):
    passes = simulate(p, 1, m, TF, TB)
    assert makespan(passes) == pytest.approx((m + p - 1) * (TF + TB))
    assert bubble_fraction(passes, p) == pytest.approx((p - 1) / (m + p - 1))


@pytest.mark.parametrize("p,v,m", [(2, 2, 4), (4, 2, 8), (4, 4, 8), (8, 3, 16), (4, 2, 4)])
def test_interleaved_step_and_bubble_match_closed_form(p, v, m):
    passes = simulate(p, v, m, TF, TB)
    ideal = m * (TF + TB)
    bubble = (p - 1) / v * (TF + TB)
    assert makespan(passes) == pytest.approx(ideal + bubble)
    assert bubble_fraction(passes, p) == pytest.approx(bubble / (ideal + bubble))


def test_every_rank_runs_each_chunk_of_each_microbatch_once_forward_then_backward():
    p, v, m = 4, 2, 8
    passes = simulate(p, v, m, TF, TB)
    assert len(passes) == 2 * p * v * m
    for stage in range(p):
        mine = [x for x in passes if x.stage == stage]
        assert sorted((x.kind, x.microbatch, x.chunk) for x in mine) == sorted(
            (k, mb, c) for k in "FB" for mb in range(m) for c in range(v))
        # a rank never runs two passes at once
        mine.sort(key=lambda x: x.start)
        assert all(a.end <= b.start + 1e-12 for a, b in zip(mine, mine[1:]))


def test_data_flows_through_the_stages_in_order():
    passes = {(x.kind, x.microbatch, x.chunk, x.stage): x for x in simulate(4, 1, 6, TF, TB)}
    for (kind, mb, chunk, stage), x in passes.items():
        if kind == "F" and stage > 0:
            assert x.start >= passes[("F", mb, chunk, stage - 1)].end
        if kind == "B" and stage < 3:
            assert x.start >= passes[("B", mb, chunk, stage + 1)].end


def test_1f1b_warmup_is_p_minus_rank_minus_one_forwards():
    # Megatron's 1F1B: rank r runs p - r - 1 forwards before its first backward.
    p, m = 4, 8
    for r in range(p):
        kinds = [k for k, _, _ in rank_order(r, p, 1, m)]
        assert kinds.index("B") == (p - r - 1) + 1  # warm-up forwards, then the steady state's first forward


def test_interleaved_needs_microbatches_divisible_by_pp():
    with pytest.raises(ValueError, match="divisible by pp"):
        simulate(4, 2, 6, TF, TB)
