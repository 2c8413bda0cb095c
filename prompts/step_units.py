"""A step time and its change said in one unit: the unit the step itself is written in.

present.duration_ms writes a step in seconds from ten seconds up, in ms below. A change of a 12.5 s step
then reads "−2.6 s", not "−2,565.8 ms" beside it; a small change of a long step keeps its digits ("0.032 s")
rather than rounding to "0.0 s". Formatting only: every number is the engine's, rounded for reading."""

from __future__ import annotations

from ..present import SECONDS_FROM_MS


def step_unit(*steps_ms: float | None) -> str:
    """'s' when the longest of the steps is written in seconds (present.duration_ms), else 'ms'."""
    known = [abs(s) for s in steps_ms if s is not None]
    return "s" if known and max(known) >= SECONDS_FROM_MS else "ms"


def _digits(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:,.1f}"
    seconds = value / 1000
    decimals = 1 if abs(seconds) >= 1 else 2 if abs(seconds) >= 0.1 else 3
    return f"{seconds:,.{decimals}f}"


def duration_in(milliseconds: float | None, *steps_ms: float | None) -> str:
    """A duration in the unit of the steps it sits beside: (9977.3, 12500.0) -> '10.0 s'."""
    if milliseconds is None:
        return "n/a"
    unit = step_unit(milliseconds, *steps_ms)
    return f"{_digits(milliseconds, unit)} {unit}"


def step_change(change_ms: float | None, *steps_ms: float | None) -> str:
    """A signed change of a step, in the step's unit; the sign is read off the printed digits, so a change
    that rounds to zero reads '+0.0 ms', never '-0.0 ms' (as present.signed does for the CLI)."""
    if change_ms is None:
        return "n/a"
    unit = step_unit(*steps_ms)
    shown = _digits(abs(change_ms), unit)
    negative = change_ms < 0 and any(ch in "123456789" for ch in shown)
    return f"{'-' if negative else '+'}{shown} {unit}"


def step_amount(change_ms: float | None, *steps_ms: float | None) -> str:
    """The size of a step's change, unsigned, in the step's unit: '2.6 s' (for '2.6 s less per step')."""
    if change_ms is None:
        return "n/a"
    unit = step_unit(*steps_ms)
    return f"{_digits(abs(change_ms), unit)} {unit}"
