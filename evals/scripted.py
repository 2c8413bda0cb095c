"""A scripted chat model: replies written in advance, replayed through the agent's real loop,
tools and session store — a deterministic stand-in for an LLM.

A script (evals/scripts/*.yaml) lists, per case, the model's replies in order:

    - case: rec-llama3-70b-64xh100
      turns:
        - - tool_calls: [{name: recommend_plans, arguments: {scenario: {model: llama-3-70b, ...}}}]
          - text: "Use {{ last.best.label }} [{{ last.id }}] ..."

`text` is a Jinja template over the tool results the model has seen (as the model sees them):
`results` maps result id -> result, `last` is the latest. That is how a model "reads" a
result: the script states numbers from it without the case file ever storing them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import jinja2
import yaml

from ..agent.model import ModelReply, TextDelta, ToolCall
from ..engine.errors import ShardwiseInputError

SCRIPTS_DIR = Path(__file__).parent / "scripts"
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


def load_scripts(paths: list[Path] | None = None) -> dict[str, list[dict]]:
    """{case id: [reply step, ...]} from every script file."""
    files: list[Path] = []
    for p in paths or [SCRIPTS_DIR]:
        p = Path(p)
        if p.is_dir():
            files += sorted(p.glob("*.yaml"))
        elif p.exists():
            files.append(p)
        else:
            raise ShardwiseInputError(f"no such script file or directory: {p}")
    scripts: dict[str, list[dict]] = {}
    for f in files:
        for doc in yaml.safe_load(f.read_text(encoding="utf-8")) or []:
            if not isinstance(doc, dict) or "case" not in doc or "turns" not in doc:
                raise ShardwiseInputError(f"{f.name}: each script needs `case` and `turns` (a list of reply lists)")
            scripts[str(doc["case"])] = [step for turn in doc["turns"] for step in turn]
    return scripts


def _results(messages: list[dict]) -> dict[str, dict]:
    out = {}
    for m in messages:
        if m.get("role") == "tool":
            try:
                body = json.loads(m.get("content") or "{}")
            except json.JSONDecodeError:
                continue
            out[str(body.get("id", len(out)))] = body
    return out


class ScriptedModel:
    """Implements agent.model.ChatModel from a list of reply steps."""

    def __init__(self, steps: list[dict], name: str = "scripted"):
        self.steps = list(steps)
        self.name = name
        self.calls = 0

    def stream(self, messages: list[dict], tools: list[dict], *, deadline: float) -> Iterator:
        step = self.steps.pop(0) if self.steps else {"text": "(the script has no more replies)"}
        self.calls += 1
        results = _results(messages)
        last = list(results.values())[-1] if results else {}
        text = _ENV.from_string(step.get("text", "")).render(results=results, last=last) if step.get("text") else ""
        calls = [ToolCall(id=f"call_{self.calls}_{i}", name=c["name"],
                          arguments=c["arguments"] if isinstance(c.get("arguments"), str)
                          else json.dumps(c.get("arguments") or {}))
                 for i, c in enumerate(step.get("tool_calls") or [])]
        if text:
            yield TextDelta(text)
        yield ModelReply(text=text, tool_calls=calls, finish_reason="tool_calls" if calls else "stop")
