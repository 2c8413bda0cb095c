"""What the user says their own run measured: a throughput ("we measured 850 tok/s/GPU with TP4 PP4",
"we're getting 1.1k tokens per second per GPU"), a step time ("real run: step time 71.5 s measured",
"our steps take 93 s", "iteration time on our nodes: 12.4 s"), an MFU ("the dashboard shows MFU 38 %")
or a pasted training log (Megatron-LM, torchtitan, DeepSpeed, HF Trainer: read by the engine's own
readers, engine/training_logs). A figure needs a measurement cue — a word that it was measured, that
a tool reported it, or a request to calibrate on it — so a question about a predicted number ("is 850
tok/s/GPU good?", "you said 60 s per step, why?") is not one. A pasted log is its own evidence."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...engine.errors import ShardwiseInputError
from ...engine.training_logs import LogReading, read_log

CUE = re.compile(r"\b(?:measured|measure|we\s+(?:get|got|see|saw|hit|reach(?:ed)?)|we(?:'re|\s+are|\s+were)\s+(?:getting|seeing|"
                 r"hitting|at)|observed|in\s+practice|our\s+(?:run|job|cluster)\s+(?:does|did|gets|got|runs\s+at|ran\s+at)|"
                 r"benchmarked|profiled|real\s+run|actual\s+run|in\s+production|"
                 r"(?:our|the)\s+(?:steps?|iterations?|iters?)\s+(?:take|took|takes|are\s+taking|is\s+taking|run\s+at|clocks?))\b"
                 # a figure named as real: "real step time", "actual throughput", "wall-clock iteration time"
                 r"|\b(?:real|actual|observed|wall[\s-]?clock|steady[\s-]?state)\s+(?:step|iteration|iter|throughput|mfu|tok)"
                 # a tool that reported it: "the dashboard shows", "tensorboard reports", "the logs say"
                 r"|\b(?:says|shows|showed|reports|reported|logged|logs|printed|prints)\b"
                 r"|\b(?:wandb|w&b|tensorboard|mlflow|grafana|nsight|nsys|profiler|dashboard)\b"
                 r"|\bin\s+our\s+(?:runs?|jobs?|training|logs?|tests?|experiments?|benchmarks?)\b"
                 # the run named as done: "ran exactly that", "we ran it overnight", "on our cluster"
                 r"|\b(?:ran|run)\s+(?:it|that|this|exactly|the\s+same|your)\b|\bon\s+our\s+(?:cluster|box|boxes|nodes?|"
                 r"machines?|hardware|gpus)\b"
                 # a request to calibrate on it: "calibrate to that", "recalibrate", "correct for it"
                 r"|\b(?:re-?)?calibrat\w*|\bcorrect\s+for\b|\badjust\s+(?:for|to)\s+(?:it|that|this|our)\b")
PER_GPU_RATE = r"(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+s(?:ec(?:ond)?)?|tps)\s*(?:/\s*|per\s+)gpu\b"
# "850 tok/s/GPU", "1.1k tokens per second per GPU"; the unit first: "tok/s/gpu: 3,950", "throughput per gpu of
# 4,100 tokens/s"
THROUGHPUT = re.compile(rf"(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*{PER_GPU_RATE}"
                        rf"|{PER_GPU_RATE}\s*(?:[:=]|of|is|was|at|around|about|~)?\s*~?\s*(\d[\d,]*(?:\.\d+)?)\s*(k)?\b"
                        r"|throughput\s+per\s+gpu\s*(?:[:=]|of|is|was|at|around|about|~)?\s*~?\s*(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*"
                        r"(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+s(?:ec(?:ond)?)?|tps)\b")
NUMBER = r"(\d+(?:\.\d+)?)"
SECONDS = r"\s*(?:s|sec|secs|seconds?)\b"
STEP = r"(?:steps?|iterations?|iters?)"
# "step time 71.5 s", "step time of ~71.5s", "iteration time on our cluster: 4.2 sec", "71.5 s/step",
# "93 s per iteration", "93 seconds a step", "steps take 93 s"
STEP_TIME = re.compile(rf"\b(?:step|iteration|iter)[\s_-]?time\b[^\d.?!]{{0,30}}?{NUMBER}{SECONDS}"
                       rf"|(?<![\w.]){NUMBER}{SECONDS}\s*(?:/\s*|per\s+|a\s+|an\s+|each\s+)?(?:optimi[sz]er\s+|training\s+)?{STEP}\b"
                       rf"|\b{STEP}\s+(?:take|took|takes|are\s+taking|is\s+taking|is|was|are|were)\s+(?:about\s+|around\s+|~\s*)?"
                       rf"{NUMBER}{SECONDS}")
# "MFU 41%", "mfu of 0.38", "MFU: 41.5 %", "41% MFU"
MFU = re.compile(r"\bmfu\b\s*(?:of|=|:|is|was|at|around|about|~|≈)?\s*~?\s*(\d+(?:\.\d+)?)\s*(%|percent)?"
                 r"|(?<![\w.])(\d+(?:\.\d+)?)\s*(%|percent)\s*mfu\b")


@dataclass(frozen=True)
class MeasuredRun:
    """One measured figure (`kind`: tokens_per_s_per_gpu | step_s | mfu) or a pasted log (`kind` log)."""

    kind: str
    value: float | None = None
    log: str | None = None
    reading: LogReading | None = None

    def tool_arguments(self) -> dict:
        """The calibrate tool's measured argument."""
        names = {"tokens_per_s_per_gpu": "measured_tokens_per_s_per_gpu", "step_s": "measured_step_s",
                 "mfu": "measured_mfu", "log": "log"}
        args = dict.fromkeys(names.values())
        args[names[self.kind]] = self.log if self.kind == "log" else self.value
        return args


def _measured(text: str, pattern: re.Pattern) -> re.Match | None:
    """The figure the user says they measured, matched by `pattern`, or None without a measuring cue."""
    lowered = text.lower()
    return pattern.search(lowered) if CUE.search(lowered) else None


def measured_throughput(text: str) -> float | None:
    """Tokens/s per GPU the user says they measured, or None."""
    m = _measured(text, THROUGHPUT)
    if m is None:
        return None
    number, thousands = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i) is not None)
    value = float(number.replace(",", "")) * (1000 if thousands else 1)
    return value if value > 0 else None


def measured_step_time(text: str) -> float | None:
    """Seconds per training step the user says they measured, or None."""
    m = _measured(text, STEP_TIME)
    if m is None:
        return None
    value = float(next(g for g in m.groups() if g is not None))
    return value if value > 0 else None


def measured_mfu(text: str) -> float | None:
    """MFU in percent the user says they measured ("MFU 41%", "mfu of 0.41"), or None."""
    m = _measured(text, MFU)
    if m is None:
        return None
    number, unit = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
    value = float(number)
    percent = value if unit or value > 1 else 100 * value
    return percent if 0 < percent <= 100 else None


def pasted_log(text: str) -> LogReading | None:
    """A training log in the message, read by the engine's readers; None when there is none."""
    try:
        return read_log(text)
    except ShardwiseInputError:
        return None


def measured_run(text: str) -> MeasuredRun | None:
    """The run the message reports, a pasted log first (its own figure, whatever the prose says)."""
    reading = pasted_log(text)
    if reading is not None:
        return MeasuredRun("log", log=text, reading=reading)
    for kind, read in (("tokens_per_s_per_gpu", measured_throughput), ("step_s", measured_step_time), ("mfu", measured_mfu)):
        value = read(text)
        if value is not None:
            return MeasuredRun(kind, value)
    return None
