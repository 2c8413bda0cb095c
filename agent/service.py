"""ChatService: one message in, a stream of events out — the API the CLI and the web use.

    service = ChatService(load_config())
    for event in service.stream("70B on 64 H100s?", session_id=None):
        ...  # SessionEvent, DeltaEvent*, ToolEvent*, ConfigsEvent?, DoneEvent | ErrorEvent

It picks the LLM when one is configured and the offline planner otherwise (or when the LLM
is unreachable and fallback is on), loads and saves the session, carries the scenario,
and attaches configs for the answer's plan from the tool results (never from model text).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Iterator

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
from .loop import TurnRecord, run_llm_turn
from .model import ChatModel, ModelError
from .planner import run_offline_turn
from .sessions import SessionStore
from .state import ConversationState, advance_state

log = logging.getLogger(__name__)


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
                 store: SessionStore | None = None, profile: CalibrationProfile | None = None):
        self.config = config or load_config()
        self.profile = profile  # the user's calibration profile (`ask/chat --profile`), for every tool call
        self.store = store or SessionStore(self.config.session_db)
        self._model = model

    # -- what is answering ----------------------------------------------------------------
    @property
    def mode(self) -> str:
        return "llm" if self._model is not None or self.config.llm_enabled else "offline"

    def model(self) -> ChatModel:
        if self._model is None:
            from .openai_model import OpenAIChatModel

            self._model = OpenAIChatModel(self.config)
        return self._model

    def system_prompt(self, state: ConversationState | None = None) -> str:
        scenario = plan = None
        if state is not None and state.scenario is not None:
            scenario = json.dumps(state.scenario.model_dump(exclude_none=True))
        if state is not None and state.plan is not None:
            plan = state.plan.label()
        return system_prompt(scenario, plan)

    # -- one message ----------------------------------------------------------------------
    def stream(self, message: str, session_id: str | None = None,
               profile: CalibrationProfile | None = None) -> Iterator[Event]:
        """`profile`: this message's calibration profile (the web chat's), else the service's."""
        profile = profile or self.profile
        deadline = time.monotonic() + self.config.deadline_s
        text = (message or "").strip() if isinstance(message, str) else ""
        if not text:
            yield ErrorEvent("the message is empty: ask about a model and a GPU cluster, e.g. "
                             "\"Llama-3.1-70B on 64 H100s, 8k context — what plan?\"")
            return
        if len(text) > self.config.max_message_chars:
            yield ErrorEvent(f"the message is {len(text):,} characters long; the limit is "
                             f"{self.config.max_message_chars:,}. Shorten it (a model can be named by its catalog id, "
                             "or given to `shardwise evaluate --model config.json`).")
            return
        try:
            session = self.store.open(session_id)
        except ShardwiseInputError as exc:
            yield ErrorEvent(str(exc))
            return
        try:
            yield from self._turn(session, text, deadline, profile)
        except Exception:  # an engine or storage bug: a clear event, the traceback in the log only
            log.exception("chat turn failed")
            yield ErrorEvent("the advisor hit an internal error answering this; it has been logged", kind="internal")

    def _turn(self, session, text: str, deadline: float, profile: CalibrationProfile | None = None) -> Iterator[Event]:
        state = ConversationState.load(session.state)
        mode = self.mode
        yield SessionEvent(session_id=session.id, mode=mode, model=self.model().name if mode == "llm" else None)
        record = TurnRecord()
        reserve = lambda n: self.store.next_result_ids(session.id, n)  # noqa: E731
        if mode == "llm":
            try:
                yield from self._llm_turn(session, state, text, deadline, reserve, record, profile)
            except ModelError as exc:
                if self.config.fallback != "offline":
                    yield ErrorEvent(str(exc), kind=exc.kind)
                    return
                notice = (f"_The language model is unavailable ({exc}); this answer comes from the offline "
                          "planner._\n\n")
                yield DeltaEvent(notice)
                record = TurnRecord(answer=notice)
                mode = "offline"
        if mode == "offline":
            yield from run_offline_turn(text, state, reserve, record, profile)
        state = advance_state(state, record.outcomes)
        planner_state = getattr(record, "state", None)
        if planner_state is not None:
            state = planner_state
        plan_outcome = answer_plan(record.outcomes)
        attached = attachments_for(record.outcomes, plan_outcome)
        configs = attached.configs
        if configs:
            yield ConfigsEvent(configs=configs, plan=attached.plan or "", notes=attached.notes,
                               filenames=attached.filenames)
        self.store.append_turn(session.id, record.messages, state.dump())
        evaluation = plan_outcome.result.plan_evaluation() if plan_outcome is not None else None
        yield DoneEvent(session_id=session.id, answer=record.answer, mode=mode,
                        tool_calls=[o.to_json() for o in record.outcomes],
                        plan=evaluation.model_dump(mode="json") if evaluation is not None else None, configs=configs)

    def _llm_turn(self, session, state, text, deadline, reserve, record, profile=None) -> Iterator[Event]:
        model = self.model()
        prompt = self.system_prompt(state)
        guard = LeakGuard([self.config.key()], self.system_prompt(None))
        history = trim_turns(session.turns(), self.config.history_token_budget, self.config.encoding)
        yield from run_llm_turn(
            model, system_prompt=prompt, history=history, user_message=text, tool_schemas=tool_schemas(),
            dispatch=lambda name, args, rid: dispatch(name, args, result_id=rid, profile=profile), reserve_ids=reserve,
            guard=guard, deadline=deadline, max_tool_rounds=self.config.max_tool_rounds, record=record)

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
        return answer


__all__ = ["Answer", "ChatService", "ToolOutcome", "ToolEvent"]
