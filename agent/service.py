"""ChatService: one message in, a stream of events out — the API the CLI and the web use.

    service = ChatService(load_config())
    for event in service.stream("70B on 64 H100s?", session_id=None):
        ...  # SessionEvent, DeltaEvent*, ToolEvent*, ConfigsEvent?, DoneEvent | ErrorEvent

It picks the LLM when one is configured and the offline planner otherwise, loads and saves the
session, carries the scenario, and attaches configs for the answer's plan from the tool results
(never from model text). When the LLM fails after its retries (down, too slow, rate-limited), the
answer ends with an `error` event that says so and carries the offline planner's answer to the
same question (fallback "offline", the default); the session keeps the user's message.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import AsyncIterator, Iterator

from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError
from ..prompts.render import system_prompt
from ..tools import tool_schemas
from ..tools.dispatch import ToolOutcome, dispatch
from .attach import answer_plan, attachments_for
from .config import AgentConfig, load_config
from .events import ConfigsEvent, DeltaEvent, DoneEvent, ErrorEvent, Event, SessionEvent, ToolEvent
from .guard import LeakGuard
from .history import trim_turns
from .message_limit import too_long_message
from .loop import TurnRecord, arun_llm_turn, drive
from .model import ChatModel, ModelError
from .offload import INLINE, Offload
from .planner import run_offline_turn
from .setting_spelling import SPELLINGS, spell_settings
from .planner.entities import normalise
from .planner.measured import profile_meant
from .planner.offer_reply import offer_reply
from .sessions import SessionStore
from .state import ConversationState, advance_state

log = logging.getLogger(__name__)

# When the LLM fails, the offline planner answers the same question; this much of the answer's time
# is kept back from the LLM for that. An offline answer takes well under a second on 2 cores
# (benchmarks/bench_chat.py); the rest covers waiting for a worker thread on a busy server.
FALLBACK_RESERVE_S = 10.0
# ...but never more than this share of a short deadline.
FALLBACK_RESERVE_SHARE = 0.25


def _dispatch(name: str, arguments: str, result_id: str, profile: CalibrationProfile | None = None) -> ToolOutcome:
    return dispatch(name, arguments, result_id=result_id, profile=profile)


def _offline_events(text: str, state: ConversationState, reserve, record: TurnRecord,
                    profile: CalibrationProfile | None = None, spelling: str = "field") -> list[Event]:
    """The offline planner's whole turn (engine work; it fills `record`), its settings named for the surface
    (`spelling`: setting_spelling.py; the stored answer the same as the one shown)."""
    events = list(run_offline_turn(text, state, reserve, record, profile))
    if spelling == "field":
        return events
    record.answer = spell_settings(record.answer, spelling)
    for message in record.messages:
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            message["content"] = spell_settings(message["content"], spelling)
    return [DeltaEvent(spell_settings(e.text, spelling)) if isinstance(e, DeltaEvent) else e for e in events]


@dataclass
class Answer:
    """A whole reply, for `shardwise ask --json` and scripts."""

    answer: str = ""
    session: str | None = None
    mode: str = "offline"
    tool_calls: list[dict] = field(default_factory=list)
    plan: dict | None = None
    configs: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    error_kind: str | None = None

    def to_json(self) -> dict:
        out = {"answer": self.answer, "session": self.session, "mode": self.mode, "tool_calls": self.tool_calls,
               "plan": self.plan, "configs": self.configs}
        if self.error:
            out["error"] = self.error
        return out


class ChatService:
    def __init__(self, config: AgentConfig | None = None, *, model: ChatModel | None = None,
                 store: SessionStore | None = None, profile: CalibrationProfile | None = None,
                 setting_spelling: str = "field"):
        if setting_spelling not in SPELLINGS:
            raise ValueError(f"setting_spelling {setting_spelling!r} is not one of {', '.join(SPELLINGS)}")
        self.setting_spelling = setting_spelling  # how offline answers name settings: REST field, CLI flag, words
        self.config = config or load_config()
        self.profile = profile  # the user's calibration profile (`ask/chat --profile`), for every tool call
        self.store = store or SessionStore(self.config.session_db)
        self._model = model
        self._amodel = None
        self._tool_schemas: list[dict] | None = None

    # -- what is answering ----------------------------------------------------------------
    @property
    def mode(self) -> str:
        return "llm" if self._model is not None or self.config.llm_enabled else "offline"

    def model(self) -> ChatModel:
        """The LLM for synchronous callers."""
        if self._model is None:
            from .openai_model import OpenAIChatModel

            self._model = OpenAIChatModel(self.config)
        return self._model

    def amodel(self):
        """The LLM for an event loop: the `openai` async client (a model given to the constructor as is)."""
        if self._model is not None:
            return self._model
        if self._amodel is None:
            from .async_openai_model import AsyncOpenAIChatModel

            self._amodel = AsyncOpenAIChatModel(self.config)
        return self._amodel

    def tool_schemas(self) -> list[dict]:
        """The tools' JSON schemas, built once per service (pydantic's schema generation costs ~50 ms)."""
        if self._tool_schemas is None:
            self._tool_schemas = tool_schemas()
        return self._tool_schemas

    def system_prompt(self, state: ConversationState | None = None) -> str:
        scenario = plan = None
        if state is not None and state.scenario is not None:
            # compact separators: the same JSON the tools take, in fewer tokens (tests/agent/test_prompt_budget.py)
            scenario = json.dumps(state.scenario.model_dump(exclude_none=True), separators=(",", ":"))
        if state is not None and state.plan is not None:
            plan = state.plan.label()
        return system_prompt(scenario, plan)

    # -- one message ----------------------------------------------------------------------
    def stream(self, message: str, session_id: str | None = None,
               profile: CalibrationProfile | None = None) -> Iterator[Event]:
        """The answer's events, for synchronous callers (the CLI): everything runs in this thread.
        `profile`: this message's calibration profile (the web chat's), else the service's."""
        return drive(self._events(message, session_id, INLINE, None, profile or self.profile, asynchronous=False))

    async def astream(self, message: str, session_id: str | None = None, *, offload: Offload = INLINE,
                      deadline_s: float | None = None, profile: CalibrationProfile | None = None
                      ) -> AsyncIterator[Event]:
        """The same events for an event loop: the LLM is awaited (the `openai` async client), engine work
        and session I/O go where `offload` sends them. `deadline_s` shortens the configured deadline;
        `profile` as for `stream`."""
        async for event in self._events(message, session_id, offload, deadline_s, profile or self.profile,
                                        asynchronous=True):
            yield event

    async def _events(self, message: str, session_id: str | None, offload: Offload, deadline_s: float | None,
                      profile: CalibrationProfile | None, *, asynchronous: bool) -> AsyncIterator[Event]:
        budget = self.config.deadline_s if deadline_s is None else min(deadline_s, self.config.deadline_s)
        deadline = time.monotonic() + budget
        text = (message or "").strip() if isinstance(message, str) else ""
        if not text:
            yield ErrorEvent("the message is empty: ask about a model and a GPU cluster, e.g. "
                             "\"Llama-3.1-70B on 64 H100s, 8k context — what plan?\"")
            return
        if len(text) > self.config.max_message_chars:
            yield ErrorEvent(too_long_message(len(text), self.config.max_message_chars))
            return
        try:
            session = await offload.io(self.store.open, session_id)
        except ShardwiseInputError as exc:
            yield ErrorEvent(str(exc))
            return
        try:
            async for event in self._turn(session, text, deadline, offload, asynchronous, profile):
                yield event
        except ModelError as exc:  # the engine's pool had no thread before the deadline
            yield ErrorEvent(str(exc), kind=exc.kind)
        except Exception:  # an engine or storage bug: a clear event, the traceback in the log only
            log.exception("chat turn failed")
            yield ErrorEvent("the advisor hit an internal error answering this; it has been logged", kind="internal")

    async def _turn(self, session, text: str, deadline: float, offload: Offload,
                    asynchronous: bool, profile: CalibrationProfile | None = None) -> AsyncIterator[Event]:
        state = ConversationState.load(session.state)
        mode = self.mode
        model = (self.amodel() if asynchronous else self.model()) if mode == "llm" else None
        yield SessionEvent(session_id=session.id, mode=mode, model=model.name if model is not None else None)
        record = TurnRecord()
        reserve = lambda n: self.store.next_result_ids(session.id, n)  # noqa: E731
        reply = offer_reply(text, state) if mode == "llm" else None
        if mode == "llm" and reply is None and profile is None and state.profile is not None and (
                state.profile_in_use or profile_meant(normalise(text), fitted=True)):
            profile = state.profile  # "with our profile, …": the one fitted earlier in this chat (the planner does the same)
        if reply is not None:
            # "yes" / "no" to the calibration just offered: the planner's deterministic answer (it fits the run
            # again and sets profile_in_use, which the LLM path then honours); no model call needed
            for event in await offload.cpu(_offline_events, text, state, reserve, record, profile, self.setting_spelling, deadline=deadline):
                yield event
            mode = "offline"
        elif mode == "llm":
            # Keep time back for the offline planner's answer in case the LLM fails.
            reserve_s = min(FALLBACK_RESERVE_S, FALLBACK_RESERVE_SHARE * (deadline - time.monotonic()))
            llm_deadline = deadline - reserve_s if self.config.fallback == "offline" else deadline
            try:
                async for event in self._llm_turn(model, session, state, text, llm_deadline, reserve, record, offload,
                                                  profile):
                    yield event
            except ModelError as exc:
                async for event in self._degrade(exc, session, state, text, deadline, reserve, offload, profile):
                    yield event
                return
        else:
            for event in await offload.cpu(_offline_events, text, state, reserve, record, profile, self.setting_spelling, deadline=deadline):
                yield event
        done = await offload.cpu(self._finish, session.id, state, record, mode, deadline=deadline)
        for event in done:
            yield event

    def _finish(self, session_id: str, state: ConversationState, record: TurnRecord, mode: str) -> list[Event]:
        """Store the turn; the configs and done events (exports run here: engine work)."""
        # an offer to calibrate stands for one turn: the next message answers it or moves on
        state = advance_state(state.model_copy(update={"calibration_offered": False, "pending_measurement": None}),
                              record.outcomes)
        planner_state = getattr(record, "state", None)
        if planner_state is not None:
            state = planner_state
        plan_outcome = answer_plan(record.outcomes)
        attached = attachments_for(record.outcomes, plan_outcome)
        configs = attached.configs
        events: list[Event] = []
        if configs:
            events.append(ConfigsEvent(configs=configs, plan=attached.plan or "", notes=attached.notes,
                                       filenames=attached.filenames))
        self.store.append_turn(session_id, record.messages, state.dump())
        evaluation = plan_outcome.result.plan_evaluation() if plan_outcome is not None else None
        events.append(DoneEvent(session_id=session_id, answer=record.answer, mode=mode,
                                tool_calls=[o.to_json() for o in record.outcomes],
                                plan=evaluation.model_dump(mode="json") if evaluation is not None else None,
                                configs=configs))
        return events

    async def _degrade(self, exc: ModelError, session, state, text: str, deadline: float, reserve,
                       offload: Offload, profile: CalibrationProfile | None = None) -> AsyncIterator[Event]:
        """The LLM failed after its retries: say what happened, with the offline planner's answer to the
        same question when fallback allows it. The user's message stays in the session either way."""
        user = {"role": "user", "content": text}
        if self.config.fallback != "offline":
            await offload.io(self.store.append_turn, session.id, [user], None)
            yield ErrorEvent(str(exc), kind=exc.kind)
            return
        record = TurnRecord()
        try:
            await offload.cpu(_offline_events, text, state, reserve, record, profile, self.setting_spelling, deadline=deadline)
            finished = await offload.cpu(self._finish, session.id, state, record, "offline", deadline=deadline)
        except ModelError:  # no engine thread before the deadline either
            await offload.io(self.store.append_turn, session.id, [user], None)
            yield ErrorEvent(str(exc), kind=exc.kind)
            return
        done = next(e for e in finished if isinstance(e, DoneEvent))
        offline = {"answer": done.answer, "mode": "offline", "tool_calls": done.tool_calls, "plan": done.plan,
                   "configs": done.configs}
        yield ErrorEvent(f"{exc} — the offline planner answered instead", kind=exc.kind, offline=offline)

    async def _llm_turn(self, model, session, state, text, deadline, reserve, record,
                        offload: Offload, profile: CalibrationProfile | None = None) -> AsyncIterator[Event]:
        prompt = self.system_prompt(state)
        guard = LeakGuard([self.config.key()], self.system_prompt(None))
        history = trim_turns(session.turns(), self.config.history_token_budget, self.config.encoding)

        def run_tool(name: str, arguments: str, result_id: str):
            return offload.cpu(_dispatch, name, arguments, result_id, profile, deadline=deadline)

        async for event in arun_llm_turn(
                model, system_prompt=prompt, history=history, user_message=text, tool_schemas=self.tool_schemas(),
                dispatch=run_tool, reserve_ids=lambda n: offload.io(reserve, n),
                guard=guard, deadline=deadline, max_tool_rounds=self.config.max_tool_rounds, record=record,
                scenario=state.scenario.model_dump(exclude_none=True) if state.scenario is not None else None):
            yield event

    def ask(self, message: str, session_id: str | None = None) -> Answer:
        """The whole reply at once (the stream, collected)."""
        answer = Answer(mode=self.mode)
        parts: list[str] = []
        for event in self.stream(message, session_id):
            if isinstance(event, SessionEvent):
                answer.session, answer.mode = event.session_id, event.mode
            elif isinstance(event, DeltaEvent):
                parts.append(event.text)
            elif isinstance(event, DoneEvent):
                answer.answer, answer.mode = event.answer, event.mode
                answer.tool_calls, answer.plan, answer.configs = event.tool_calls, event.plan, event.configs
            elif isinstance(event, ErrorEvent):
                answer.error, answer.error_kind = event.message, event.kind
                answer.answer = "".join(parts)
                if event.offline:  # the LLM failed; the offline planner's answer to the same question
                    answer.answer, answer.mode = event.offline["answer"], "offline"
                    answer.tool_calls, answer.plan = event.offline["tool_calls"], event.offline["plan"]
                    answer.configs = event.offline["configs"]
        return answer


__all__ = ["Answer", "ChatService", "ToolOutcome", "ToolEvent"]
