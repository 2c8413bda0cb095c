"""`shardwise evaluate` says, as the page does, when the 80 % memory band's upper end is past the GPU's capacity
(the plan fits at its point estimate, but 1 run in 10 peaks above the band's top): check the peak in a short run."""

from __future__ import annotations

import json

import pytest

from shardwise.cli.evaluate import render_evaluation
from shardwise.engine.results import ClusterSummary, Evaluation, MemoryReport, ModelSummary, StrategySummary
from support.cli_runner import run

NOTE = "check the peak in a short run"


def evaluation(total: float, band: list[float], capacity: float = 80.0) -> Evaluation:
    """Memory numbers chosen by hand (20 + 10 + 15 + rest = total), nothing from the engine's formulas."""
    return Evaluation(
        model=ModelSummary(name="m", params=8_000_000_000, active_params=8_000_000_000),
        cluster=ClusterSummary(gpu="h100-sxm", num_gpus=8, gpus_per_node=8, gpu_memory_gib=capacity, network="ib-ndr",
                               num_nodes=1),
        strategy=StrategySummary(tp=1, pp=1, vpp=1, cp=1, ep=1, etp=1, dp=8, zero_stage=1, micro_batch=1, grad_accum=32,
                                 recompute="selective", sequence_parallel=False),
        valid=True, violations=[],
        memory=MemoryReport(weights_gib=20.0, gradients_gib=10.0, optimizer_gib=15.0, activations_gib=total - 48.0,
                            other_gib=3.0, total_gib=total, capacity_gib=capacity, fits=total <= capacity,
                            total_gib_range=band))


@pytest.mark.parametrize("total, band, noted", [
    (79.1, [64.6, 92.2], True),    # fits (79.1 <= 80) and the band reaches 92.2 > 80: the page's case
    (67.0, [54.7, 78.1], False),   # 78.1 <= 80: the whole band fits
    (70.0, [60.0, 80.0], False),   # upper end exactly at capacity: not past it (the page's test is strictly >)
    (84.6, [69.1, 98.6], False),   # does not fit at all: the verdict says DOES NOT FIT, no short-run advice
])
def test_the_note_follows_the_band_against_capacity(total, band, noted):
    text = render_evaluation(evaluation(total, band))
    assert (NOTE in text) == noted
    if noted:
        assert "    note: the band's upper end is above the 80 GiB: check the peak in a short run" in text.splitlines()


@pytest.mark.parametrize("seq_len", ["3072", "4096"])
def test_the_cli_notes_what_its_own_json_says(capsys, seq_len):
    # Llama-3.1-8B, TP1 ZeRO-1 on 8 H100s, 256 sequences: at 3k tokens it fits with a band past 80 GiB, at 4k it
    # does not fit. Expected from the JSON's own range and capacity, not from a copied number.
    flags = ["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8", "--seq-len", seq_len,
             "--global-batch", "256", "--tp", "1"]
    code, out, err = run(capsys, *flags, "--json")
    assert code == 0, err
    m = json.loads(out)["memory"]
    expected = m["fits"] and m["total_gib_range"][1] > m["capacity_gib"]
    code, out, err = run(capsys, *flags)
    assert code == 0, err
    assert (NOTE in out) == expected
    if seq_len == "3072":
        assert expected  # the scenario chosen to show the note still does


def test_recommend_says_it_under_best_as_the_page_does(capsys):
    """The page's summary and `evaluate` say when the best plan's 80 % memory band reaches past the GPU; recommend's
    BEST line said only "memory 71.3 of 80 GiB". Its lines (the band, then the chat's "may not fit", session 13)
    appear exactly when the band's top exceeds capacity: the
    70B plan's band reaches past 80 GiB; with 30 % headroom the 8B plan on a 141 GiB H200 stays well below its top."""
    import json

    from support.cli_runner import run

    seen = []
    for scenario in (["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8k",
                      "--global-batch-tokens", "4M"], ["--model", "llama-3.1-8b", "--gpu", "h200", "--gpus", "8", "--headroom", "0.3"]):
        code, out, err = run(capsys, "recommend", *scenario, "--top", "1", "--json")
        assert code == 0, err
        m = json.loads(out)["plans"][0]["memory"]
        code, text, err = run(capsys, "recommend", *scenario, "--top", "1")
        low, high = m["total_gib_range"]
        lines = text.splitlines()
        said = f"         memory likely {low:.1f}–{high:.1f} GiB" in lines and any(
            line.startswith(f"         may not fit: up to {high:.1f} GiB at the top of its 80 % memory band, above the "
                            f"{m['capacity_gib']:g} GiB") for line in lines)
        assert said == (high > m["capacity_gib"])
        seen.append(high > m["capacity_gib"])
    assert seen == [True, False]  # both cases were exercised
