"""A short reply to the calibration the planner just offered ("Calibrating to your run would scale compute by
×… — save the profile with `shardwise calibrate …`"): "yes" / "do it" / "use it" / "ok calibrate" runs the
calibration again on the run already given and keeps its profile in use for the rest of the conversation (the
same ConversationState.profile the calibrating turn stored); "no" / "skip" leaves the predictions uncalibrated.

The run is the one the offer was fitted on: the state's scenario and plan (the calibrating turn set them to the
measured run's) and the tokens/s per GPU the profile records for it (a step time, an MFU or a log was turned
into that figure by the tool, so fitting on it again gives the same scales)."""

from __future__ import annotations

import re

from ...prompts.render import render
from ..state import ConversationState
from .turn import Turn, result_or_error, scenario_args

_PLEASE = r"(?:\s*,?\s*(?:please|pls|thanks|thank\s+you))?"
_TARGET = r"(?:\s+(?:it|that|this|the\s+(?:profile|calibration)|to\s+(?:it|that|our\s+run|our\s+cluster)|on\s+(?:it|that)))?"
_VERB = r"(?:calibrate|apply|use|do|keep|save|go\s+ahead|go\s+for\s+it|run)"
ACCEPT = re.compile(rf"(?:(?:yes|yeah|yep|yup|sure|ok|okay|alright|please|y)\b[\s,!.]*)*(?:(?:and\s+)?(?:(?:please\s+)?{_VERB}{_TARGET}|"
                    rf"(?:sounds\s+)?good|sure|(?:let'?s|lets)\s+(?:do\s+it|{_VERB}{_TARGET})))?{_PLEASE}")
DECLINE = re.compile(rf"(?:no|nope|nah|n|skip(?:\s+it)?|not\s+now|no\s+need|(?:please\s+)?don'?t(?:\s+{_VERB}{_TARGET})?|"
                     rf"leave\s+it)(?:[\s,!.]+(?:thanks|thank\s+you|not\s+now|skip(?:\s+it)?|"
                     rf"(?:please\s+)?don'?t(?:\s+{_VERB}{_TARGET})?|leave\s+it(?:\s+uncalibrated)?))*{_PLEASE}")


def _bare(message: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[!.?]+\s*$", "", message.strip().lower().replace("’", "'"))).strip()


def offer_reply(message: str, state: ConversationState) -> str | None:
    """"accept", "decline", or None: the message is no reply to a pending calibration offer."""
    if not state.calibration_offered or state.profile is None or not state.profile.runs:
        return None
    text = _bare(message)
    if not text:
        return None
    if DECLINE.fullmatch(text):
        return "decline"
    if ACCEPT.fullmatch(text):
        return "accept"
    return None


def answer_offer(reply: str, state: ConversationState, turn: Turn, session_profile: bool = False) -> str:
    """`session_profile`: the session has its own profile (--profile, the page's), which keeps precedence."""
    if reply == "decline":
        return render("offline/calibration_declined.md.j2")
    run = state.profile.runs[-1]
    out = turn.call("calibrate_to_measurement", {"scenario": scenario_args(state.scenario), "plan": state.plan.model_dump(),
                                                 "measured_tokens_per_s_per_gpu": run.measured_tokens_per_s_per_gpu})
    if not out.ok:
        return result_or_error(out, "offline/calibration_accepted.md.j2")
    return render("offline/calibration_accepted.md.j2", r=out.result, session_profile=session_profile)
