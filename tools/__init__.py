"""The engine's capabilities as tools: pydantic Args in, pydantic Result out, one dispatcher.

    from shardwise.tools import registry, tool_schemas, dispatch
    dispatch("recommend_plans", '{"scenario": {...}, "top_k": 3}', result_id="R1")

The tool modules (and the engine's search, explain and export) load on first use.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from .dispatch import ToolOutcome, dispatch  # noqa: F401  (the package's API: dispatch(name, arguments_json))

# In the order the model sees them.
TOOL_MODULES = [
    ("recommend", "RECOMMEND_PLANS"),
    ("evaluate_plan", "EVALUATE_PLAN"),
    ("compare", "COMPARE_PLANS"),
    ("what_if", "WHAT_IF"),
    ("evaluate_plan", "ESTIMATE_MEMORY"),
    ("lookup", "LOOKUP_MODEL"),
    ("lookup", "LIST_HARDWARE"),
    ("export", "EXPORT_CONFIG"),
    ("explain", "EXPLAIN_CONCEPT"),
    ("calibrate", "CALIBRATE"),
]


@lru_cache(maxsize=1)
def registry() -> dict:
    tools = {}
    for module, attr in TOOL_MODULES:
        tool = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        tools[tool.name] = tool
    return tools


def tool_schemas() -> list[dict]:
    from .schema import tool_schema

    return [tool_schema(t.name, t.description, t.args) for t in registry().values()]


def __getattr__(name):
    if name == "TOOLS":
        return registry()
    raise AttributeError(name)
