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
