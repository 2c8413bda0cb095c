"""The "why:" lines of `shardwise what-if`: each of the engine's reasons (engine/whatif.py `_reasons`) as a
sentence with its units. They printed as the raw record ("gpu_memory: before_gib=80, after_gib=141,
fitting_before=3520, …"); the --json output keeps the record."""

from __future__ import annotations

from ..engine.whatif import Reason, WhatIf
from ..present import TERM_LABELS, knob_change, seconds, signed


def _gpu_memory(n: dict) -> str:
    return (f"GPU memory {n['before_gib']:g} → {n['after_gib']:g} GiB: {n['fitting_before']:,} → "
            f"{n['fitting_after']:,} plans fit")


def _gpu_count(n: dict) -> str:
    return (f"GPUs {n['before']:,} → {n['after']:,} (x{n['gpu_ratio']:.3g}); tokens/s x{n['throughput_ratio']:.3f}, "
            f"a scaling efficiency of {n['scaling_efficiency']:.0%}")


def _global_batch(n: dict) -> str:
    line = f"global batch {n['before']:,} → {n['after']:,} sequences"
    return line + (f" ({n['why']})" if "why" in n else "")


def _largest_time_change(n: dict) -> str:
    label = TERM_LABELS.get(n["term"], n["term"])
    return (f"largest time change: {label} {seconds(n['before_s'])} → {seconds(n['after_s'])} "
            f"({signed(n['delta_s'], 's')})")


SENTENCES = {
    "now_fits": lambda n: f"a plan fits now: {n['fitting_after']:,} plans fit, none did before",
    "no_longer_fits": lambda n: f"nothing fits any more: {n['fitting_before']:,} plans fitted before",
    "gpu_memory": _gpu_memory,
    "peak_tflops": lambda n: (f"peak compute {n['before']:,g} → {n['after']:,g} TFLOP/s per GPU "
                              f"(x{n['ratio']:.3g})"),
    "hbm_bandwidth": lambda n: f"HBM bandwidth {n['before_gbs']:,g} → {n['after_gbs']:,g} GB/s per GPU",
    "network_bandwidth": lambda n: (f"network {n['before_gbs']:,g} → {n['after_gbs']:,g} GB/s per GPU "
                                    f"(one direction)"),
    "gpu_count": _gpu_count,
    "sequence_length": lambda n: f"sequence length {n['before']:,} → {n['after']:,} tokens",
    "global_batch": _global_batch,
    "training_mode": lambda n: f"training mode {n['before']} → {n['after']}",
    "largest_time_change": _largest_time_change,
}


def reason_text(reason: Reason, w: WhatIf) -> str:
    """One reason as a sentence; a rule this file does not know yet prints as its record, not dropped."""
    if reason.rule == "plan_changed":
        return "best plan changed: " + ", ".join(knob_change(k.knob, k.before, k.after) for k in w.plan_changes)
    sentence = SENTENCES.get(reason.rule)
    if sentence is not None:
        try:
            return sentence(reason.numbers)
        except (KeyError, TypeError, ValueError):
            pass
    return f"{reason.rule}: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                          for k, v in reason.numbers.items())
