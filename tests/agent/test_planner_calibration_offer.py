"""A reply to the calibration the planner offered: "yes" / "do it" / "use it" / "ok calibrate" fits the run already
given again, keeps the profile in use for later answers (the state's profile, as "with our profile" uses it) and
answers with before -> after for that run; "no" / "skip" declines and leaves predictions uncalibrated. Measured
values in the expectations are the user's own figures (or a hand conversion of them)."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService
from shardwise.agent.state import ConversationState

SETUP = "70B on 64 H100s, seq 8192, global batch 512, TP4 PP4 zero1 mb1 full recompute. "


def _turns(service: ChatService, *messages: str):
    session, dones = None, []
    for message in messages:
        done = list(service.stream(message, session))[-1]
        session = done.session_id
        dones.append(done)
    return dones, ConversationState.load(service.store.load(session).state)


@pytest.mark.parametrize("reply", ["yes", "do it", "use it", "ok calibrate", "Sure, go ahead!", "yes please"])
def test_yes_fits_the_run_again_and_keeps_the_profile_in_use(tmp_path, reply):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    (offered, accepted, later), state = _turns(service, SETUP + "we measured 850 tok/s/GPU", reply, "what about tp8 pp2?")
    assert offered.tool_calls[-1]["name"] == "calibrate_to_measurement" and "Want me to use it?" in offered.answer
    [call] = accepted.tool_calls
    assert call["name"] == "calibrate_to_measurement"
    assert call["arguments"]["measured_tokens_per_s_per_gpu"] == 850  # the user's figure
    assert (call["arguments"]["plan"]["tp"], call["arguments"]["plan"]["pp"], call["arguments"]["plan"]["recompute"]) == (4, 4, "full")
    fitted = call["result"]
    assert f"**{fitted['predicted_before']:,.0f} → {fitted['predicted_after']:,.0f}**" in accepted.answer
    assert "in use for the rest of this conversation" in accepted.answer and "h100-sxm" in accepted.answer
    assert state.profile_in_use and state.profile is not None
    assert later.plan["calibration"] is not None  # the next prediction uses the profile without being asked


def test_a_step_time_is_fitted_again_as_the_tokens_it_means(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    (_, accepted), _ = _turns(service, SETUP + "our step time is 77 s", "yes")
    # tokens/s per GPU = global batch x sequence / (step time x GPUs) = 512 x 8192 / (77 x 64) = 851.117
    assert accepted.tool_calls[0]["arguments"]["measured_tokens_per_s_per_gpu"] == pytest.approx(851.117, abs=0.01)


@pytest.mark.parametrize("reply", ["no", "skip", "no thanks", "not now"])
def test_no_declines_and_leaves_predictions_uncalibrated(tmp_path, reply):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    (_, declined, later), state = _turns(service, SETUP + "we measured 850 tok/s/GPU", reply, "what about tp8 pp2?")
    assert declined.tool_calls == [] and "not calibrated" in declined.answer
    assert not state.profile_in_use and later.plan["calibration"] is None


def test_yes_without_an_offer_just_before_is_not_an_acceptance(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    (_, _, late), state = _turns(service, SETUP + "we measured 850 tok/s/GPU", "what about tp8 pp2?", "yes")
    assert not any(c["name"] == "calibrate_to_measurement" for c in late.tool_calls) and not state.profile_in_use
    (fresh,), _ = _turns(ChatService(AgentConfig(session_db=tmp_path / "t.db")), "yes")
    assert fresh.tool_calls == []


def test_a_session_profile_keeps_precedence_and_the_answer_says_so(tmp_path):
    from shardwise.engine.calibration.profile import CalibrationProfile

    session = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.8)
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"), profile=session)
    (_, accepted, later), _ = _turns(service, SETUP + "we measured 850 tok/s/GPU", "yes", "what about tp8 pp2?")
    assert "still applies" in accepted.answer
    assert "×0.800" in later.plan["calibration"]  # the session's compute scale, not the one fitted in the chat


def test_the_plan_asked_for_a_measured_run_calibrates_that_run(tmp_path):
    # "we measured 850 tok/s/GPU" with no plan: the answer asks which plan ran ('for example "that was TP=4 PP=4
    # ZeRO-1, micro-batch 1"'); the reply in that form calibrates the 850 on that plan instead of evaluating it.
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    (asked, given, later), state = _turns(service, "70B on 64 H100s, 8k, gbs 512. we measured 850 tok/s/GPU",
                                          "that was TP4 PP4 ZeRO-1, micro-batch 1", "what about tp8 pp2?")
    assert "Which plan did that run use?" in asked.answer
    call = given.tool_calls[-1]
    assert call["name"] == "calibrate_to_measurement" and call["arguments"]["measured_tokens_per_s_per_gpu"] == 850
    assert (call["arguments"]["plan"]["tp"], call["arguments"]["plan"]["pp"], call["arguments"]["plan"]["zero"]) == (4, 4, 1)
    assert not any(c["name"] == "calibrate_to_measurement" for c in later.tool_calls)  # asked once, used once
    assert state.pending_measurement is None
