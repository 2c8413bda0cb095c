"""LogReading: what a training log says about a run — its throughput and, where printed, its plan."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

from ..setting_text import SettingsText, as_settings_text

# A number as the frameworks print it (77120.0, 54.25, 4.1e+01), read whole: a line cut off mid-number
# ("77120.", "4.1e", ".") matches nothing rather than giving a traceback or a value 10x off.
NUMBER = r"(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\d.eE+-])"
# torchtitan's tps/wps, printed with thousands separators ('{round(tps):,}'): "6,188"; "6,1" cut off matches nothing.
GROUPED_INT = r"(\d{1,3}(?:,\d{3})+|\d+)(?![\d,.])"

# A run's first logged iterations include compilation, allocator warm-up and NCCL setup. When a
# log has at least this many throughput entries, the first is dropped and the median of the rest
# taken (a median, not a mean, so one straggler or checkpoint save does not move it).
MIN_ENTRIES_TO_DROP_FIRST = 3


def steady(values: list[float]) -> float:
    kept = values[1:] if len(values) >= MIN_ENTRIES_TO_DROP_FIRST else values
    return float(statistics.median(kept))


@dataclass(frozen=True)
class LogReading:
    framework: str  # which log format was read
    entries: int  # throughput entries found
    tokens_per_s_per_gpu: float | None = None
    step_s: float | None = None
    samples_per_s: float | None = None  # whole job
    peak_gib: float | None = None
    num_gpus: int | None = None
    seq_len: int | None = None
    global_batch: int | None = None
    precision: str | None = None
    setup_framework: str | None = None  # shardwise's --framework this log implies, if any
    plan: dict[str, object] = field(default_factory=dict)  # tp, pp, vpp, cp, ep, etp, zero, micro_batch, recompute, no_sp, hsdp
    # the framework to model when the log cannot say which backend ran and the user did not either (HF Trainer)
    default_framework: str | None = None
    # what the reader chose, to be said with what it read (a batch ramp-up set aside); may name settings `{gpus}`
    notes: tuple[str | SettingsText, ...] = ()

    def facts(self) -> dict[str, object]:
        """What the log itself says about the run, under shardwise's setting names (the plan's knobs as read,
        seq_len, global_batch, precision, framework, gpus): what every surface takes from it and checks its other
        inputs against."""
        said: dict[str, object] = dict(self.plan)
        said.update({k: getattr(self, k) for k in ("seq_len", "global_batch", "precision") if getattr(self, k) is not None})
        if self.setup_framework:
            said["framework"] = self.setup_framework
        if self.num_gpus is not None:
            said["gpus"] = self.num_gpus
        return said

    def found(self) -> list[str]:
        """What was read, for the CLI to show."""
        names = ["tokens_per_s_per_gpu", "step_s", "samples_per_s", "peak_gib", "num_gpus", "seq_len", "global_batch",
                 "precision"]
        out = [f"{n}={getattr(self, n):g}" if isinstance(getattr(self, n), float) else f"{n}={getattr(self, n)}"
               for n in names if getattr(self, n) is not None]
        return out + [f"{k}={v}" for k, v in self.plan.items()]


    def said(self, spell: Callable[[str], str] = lambda name: name) -> str:
        """What was read, and the reader's notes after it: one line for the CLI and the chat (a note's settings
        named by `spell`: the CLI's flag_for, or as the chat's tools name them)."""
        return ", ".join(self.found()) + "".join(f"; {as_settings_text(note).spelled(spell)}" for note in self.notes)
