"""A plan written as text — "tp=4,pp=2,zero=1,mb=2,recompute=full" or "TP4 PP2 ZeRO1" — as a Strategy.

Knobs not named take Strategy's defaults. Bad text raises ShardwiseInputError saying what
is allowed.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from .errors import ShardwiseInputError
from .strategy import RECOMPUTE_MODES, Strategy

KEYS = {"tp": "tp", "pp": "pp", "vpp": "vpp", "cp": "cp", "ep": "ep", "etp": "etp", "zero": "zero_stage",
        "zero_stage": "zero_stage", "mb": "micro_batch", "micro_batch": "micro_batch", "hsdp": "hsdp_replicas",
        "hsdp_replicas": "hsdp_replicas", "recompute": "recompute", "rc": "recompute", "sp": "sequence_parallel",
        "sequence_parallel": "sequence_parallel"}
_LABEL = re.compile(r"^(tp|pp|vpp|cp|ep|etp|zero|mb)(\d+)$")  # Strategy.label() form: TP4, ZeRO1, mb2
_SWITCH = {"on": True, "true": True, "yes": True, "1": True, "off": False, "false": False, "no": False, "0": False}


def parse_plan(text: str) -> Strategy:
    """'tp=4,pp=2' / 'TP4 PP2 ZeRO1 mb1 rc-full' -> Strategy."""
    if not isinstance(text, str) or not text.strip():
        raise ShardwiseInputError("the plan is empty; a plan looks like 'tp=4,pp=2,zero=1,mb=1,recompute=selective'")
    values: dict[str, object] = {}
    for token in filter(None, re.split(r"[,\s;]+", text.strip().lower())):
        if token.startswith("rc-"):
            key, value = "recompute", token[3:]
        elif "=" in token or ":" in token:
            key, value = re.split(r"[=:]", token, maxsplit=1)
        elif _LABEL.match(token):
            key, value = _LABEL.match(token).groups()
        elif token in ("sp", "no-sp", "nosp"):
            key, value = "sp", "off" if token != "sp" else "on"
        else:
            raise ShardwiseInputError(f"cannot read {token!r} in plan {text!r}; write knob=value with knobs "
                                      f"{', '.join(sorted(set(KEYS)))}")
        name = KEYS.get(key.strip().replace("-", "_"))
        if name is None:
            raise ShardwiseInputError(f"unknown plan knob {key!r}; allowed: {', '.join(sorted(set(KEYS)))}")
        if name in values:  # "tp=8,tp=4": which one was meant?
            raise ShardwiseInputError(f"plan {text!r} gives {name} twice; give each knob once")
        values[name] = _value(name, value.strip())
    try:
        return Strategy(**values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ShardwiseInputError(f"plan {text!r}: {problems}") from None


def _value(name: str, text: str):
    if name == "recompute":
        if text not in RECOMPUTE_MODES:
            raise ShardwiseInputError(f"recompute={text!r}: allowed values are {', '.join(RECOMPUTE_MODES)}")
        return text
    if name == "sequence_parallel":
        if text not in _SWITCH:
            raise ShardwiseInputError(f"sp={text!r}: allowed values are on/off")
        return _SWITCH[text]
    if not text.isdigit():
        raise ShardwiseInputError(f"{name}={text!r}: expected a whole number")
    number = int(text)
    if name == "zero_stage" and number > 3:
        raise ShardwiseInputError(f"zero={number}: allowed stages are 0, 1, 2, 3")
    if number < (0 if name == "zero_stage" else 1):
        raise ShardwiseInputError(f"{name}={number}: must be at least 1")
    return number
