"""One dispatcher for every tool: JSON arguments in, a ToolOutcome out, never an exception.

Arguments that are not JSON, not an object, or fail validation come back as a readable list
of what to fix (the model reads it and tries again); input the engine cannot interpret
(unknown model, incomplete scenario) likewise. An infeasible plan is a normal result.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from pydantic import ValidationError

from ..engine.errors import ShardwiseInputError
from ..engine.calibration.profile import CalibrationProfile
from .base import Result, Tool
from .calibration import using_profile

log = logging.getLogger(__name__)
MAX_ARGUMENT_CHARS = 20_000  # a tool call longer than this is not a scenario, it is a mistake
SHOWN_VALUE_CHARS = 80  # how much of a rejected value an error message repeats


@dataclass
class ToolOutcome:
    id: str
    name: str
    arguments: dict | str  # parsed arguments, or the raw text when it was not a JSON object
    result: Result | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.result is not None

    def content(self) -> str:
        """The tool message the model reads: compact JSON."""
        if self.result is not None:
            body = self.result.for_model()
        else:
            body = {"id": self.id, "error": f"{self.name} was not run: fix the arguments and call it again",
                    "fix": self.errors}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    def summary(self) -> str:
        if self.result is not None:
            return self.result.summary() or f"{self.name} [{self.id}]"
        return f"{self.name}: invalid arguments ({len(self.errors)} to fix)"

    def to_json(self) -> dict:
        """For `ask --json`, the web's tool events and eval transcripts."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "ok": self.ok,
                "result": self.result.model_dump(mode="json") if self.result is not None else None,
                "errors": self.errors}


def dispatch(name: str, arguments_json: str | dict | None, *, result_id: str = "R0",
             registry: dict[str, Tool] | None = None, profile: CalibrationProfile | None = None) -> ToolOutcome:
    """`profile`: the session's calibration profile, active while the tool runs (tools/calibration.py)."""
    if registry is None:
        from . import registry as default_registry

        registry = default_registry()
    tool = registry.get(name)
    if tool is None:
        return ToolOutcome(result_id, name, _raw(arguments_json),
                           errors=[f"there is no tool named {name!r}; call one of: {', '.join(registry)}"])
    arguments, problem = _parse(arguments_json)
    if problem:
        return ToolOutcome(result_id, name, _raw(arguments_json), errors=[problem])
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as exc:
        return ToolOutcome(result_id, name, arguments, errors=validation_messages(exc))
    try:
        with using_profile(profile):
            result = tool.run(args)
    except ShardwiseInputError as exc:
        return ToolOutcome(result_id, name, arguments, errors=[str(exc)])
    except ValidationError as exc:  # an engine spec rejected a value the Args model let through
        return ToolOutcome(result_id, name, arguments, errors=validation_messages(exc))
    except Exception as exc:  # an engine bug must not end the conversation
        log.exception("tool %s failed", name)
        return ToolOutcome(result_id, name, arguments,
                           errors=[f"internal error in {name} ({type(exc).__name__}); this is a shardwise bug, "
                                   "not a problem with the arguments"])
    return ToolOutcome(result_id, name, arguments, result=result.model_copy(update={"id": result_id}))


def _parse(arguments_json) -> tuple[dict, str | None]:
    if arguments_json is None or arguments_json == "":
        return {}, None
    if isinstance(arguments_json, dict):
        return arguments_json, None
    if len(arguments_json) > MAX_ARGUMENT_CHARS:
        return {}, f"the arguments are {len(arguments_json)} characters long; at most {MAX_ARGUMENT_CHARS} are accepted"
    try:
        value = json.loads(arguments_json)
    except json.JSONDecodeError as exc:
        return {}, f"the arguments are not valid JSON ({exc.msg} at character {exc.pos}); send one JSON object"
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def _raw(arguments_json) -> dict | str:
    if isinstance(arguments_json, dict):
        return arguments_json
    text = arguments_json or ""
    return text if len(text) <= MAX_ARGUMENT_CHARS else text[:MAX_ARGUMENT_CHARS] + "…"


def validation_messages(exc: ValidationError) -> list[str]:
    """pydantic errors as 'where: what is wrong (got X)' lines a model can act on."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        message = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            message = "is not an argument of this tool; remove it"
        elif err.get("type") == "missing":
            message = "is required"
        elif err.get("type") == "value_error":  # a validator's own sentence, without pydantic's prefix
            message = message.removeprefix("Value error, ")
        shown = ""
        if "input" in err and err.get("type") not in ("missing", "extra_forbidden") and not isinstance(err["input"], dict):
            text = json.dumps(err["input"], default=str)
            shown = f" (got {text[:SHOWN_VALUE_CHARS]}{'…' if len(text) > SHOWN_VALUE_CHARS else ''})"
        lines.append(f"{where}: {message}{shown}")
    return lines
