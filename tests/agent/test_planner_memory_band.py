"""The memory answer states the peak's 80 % interval, and sets a peak the user measured against it
(inside / outside, by how much). The expected figures are the engine's own (evaluate() called here
directly, the band from engine/calibration/intervals.py): the answer must state what the engine says."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.measured import measured_peak_gib
from shardwise.agent.service import ChatService
from shardwise.engine.evaluate import evaluate
from shardwise.tools.dispatch import dispatch
from shardwise.tools.scenario import Plan, Scenario

SCENARIO = Scenario(model="qwen2.5-14b", gpu="h100-sxm", gpus=8, gpus_per_node=8, seq_len=4096, global_batch=64)
PLAN = Plan(tp=2, pp=2, zero=1, micro_batch=1)
SETUP = "qwen2.5-14b on one node of 8 h100, seq 4096, gbs 64, tp2 pp2 zero1 mb1."


def engine_memory():
    s = SCENARIO.resolve()
    m = evaluate(s.model, s.cluster, s.setup, PLAN.strategy()).memory
    return m.total_gib, m.total_gib_range


@pytest.mark.parametrize("text, gib", [
    ("torch.cuda.max_memory_allocated() on rank 3 = 70.2 GiB", 70.2),  # a memory tool's figure is measured
    ("we ran it; the peak on rank 0 was 58 GB", 58e9 / 2**30),  # GB = 1e9 bytes, read as written (54.0 GiB)
    ("what's the peak memory of tp8? is 80 GB enough?", None),  # no measurement: a question
])
def test_a_measured_peak_is_read(text, gib):
    assert measured_peak_gib(text) == (pytest.approx(gib) if gib is not None else None)


def test_the_tool_sets_a_measured_peak_against_the_band():
    total, (low, high) = engine_memory()
    measured = high + 2.0  # 2 GiB above the band's top, by construction
    out = dispatch("estimate_memory", {"scenario": SCENARIO.model_dump(), "plan": PLAN.model_dump(),
                                       "measured_peak_gib": measured}, result_id="R1")
    assert out.ok
    r = out.result
    assert r.memory_gib_likely == [round(low, 3), round(high, 3)]
    p = r.measured_peak
    assert p.inside_likely is False and p.outside_band_by_gib == pytest.approx(2.0, abs=0.01)
    assert p.minus_predicted_gib == pytest.approx(measured - total, abs=0.01)
    assert not dispatch("estimate_memory", {"scenario": SCENARIO.model_dump(), "plan": PLAN.model_dump(),
                                            "measured_peak_gib": -3}, result_id="R2").ok  # a negative peak is an error


def ask(tmp_path, *messages):
    service, session, done = ChatService(AgentConfig(session_db=tmp_path / "s.db")), None, None
    for message in messages:
        done = list(service.stream(message, session))[-1]
        session = done.session_id
    return done


def test_the_memory_answer_states_the_band_and_a_measured_peak_inside_it(tmp_path):
    total, (low, high) = engine_memory()
    inside = round((low + total) / 2, 1)  # between the band's bottom and the prediction
    done = ask(tmp_path, f"{SETUP} we ran it: max allocated on rank 0 was {inside} GiB. is that inside your band?")
    assert done.tool_calls[-1]["name"] == "estimate_memory"
    assert f"{low:.1f}–{high:.1f} GiB" in done.answer and "**inside** that band" in done.answer
    assert f"{total - inside:.1f} GiB" in done.answer and "below the predicted" in done.answer


def test_how_sure_about_memory_gives_the_memory_interval(tmp_path):
    total, (low, high) = engine_memory()
    done = ask(tmp_path, SETUP + " does it fit?", "what's the error bar on that memory number?")
    assert f"**{total:.1f} GiB**" in done.answer and f"**{low:.1f}–{high:.1f} GiB**" in done.answer
