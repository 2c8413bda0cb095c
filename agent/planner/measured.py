"""What the user says their own run measured: a throughput ("we measured 850 tok/s/GPU with TP4 PP4",
"we're getting 1.1k tokens per second per GPU") or a step time ("real run: step time 71.5 s measured",
"our steps take 93 s", "we see 12.4 s per iteration"). Needs both a measurement cue and a per-GPU
throughput unit or a time tied to a step, so a question about a predicted number ("is 850 tok/s/GPU good?",
"you said 60 s per step, why?") is not one. Also an MFU ("38.6% MFU"), a whole-job rate ("54,400 tokens/s in
total"; a rate said neither per GPU nor in total is flagged, to be asked about), and a zero (returned as 0,
to be answered, not dropped). A pasted training-log line (Megatron-LM's iteration line,
torchtitan's metrics line, DeepSpeed's throughput timer, HF Trainer's final metrics) is a measurement
of its own, read by the same readers as `shardwise calibrate --from-log`."""

from __future__ import annotations

import re

from ...engine.errors import ShardwiseInputError
from ...engine.training_logs import LogReading, read_log

CUE = re.compile(r"\b(?:measured|our\s+mfu|calibrat(?:e|ed|ing)\s+(?:to|on|against|with)|gives?\s+(?:us|me)|"
                 r"our\s+(?:step|iteration|iter)[\s_-]?times?|measure|we\s+(?:get|got|see|saw|hit|reach(?:ed)?)|we(?:'re|\s+are|\s+were)\s+(?:getting|seeing|"
                 r"hitting|at)|observed|in\s+practice|our\s+(?:run|job|cluster)\s+(?:does|did|gets|got|runs\s+at|ran\s+at)|"
                 r"benchmarked|profiled|real\s+run|actual\s+run|in\s+production|"
                 r"(?:our|the)\s+(?:steps?|iterations?|iters?)\s+(?:take|took|takes|are\s+taking|is\s+taking|run\s+at|clocks?))\b")
THROUGHPUT = re.compile(r"(?<![\w.,-])(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+s(?:ec(?:ond)?)?|tps)"
                        r"\s*(?:/\s*|per\s+)gpu\b")
# "54,400 tokens/s in total", "54.4k tok/s for the whole job", "cluster throughput of 54,400 tokens/s"
TOKENS_PER_S = r"(?<![\w.,-])(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+s(?:ec(?:ond)?)?|tps)\b"
WHOLE_JOB = re.compile(TOKENS_PER_S + r"(?!\s*(?:/\s*|per\s+)gpu)[^.?!\n]{0,20}?\b(?:in\s+total|total|overall|for\s+the\s+(?:whole\s+)?"
                       r"(?:job|run|cluster)|across\s+(?:all\s+)?(?:the\s+)?(?:\d+\s+)?gpus|cluster[\s-]wide|aggregate)\b"
                       r"|\b(?:total|overall|aggregate|cluster|job)\s+throughput\s+(?:of|is|was|=|:)?\s*(?:about\s+|~\s*)?" + TOKENS_PER_S)
# a rate said without "per GPU" or "total": which one it is decides a factor of the GPU count, so it is asked
BARE_RATE = re.compile(TOKENS_PER_S + r"(?!\s*(?:/\s*|per\s+)gpu)")
NUMBER = r"(?<![\w.,-])(\d+(?:\.\d+)?)"
# the unit is captured: "77,120 ms" and "77.1 s" are the same step
SECONDS = r"\s*(ms|msecs?|milliseconds?|s|sec|secs|seconds?)\b"
STEP = r"(?:steps?|iterations?|iters?)"
# "step time 71.5 s", "step time of ~71.5s", "iteration time: 4.2 sec", "71.5 s/step", "93 s per iteration",
# "93 seconds a step", "steps take 93 s"
STEP_TIME = re.compile(rf"\b(?:step|iteration|iter)[\s_-]?time\s*(?:of|=|:|is|was|~|≈|->|→)?\s*(?:about\s+|around\s+|~\s*)?{NUMBER}{SECONDS}"
                       rf"|(?<![\w.]){NUMBER}{SECONDS}\s*(?:/\s*|per\s+|a\s+|an\s+|each\s+)?{STEP}\b"
                       rf"|\b{STEP}\s+(?:take|took|takes|are\s+taking|is\s+taking)\s+(?:about\s+|around\s+|~\s*)?{NUMBER}{SECONDS}")


# "38.6% MFU", "MFU of 38.6%", "mfu: 0.386", "at 41 % mfu"
MFU = re.compile(r"(?<![\w.,-])(\d+(?:\.\d+)?)\s*%\s*mfu\b|\bmfu\s*(?:of|=|:|is|was|at|around|about|~|≈)?\s*(?:about\s+|around\s+|~\s*)?"
                 r"(\d+(?:\.\d+)?)\s*(%)?")


# "can you calibrate to our cluster?", "how do I calibrate": calibration asked for, with no figure to fit
CALIBRATION_ASKED = re.compile(r"\bcalibrat(?:e|ed|ing|ion)\b")


def calibration_asked_without_a_figure(text: str) -> bool:
    lowered = text.lower()
    return CALIBRATION_ASKED.search(lowered) is not None and pasted_log(text) is None and not any(
        f(text) is not None for f in (measured_throughput, measured_step_time, measured_mfu, measured_total_throughput))


def says_measured(text: str) -> bool:
    """The message gives a figure of the user's own run (any of the forms above, or a pasted log line)."""
    return pasted_log(text) is not None or measured_rate_unclear(text) or any(
        f(text) is not None for f in (measured_throughput, measured_step_time, measured_mfu, measured_total_throughput))


def _measured(text: str, pattern: re.Pattern) -> re.Match | None:
    """The figure the user says they measured, matched by `pattern`, or None without a measuring cue."""
    lowered = text.lower()
    return pattern.search(lowered) if CUE.search(lowered) else None


def measured_throughput(text: str) -> float | None:
    """Tokens/s per GPU the user says they measured (or a pasted torchtitan log's), or None."""
    log = pasted_log(text)
    if log is not None:
        return log.tokens_per_s_per_gpu
    m = _measured(text, THROUGHPUT)
    if m is None:
        return None
    value = float(m.group(1).replace(",", "")) * (1000 if m.group(2) else 1)
    return value  # 0 is returned: a measured zero is answered, not dropped


def measured_step_time(text: str) -> float | None:
    """Seconds per training step the user says they measured (or a pasted log's), or None."""
    log = pasted_log(text)
    if log is not None:
        return log.step_s
    m = _measured(text.replace(",", ""), STEP_TIME)
    if m is None:
        return None
    number, unit = [g for g in m.groups() if g is not None][:2]
    value = float(number) / (1000.0 if unit.startswith("m") else 1.0)
    return value  # 0 is returned: a measured zero is answered, not dropped


def measured_total_throughput(text: str) -> float | None:
    """Tokens/s of the whole job the user says they measured ("54,400 tokens/s in total"), or None."""
    m = _measured(text, WHOLE_JOB)
    if m is None:
        return None
    number, k = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    value = float(number.replace(",", "")) * (1000 if k else 1)
    return value  # 0 is returned: a measured zero is answered, not dropped


def measured_rate_unclear(text: str) -> bool:
    """A measured tokens/s said neither per GPU nor for the whole job ("we measured 54,400 tokens/s")."""
    return (measured_throughput(text) is None and measured_total_throughput(text) is None
            and _measured(text, BARE_RATE) is not None)


def measured_mfu(text: str) -> float | None:
    """The MFU the user says their run measured, as a fraction ("38.6%" -> 0.386), or None. A number
    written without % is a fraction when at most 1 ("mfu 0.386"), a percent above ("mfu 38.6")."""
    m = _measured(text, MFU)
    if m is None:
        return None
    value = float(m.group(1) or m.group(2))
    fraction = value / 100 if m.group(1) or m.group(3) or value > 1 else value
    return fraction


def pasted_log(text: str) -> LogReading | None:
    """What a training-log excerpt pasted into the message measured, or None (no line any reader knows)."""
    try:
        return read_log(text)
    except ShardwiseInputError:
        return None


# Where a log line starts, when the user wrote words before it on the same line ("70B on 64 H100s: [titan] …")
LOG_START = re.compile(r"\[titan\]|\[\d{4}-\d\d-\d\d|\[default\d+\]|\[rank\d+\]|\biteration\s+\d+\s*/|\bstep:\s*\d+|"
                       r"\bepoch=\d+/micro_step|\{\s*['\"]train_|\bRunningAvgSamplesPerSec=|\belapsed time per iteration")


def without_log_lines(text: str) -> str:
    """The message without the training-log lines pasted into it: their numbers ("iteration 20/100",
    "consumed samples: 10240") are the log's, not a scenario's GPUs or batch. Words before a log on its
    line are the user's and stay."""
    kept = []
    for line in text.splitlines():
        if pasted_log(line) is None:
            kept.append(line)
            continue
        start = LOG_START.search(line)
        if start is not None and start.start() > 0:
            kept.append(line[:start.start()])
    return "\n".join(kept)
