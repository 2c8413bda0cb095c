"""The offline planner: deterministic chat over the engine's tools, no LLM needed."""

from .planner import run_offline_turn

__all__ = ["run_offline_turn"]
