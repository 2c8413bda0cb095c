"""What the user says their own run measured: a throughput ("we measured 850 tok/s/GPU with TP4 PP4",
"we're getting 1.1k tokens per second per GPU", "tok/s/gpu: 3,950"), a step time ("real run: step time
71.5 s measured", "our steps take 93 s", "iteration time on our nodes: 12.4 s", "77,120 ms"), an MFU
("the dashboard shows MFU 38 %", "38.6% MFU"), a whole-job rate ("54,400 tokens/s in total"; a rate said
neither per GPU nor in total is flagged, to be asked about) or a pasted training log (Megatron-LM,
torchtitan, DeepSpeed, HF Trainer: read by the engine's own readers, engine/training_logs, as
`shardwise calibrate --from-log` reads them). A figure needs a measurement cue — a word that it was
measured, that a tool reported it, or a request to calibrate on it — so a question about a predicted
number ("is 850 tok/s/GPU good?", "you said 60 s per step, why?") is not one. A pasted log is its own
evidence. A zero is returned as 0, to be answered, not dropped; a signed or exponent number ('-5',
'1e9') is not read as its last digits."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...engine.errors import ShardwiseInputError
from ...engine.memory_units import conversion_text, to_gib
from ...engine.training_logs import LogReading, read_log
from .measured_range import middle_of_range
from .target_rate import without_target

CUE = re.compile(r"\b(?:measured|our\s+mfu|calibrat(?:e|ed|ing)\s+(?:to|on|against|with)|gives?\s+(?:us|me)|"
                 r"our\s+(?:step|iteration|iter)[\s_-]?times?|measure|we\s+(?:get|got|see|saw|hit|reach(?:ed)?)|"
                 r"we(?:'re|\s+are|\s+were)\s+(?:getting|seeing|hitting|at)|observed|in\s+practice|"
                 # "our run does", and with the run's plan between: "our tp4 pp4 run does 850 tok/s/gpu"
                 r"our\s+(?:[\w.=-]+\s+){0,3}?(?:run|job|cluster)\s+(?:does|did|gets|got|hits|runs\s+at|ran\s+at|is\s+at|was\s+at)|"
                 r"benchmarked|profiled|real\s+run|actual\s+run|in\s+production|"
                 r"(?:our|the|each|every|one|an?)\s+(?:steps?|iterations?|iters?)\s+(?:take|took|takes|are\s+taking|is\s+taking|run\s+at|clocks?))\b"
                 # a figure named as real: "real step time", "actual throughput", "wall-clock iteration time"
                 r"|\b(?:real|actual|observed|wall[\s-]?clock|steady[\s-]?state)\s+(?:step|iteration|iter|throughput|mfu|tok)"
                 # a tool that reported it: "the dashboard shows", "tensorboard reports", "the logs say"
                 r"|\b(?:says|shows|showed|reports|reported|logged|logs|printed|prints)\b"
                 r"|\b(?:wandb|w&b|tensorboard|mlflow|grafana|nsight|nsys|profiler|dashboard|tqdm)\b"
                 r"|\bin\s+our\s+(?:runs?|jobs?|training|logs?|tests?|experiments?|benchmarks?)\b"
                 # the run named as done: "ran exactly that", "we ran it overnight", "on our cluster"
                 r"|\b(?:ran|run)\s+(?:it|that|this|exactly|the\s+same|your)\b|\bon\s+our\s+(?:cluster|box|boxes|nodes?|"
                 r"machines?|hardware|gpus)\b"
                 # a request to calibrate on it: "calibrate to that", "recalibrate", "correct for it"
                 # (as typed in a hurry too: "calbrate pls", "callibrate")
                 r"|\b(?:re-?)?cal+[ia]?b[ae]?rat\w*|\bcorrect\s+for\b|\badjust\s+(?:for|to)\s+(?:it|that|this|our)\b"
                 # taken into the model: "fold that into your model", "factor this in", "bake it into the predictions"
                 r"|\b(?:fold|factor|bake|feed)\s+(?:it|that|this|these|those|them)\s+in(?:to)?\b"
                 # a figure said as got: "got 1.9 s/step with TP2 PP4", "getting ~850 tok/s/gpu"
                 r"|\b(?:got|getting|gets)\s+(?:~\s*|about\s+|around\s+|roughly\s+)?\d")
# A number read whole: not the '5' of '-5', the '9' of '1e9' or the '400' of '54,400'.
WHOLE = r"(?<![\w.,-])"
RATE = r"(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+s(?:ec(?:ond)?)?|tps)"
# per GPU, however named: "tokens/sec per device", "tok/s per accelerator", "tok/s/card"
GPU_WORD = r"(?:gpu|device|accelerator|card)"
PER_GPU_RATE = rf"{RATE}\s*(?:/\s*|per\s+){GPU_WORD}\b"
SAID_AS = r"\s*(?:[:=]|of|is|was|at|around|about|~)?\s*~?\s*"
# "850 tok/s/GPU", "1.1k tokens per second per GPU"; the unit first: "tok/s/gpu: 3,950", "throughput per gpu of
# 4,100 tokens/s"
THROUGHPUT = re.compile(rf"{WHOLE}(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*{PER_GPU_RATE}"
                        rf"|{PER_GPU_RATE}{SAID_AS}{WHOLE}(\d[\d,]*(?:\.\d+)?)\s*(k)?\b"
                        rf"|throughput\s+per\s+gpu{SAID_AS}{WHOLE}(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*{RATE}\b"
                        # the rate named first, "per GPU" after the figure: "tps ~5.9k per gpu", "tok/s: 4,100/gpu"
                        rf"|\b{RATE}{SAID_AS}{WHOLE}(\d[\d,]*(?:\.\d+)?)\s*(k)?\s*(?:/\s*|per\s+){GPU_WORD}\b")
# "54,400 tokens/s in total", "54.4k tok/s for the whole job", "cluster throughput of 54,400 tokens/s"
# a job's rate is often said in millions: "~1.23 million tokens/s", "1.2M tok/s"
TOKENS_PER_S = rf"{WHOLE}(\d[\d,]*(?:\.\d+)?)\s*(k|m|mil(?:lion)?)?\s*{RATE}\b"
WHOLE_JOB = re.compile(TOKENS_PER_S + r"(?!\s*(?:/\s*|per\s+)gpu)[^.?!\n]{0,20}?\b(?:in\s+total|total|overall|for\s+the\s+(?:whole\s+)?"
                       r"(?:job|run|cluster)|across\s+(?:all\s+)?(?:the\s+)?(?:\d+\s+)?gpus|cluster[\s-]wide|aggregate)\b"
                       r"|\b(?:total|overall|aggregate|cluster|job)\s+throughput\s+(?:of|is|was|=|:)?\s*(?:about\s+|~\s*)?" + TOKENS_PER_S +
                       # the whole job named first: "the whole job does ~1.23 million tokens/s", "the entire run gets 54k tok/s"
                       r"|\b(?:whole|entire|full)\s+(?:job|run|cluster|training\s+run)\s+(?:does|did|is\s+doing|was\s+doing|gets|got|"
                       r"hits|reaches|pushes|processes|runs\s+at|is\s+at|was\s+at|sits\s+at)\s*(?:about\s+|around\s+|roughly\s+|~\s*)?"
                       + TOKENS_PER_S)
# a rate said without "per GPU" or "total": which one it is decides a factor of the GPU count, so it is asked
BARE_RATE = re.compile(TOKENS_PER_S + r"(?!\s*(?:/\s*|per\s+)gpu)")
NUMBER = rf"{WHOLE}(\d+(?:\.\d+)?)(?!\d|\.\d|[eE][+-]?\d)"  # whole: not the 1 of "mfu 1e9" or "12e9"
# the unit is captured: "77,120 ms" and "77.1 s" are the same step
SECONDS = r"\s*(ms|msecs?|milliseconds?|s|sec|secs|seconds?)\b"
STEP = r"(?:steps?|iterations?|iters?)"
# "step time 71.5 s", "step time of ~71.5s", "iteration time on our cluster: 4.2 sec", "71.5 s/step",
# "93 s per iteration", "93 seconds a step", "steps take 93 s", "77,120 ms per iteration"
STEP_TIME = re.compile(rf"\b(?:step|iteration|iter)[\s_-]?time\b[^\d.?!]{{0,30}}?{NUMBER}{SECONDS}"
                       rf"|{NUMBER}{SECONDS}\s*(?:/\s*|per\s+|a\s+|an\s+|each\s+)?(?:optimi[sz]er\s+|training\s+)?{STEP}\b"
                       # tqdm's rate when slower than one iteration a second: "24.7s/it" (seconds per iteration)
                       rf"|{NUMBER}{SECONDS}\s*/\s*it\b"
                       rf"|\b{STEP}\s+(?:take|took|takes|are\s+taking|is\s+taking|is|was|are|were)\s+(?:about\s+|around\s+|~\s*)?"
                       rf"{NUMBER}{SECONDS}")
# "MFU 41%", "mfu of 0.38", "MFU: 41.5 %", "41% MFU", "at 41 percent mfu"
# where it was read, between the word and the figure: "MFU in wandb is 39.2%", "mfu on the dashboard reads 41 %"
WHERE_READ = (r"(?:\s+(?:in|on|from|per|via|according\s+to|(?:reported|shown|logged)\s+(?:by|in|on))(?:\s+(?:the|our|my))?"
              r"\s+[a-z&/-]+)?(?:\s+(?:shows|showed|reads|reported|reports|says|said|says\s+it\s+is))?")
# how it sits there: "MFU sits at ~42%", "mfu hovers around 40 %", "mfu is at 41%", "mfu averages 39%"
# and as it is doing: "our MFU is hovering around 38%", "mfu has been sitting at 40 %", "mfu keeps hovering near 39%"
SITS = (r"(?:\s+(?:(?:is|was|'s|has\s+been|keeps|kept)\s+)?(?:hovering|sitting|staying|running|holding|settling|averaging|"
        r"coming\s+in|stuck)|\s+(?:sits|sat|hovers|hovered|stays|stayed|runs|ran|is|was|holds|settles|averages|averaged|comes\s+in))?")
# a fraction written without its leading zero is one too: "mfu .31", ".38 mfu" (0.31, 0.38)
FRACTION_OR_NUMBER = rf"{WHOLE}(\.\d+(?![\d.]|[eE][+-]?\d)|\d+(?:\.\d+)?(?!\d|\.\d|[eE][+-]?\d))"
MFU = re.compile(rf"\bmfu\b{WHERE_READ}{SITS}\s*(?:of|=|:|is|was|at|around|about|near|~|≈)?\s*(?:about\s+|around\s+)?~?\s*"
                 rf"{FRACTION_OR_NUMBER}\s*(%|percent)?"
                 rf"|{NUMBER}\s*(%|percent)\s*mfu\b"
                 # a fraction before the word: "0.38 mfu", ".38 mfu" (a bare whole number there is a plan's: "tp 8 mfu 41%")
                 rf"|{WHOLE}(0?\.\d+)()\s*mfu\b")

# Achieved TFLOP/s per GPU, as Megatron-LM ("throughput per GPU (TFLOP/s/GPU)") and torchtitan ("tflops") print it:
# "hitting ~410 TFLOPS per GPU", "412 TFLOP/s/GPU", "tflops per gpu of 395", "395 model tflops per gpu". Per GPU
# only: a job's total (hundreds of PFLOP/s) is another figure. Fitted as the MFU it is of the GPU's dense peak
# (calibrating.py), and said so: frameworks count FLOPs their own way.
TFLOP = r"(?:model\s+)?tflop(?:/s|s|/sec)?|tf/s"
PER_GPU = r"\s*(?:/\s*|per\s+|a\s+|each\s+)gpu\b"
TFLOPS = re.compile(rf"{NUMBER}\s*(?:{TFLOP}){PER_GPU}|\b(?:{TFLOP}){PER_GPU}\s*(?:\(\s*tflop/s/gpu\s*\))?{SAID_AS}{NUMBER}")

# "can you calibrate to our cluster?", "how do I calibrate": calibration asked for, with no figure to fit
CALIBRATION_WORD = re.compile(r"\bcalibrat(?:e|ed|ing|ion)\b")
# The calibration profile asked for: "with our profile", "using the calibrated model", "apply the calibration"
# ("w/ our calibration", "given ur profile": chat shorthand for the same words)
PROFILE_ASKED = re.compile(r"(?:\b(?:with|using|use|apply|applying|under|on|given|per|from)\s+|\bw/\s*|\bbased\s+on\s+)"
                           r"(?:our|ur|the|that|this|my|your|its)\s+(?:new\s+|fitted\s+|"
                           r"cluster\s+)?(?:calibration|profile|calibrated\s+(?:model|numbers|profile))\b|\bcalibrated\b(?!\s+on\b)|"
                           r"\bafter\s+(?:the\s+)?calibration\b|"
                           # whether it holds elsewhere: "does that profile still apply on h200s?", "will the calibration carry over"
                           r"\b(?:our|ur|the|that|this|my|your|its)\s+(?:calibration|profile)\s+(?:still\s+)?(?:appl(?:y|ies)|holds?|"
                           r"carr(?:y|ies)(?:\s+over)?|transfers?|works?|(?:is\s+)?valid)\b")


@dataclass(frozen=True)
class MeasuredRun:
    """One measured figure (`kind`: tokens_per_s_per_gpu | tokens_per_s_total | step_s | mfu, in percent |
    tflops_per_gpu, fitted as the MFU it is of the GPU's peak, calibrating.py),
    a pasted log (`kind` log), a pasted log with no usable figure (`kind` log_unusable), or a tokens/s said
    neither per GPU nor in total (`kind` rate_unclear)."""

    kind: str
    value: float | None = None
    log: str | None = None
    reading: LogReading | None = None
    reason: str | None = None  # log_unusable: what the readers looked for
    zero: bool = False  # log_unusable: its step time or throughput is printed as zero
    said_range: tuple[float, float] | None = None  # the figure was given as a range; `value` is its middle
    per_micro_batch: tuple[float, int] | None = None  # step_s read as (s per micro-batch, micro-batches per step)

    def tool_arguments(self, gpus: int | None = None) -> dict:
        """The calibrate tool's measured argument; a whole-job rate is per GPU over the run's `gpus`."""
        names = {"tokens_per_s_per_gpu": "measured_tokens_per_s_per_gpu", "tokens_per_s_total": "measured_tokens_per_s_per_gpu",
                 "step_s": "measured_step_s", "mfu": "measured_mfu", "log": "log"}
        args = dict.fromkeys(names.values())
        value = self.value / gpus if self.kind == "tokens_per_s_total" else self.value
        if self.kind == "mfu":  # said in percent here; the tool takes a fraction of the peak (engine/mfu_unit.py)
            value = value / 100
        args[names[self.kind]] = self.log if self.kind == "log" else value
        return args


# A figure shardwise itself gave, quoted back: "when shardwise says '1,196 tok/s/GPU, likely …'", "you said 850
# tok/s/GPU": its "says" is no measurement cue (the dashboard's "shows" is)
OURS_SAID = re.compile(r"\b(?:shardwise|you|the\s+(?:model|tool|planner|advisor|engine)|your\s+(?:model|tool|planner|engine|"
                       r"prediction|estimate|answer))\s+(?:says|said|shows|showed|reports|reported|predicts|predicted|prints|"
                       r"printed|gives|gave|quotes|quoted)\b")


def _measured(text: str, pattern: re.Pattern) -> re.Match | None:
    """The figure the user says they measured, matched by `pattern`, or None without a measuring cue."""
    lowered = text.lower()
    return pattern.search(lowered) if CUE.search(OURS_SAID.sub(" ", lowered)) else None


def _number(m: re.Match, *groups: int) -> tuple[float, str | None]:
    """The first of `groups` that matched, and the group after it (a 'k', a unit)."""
    number, after = next((m.group(i), m.group(i + 1)) for i in groups if m.group(i) is not None)
    return float(number.replace(",", "")), after


# The pattern that finds each kind of measured figure: where in a message the measurement is stated
FIGURE = {"tokens_per_s_per_gpu": THROUGHPUT, "step_s": STEP_TIME, "mfu": MFU, "tokens_per_s_total": WHOLE_JOB,
          "tflops_per_gpu": TFLOPS}


def states_figure(text: str, kind: str) -> bool:
    """The text states a figure of this kind (its measuring cue may be in another sentence)."""
    pattern = FIGURE.get(kind)
    lowered = text.lower().replace(",", "") if kind == "step_s" else text.lower()
    return pattern is not None and pattern.search(lowered) is not None


# Another run's figure after the first, its unit left out: "… 6900 tok/s/gpu on tp2 pp4 and 6100 on tp4 pp2"
ANOTHER_RUN = re.compile(r"\b(?:and|vs\.?|versus|while|but)\s+(?:~\s*|about\s+|around\s+)?(\d[\d,]*(?:\.\d+)?\s*k?)\s+"
                         r"(?:on|with|for|at|using)\s+(?:the\s+)?(?:tp|pp|vpp|cp|ep|zero|fsdp|pure|plain)")


def several_runs(text: str, kind: str) -> bool:
    """The message states more than one measured figure of this kind (two runs), which one chat turn cannot fit."""
    pattern = FIGURE.get(kind)
    if pattern is None:
        return False
    lowered = text.lower().replace(",", "") if kind == "step_s" else text.lower()
    values = {m.group(0) for m in pattern.finditer(lowered)}
    return len(values) > 1 or (len(values) == 1 and ANOTHER_RUN.search(lowered) is not None)


def measured_throughput(text: str) -> float | None:
    """Tokens/s per GPU the user says they measured, or None (0 is returned: a measured zero is answered)."""
    m = _measured(text, THROUGHPUT)
    if m is None:
        return None
    value, thousands = _number(m, 1, 3, 5, 7)
    return value * (1000 if thousands else 1)


# A step said in minutes: "~1 min 39 s", "1m39s", "2 minutes", "1.5 min" (written in seconds before it is read)
MIN_SEC = re.compile(rf"{WHOLE}(\d+)\s*(?:m|mins?|minutes?)\s*(?:and\s+)?(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b", re.IGNORECASE)
MINUTES = re.compile(rf"{WHOLE}(\d+(?:\.\d+)?)\s*(?:mins?|minutes?)\b", re.IGNORECASE)


def in_seconds(text: str) -> str:
    """The text with durations in minutes written in seconds: "1 min 39 s" -> "99 s"."""
    text = MIN_SEC.sub(lambda m: f"{60 * int(m.group(1)) + float(m.group(2)):g} s", text)
    return MINUTES.sub(lambda m: f"{60 * float(m.group(1)):g} s", text)


def measured_step_time(text: str) -> float | None:
    """Seconds per training step the user says they measured, or None."""
    m = _measured(in_seconds(text.replace(",", "")), STEP_TIME)
    if m is None:
        return None
    value, unit = _number(m, 1, 3, 5, 7)
    return value / (1000.0 if unit.startswith("m") else 1.0)


# A time per micro-batch and how many micro-batches make an optimizer step: "the 0.52s is the per-micro-batch it/s
# counter, there are 32 micro-batches per optimizer step", "each micro-batch takes 0.4 s, grad accum 16". The step
# is their product. No cue is needed: shardwise predicts no per-micro-batch time, so one said is one observed.
MICRO = r"micro[\s_-]*batch(?:es)?"
MICRO_TIME = re.compile(rf"{NUMBER}{SECONDS}[^.?!\d]{{0,30}}?\b(?:per|each|every|one|a)[\s-]*{MICRO}"
                        rf"|\bper[\s-]*{MICRO}(?:\s+time)?[^.?!\d]{{0,20}}?{NUMBER}{SECONDS}"
                        rf"|\b(?:each|every|one|a)\s+{MICRO}\s+(?:takes|took|is|runs\s+at|at)\s+(?:about\s+|around\s+|~\s*)?"
                        rf"{NUMBER}{SECONDS}")
MICRO_COUNT = re.compile(rf"{WHOLE}(\d+)\s*{MICRO}\s*(?:per|/|a|in\s+(?:a|an|each|every|one))\s*(?:optimi[sz]er\s+|training\s+|"
                         rf"global\s+)?step\b|\bgrad(?:ient)?[\s_-]*accum\w*(?:[\s_-]*steps)?\s*(?:of|=|:|is)?\s*(\d+)\b"
                         rf"|{WHOLE}(\d+)\s*(?:grad(?:ient)?[\s_-]*)?accum\w*\s+steps\b")


def micro_batch_parts(text: str) -> tuple[float, int] | None:
    """(seconds per micro-batch, micro-batches per optimizer step) the message states, or None."""
    lowered = text.lower().replace(",", "")
    time, count = MICRO_TIME.search(lowered), MICRO_COUNT.search(lowered)
    if time is None or count is None:
        return None
    value, unit = _number(time, 1, 3, 5)
    return value / (1000.0 if unit.startswith("m") else 1.0), int(next(g for g in count.groups() if g))


def measured_micro_batch_step(text: str) -> float | None:
    """Seconds per optimizer step from a time per micro-batch times the micro-batches per step, or None."""
    parts = micro_batch_parts(text)
    return None if parts is None else parts[0] * parts[1]


def measured_total_throughput(text: str) -> float | None:
    """Tokens/s of the whole job the user says they measured ("54,400 tokens/s in total"), or None."""
    m = _measured(text, WHOLE_JOB)
    if m is None:
        return None
    value, multiple = _number(m, 1, 3, 5)
    return value * (1e6 if multiple and multiple.startswith("m") else 1000 if multiple else 1)


def measured_rate_unclear(text: str) -> bool:
    """A measured tokens/s said neither per GPU nor for the whole job ("we measured 54,400 tokens/s")."""
    return (measured_throughput(text) is None and measured_total_throughput(text) is None
            and _measured(text, BARE_RATE) is not None)


def measured_mfu_percent(text: str) -> float | None:
    """The MFU the user says their run measured, in percent ("38.6%" -> 38.6), or None. A number written
    without % is a fraction when at most 1 ("mfu 0.386"), a percent above ("mfu 38.6")."""
    m = _measured(text, MFU)
    if m is None:
        return None
    value, unit = _number(m, 1, 3, 5)
    return value if unit or value > 1 else 100 * value


def measured_tflops(text: str) -> float | None:
    """Achieved TFLOP/s per GPU the user says their run measured ("hitting ~410 TFLOPS per GPU"), or None."""
    m = _measured(text, TFLOPS)
    return None if m is None else float(m.group(1) or m.group(2))


def measured_mfu(text: str) -> float | None:
    """The same MFU as a fraction ("38.6%" -> 0.386)."""
    percent = measured_mfu_percent(text)
    return None if percent is None else percent / 100


def pasted_log(text: str) -> LogReading | None:
    """A training log in the message, read by the engine's readers; None when there is none."""
    try:
        return read_log(text)
    except ShardwiseInputError:
        return None


# Lines only a training log prints: a message holding one pasted a log, read or not (a Megatron-LM iteration line
# without its time field, HF Trainer's per-step loss dicts: a log with no throughput in it, answered as such)
LOG_MARKER = re.compile(r"elapsed time per iteration|RunningAvgSamplesPerSec=|train_samples_per_second|\[titan\]|iter time \(s\):|"
                        r"\biteration\s+\d+\s*/\s*\d+\s*\||\{\s*['\"]loss['\"]\s*:\s*\d|"
                        r"\b(?:tps|wps):\s*\d", re.IGNORECASE)
# A log's own figure written as zero: "elapsed time per iteration (ms): 0.0", "tps: 0", "train_samples_per_second': 0.0"
LOG_ZERO = re.compile(r"(?:elapsed time per iteration \(ms\)|iter time \(s\)|\btps|\bwps|RunningAvgSamplesPerSec|train_samples_per_second'?)"
                      r"\s*[:=]\s*0+(?:\.0+)?(?![\d.])", re.IGNORECASE)


def unreadable_log(text: str) -> MeasuredRun | None:
    """A pasted log the engine's readers find no usable figure in (its step time printed as 0.0 ms, or
    no throughput line): answered as such, not as a topic outside shardwise."""
    if LOG_MARKER.search(text) is None:
        return None
    try:
        read_log(text)
    except ShardwiseInputError as exc:
        return MeasuredRun("log_unusable", log=text, reason=str(exc), zero=LOG_ZERO.search(text) is not None)
    return None


def measured_run(text: str) -> MeasuredRun | None:
    """The run the message reports, a pasted log first (its own figure, whatever the prose says)."""
    reading = pasted_log(text)
    if reading is not None:
        return MeasuredRun("log", log=text, reading=reading)
    unusable = unreadable_log(text)
    if unusable is not None:
        return unusable
    text = without_target(text)  # "we need 50k tokens/s, can we hit that?": wanted, not measured
    ranged = middle_of_range(text)
    if ranged is not None:  # "between 3,800 and 4,100 tok/s/gpu": its middle, when that is the figure read
        middle_text, low, high = ranged
        run = _figure(middle_text)
        scale = _scale(run, (low + high) / 2) if run is not None and run.value is not None else None
        if scale is not None:  # the range in the figure's own unit (a step in ms is read in s)
            return MeasuredRun(run.kind, run.value, said_range=(low * scale, high * scale))
    run = _figure(text)
    if run is not None:
        return run
    return MeasuredRun("rate_unclear") if measured_rate_unclear(text) else None


def _figure(text: str) -> MeasuredRun | None:
    for kind, read in (("tokens_per_s_per_gpu", measured_throughput), ("step_s", measured_micro_batch_step),
                       ("step_s", measured_step_time),
                       ("mfu", measured_mfu_percent), ("tflops_per_gpu", measured_tflops),
                       ("tokens_per_s_total", measured_total_throughput)):
        value = read(text)
        if value is not None:
            parts = micro_batch_parts(text) if read is measured_micro_batch_step else None
            return MeasuredRun(kind, value, per_micro_batch=parts)
    return None


def _scale(run: MeasuredRun, middle: float) -> float | None:
    """How the figure read is the range's middle (1; 0.001 for a step in ms, read in seconds; 100 for an MFU
    fraction, read as percent), or None when it is another figure."""
    return next((scale for scale in (1.0, 0.001, 100.0) if abs(run.value - middle * scale) <= 1e-9 * max(1.0, middle)),
                None)


def pending_record(run: MeasuredRun) -> dict:
    """The run kept in the conversation state while its plan is asked for (ConversationState.pending_measurement)."""
    return {"kind": run.kind, "value": run.value, "log": run.log}


def pending_run(record: dict) -> MeasuredRun:
    log = record.get("log")
    return MeasuredRun(record["kind"], value=record.get("value"), log=log, reading=pasted_log(log) if log else None)
# Once a profile was fitted in this chat, "calibration" with no determiner means it: "the range now w/ calibration?",
# "with calibration applied", "after calibrating". Before one exists the same words ask how to calibrate ("help with
# calibration"), so they are read only with a profile in the state (`profile_meant`).
LOOSE_PROFILE = re.compile(r"(?:\b(?:with|using|after|incl(?:uding|\.)?)\s+|\bw/\s*)calibrat(?:ion|ing)\b"
                           r"(?!\s+(?:help|question|docs?|guide|command|tool|works?)\b)|\bnow\s+(?:that\s+it'?s\s+)?calibrated\b"
                           # the run's figures fitted, named as theirs: "best plan w/ our numbers", "using our measurements"
                           r"|(?:\b(?:with|using|given|from)\s+|\bw/\s*)(?:our|my|ur)\s+(?:own\s+|measured\s+)?"
                           r"(?:numbers|measurements?|figures|data|cluster'?s?\s+numbers)\b"
                           # the profile just offered, taken to another question: "apply it to 64 gpus", "use that
                           # for the h200 case" (a bare "apply it" is the offer's yes: offer_reply.py)
                           r"|^\s*(?:(?:yes|yeah|ok|okay|sure)\b[\s,!.]*)?(?:apply|use)\s+(?:it|that|this|the\s+(?:profile|calibration))"
                           r"\s+(?:to|for|on|at|with)\b")


def profile_meant(text: str, fitted: bool) -> bool:
    """The message (normalised or lower-cased) asks for an answer with the calibration profile; `fitted`: the chat
    has one."""
    lowered = text.lower()
    return PROFILE_ASKED.search(lowered) is not None or fitted and LOOSE_PROFILE.search(lowered) is not None


def calibration_asked_without_a_figure(text: str, fitted: bool = False) -> bool:
    """`fitted`: a profile was already fitted in this chat ("and the range w/ calibration?" asks to use it)."""
    lowered = text.lower()
    return CALIBRATION_WORD.search(lowered) is not None and not profile_meant(lowered, fitted) \
        and measured_run(text) is None


# Where a log line starts, when the user wrote words before it on the same line ("70B on 64 H100s: [titan] …")
LOG_START = re.compile(r"\[titan\]|\[\d{4}-\d\d-\d\d|\[default\d+\]|\[rank\d+\]|\biteration\s+\d+\s*/|\bstep:\s*\d+|"
                       r"\bepoch=\d+/micro_step|\{\s*['\"]train_|\bRunningAvgSamplesPerSec=|\belapsed time per iteration|"
                       r"\bsteps:\s*\d+\s+loss:")


def prose_of(text: str) -> str:
    """The message's lines that are not a log's own (a line opening as a log line does: "[2026-11-22 …] [INFO] …",
    "[titan] …"): what the user wrote around the paste."""
    return "\n".join(line for line in text.splitlines() if not LOG_START.match(line.strip()))


def without_log_lines(text: str) -> str:
    """The message without the training-log lines pasted into it: their numbers ("iteration 20/100",
    "consumed samples: 10240") are the log's, not a scenario's GPUs or batch. Words before a log on its
    line are the user's and stay, and so are words after it when the log is set off: closed by the quote that
    opened it ("… on 32 A100: 'epoch=0/micro_step=100/…' — llama 2 13b zero3") or followed by a dash between
    spaces ("… MaxMemAllocated=61.7GB — llama 2 13b"), which no log line prints."""
    kept = []
    for line in text.splitlines():
        if pasted_log(line) is None:
            kept.append(line)
            continue
        start = LOG_START.search(line)
        if start is not None and start.start() > 0:
            kept.append(line[:start.start()])
        if start is not None:
            after = _after_log(line, start.start())
            if after:
                kept.append(after)
    return "\n".join(kept)


QUOTES = {"'": "'", '"': '"', "`": "`", "“": "”", "‘": "’"}
SET_OFF = re.compile(r"\s(?:—|–|--?)\s")  # a dash between spaces: the user's words again


def _after_log(line: str, start: int) -> str:
    """The user's words after a log excerpt that starts at `start` on this line, or ''."""
    opening = line[:start].rstrip()[-1:]
    if opening in QUOTES:
        end = line.find(QUOTES[opening], start)
        if end != -1:
            return line[end + 1:]
    dash = SET_OFF.search(line, start)
    return line[dash.end():] if dash else ""


# A peak memory the run measured: "max_memory_allocated() on the worst rank = 72.4 GiB", "max allocated on rank 0
# was 66.9 GiB", "peak memory we see is 61 GB". A memory tool's name is its own cue (it reports a measurement).
MEMORY_TOOL = r"max[_\s-]*(?:memory[_\s-]*)?(?:allocated|reserved)|maxmemallocated|nvidia-smi|memory[_\s-]*(?:allocated|reserved)"
GROUPED_NUMBER = rf"{WHOLE}(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)(?!\d|\.\d|[eE][+-]?\d)"  # "81,559 MiB" too
PEAK = re.compile(rf"(?:\b(?:{MEMORY_TOOL})|\bpeak(?:s|ed)?\b|\bmemory\s+peak)[^?!\n]{{0,50}}?{GROUPED_NUMBER}\s*"
                  r"(gib|gb|g|mib|mb|m)\b")


# DeepSpeed's timer prints "MaxMemAllocated={}GB" of max_memory_allocated() / 1024**3 (deepspeed/utils/timer.py)
DEEPSPEED_LABEL = re.compile(r"maxmemallocated")


@dataclass(frozen=True)
class MeasuredPeak:
    gib: float
    written: str | None  # "81.5 GB = 75.9 GiB" when the user wrote another unit than GiB (engine/memory_units.py)
    framework_label: bool = False  # the unit is a framework's label whose arithmetic differs from its name


def measured_peak(text: str) -> MeasuredPeak | None:
    """The peak memory per GPU the user says their run measured, or None without a measuring cue. Read in the
    unit written (GB = 1e9 bytes, GiB = 2**30, MiB = 2**20 as nvidia-smi prints) and converted once to GiB."""
    lowered = text.lower()
    m = PEAK.search(lowered)
    if m is None or not (CUE.search(lowered) or re.search(MEMORY_TOOL, lowered)):
        return None
    value, unit = float(m.group(1).replace(",", "")), m.group(2)
    if value <= 0:
        return None
    if unit == "gb" and DEEPSPEED_LABEL.search(m.group(0)):  # DeepSpeed's own label: bytes / 1024**3 printed as "GB"
        return MeasuredPeak(value, f"DeepSpeed's MaxMemAllocated={value:g}GB is {value:g} GiB", framework_label=True)
    return MeasuredPeak(to_gib(value, unit), conversion_text(value, unit))


def measured_peak_gib(text: str) -> float | None:
    """measured_peak's figure in GiB."""
    peak = measured_peak(text)
    return peak.gib if peak is not None else None
