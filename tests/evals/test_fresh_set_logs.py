"""The fresh sets' pasted logs (sets 16 and 17) give the case's `measured` value and plan when the engine's log
readers read them (engine/training_logs, the readers `shardwise calibrate --from-log` uses): a case whose hand
conversion disagreed with what the product reads would grade every answer against the wrong run. The hand
conversions are in the comments above each case in evals/cases/holdout_fresh_16.yaml and holdout_fresh_17.yaml."""

import pytest

from shardwise.engine.training_logs import read_log
from shardwise.evals import scenario as sc
from shardwise.evals.loader import load_cases

LOG_CASES = {  # case id -> the turn holding the pasted log
    # set 16
    "hf16-cal-megatron-log-qwen25-32b": 0,
    "hf16-cal-titan-log-8b-tps-and-peak": 0,
    "hf16-cal-deepspeed-timer-llama2-7b": 0,
    "hf16-cal-hf-trainer-fsdp-3b": 0,
    "hf16-mt-70b-iter-lines-then-megatron-args": 0,
    "hf16-mt-titan-injection-qwen3-8b-then-64": 0,
    # set 17
    "hf17-cal-megatron-torchrun-qwen3-32b": 0,  # `[default0]:` prefix, report_memory in MiB
    "hf17-cal-titan-tokens-per-rank-qwen3-14b-tp2": 0,  # "tokens per DP rank" init line
    "hf17-cal-deepspeed-pipe-llama2-13b-a100": 0,  # pipeline engine step lines, no GPU count in the log
    "hf17-cal-hf-trainer-ds-zero3-mistral-v03": 0,  # samples/s of the whole job
    "hf17-cal-megatron-rampup-olmo2-7b": 0,  # batch ramp-up set aside
    "hf17-mt-titan-2d-mesh-wps-mistral-then-tp1": 0,  # mid-2024 2-D mesh and wps
    "hf17-memrange-titan-line-8b-fsdp": 0,  # one metrics line, its peak only
}
PLAN_NAMES = {"mb": "micro_batch"}


def _cases():
    cases = {c.id: c for c in load_cases() if c.id in LOG_CASES}
    assert set(cases) == set(LOG_CASES)
    return cases


@pytest.mark.parametrize("case_id", sorted(LOG_CASES))
def test_the_log_reads_to_the_case_measurement_and_plan(case_id):
    case = _cases()[case_id]
    index = LOG_CASES[case_id]
    turn, scenario = case.turns[index], case.scenarios()[index]
    reading = read_log(turn.user)
    m = turn.measured
    if m.step_s is not None:
        assert reading.step_s == pytest.approx(m.step_s, rel=1e-4)
    elif m.tokens_per_s_per_gpu is not None and reading.samples_per_s is not None:  # whole job: x tokens per sample / GPUs
        per_gpu = reading.samples_per_s * sc.seq_len(scenario) / scenario.gpus
        assert per_gpu == pytest.approx(m.tokens_per_s_per_gpu, rel=1e-4)
    elif m.tokens_per_s_per_gpu is not None:
        assert reading.tokens_per_s_per_gpu == pytest.approx(m.tokens_per_s_per_gpu, rel=1e-4)
    if m.peak_gib is not None:
        assert reading.peak_gib == pytest.approx(m.peak_gib, rel=1e-4)
    for key, value in (turn.plan or {}).items():
        read = reading.plan.get(PLAN_NAMES.get(key, key))
        if read is not None:
            assert read == value, f"{case_id}: {key} read {read!r}, case {value!r}"
    for key, value in (("num_gpus", scenario.gpus), ("seq_len", sc.seq_len(scenario)),
                       ("global_batch", sc.global_batch(scenario))):
        if getattr(reading, key) is not None:
            assert getattr(reading, key) == value, f"{case_id}: {key}"
