"""A throughput the user says their own run measured: "we measured 850 tok/s/GPU with TP4 PP4",
"we're getting 1.1k tokens per second per GPU". Needs both a measurement cue and a per-GPU
throughput unit, so a question about a predicted number ("is 850 tok/s/GPU good?") is not one."""

from __future__ import annotations

import re

CUE = re.compile(r"\b(?:measured|measure|we\s+(?:get|got|see|saw|hit|reach(?:ed)?)|we(?:'re|\s+are|\s+were)\s+(?:getting|seeing|"
                 r"hitting|at)|observed|in\s+practice|our\s+(?:run|job|cluster)\s+(?:does|did|gets|got|runs\s+at|ran\s+at)|"
                 r"benchmarked|profiled)\b")
THROUGHPUT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+s(?:ec(?:ond)?)?|tps)"
                        r"\s*(?:/\s*|per\s+)gpu\b")


def measured_throughput(text: str) -> float | None:
    """Tokens/s per GPU the user says they measured, or None."""
    lowered = text.lower()
    if not CUE.search(lowered):
        return None
    m = THROUGHPUT.search(lowered)
    if m is None:
        return None
    value = float(m.group(1).replace(",", "")) * (1000 if m.group(2) else 1)
    return value if value > 0 else None
