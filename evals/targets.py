"""What the evals can talk to.

- `offline`  : the agent's embedded offline planner (the default; gates CI).
- `scripted` : scripted model replies (evals/scripts/*.yaml) replayed through the agent's loop
               and the real tools, as if a model had written them.
- `live`     : the agent over the configured OpenAI-compatible endpoint
               (OPENAI_BASE_URL, OPENAI_API_KEY, SHARDWISE_MODEL).
- `recorded` : replies captured elsewhere (e.g. `shardwise ask --json` output), graded as they are.
- `FunctionTarget` wraps any `respond(messages) -> {answer, tool_calls}` for Python callers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from ..engine.errors import ShardwiseInputError
from .transcript import Conversation, Reply, as_reply


@dataclass
class FunctionTarget:
    """Any function from chat messages to a reply; `factory(case_id)` makes one per conversation."""

    factory: Callable[[str], Callable[[list[dict]], Reply | dict]]
    name: str = "function"
    prompt: str = ""

    def start(self, case_id: str) -> Conversation:
        respond = self.factory(case_id)
        return lambda messages: as_reply(respond(messages))

    def system_prompt(self) -> str:
        return self.prompt


@dataclass
class RecordedTarget:
    """Replies recorded beforehand: {case: ID, turns: [{answer, tool_calls: [{name, arguments, result}]}]}
    per YAML document / JSONL line. A case with no recording gets an error reply (and fails)."""

    recordings: dict[str, list[dict]] = field(default_factory=dict)
    name: str = "recorded"

    @classmethod
    def from_files(cls, paths: list[Path]) -> "RecordedTarget":
        recordings: dict[str, list[dict]] = {}
        for path in paths:
            path = Path(path)
            if not path.exists():
                raise ShardwiseInputError(f"no such transcript file: {path}")
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".jsonl":
                docs = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                loaded = yaml.safe_load(text) or []
                docs = loaded if isinstance(loaded, list) else [loaded]
            for doc in docs:
                if not isinstance(doc, dict) or "case" not in doc:
                    raise ShardwiseInputError(f"{path}: each recording needs `case` and `turns`")
                turns = doc.get("turns") or [{k: v for k, v in doc.items() if k != "case"}]
                recordings.setdefault(str(doc["case"]), []).extend(turns)
        return cls(recordings)

    def start(self, case_id: str) -> Conversation:
        turns = list(self.recordings.get(case_id, []))

        def respond(messages: list[dict]) -> Reply:
            index = sum(1 for m in messages if m["role"] == "user") - 1
            if index >= len(turns):
                return Reply(answer="", error=f"no recorded reply for turn {index + 1} of {case_id}")
            return as_reply(turns[index])

        return respond

    def system_prompt(self) -> str:
        try:
            from ..prompts.render import system_prompt
            return system_prompt()
        except Exception:
            return ""


class AgentTarget:
    """The agent's ChatService: one session per conversation, in a private SQLite file.

    offline: no model (the embedded planner). live: the configured endpoint. scripted: a
    ScriptedModel per case, so the replies are the script's and the tools are real."""

    def __init__(self, kind: str, scripts: dict[str, list[dict]] | None = None, config=None):
        import tempfile

        from ..agent.config import AgentConfig, load_config

        self.kind = kind
        self.scripts = scripts or {}
        self._tmp = tempfile.TemporaryDirectory(prefix="shardwise-eval-")
        db = Path(self._tmp.name) / "sessions.sqlite3"
        if config is not None:
            self.config = config.model_copy(update={"session_db": db})
        elif kind == "live":
            self.config = load_config(session_db=db)
            if not self.config.llm_enabled:
                raise ShardwiseInputError("--target live needs a model: set SHARDWISE_MODEL (and OPENAI_BASE_URL, "
                                          "OPENAI_API_KEY for the endpoint), or use --target offline")
            self.config = self.config.model_copy(update={"fallback": "none"})  # grade the model, not the fallback
        else:
            self.config = AgentConfig(model=None, session_db=db)  # never the user's LLM settings
        self.name = f"live:{self.config.model}" if kind == "live" else kind
        self._service = None

    def _new_service(self, case_id: str):
        from ..agent.service import ChatService

        if self.kind == "scripted":
            from .scripted import ScriptedModel

            if case_id not in self.scripts:
                raise ShardwiseInputError(f"no script for case {case_id}")
            return ChatService(self.config, model=ScriptedModel(self.scripts[case_id]))
        if self._service is None:
            self._service = ChatService(self.config)
        return self._service

    def start(self, case_id: str) -> Conversation:
        service = self._new_service(case_id)
        session: dict[str, str | None] = {"id": None}

        def respond(messages: list[dict]) -> Reply:
            answer = service.ask(messages[-1]["content"], session_id=session["id"])
            session["id"] = answer.session or session["id"]
            data = answer.to_json()
            text, error = data.get("answer") or "", answer.error
            if error and answer.error_kind == "input":  # "the message is empty" is the advisor's answer
                text, error = (text + "\n\n" + error).strip(), None
            return Reply(answer=text, tool_calls=data.get("tool_calls") or [], plan=data.get("plan"),
                         configs=data.get("configs") or {}, error=error)

        return respond

    def system_prompt(self) -> str:
        from ..agent.service import ChatService

        return ChatService(self.config).system_prompt(None)


def make_target(kind: str, scripts: list[Path] | None = None, transcripts: list[Path] | None = None):
    if kind == "recorded":
        if not transcripts:
            raise ShardwiseInputError("--target recorded needs --transcripts FILE (YAML or JSONL recordings)")
        return RecordedTarget.from_files(transcripts)
    if kind == "scripted":
        from .scripted import load_scripts

        return AgentTarget("scripted", scripts=load_scripts(scripts))
    if kind in ("offline", "live"):
        return AgentTarget(kind)
    raise ShardwiseInputError(f"unknown target {kind!r}: offline, scripted, live or recorded")
