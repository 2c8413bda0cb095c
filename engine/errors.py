"""Errors the engine raises for bad *input* (never for an invalid plan: that is data)."""

from __future__ import annotations

import difflib
from typing import Callable

from .catalog_listing import catalog_hint
from .setting_text import SettingsText, spell_settings


class ShardwiseInputError(ValueError):
    """Input that cannot be interpreted: unknown name, malformed config, absurd size.

    The message says what was wrong and what is allowed; the CLI prints it on one line
    and exits with status 2.
    """


class SettingsInputError(ShardwiseInputError):
    """Bad input whose message points at settings of the scenario, written `{gpu}`, `{seq_len}` in its template.

    The engine's message names them as REST bodies and the chat's tools do (gpu, seq_len); a surface with its
    own spelling renders `spelled(...)` instead (the CLI: --gpu, --seq-len), so no surface hears another's syntax.
    """

    def __init__(self, template: str, *settings: str):
        self.template, self.settings = template, settings
        super().__init__(self.spelled(lambda name: name))

    @classmethod
    def from_text(cls, text: SettingsText) -> "SettingsInputError":
        return cls(text.template, *text.settings)

    def spelled(self, spell: Callable[[str], str]) -> str:
        return spell_settings(self.template, self.settings, spell)


def closest_names(name: str, candidates: list[str], limit: int = 3) -> list[str]:
    """The catalog names nearest to a misspelt one, for "did you mean …" messages. A name that begins with, then
    one that contains, what was typed comes first: `qwen3-235b` is a shortened `qwen3-235b-a22b`, though
    difflib's ratio puts `qwen3-32b` (two edits away) ahead of it."""
    lowered = {c.lower(): c for c in candidates}
    typed = name.lower().strip()
    starts = [c for c in lowered if typed and c.startswith(typed)]
    contains = [c for c in lowered if typed and typed in c and c not in starts]
    close = difflib.get_close_matches(typed, list(lowered), n=limit, cutoff=0.4)
    hits = list(dict.fromkeys(sorted(starts, key=len) + sorted(contains, key=len) + close))[:limit]
    return [lowered[h] for h in hits]


def unknown_name_error(kind: str, name: str, candidates: list[str]) -> ShardwiseInputError:
    suggestions = closest_names(name, candidates)
    hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
    return ShardwiseInputError(
        f"unknown {kind} {name!r}.{hint} Give {catalog_hint(kind, len(candidates))}."
    )
