"""Small pieces every exporter shares: the result with its header, and recompute notes."""

from __future__ import annotations

from .header import comment_block, header_lines
from .plan import ExportPlan
from ..setting_text import SettingsText
from .result import ExportResult

# Selective recompute (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
# Transformer Models", section 4.2) recomputes only the attention score/softmax/dropout
# tensors. FlashAttention (Dao et al. 2022) never stores them and recomputes them in its
# backward, so where a framework has no "selective" switch, running without layer
# checkpointing on a flash/SDPA attention kernel holds the same activations.
SELECTIVE_AS_FLASH_ATTENTION = (
    "recompute 'selective' (Korthikanti et al. 2022) = no layer checkpointing with a FlashAttention/SDPA "
    "kernel, which never stores the attention scores; keep flash/SDPA attention on (not eager)")


def result(fmt: str, filename: str, plan: ExportPlan, target: str, body: str, warnings: list[str | SettingsText],
           marker: str | None = "#", preamble: str = "") -> ExportResult:
    """`marker` is the comment marker of the format, None when it has no comments (JSON). A warning naming
    settings is written into the file with their plain names: the file is the same whichever surface asked."""
    lines = header_lines(plan, target)
    notes = [f"NOTE: {w}" for w in warnings]  # a SettingsText prints its settings' plain names
    header = "\n".join(lines + notes) + "\n"
    if marker is None:
        text = body
    else:
        text = preamble + comment_block(lines + notes, marker) + "\n" + body
    return ExportResult.with_warnings(warnings, format=fmt, filename=filename, text=text, header=header,
                                      header_in_text=marker is not None)
