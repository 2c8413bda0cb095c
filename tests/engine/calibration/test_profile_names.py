"""A profile names its GPU and network by catalog id: an alias becomes the id, an unknown name, a
precision or framework shardwise has no model for, NaN/infinity, or a file path is refused at load.

Why: a profile applies only where `cluster.gpu.id == profile.gpu` (profile.compute_applies), so before
this check a hand-edited profile with gpu "h100" or "zzz" loaded fine and then silently never applied."""

import json
import math

import pytest
from pydantic import ValidationError

from shardwise.engine.calibration.profile import CalibrationProfile, compute_applies
from shardwise.engine.inputs import build_cluster
from shardwise.engine.training import TrainingSetup

BASE = {"gpu": "h100-sxm", "precision": "bf16", "framework": "megatron"}


def test_an_alias_is_stored_as_the_catalog_id_so_the_profile_applies():
    # `shardwise gpus` lists alias "h100" for id "h100-sxm"; build_cluster resolves it the same way.
    p = CalibrationProfile(**{**BASE, "gpu": "h100", "network": "ib-ndr"}, compute_scale=0.9)
    assert p.gpu == "h100-sxm"
    assert compute_applies(p, build_cluster("h100-sxm", 8, None, None), TrainingSetup())


@pytest.mark.parametrize("field,value,said", [
    ("gpu", "zzz", "unknown gpu 'zzz'"),
    ("network", "carrier-pigeon", "unknown network 'carrier-pigeon'"),
    ("precision", "fp3", "'bf16' or 'fp8'"),
    ("framework", "jax", "'megatron', 'deepspeed', 'fsdp' or 'nanotron'"),
    ("gpu", "/etc/passwd.json", "not a definition"),
    ("gpu", '{"memory_gib": 80}', "not a definition"),
])
def test_names_shardwise_cannot_apply_are_refused_naming_the_field(field, value, said):
    with pytest.raises(ValidationError) as info:
        CalibrationProfile(**{**BASE, field: value})
    first = info.value.errors()[0]
    assert first["loc"] == (field,) and said in first["msg"]


def test_custom_hardware_written_by_calibrate_stays_valid():
    # hardware_catalog.get_gpu gives a user-defined GPU (inline JSON) the id "custom"; so does get_network.
    assert CalibrationProfile(**{**BASE, "gpu": "custom", "network": "custom"}).gpu == "custom"


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_nan_and_infinity_are_refused_even_in_a_run_summary(value):
    run = {"model": "m", "gpus": 8, "plan": "TP1", "measured_tokens_per_s_per_gpu": value,
           "predicted_before": 1.0, "predicted_after": 1.0}
    text = json.dumps({**BASE, "runs": [run]})  # Python's json writes and reads NaN / Infinity
    with pytest.raises(ValidationError, match="finite number"):
        CalibrationProfile.model_validate(json.loads(text))


@pytest.mark.parametrize("peak", [0.0, -1.0])
def test_a_peak_memory_that_is_not_positive_is_refused(peak):
    run = {"model": "m", "gpus": 8, "plan": "TP1", "measured_tokens_per_s_per_gpu": 1.0,
           "predicted_before": 1.0, "predicted_after": 1.0, "measured_peak_gib": peak}
    with pytest.raises(ValidationError, match="greater than 0"):
        CalibrationProfile(**BASE, runs=[run])
