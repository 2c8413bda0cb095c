"""What an export returns, and how it refuses.

Refusal is an exception, `ExportRefused`, a `ShardwiseInputError`: asking a framework for a
plan it cannot express is a bad request, so the CLI prints the one-line reason and exits 2
like any other bad input, and `recommend --exports` records the reason instead of a file.
Nothing is ever exported with a dimension silently dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..errors import SettingsInputError
from ..setting_text import SettingsText, as_settings_text


class ExportRefused(SettingsInputError):
    """The framework cannot express this plan; the message says why and what would work.

    `reason` and `hint` may name settings (`settings_text("use {precision} bf16", "precision")`): `str()`,
    `.reason` and `.hint` name them as REST and the chat do, `spelled(flag_for)` and `.reason_text` /
    `.hint_text` let the CLI say its flags. `rule` names the limit hit, without the plan's numbers, so
    refusals of many plans can be counted by cause (recommend with an export format); empty when the
    reason is its own name."""

    def __init__(self, fmt: str, reason: str | SettingsText, hint: str | SettingsText = "", rule: str = "") -> None:
        self.format = fmt
        self.reason_text, self.hint_text = as_settings_text(reason), as_settings_text(hint)
        self.reason, self.hint = str(self.reason_text), str(self.hint_text)
        self.rule = rule or self.reason
        said = f"cannot export this plan to {fmt}: " + self.reason_text + (("; " + self.hint_text) if hint else "")
        super().__init__(said.template, *said.settings)


class ExportResult(BaseModel):
    """One exported file.

    `text` is the file exactly as it should be written. `header` is the plan summary; it is
    embedded in `text` as comments wherever the format has comments (TOML, YAML, shell,
    Python) and kept only here for JSON, which has none (see docs/export.md).
    """

    model_config = ConfigDict(frozen=True)

    format: str = Field(description="one of FORMATS")
    filename: str = Field(description="suggested file name")
    text: str
    header: str = Field(description="plan, model, cluster and shardwise version, one fact per line")
    header_in_text: bool = Field(description="False for JSON: the header is not inside `text`")
    warnings: tuple[str, ...] = Field(default=(), description="what the user must do or know for this to match the plan")
    # The warnings as written, naming settings `{like_this}` so the CLI can say its flags (private: not in the
    # JSON or its schema); set by `with_warnings`.
    _warnings_said: tuple[SettingsText, ...] = PrivateAttr(default=())

    @classmethod
    def with_warnings(cls, warnings: "list[str | SettingsText]", **fields) -> "ExportResult":
        said = tuple(as_settings_text(w) for w in warnings)
        out = cls(warnings=tuple(str(w) for w in said), **fields)
        out._warnings_said = said
        return out

    def spelled_warnings(self, spell) -> list[str]:
        """The warnings with their settings named by `spell` (the CLI: flag_for)."""
        if len(self._warnings_said) != len(self.warnings):  # built without them (read back from JSON)
            return list(self.warnings)
        return [w.spelled(spell) for w in self._warnings_said]
