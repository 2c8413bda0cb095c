"""What an export returns, and how it refuses.

Refusal is an exception, `ExportRefused`, a `ShardwiseInputError`: asking a framework for a
plan it cannot express is a bad request, so the CLI prints the one-line reason and exits 2
like any other bad input, and `recommend --exports` records the reason instead of a file.
Nothing is ever exported with a dimension silently dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ShardwiseInputError


class ExportRefused(ShardwiseInputError):
    """The framework cannot express this plan; the message says why and what would work.

    `rule` names the limit hit, without the plan's numbers, so refusals of many plans can be
    counted by cause (recommend with an export format); empty when the reason is its own name."""

    def __init__(self, fmt: str, reason: str, hint: str = "", rule: str = "") -> None:
        self.format = fmt
        self.reason = reason
        self.hint = hint
        self.rule = rule or reason
        super().__init__(f"cannot export this plan to {fmt}: {reason}" + (f"; {hint}" if hint else ""))


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
