"""extrapolation_warnings: quiet inside the validated range, specific outside it."""

from __future__ import annotations

from shardwise.engine.calibration.coverage import coverage, extrapolation_warnings
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.synthetic import model_from_param_count
from shardwise.engine.training import TrainingSetup


def test_validated_range_comes_from_the_runs():
    c = coverage()
    assert {"ampere", "hopper", "blackwell"} <= c.generations
    assert c.num_gpus[0] == 8 and c.num_gpus[1] >= 6144
    assert c.max_experts >= 256 and c.has_mla


def test_no_warning_inside_the_range():
    assert extrapolation_warnings(get_model("Llama-3.1-70B"), build_cluster("h100-sxm", 256), TrainingSetup()) == []


def test_warnings_outside_the_range():
    w = extrapolation_warnings(model_from_param_count(8e9), build_cluster("mi300x", 64),
                               TrainingSetup(mode="qlora", seq_len=4_194_304))
    text = " ".join(w)
    assert "cdna3" in text and "QLORA" in text and "sequence length" in text and "synthesised" in text
    w = extrapolation_warnings(get_model("Llama-3.1-405B"), build_cluster("h100-sxm", 65536), TrainingSetup())
    assert any("65,536 GPUs" in x for x in w)
