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
    assert "cdna3" in text and "QLoRA fine-tuning" in text and "sequence length" in text and "synthesised" in text
    assert "dequantisation" in text  # QLoRA's 4-bit weights are dequantised; LoRA's bf16 ones are not
    lora = " ".join(extrapolation_warnings(get_model("Llama-3.1-8B"), build_cluster("h100-sxm", 8),
                                           TrainingSetup(mode="lora")))
    assert "LoRA fine-tuning" in lora and "dequantisation" not in lora
    w = extrapolation_warnings(get_model("Llama-3.1-405B"), build_cluster("h100-sxm", 65536), TrainingSetup())
    assert any("65,536 GPUs" in x for x in w)


def test_stack_run_counts_add_up_to_the_used_runs():
    from shardwise.engine.calibration.runs import used_runs

    counts = coverage().stack_kind_runs
    assert sum(counts.values()) == len(used_runs())
    assert set(counts) <= {f"{s}|{k}" for s in ("megatron", "pytorch", "nanotron") for k in ("dense", "moe")}


def test_a_stack_without_its_own_band_is_outside_the_validated_range():
    # For every framework (hence stack) x dense/MoE x GPU generation with runs: the warning fires exactly when the
    # shipped band lookup falls past 'stack|kind' (to the pooled 'moe'/'dense'/'all' band of other stacks), and
    # then the band is widened like any other input outside the validated range. So the two cannot disagree.
    from shardwise.engine.assumptions import error_bands as eb
    from shardwise.engine.calibration.band_statistics import MIN_RUNS
    from shardwise.engine.calibration.coverage import stack_warning
    from shardwise.engine.calibration.intervals import OUTSIDE_RANGE_WIDENING, throughput_band
    from shardwise.engine.calibration.regimes import STACK_BY_FRAMEWORK, scenario_regime_keys, stack_of

    fired = set()
    for framework in STACK_BY_FRAMEWORK:
        for model in (get_model("Llama-3.1-8B"), get_model("Mixtral-8x7B")):
            for gpu in ("a100-80gb", "h100-sxm", "b200"):
                cluster, setup = build_cluster(gpu, 16), TrainingSetup(framework=framework)
                keys = scenario_regime_keys(model, cluster, setup)
                used = next(k for k in keys if k in eb.THROUGHPUT_BANDS)
                past_stack = used in ("dense", "moe", "all")
                warning = stack_warning(model, setup)
                assert (warning is not None) == past_stack, (framework, model.name, gpu, used)
                runs = coverage().stack_kind_runs.get(keys[1], 0)
                assert (runs < MIN_RUNS) == past_stack
                if past_stack:
                    fired.add(keys[1])
                    assert warning in extrapolation_warnings(model, cluster, setup)
                    lo, hi, _ = eb.THROUGHPUT_BANDS[used]
                    band = throughput_band(model, cluster, setup)
                    assert (band.low, band.high) == (lo * OUTSIDE_RANGE_WIDENING, hi * OUTSIDE_RANGE_WIDENING)
                    assert stack_of(framework) in keys[1]
    # PyTorch-native (FSDP, DeepSpeed) and nanotron have no MoE run in the calibration data (coverage above)
    assert fired == {"pytorch|moe", "nanotron|moe"}


def test_the_stack_warning_names_the_stack_in_plain_language():
    w = extrapolation_warnings(get_model("Mixtral-8x7B"), build_cluster("h100-sxm", 16), TrainingSetup(framework="fsdp"))
    assert any(x.startswith("PyTorch-native (FSDP/DeepSpeed) MoE: no measured runs of this software stack with MoE "
                            "layers in the calibration data") for x in w)
    assert extrapolation_warnings(get_model("Mixtral-8x7B"), build_cluster("h100-sxm", 16), TrainingSetup()) == []
