"""Values the answer must state: a truth's `stated` requirement, checked on the answer's numbers.

Some questions are answered only by a particular figure: "what's the error bar on the step
time?" by the two ends of the engine's 80 % interval, "we measured 850 tok/s/GPU, recalibrate"
by what the engine predicted for that run and the scale it fits. The numbers grader checks that
every number stated is backed; this checks that the asked-for ones are stated at all.

Shape (truth.Truth.stated): options -> groups -> alternatives. The answer passes when, for some
option, every group has an alternative the answer states. An alternative is (kind, value) in the
engine's units: "throughput" tokens/s per GPU, "time" seconds, "scale" a factor (×0.89),
"memory" GiB per GPU ("GB" accepted, as loosely written GiB), "percent" a percentage (12.0 for
12 %) said as a gap between prediction and measurement, "mfu" an MFU as a fraction (4.45) said as a
percentage ("445 %") or a multiple of the peak ("4.45x"), "flops" model TFLOP/s per GPU; a
percentage counts only with a word for that near it ("+12.1 % vs measured", "you are 11 % slower"),
so that an unrelated share ("other: 7.2 GiB (10.4 %)") cannot stand for it by coincidence.
"""

from __future__ import annotations

import re
from typing import Iterable

from .numbers import Quantity, extract, matches

Alternative = tuple[str, float]
Group = tuple[Alternative, ...]
Option = tuple[Group, ...]

# The units a stated quantity may carry for each kind; "" is a bare number, as the first end of
# a range usually is ("1,110–1,280 tok/s", "9.8–11.2 s").
ACCEPTED_UNITS = {"throughput": {"", "tok/s"}, "time": {"", "s", "ms", "min"}, "scale": {"", "x"},
                  "percent": {"%"}, "memory": {"", "gib", "gb"}, "mfu": {"%", "x"}, "flops": {"tflops", "pflops"}}


# Words that make a percentage a gap between prediction and measurement; looked for within
# GAP_WORDS_BEFORE characters before the number and GAP_WORDS_AFTER after it.
GAP_WORDS = re.compile(r"off|slow|fast|below|above|over|under|gap|error|miss|differ|predict|measur|calibrat|lower|"
                       r"higher|behind|ahead|than|\bvs\b", re.IGNORECASE)
GAP_WORDS_BEFORE, GAP_WORDS_AFTER = 60, 30


def _says_gap(answer: str, q: Quantity) -> bool:
    end = q.start + len(q.text)
    return bool(GAP_WORDS.search(answer[max(0, q.start - GAP_WORDS_BEFORE):q.start])
                or GAP_WORDS.search(answer[end:end + GAP_WORDS_AFTER]))


def _states(q: Quantity, kind: str, value: float, answer: str = "") -> bool:
    if q.unit not in ACCEPTED_UNITS[kind]:
        return False
    if kind == "percent" and not _says_gap(answer, q):
        return False
    if kind == "time" and q.unit == "":  # a bare end of a range in ms ("9,800–11,200 ms")
        return matches(q, value) or matches(q, value * 1e3)
    if kind == "mfu" and q.unit == "%":  # "445 %" for 4.45, not "4.45 %"
        return matches(q, 100 * value)
    if kind == "percent":
        return any(abs(q.value - v) <= max(0.5, q.half_ulp * 1.0001) for v in (value, -value))
    return matches(q, value)


def missing(answer: str, options: Iterable[Option], names: Iterable[re.Pattern] = ()) -> list[str]:
    """Why the answer fails the requirement (empty: it states one option in full, or there is none)."""
    options = list(options)
    if not options:
        return []
    quantities = extract(answer, names, quotes=False)
    best: list[str] | None = None
    for option in options:
        gaps = [" or ".join(f"{kind} {value:,.4g}" for kind, value in group) for group in option
                if not any(_states(q, kind, value, answer) for q in quantities for kind, value in group)]
        if not gaps:
            return []
        if best is None or len(gaps) < len(best):
            best = gaps
    return [f"not stated: {gap}" for gap in best or []]



