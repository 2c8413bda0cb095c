"""An FP8 run's MFU says it is taken against the FP8 peak (docs/performance.md, "FLOPs, MFU and HFU"): going from
BF16 to FP8 the MFU printed fell (52.8 % -> 37.5 % for Llama-3.1-70B on 64 H100s) while throughput rose by 42 %,
with nothing saying the denominator had doubled."""

import json

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8k",
            "--global-batch-tokens", "4M", "--tp", "2", "--cp", "2", "--zero", "3", "--recompute", "none"]
H100_SXM_DENSE_TFLOPS = {"bf16": 989.0, "fp8": 1979.0}  # NVIDIA H100 SXM5 datasheet, dense (without sparsity)


def test_the_fp8_mfu_is_labelled_and_is_model_flops_over_the_fp8_peak(capsys):
    for precision, said in (("fp8", True), ("bf16", False)):
        code, out, err = run(capsys, "evaluate", *SCENARIO, "--precision", precision, "--json")
        assert code == 0, err
        t = json.loads(out)["throughput"]
        assert abs(t["mfu"] - t["model_tflops_per_gpu"] / H100_SXM_DENSE_TFLOPS[precision]) < 1e-3
        code, text, err = run(capsys, "evaluate", *SCENARIO, "--precision", precision)
        assert ("of the FP8 peak" in text) is said
        code, text, err = run(capsys, "recommend", *SCENARIO[:10], "--precision", precision, "--top", "1")
        best = text.split("BEST", 1)[1].splitlines()[1]
        assert ("MFU" in best) and (("% of the FP8 peak" in best) is said)


def test_a_gpu_without_fp8_units_keeps_the_bf16_basis_unlabelled(capsys):
    # The A100 has no FP8 tensor cores (NVIDIA A100 datasheet: FP16/BF16 312 TFLOPS dense, no FP8): an FP8 scenario
    # there runs and is measured at BF16 (GPUSpec.peak_tflops), and the plan carries the fp8_unsupported warning.
    args = ["--model", "llama-3.1-8b", "--gpu", "a100-80gb", "--gpus", "8", "--precision", "fp8"]
    code, out, err = run(capsys, "evaluate", *args, "--json")
    assert code == 0, err
    e = json.loads(out)
    assert any(w["rule"] == "fp8_unsupported" for w in e["warnings"])
    assert abs(e["throughput"]["mfu"] - e["throughput"]["model_tflops_per_gpu"] / 312.0) < 1e-3
    code, text, err = run(capsys, "evaluate", *args)
    assert "FP8 peak" not in text
