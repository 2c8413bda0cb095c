"""The recommended plan may not fit (session 13): the search ranks by the point estimate of memory (kept), but when
the upper end of the plan's 80 % memory band is above the GPU's capacity the recommendation says so
(Recommendation.memory_risk) and names the fastest plan within the ranking resolution whose whole band fits.

Hand calculation: the memory band is one multiplicative band per software stack (engine/calibration/intervals.py
memory_band: upper end = point × exp(high)); Megatron has no band of its own and borrows the PyTorch-native one
(MEMORY_BAND_FALLBACK), high = 0.1538 (engine/assumptions/error_bands.py MEMORY_BANDS['pytorch']), a factor of
exp(0.1538) = 1.1663. The band's top is held against the capacity, 80 GiB on an H100 (the threshold of the page's and
`evaluate`'s band note); the search's own fit test is the usable memory, 80 GiB × (1 − 0.1 headroom) = 72 GiB. A plan's
band fits when point × 1.1663 ≤ 80, i.e. point ≤ 68.59 GiB."""

from __future__ import annotations

import math

import pytest

from shardwise.engine.assumptions.error_bands import MEMORY_BANDS
from shardwise.engine.calibration.coverage import RANKING_RESOLUTION
from shardwise.engine.search import recommend
from shardwise.present import memory_risk_lines
from shardwise.tools.scenario import Scenario

FACTOR = math.exp(0.1538)  # MEMORY_BANDS['pytorch'] high, as written above
USABLE = 80 * 0.9  # the search's fit test (capacity less 10 % headroom)
CAPACITY = 80


def test_the_band_used_is_the_one_written_above():
    assert MEMORY_BANDS["pytorch"][1] == 0.1538


def _recommend(top_k=1, **scenario):
    r = Scenario(**scenario).resolve()
    return recommend(r.model, r.cluster, r.setup, top_k=top_k)


SEVENTY_B = dict(model="llama-3.1-70b", gpu="h100", gpus=64, seq_len=8192, global_batch=512)


def test_a_best_plan_whose_band_tops_the_capacity_is_flagged_with_the_fastest_safe_plan():
    rec = _recommend(top_k=40, **SEVENTY_B)  # 21 near-ties (README): every plan within 5 % is among the first 40
    best, risk = rec.plans[0], rec.memory_risk
    assert best.memory.total_gib <= USABLE and CAPACITY < best.memory.total_gib * FACTOR  # fits at its point, not its band top
    assert risk is not None and risk.upper_gib == pytest.approx(best.memory.total_gib * FACTOR, abs=0.01)
    assert risk.usable_gib == pytest.approx(USABLE) and risk.capacity_gib == 80
    # the first plan in rank order, after the best, that is within the ranking resolution and whose band fits
    limit = best.time.step_s * (1 + RANKING_RESOLUTION)
    expected = next(p for p in rec.plans[1:] if p.time.step_s < limit and p.memory.total_gib * FACTOR <= CAPACITY)
    assert risk.band_fits is not None and risk.band_fits.strategy == expected.strategy
    assert risk.band_fits.memory.total_gib_range[1] <= CAPACITY
    assert risk.band_fits_slower_percent == pytest.approx(100 * (1 - best.time.step_s / expected.time.step_s), abs=0.01)
    assert rec.plans[0].strategy == _recommend(**SEVENTY_B).plans[0].strategy  # the ranking itself is unchanged


def test_a_band_that_fits_sets_nothing():
    rec = _recommend(model="llama-3.1-8b", gpu="h100", gpus=64, seq_len=2048, global_batch=64)
    assert rec.plans[0].memory.total_gib * FACTOR <= CAPACITY and rec.memory_risk is None
    assert memory_risk_lines(rec.memory_risk) == []


def test_when_no_plan_as_fast_has_a_band_that_fits_it_says_so(monkeypatch):
    # With a ranking resolution of 0 no other plan is "as fast", so none can be named: the second line says so
    import shardwise.engine.memory_risk as memory_risk_module

    monkeypatch.setattr(memory_risk_module, "RANKING_RESOLUTION", 0.0)
    rec = _recommend(**SEVENTY_B)
    best = rec.plans[0]
    assert rec.memory_risk is not None and rec.memory_risk.band_fits is None
    lines = memory_risk_lines(rec.memory_risk)
    assert lines[0].startswith(f"may not fit: up to {best.memory.total_gib * FACTOR:.1f} GiB at the top of its 80 % "
                               f"memory band, above the 80 GiB")
    assert lines[1] == "no plan as fast (within the ranking resolution) keeps its band within 80 GiB: check the peak in " \
                       "a short run"


def test_the_lines_for_the_cli_and_the_page_name_the_safer_plan():
    rec = _recommend(**SEVENTY_B)
    risk = rec.memory_risk
    head, safer = memory_risk_lines(risk)
    assert head == (f"may not fit: up to {risk.upper_gib:.1f} GiB at the top of its 80 % memory band, above the 80 GiB "
                    f"(1 run in 10 peaks above the band)")
    assert safer.startswith("TP=") and f"{risk.band_fits_slower_percent:.1f}% fewer tokens/s" in safer
