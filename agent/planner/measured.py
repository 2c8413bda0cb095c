"""What the user says their own run measured: a throughput ("we measured 850 tok/s/GPU with TP4 PP4",
"we're getting 1.1k tokens per second per GPU") or a step time ("real run: step time 71.5 s measured",
"our steps take 93 s", "we see 12.4 s per iteration"). Needs both a measurement cue and a per-GPU
throughput unit or a time tied to a step, so a question about a predicted number ("is 850 tok/s/GPU good?",
"you said 60 s per step, why?") is not one."""

from __future__ import annotations

import re

CUE = re.compile(r"\b(?:measured|measure|we\s+(?:get|got|see|saw|hit|reach(?:ed)?)|we(?:'re|\s+are|\s+were)\s+(?:getting|seeing|"
                 r"hitting|at)|observed|in\s+practice|our\s+(?:run|job|cluster)\s+(?:does|did|gets|got|runs\s+at|ran\s+at)|"
                 r"benchmarked|profiled|real\s+run|actual\s+run|in\s+production|"
                 r"(?:our|the)\s+(?:steps?|iterations?|iters?)\s+(?:take|took|takes|are\s+taking|is\s+taking|run\s+at|clocks?))\b")
THROUGHPUT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+s(?:ec(?:ond)?)?|tps)"
                        r"\s*(?:/\s*|per\s+)gpu\b")
NUMBER = r"(\d+(?:\.\d+)?)"
SECONDS = r"\s*(?:s|sec|secs|seconds?)\b"
STEP = r"(?:steps?|iterations?|iters?)"
# "step time 71.5 s", "step time of ~71.5s", "iteration time: 4.2 sec", "71.5 s/step", "93 s per iteration",
# "93 seconds a step", "steps take 93 s"
STEP_TIME = re.compile(rf"\b(?:step|iteration|iter)[\s_-]?time\s*(?:of|=|:|is|was|~|≈|->|→)?\s*(?:about\s+|around\s+|~\s*)?{NUMBER}{SECONDS}"
                       rf"|(?<![\w.]){NUMBER}{SECONDS}\s*(?:/\s*|per\s+|a\s+|an\s+|each\s+)?{STEP}\b"
                       rf"|\b{STEP}\s+(?:take|took|takes|are\s+taking|is\s+taking)\s+(?:about\s+|around\s+|~\s*)?{NUMBER}{SECONDS}")


def _measured(text: str, pattern: re.Pattern) -> re.Match | None:
    """The figure the user says they measured, matched by `pattern`, or None without a measuring cue."""
    lowered = text.lower()
    return pattern.search(lowered) if CUE.search(lowered) else None


def measured_throughput(text: str) -> float | None:
    """Tokens/s per GPU the user says they measured, or None."""
    m = _measured(text, THROUGHPUT)
    if m is None:
        return None
    value = float(m.group(1).replace(",", "")) * (1000 if m.group(2) else 1)
    return value if value > 0 else None


def measured_step_time(text: str) -> float | None:
    """Seconds per training step the user says they measured, or None."""
    m = _measured(text, STEP_TIME)
    if m is None:
        return None
    value = float(next(g for g in m.groups() if g is not None))
    return value if value > 0 else None
