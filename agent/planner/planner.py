"""The offline planner: chat without an LLM. Deterministic: the same message in the same state
gives the same answer.

It reads the message into a typed request (reading.py: the scenario facts, the plans named or
pointed at, the acts asked for in order, two scenarios to compare, or a question to ask back),
calls the same tools the LLM would, through the same dispatcher, act by act (answers.py, acts.py),
and answers from the templates in prompts/offline/, opening with the scenario it understood and
which values were defaults (understood.py). Every number it writes is a field of a tool result,
cited by the result's id.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator

from ...prompts.render import render
from ...tools.scenario import Plan, Scenario
from ..events import DeltaEvent, ToolEvent
from ..loop import TurnRecord
from ..state import ConversationState, advance_state
from .acts import acts_in_order, side_by_side
from .answers import answer
from .calibrating import calibrate_answer
from .measured import pending_record, profile_meant, prose_of
from .offer_reply import answer_offer, offer_reply
from .defaults import unread_defaults
from .entities import normalise, scaled_batch
from .names import framework_said
from .nothing_to_scale import nothing_to_scale, nothing_to_scale_answer
from .intents import ANSWERABLE, Intent, asks_export
from .cues import COMPARE_STRONG
from .reading import compares_with_discussed, read
from .turn import Turn, base_gpu, base_gpus, base_per_node
from .model_read import model_read_note
from .understood import understood_line

# The user's own plan: stated as theirs ("we run …", "we're running …", "our config is …"), referred to later
OURS = re.compile(r"\b(?:we|i)(?:'re|'m|\s+are|\s+am)?\s+(?:\w+ly\s+)?(?:run|running|use|using|train|training|have|do|did|ran|"
                  r"used)\b|\b(?:our|my)\s+(?:[\w.-]+\s+){0,3}(?:setup|plan|config|layout|run|job|recipe)\b|\bcurrently\b")


def run_offline_turn(message: str, state: ConversationState, reserve: Callable[[int], list[str]],
                     record: TurnRecord, profile=None) -> Iterator[DeltaEvent | ToolEvent]:
    """`profile`: the session's CalibrationProfile, used by every tool call of the turn."""
    record.messages.append({"role": "user", "content": message})
    reply = offer_reply(message, state)  # "yes" / "no" to the calibration offered last turn
    if reply is not None:
        yield from _answer_offer(reply, state, reserve, record, session_profile=profile is not None)
        return
    request = read(message, state)
    message, e, intent = request.message, request.facts, request.intent
    # an accepted profile is used on every turn; a session's own profile (--profile, the page's) takes precedence
    turn = Turn(reserve, record, profile if profile is not None else state.profile if state.profile_in_use else None)
    profile_note, waiting = None, None
    # "and the error bar on that tok/s?" right after an answer given with the profile: the interval of the figure
    # just quoted, so on the same basis (a fresh, uncalibrated figure would answer another question)
    about_last = state.profile_last_answer and intent.detail == "uncertainty" and not e.has_scenario() and not e.plans
    if (profile_meant(normalise(message), state.profile is not None) or about_last) and request.measured is None:
        # "with our profile, what changes at 64 GPUs?": the session's profile, else the one fitted in this chat
        if profile is None and state.profile is not None:
            turn.profile = state.profile
        profile_note = render("offline/profile_note.md.j2", profile=turn.profile, result_id=state.profile_result
                              if profile is None else None)
    if intent.family == "export" and state.plan is not None and not framework_said(normalise(message)):
        e.framework = None  # "the DeepSpeed config" names a file format, not a new training setup; "we use DeepSpeed" does
    if e.batch_with_gpus and e.gpus is None and not (e.global_batch or e.global_batch_tokens) \
            and state.batch_kept_from is not None and state.scenario is not None and state.scenario.gpus:
        # "scale the batch with the gpus then", after a what-if that kept it: the batch per GPU from before that change
        before = state.batch_kept_from
        e.global_batch, e.global_batch_tokens = scaled_batch(before, state.scenario.gpus / before.gpus) \
            if before.gpus else (None, None)
    if intent.family == "explain" and intent.detail == "cuda_graphs":
        e.cuda_graphs, e.cuda_graphs_unscoped = None, False  # the topic asked about, not a setting: every mode is shown
    patch = e.scenario_patch(default_gpu=base_gpu(state), base_gpus=base_gpus(state), base_per_node=base_per_node(state),
                             base=state.scenario)
    scenario = patch.merged_over(state.scenario)
    if request.question:
        text = render("offline/ask_reading.md.j2", question=request.question)
    elif request.measured is not None:
        text = calibrate_answer(request.measured, e, state, scenario, turn, message, request.measured_plans)
        if text is None:  # the run's plan is unknown: the rest of the message answered, and the plan asked for
            waiting = pending_record(request.measured)  # kept: the plan said next turn calibrates this run
            rest = answer(intent, e, state, scenario, patch, turn, message) if intent.family in ANSWERABLE \
                and not (intent.family == "export" and request.measured.log and not asks_export(prose_of(message))) \
                else ""  # a pasted DeepSpeed log's "DeepSpeedEngine configuration" asks for no config
            text = (rest.strip() + "\n\n" if rest.strip() else "") + render("offline/calibrate_need_plan.md.j2")
    elif request.sides:
        text = side_by_side(turn, scenario, e, request.sides, state)
    elif request.context is not None:  # several acts, or one read from what it points at
        text = acts_in_order(request, state, scenario, turn)
    elif nothing_to_scale(e):  # "scale the batch with the gpus" with no GPU change: no empty what-if
        text = nothing_to_scale_answer(state.scenario)
    else:
        act = request.acts[0] if request.acts else None
        if act is not None and act.kind != intent.family:  # the reading corrected the family ("evaluate it at 16k")
            intent = Intent(act.kind, act.detail, intent.injected)
        if act is not None and (act.kind in ("evaluate", "memory") and compares_with_discussed(message, e, state.plan is not None)
                                or act.kind == "explain" and state.plan is not None and len(e.plans) == 1 and e.plans[0]
                                and COMPARE_STRONG.search(normalise(message))):
            e.plans = [{}, e.plans[0]]  # one plan named in a comparison: against the plan under discussion
            intent = Intent("compare", None, intent.injected)
        text = answer(intent, e, state, scenario, patch, turn, message)
    used = next(({**o.arguments["scenario"], **{k: v for k, v in (o.arguments.get("change") or {}).items() if v is not None}}
                 for o in record.outcomes
                 if isinstance(o.arguments, dict) and isinstance(o.arguments.get("scenario"), dict)), None)
    defaults = unread_defaults(normalise(message), Scenario(**used)) if used else []
    if defaults:  # a setting the user seemed to give was not read: say which default stood in
        text = render("offline/defaulted.md.j2", defaults=defaults).strip() + "\n\n" + text
    if e.network_unmatched and used:  # a network the catalog lacks: said, not replaced by another in silence
        text = render("offline/network_unmatched.md.j2", written=e.network_unmatched).strip() + "\n\n" + text
    if request.set_aside:
        text = render("offline/set_aside.md.j2").strip() + "\n\n" + text
    if profile_note:
        text = profile_note.strip() + "\n\n" + text
    read_as = model_read_note(normalise(message), used.get("model") if used else None) if e.model else None
    if read_as:  # "llama 70b": which version was used, and whether the others share its shape
        text = read_as + "\n\n" + text
    line = understood_line(record.outcomes, graphs_scope_assumed=e.cuda_graphs_unscoped)
    if line:  # the scenario used, and which of its values were defaults
        text = line + "\n\n" + text
    if intent.injected or intent.detail == "injection":
        text = render("offline/injection_note.md.j2") + "\n" + text
    yield from turn.events
    once = profile_note is not None and not state.profile_in_use and profile is None and turn.profile is not None
    new_state = advance_state(state.model_copy(update={"scenario": scenario, "calibration_offered": False,
                                                       "pending_measurement": waiting, "profile_last_answer": once}),
                              _calibration_last(record.outcomes))
    if len(e.plans) == 1 and len(e.plans[0]) >= 2 and (OURS.search(normalise(message)) or request.measured is not None
                                                       or state.user_plan is None and any(
            o.name in ("evaluate_plan", "estimate_memory") for o in record.outcomes)):  # a plan they brought to be checked,
        # or the plan of a run they measured (kept when its figure could not be fitted, to be corrected next turn)
        new_state = new_state.model_copy(update={"user_plan": Plan(**e.plans[0])})  # "we run tp8 pp4 zero1 mb1"
    record.state = new_state
    record.answer += text
    record.messages.append({"role": "assistant", "content": text})
    yield DeltaEvent(text)


def _calibration_last(outcomes: list) -> list:
    """The turn's tool calls with a calibration applied last: a comparison answered beside a measured run
    ("… would tp8 pp2 beat it?") does not make its winner the run's plan, which the calibration offer refits on."""
    return sorted(outcomes, key=lambda o: o.name == "calibrate_to_measurement")


def _answer_offer(reply: str, state: ConversationState, reserve: Callable[[int], list[str]],
                  record: TurnRecord, session_profile: bool) -> Iterator[DeltaEvent | ToolEvent]:
    turn = Turn(reserve, record)
    text = answer_offer(reply, state, turn, session_profile)
    yield from turn.events
    new_state = advance_state(state, record.outcomes)
    accepted = reply == "accept" and any(o.ok for o in record.outcomes)
    record.state = new_state.model_copy(update={"calibration_offered": False, "profile_in_use": accepted,
                                                "pending_measurement": None})
    record.answer += text
    record.messages.append({"role": "assistant", "content": text})
    yield DeltaEvent(text)
