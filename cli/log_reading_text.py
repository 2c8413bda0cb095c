"""What `calibrate --from-log` read from a training log, as the CLI says it: the measured figures with their
units, then the run's settings as the flags that set them (`--tp 4 --pp 4 --recompute selective`), so the line can
be checked against the run and reused. It printed the reader's record ("step_s=77.12, peak_gib=60, …, no_sp=False")."""

from __future__ import annotations

from ..engine.setting_text import as_settings_text
from ..engine.training_logs.reading import LogReading
from ..present import seconds
from .flags import flag_for


def _measured(r: LogReading) -> list[str]:
    out = []
    if r.tokens_per_s_per_gpu is not None:
        out.append(f"{r.tokens_per_s_per_gpu:,.0f} tokens/s/GPU")
    if r.step_s is not None:
        out.append(f"step {seconds(r.step_s)}")
    if r.samples_per_s is not None:
        out.append(f"{r.samples_per_s:,.4g} samples/s (whole job)")
    if r.peak_gib is not None:
        out.append(f"peak memory {r.peak_gib:,.1f} GiB")
    return out


def _flags(r: LogReading) -> list[str]:
    settings = {"num_gpus": r.num_gpus, "seq_len": r.seq_len, "global_batch": r.global_batch,
                "precision": r.precision, **r.plan}
    out = []
    for name, value in settings.items():
        if value is None:
            continue
        if name == "no_sp":  # a switch: said only when the run turned SP off
            out += ["--no-sp"] if value else []
            continue
        out.append(f"{flag_for(name)} {value}")
    return out


def reading_text(r: LogReading) -> str:
    parts = [", ".join(_measured(r))]
    flags = _flags(r)
    if flags:
        parts.append("run as " + " ".join(flags))
    notes = "".join(f"; {as_settings_text(note).spelled(flag_for)}" for note in r.notes)
    return f"read from {r.framework} log ({r.entries} {'entry' if r.entries == 1 else 'entries'}): " + "; ".join(p for p in parts if p) + notes
