"""A measured peak the plan as given does not explain: each likely-misdescribed setting changed alone
(engine/peak_settings.py). What is checked is the selection — which changes are tried, which are kept, which
hold the measured peak and in what order — against the engine's own evaluate() of each changed plan and the
shipped memory band read from its data file (band = prediction x exp(10th / 90th percentile))."""

import math

import pytest

from shardwise.engine.assumptions import error_bands as eb
from shardwise.engine.evaluate import evaluate
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.peak_settings import TRIED_SETTINGS, peak_alternatives, peak_explained
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

MODEL, CLUSTER = get_model("llama-2-13b"), build_cluster("a100-80gb", 32)
SETUP = TrainingSetup(seq_len=4096, global_batch=128, framework="deepspeed")
AS_GIVEN = Strategy(zero_stage=3, micro_batch=4, recompute="selective")


def _peak(**change) -> float:
    return evaluate(MODEL, CLUSTER, SETUP, AS_GIVEN.model_copy(update=change)).memory.total_gib


def test_every_other_value_of_each_setting_is_tried_alone():
    tried = {(a.setting, a.value) for a in peak_alternatives(MODEL, CLUSTER, SETUP, AS_GIVEN, 30.0)}
    # recompute none/full and ZeRO 0/1/2: every value but the plan's own, one setting at a time (DP = 32 here, so
    # every ZeRO stage is valid)
    assert tried == {(s, v) for s, values in TRIED_SETTINGS.items() for v in values if v != getattr(AS_GIVEN, s)}


def test_a_peak_inside_a_changed_plans_band_is_held_by_that_change_and_listed_first():
    full = _peak(recompute="full")
    alternatives = peak_alternatives(MODEL, CLUSTER, SETUP, AS_GIVEN, full)
    assert (alternatives[0].label, alternatives[0].holds_measured) == ("recompute=full", True)
    assert alternatives[0].predicted_gib == pytest.approx(full)
    # the band is the prediction times the shipped memory band of DeepSpeed's stack (error_bands.MEMORY_BANDS)
    lo, hi, _ = eb.MEMORY_BANDS["pytorch"]
    assert alternatives[0].likely_gib == pytest.approx([full * math.exp(lo), full * math.exp(hi)])
    # every other change is held only if its own band holds the peak
    for a in alternatives[1:]:
        assert a.holds_measured == (a.likely_gib[0] <= full <= a.likely_gib[1])


def test_without_a_holding_change_the_nearest_prediction_comes_first():
    alternatives = peak_alternatives(MODEL, CLUSTER, SETUP, AS_GIVEN, 61.7)
    assert not any(a.holds_measured for a in alternatives)
    distances = [abs(a.predicted_gib - 61.7) for a in alternatives]
    assert distances == sorted(distances)


def test_a_change_that_makes_the_plan_invalid_is_not_offered():
    # DeepSpeed's pipeline engine rejects ZeRO-2 and ZeRO-3 with PP > 1 (rule pipeline_zero_stage): with PP=2 only
    # ZeRO-0 is left to try beside the recompute values
    with_pp = AS_GIVEN.model_copy(update={"pp": 2, "zero_stage": 1})
    tried = {(a.setting, a.value) for a in peak_alternatives(MODEL, CLUSTER, SETUP, with_pp, 30.0)}
    assert tried == {("recompute", "none"), ("recompute", "full"), ("zero_stage", 0)}


def test_the_plan_explains_a_peak_its_band_holds_and_no_other():
    band = [50.0, 70.0]
    assert peak_explained(60.0, 58.0, band) and peak_explained(50.0, 58.0, band)
    assert not peak_explained(49.9, 58.0, band) and not peak_explained(70.1, 58.0, band)
    # no band: within 10 % of the prediction (UNBANDED_PEAK_TOLERANCE)
    assert peak_explained(109.0, 100.0, None) and not peak_explained(111.0, 100.0, None)
