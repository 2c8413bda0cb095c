"""Fuzz `shardwise calibrate` (hypothesis, derandomised): whatever scenario, plan, measurement,
log or CSV is given, it exits 0 or 2, never with a traceback, and on 2 prints one line. On 0
the fitted scales stay inside their bounds, whatever the measurement."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardwise.cli.main import main
from shardwise.engine.assumptions.calibration_bounds import COMM_SCALE_BOUNDS, COMPUTE_SCALE_BOUNDS

FUZZ = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
LOGS = Path(__file__).parents[1] / "fixtures" / "logs"
SCENARIO = st.tuples(
    st.sampled_from([["--model", m] for m in ("llama-3.2-1b", "llama-3.1-8b", "mixtral-8x7b", "nope")]
                    + [["--params", "7B"], []]),
    st.sampled_from([["--gpu", g] for g in ("h100", "a100-80gb", "mi300x", "nope")]),
    st.sampled_from([["--gpus", n] for n in ("8", "16", "64", "0", "x")]),
    st.sampled_from([[], ["--seq-len", "8k"], ["--seq-len", "0"]]),
    st.sampled_from([[], ["--global-batch", "64"], ["--global-batch", "3"]]),
    st.sampled_from([[], ["--framework", "fsdp"], ["--precision", "fp8"]]),
).map(lambda parts: [a for part in parts for a in part])
PLAN = st.tuples(st.sampled_from([[], ["--tp", "2"], ["--tp", "3"], ["--pp", "2"], ["--tp", "8", "--pp", "2"]]),
                 st.sampled_from([[], ["--zero", "3"], ["--micro-batch", "2"]])).map(lambda p: p[0] + p[1])
MEASURED = st.one_of(
    st.sampled_from(["1", "850", "6000", "1e9", "0", "-5", "nan", "inf", "x", "1,200"]).map(
        lambda v: ["--measured-tokens-per-s-per-gpu", v]),
    st.sampled_from(["0.5", "30", "1e-6", "0"]).map(lambda v: ["--measured-step-s", v]),
    st.sampled_from(["0.4", "45", "0"]).map(lambda v: ["--measured-mfu", v]),
    st.sampled_from(["megatron_lm.log", "torchtitan.log", "deepspeed.log", "hf_trainer.log", "unreadable.log",
                     "nope.log"]).map(lambda f: ["--from-log", str(LOGS / f)]),
    st.just([]),
)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@settings(FUZZ)
@given(scenario=SCENARIO, plan=PLAN, measured=MEASURED)
def test_calibrate_never_crashes_and_stays_in_bounds(scenario, plan, measured):
    argv = ["calibrate", *scenario, *plan, *measured, "--json"]
    code, out, err = run(argv)
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)
    else:
        p = json.loads(out)
        assert COMPUTE_SCALE_BOUNDS[0] <= p["compute_scale"] <= COMPUTE_SCALE_BOUNDS[1], argv
        assert COMM_SCALE_BOUNDS[0] <= p["comm_scale"] <= COMM_SCALE_BOUNDS[1], argv
