"""Find the quantities a text states, and decide whether a stated quantity is backed by a value.

An answer writes numbers the way people do: "71.3 GiB", "1.2k tokens/s", "412 ms", "MFU 43%",
"TP=8", "4,194,304 tokens". Tool results hold the same quantities in their own units (GiB,
seconds, fractions, raw counts). `extract` returns each stated quantity with its unit and the
precision it was written with; `candidates` lists the values it could stand for in a tool
result's units; `backed_by` says whether any of them equals a tool value within tolerance.

What is not a quantity and is skipped: numbers inside names ("H100", "Llama-3-70B", "bf16",
"ZeRO++"), ordinals ("2nd"), list markers ("1. "), "1F1B", "3D parallelism", "4-bit".
Plan degrees written as labels ("TP8", "ZeRO-3", "PP=4", "mb 2") are quantities (unit
"degree"): a degree the answer states must come from a tool result like any other number.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

GIB = 2**30

# Tolerance: a stated number matches a value when it is within REL_TOL of it, or when it is
# the value rounded to the precision written ("71 GiB" for 71.4, "0.4" for 0.354). Trailing
# zeros of a whole number are read as rounding too ("1,000" may be 1,043) but capped at
# ROUNDING_CAP of the stated value, so that a bare "100" cannot claim anything from 50 to 150.
REL_TOL = 0.02
ROUNDING_CAP = 0.05

# Plan-degree labels: "TP=8", "TP 8", "TP8", "tp-8", "ZeRO-3", "ZeRO stage 3", "micro-batch 2".
_DEGREE_NAMES = (r"TP|PP|DP|CP|EP|ETP|VPP|ZeRO(?:\s*stage)?|FSDP|HSDP|mbs?|GBS|GA|"
                 r"micro[\s-]?batch(?:\s*size)?|grad(?:ient)?[\s-]?accum(?:ulation)?(?:\s*steps)?")
DEGREE = re.compile(rf"(?<![\w-])(?P<label>{_DEGREE_NAMES})\s*(?:[=:]\s*|-\s*|\s+of\s+)?(?P<num>\d+)(?![\w]|\.\d)",
                    re.IGNORECASE)

# A number: thousands separators, decimals, exponent; then an optional k/M/B suffix and a unit.
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+"
_SUFFIX = r"[kKMBT]|bn|mn"
_UNIT = (r"%|percent|GiB/s|GB/s|TB/s|Gb/s|Gbps|GiB|GB|MiB|MB|TiB|TB|KiB|KB|bytes?|"
         r"ms|msec|milliseconds?|µs|us|microseconds?|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|"
         r"TFLOP/?s|TFLOPS|TFLOPs|PFLOP/?s|PFLOPS|"
         r"tok(?:en)?s?/s(?:ec)?|tokens?\s*per\s*(?:second|sec|s)\b|"
         r"x|×|thousand|million|billion|trillion")
QUANTITY = re.compile(
    rf"(?<![\w.,/])(?P<num>{_NUM})(?:\s?(?P<suffix>{_SUFFIX})(?![\w]))?(?:\s?(?P<unit>{_UNIT})(?![\w/])|(?P<times>x)(?=[A-Z])|(?![\w]))"
)

_LABELS = {"zerostage": "zero", "mb": "micro_batch", "mbs": "micro_batch", "microbatch": "micro_batch",
           "microbatchsize": "micro_batch", "ga": "grad_accum", "gbs": "global_batch"}


def degree_label(text: str) -> str:
    """'ZeRO stage' -> 'zero', 'micro-batch' -> 'micro_batch', 'grad accum steps' -> 'grad_accum'."""
    key = re.sub(r"[\s-]", "", text.lower())
    if key.startswith("grad"):
        return "grad_accum"
    return _LABELS.get(key, key)


# Tokens that contain digits but are names, not quantities.
_NAME_TOKEN = re.compile(r"(?<![\w])[A-Za-z][A-Za-z0-9_.+]*(?:[-/][A-Za-z0-9_.+]+)*")
_NOT_QUANTITY = re.compile(
    r"(?<![\w])(?:\d+F\d+B|\d+D|\d+(?:st|nd|rd|th)|\d+-?bits?)\b",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^\s*(?:[-*]\s*)?\(?\d{1,2}[.)](?=\s)", re.MULTILINE)
_ENUMERATION = re.compile(r"(?<![\w])(?:step|option|plan|alternative|turn|case|#|rank)\s*#?\d+(?![\w]|\.\d)",
                          re.IGNORECASE)
# A short quotation on one line ("ask: \"70B on 64 H100s?\"") is an example, not a claim.
QUOTED = re.compile(r"\"[^\"\n]{1,160}\"|“[^”\n]{1,160}”|(?<!\w)'[^'\n]{1,40}'(?!\w)")

_SUFFIX_SCALES = {"k": (1e3, 1024.0), "K": (1e3, 1024.0), "M": (1e6, float(2**20)), "mn": (1e6,),
                  "B": (1e9,), "bn": (1e9,), "T": (1e12,),
                  "thousand": (1e3,), "million": (1e6,), "billion": (1e9,), "trillion": (1e12,)}


@dataclass(frozen=True)
class Quantity:
    text: str  # as written
    value: float  # the digits as written, sign dropped (an answer says "12% slower", not "-12%")
    scales: tuple[float, ...]  # what a k/M/B suffix or word may multiply by (k: 1000 or 1024)
    unit: str  # canonical: "%", "gib", "gb", "mib", "tib", "ms", "s", "us", "min", "h", "tflops",
    #           "tok/s", "x", "degree", "bytes", "gbps", or "" for a bare number
    half_ulp: float  # half the place of the last digit written, before scaling
    start: int
    label: str = ""  # for degrees: which one ("tp", "zero", …)
    trailing_zeros: bool = False  # a whole number ending in 0: its precision is a guess


def _digits(num: str) -> tuple[float, float, bool]:
    """Value, half the place of the last written digit ("71.30" -> 0.005; "1000" -> 500), and
    whether that place comes from trailing zeros."""
    clean = num.replace(",", "")
    mantissa, _, exp = clean.lower().partition("e")
    value = float(clean)
    zeros = False
    if "." in mantissa:
        place = 10.0 ** -len(mantissa.split(".")[1])
    else:
        stripped = mantissa.rstrip("0")
        zeros = bool(stripped) and stripped != mantissa
        place = 10.0 ** (len(mantissa) - len(stripped)) if stripped else 1.0
    if exp:
        place *= 10.0 ** int(exp)
    return value, place / 2, zeros


def _canonical_unit(unit: str) -> str:
    u = (unit or "").strip()
    low = u.lower()
    if not u:
        return ""
    if u == "%" or low == "percent":
        return "%"
    table = {"gib": "gib", "gb": "gb", "mib": "mib", "mb": "mb", "tib": "tib", "tb": "tb", "kib": "kib",
             "kb": "kb", "byte": "bytes", "bytes": "bytes", "gb/s": "gbps", "gib/s": "gbps", "tb/s": "tbps",
             "gbps": "gbit", "ms": "ms", "msec": "ms", "µs": "us", "us": "us",
             "s": "s", "sec": "s", "secs": "s", "min": "min", "mins": "min", "h": "h", "hr": "h", "hrs": "h",
             "x": "x", "×": "x"}
    if u == "Gb/s":
        return "gbit"
    if low in table:
        return table[low]
    if low.startswith("millisecond"):
        return "ms"
    if low.startswith("microsecond"):
        return "us"
    if low.startswith("second"):
        return "s"
    if low.startswith("minute"):
        return "min"
    if low.startswith("hour"):
        return "h"
    if low.startswith("day"):
        return "day"
    if "flop" in low:
        return "pflops" if low.startswith("p") else "tflops"
    if low.startswith("tok"):
        return "tok/s"
    return ""


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def extract(text: str, names: Iterable[re.Pattern] = (), quotes: bool = True) -> list[Quantity]:
    """Every quantity `text` states, in order. `names`: extra patterns (catalog model and GPU
    names) whose matches are names, not quantities. `quotes=False` skips short quotations
    (example questions an answer suggests are not claims)."""
    found: list[Quantity] = []
    text = text.replace("\u2009", " ").replace("\u202f", " ").replace("\xa0", " ")
    spans: list[tuple[int, int]] = [] if quotes else [m.span() for m in QUOTED.finditer(text)]
    for pattern in names:
        spans += [m.span() for m in pattern.finditer(text)]
    text = _masked(text, spans)
    for m in DEGREE.finditer(text):
        value, half, _ = _digits(m.group("num"))
        label = degree_label(m.group("label"))
        found.append(Quantity(m.group(0), value, (1.0,), "degree", half, m.start(), label))
    text = _masked(text, [m.span() for m in DEGREE.finditer(text)])
    skip = [m.span() for m in _NOT_QUANTITY.finditer(text)]
    skip += [m.span() for m in _LIST_MARKER.finditer(text)]
    skip += [m.span() for m in _ENUMERATION.finditer(text)]
    skip += [m.span() for m in _NAME_TOKEN.finditer(text) if any(c.isdigit() for c in m.group(0))]
    text = _masked(text, skip)
    for m in QUANTITY.finditer(text):
        num, suffix, unit = m.group("num"), m.group("suffix") or "", m.group("unit") or m.group("times") or ""
        value, half, zeros = _digits(num)
        scales: tuple[float, ...] = (1.0,)
        if suffix:
            scales = _SUFFIX_SCALES[suffix]
        elif unit and unit.lower() in _SUFFIX_SCALES:
            scales = _SUFFIX_SCALES[unit.lower()]
            unit = ""
        found.append(Quantity(m.group(0).strip(), value, scales, _canonical_unit(unit or ""), half, m.start(),
                              trailing_zeros=zeros))
    found.sort(key=lambda q: q.start)
    return found


# What a stated value may equal in a tool result's units: (factor, unit family).
_CONVERSIONS: dict[str, tuple[float, ...]] = {
    "": (1.0,),
    "degree": (1.0,),
    "x": (1.0,),
    "%": (1.0, 0.01),  # "43%" is 43 in a *_percent field or 0.43 in a fraction field
    "ms": (1.0, 1e-3),
    "s": (1.0, 1e3),
    "us": (1.0, 1e-3, 1e-6),
    "min": (1.0, 60.0),
    "h": (1.0, 3600.0),
    "day": (1.0, 86400.0),
    "gib": (1.0, GIB, 1.073741824),
    "gb": (1.0, 1e9, 1e9 / GIB),  # "80 GB" is often GiB loosely written; accept either reading
    "mib": (1.0, 1 / 1024, 2**20),
    "mb": (1.0, 1e-3, 1e6 / GIB, 1e6),
    "tib": (1.0, 1024.0, 2**40),
    "tb": (1.0, 1e3, 1e12 / GIB, 1e12),
    "kib": (1.0, 1024.0),
    "kb": (1.0, 1e3),
    "bytes": (1.0, 1 / GIB),
    "gbps": (1.0, 1e9),
    "tbps": (1.0, 1e3, 1e12),
    "gbit": (1.0, 1 / 8),
    "tflops": (1.0, 1e12),
    "pflops": (1.0, 1e3, 1e15),
    "tok/s": (1.0,),
}


def candidates(q: Quantity) -> list[tuple[float, float]]:
    """(value, allowed absolute error) pairs the quantity may stand for."""
    out = []
    for scale in q.scales:
        stated = q.value * scale
        rounding = q.half_ulp * scale
        if q.trailing_zeros:
            rounding = min(rounding, ROUNDING_CAP * stated)
        for factor in _CONVERSIONS.get(q.unit, (1.0,)):
            out.append((stated * factor, rounding * factor))
    return out


def matches(q: Quantity, value: float, rel_tol: float = REL_TOL) -> bool:
    value = abs(value)
    for c, rounding in candidates(q):
        if math.isclose(c, value, rel_tol=rel_tol, abs_tol=rounding * 1.0001 + 1e-12):
            return True
    return False


def backed_by(q: Quantity, pool: Iterable[float], rel_tol: float = REL_TOL) -> bool:
    return any(matches(q, v, rel_tol) for v in pool)


# Result fields that hold a plan degree, by the degree label an answer writes for them.
DEGREE_FIELDS = {"tp": "tp", "pp": "pp", "dp": "dp", "cp": "cp", "ep": "ep", "etp": "etp", "vpp": "vpp",
                 "zero": "zero", "zero_stage": "zero", "micro_batch": "micro_batch", "grad_accum": "grad_accum",
                 "global_batch": "global_batch", "hsdp_replicas": "hsdp"}


@lru_cache(maxsize=65536)
def _string_quantities(text: str, names: tuple[re.Pattern, ...]) -> tuple[Quantity, ...]:
    """extract() of a tool-result string; results repeat across turns and cases, so cached."""
    return tuple(extract(text, names))


def degrees_in(obj, names: Iterable[re.Pattern] = ()) -> dict[str, set[float]]:
    """{degree label: values} from a tool result: fields named after a degree, and labels in its
    strings ("TP=8 PP=2"). A stated "TP=4" is backed only by a TP value, not by any 4."""
    names = tuple(names)
    out: dict[str, set[float]] = {}

    def walk(x, key: str = "") -> None:
        if isinstance(x, bool) or x is None:
            return
        if isinstance(x, (int, float)) and key in DEGREE_FIELDS:
            out.setdefault(DEGREE_FIELDS[key], set()).add(float(x))
        elif isinstance(x, str):
            for q in _string_quantities(x, names):
                if q.unit == "degree":
                    out.setdefault(q.label, set()).add(q.value)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, str(k))
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v, key)

    walk(obj)
    return out


# What kind of quantity a unit states, and which result fields hold that kind: a stated
# "61.7 GiB" must equal a memory value, not any of the hundreds of numbers a result carries.
UNIT_FAMILY = {"gib": "memory", "gb": "memory", "mib": "memory", "mb": "memory", "tib": "memory", "tb": "memory",
               "kib": "memory", "kb": "memory", "bytes": "memory", "ms": "time", "s": "time", "us": "time",
               "min": "time", "h": "time", "day": "time", "%": "percent", "tok/s": "throughput",
               "tflops": "flops", "pflops": "flops", "gbps": "bandwidth", "tbps": "bandwidth", "gbit": "bandwidth"}
# A numeric field's kind, from the nearest name on its path that says one ("best.memory_terms.percent"
# is a percentage, "best.memory_terms.value" a memory value, "time.step_s" a time), first match wins.
FIELD_FAMILIES = [
    ("percent", re.compile(r"percent|pct|mfu|hfu|fraction|share|ratio|utili[sz]ation|efficiency|overlap|speedup|points")),
    ("throughput", re.compile(r"tokens?_per_s|tok_s|throughput")),
    ("time", re.compile(r"(?:^|_)(?:s|ms|us|sec|seconds|hours|days)$")),
    ("memory", re.compile(r"gib|_gb|mib|bytes|memory|capacity|usable|weights|gradients|optimizer|activations|other|"
                          r"kv_cache|headroom")),
    ("time", re.compile(r"time|step|latency|bubble|comm|compute|duration|saved")),
    ("flops", re.compile(r"flop")),
    ("bandwidth", re.compile(r"bandwidth|gbs|gbps")),
]


def field_families(path: str) -> set[str]:
    for name in reversed(path.lower().split(".")):
        for family, pattern in FIELD_FAMILIES:
            if pattern.search(name):
                return {family}
    return set()


# A field named in a scale word holds its value in that scale: `params_billion: 6.74` is 6.74e9,
# which an answer writes "6.74 B" (a B suffix reads as 1e9). The plain value stays in the pool too.
_FIELD_SCALE = re.compile(r"_(thousand|million|billion|trillion)$")


def _field_scales(path: str) -> tuple[float, ...]:
    m = _FIELD_SCALE.search(path.lower().rsplit(".", 1)[-1])
    return (1.0, _SUFFIX_SCALES[m.group(1)][0]) if m else (1.0,)


def values_by_family(obj, names: Iterable[re.Pattern] = ()) -> dict[str, list[float]]:
    """Every number in a tool result, filed by kind: {"any": all of them, "memory": [...], ...}.

    A numeric field is filed under the families its path names (and a sibling `unit` field's);
    a quantity a string states ("69.4 GiB") under its unit's family."""
    names = tuple(names)
    out: dict[str, list[float]] = {"any": []}

    def add(values: list[float], families: set[str]) -> None:
        out["any"].extend(values)
        for f in families:
            out.setdefault(f, []).extend(values)

    def walk(x, path: str, families: set[str]) -> None:
        if isinstance(x, bool) or x is None:
            return
        if isinstance(x, (int, float)):
            if math.isfinite(x):
                add([abs(float(x)) * s for s in _field_scales(path)], field_families(path) or families)
        elif isinstance(x, str):
            for q in _string_quantities(x, names):
                unit_family = UNIT_FAMILY.get(q.unit)
                add([abs(c) for c, _ in candidates(q)], {unit_family} if unit_family else field_families(path) or families)
        elif isinstance(x, dict):
            unit = x.get("unit")
            own = families | ({UNIT_FAMILY[_canonical_unit(unit)]} if isinstance(unit, str)
                              and _canonical_unit(unit) in UNIT_FAMILY else set())
            for k, v in x.items():
                walk(v, f"{path}.{k}" if path else str(k), own)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v, path, families)

    walk(obj, "", set())
    return out


def numbers_in(obj, names: Iterable[re.Pattern] = ()) -> list[float]:
    """Every number in a tool result: numeric leaves, and the quantities its strings state."""
    return values_by_family(obj, names)["any"]
