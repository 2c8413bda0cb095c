"""What the user pins in a search: `tp=8`, `max_pp=4`, `recompute="full"`, `framework="fsdp"`.

Each knob may be pinned to a value or a list of values, or bounded with `min_<knob>` /
`max_<knob>`. Anything else is bad input with a message that lists what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import ShardwiseInputError
from .strategy import RECOMPUTE_MODES

KNOBS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero_stage", "sequence_parallel", "micro_batch", "recompute",
         "hsdp_replicas")
ALIASES = {"zero": "zero_stage", "sp": "sequence_parallel", "mb": "micro_batch", "micro_batch_size": "micro_batch",
           "hsdp": "hsdp_replicas"}
BOUNDED = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero_stage", "micro_batch")
FRAMEWORKS = ("megatron", "deepspeed", "fsdp", "nanotron")


@dataclass(frozen=True)
class Constraints:
    pins: dict[str, tuple] = field(default_factory=dict)  # knob -> allowed values
    minimum: dict[str, int] = field(default_factory=dict)
    maximum: dict[str, int] = field(default_factory=dict)
    framework: str | None = None

    def allows(self, knob: str, value) -> bool:
        if knob in self.pins and value not in self.pins[knob]:
            return False
        return self.minimum.get(knob, value) <= value <= self.maximum.get(knob, value) if knob in BOUNDED else True

    def filter(self, knob: str, candidates) -> tuple:
        """The candidates the user allows; a pinned value is used even if the search would not try it."""
        pool = self.pins.get(knob, candidates)
        return tuple(v for v in pool if self.allows(knob, v))

    def without(self, *knobs: str) -> "Constraints":
        drop = set(knobs)
        return Constraints({k: v for k, v in self.pins.items() if k not in drop},
                           {k: v for k, v in self.minimum.items() if k not in drop},
                           {k: v for k, v in self.maximum.items() if k not in drop}, self.framework)

    def pinned(self, knob: str, *values) -> "Constraints":
        return Constraints({**self.without(knob).pins, knob: tuple(values)}, self.without(knob).minimum,
                           self.without(knob).maximum, self.framework)

    def as_dict(self) -> dict[str, Any]:
        def shown(knob: str, values: tuple) -> tuple:
            return tuple(RECOMPUTE_MODES[v] for v in values) if knob == "recompute" else values

        out: dict[str, Any] = {k: (list(shown(k, v)) if len(v) > 1 else shown(k, v)[0]) for k, v in self.pins.items()}
        out.update({f"min_{k}": v for k, v in self.minimum.items()})
        out.update({f"max_{k}": v for k, v in self.maximum.items()})
        if self.framework:
            out["framework"] = self.framework
        return out


def _allowed_names() -> str:
    names = list(KNOBS) + list(ALIASES) + [f"min_{k}" for k in BOUNDED] + [f"max_{k}" for k in BOUNDED]
    return ", ".join(names + ["framework"])


def _as_list(value) -> list:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return [value]


def _int_value(knob: str, value) -> int:
    try:
        if isinstance(value, bool):
            raise ValueError
        number = int(value) if not isinstance(value, float) or value.is_integer() else None
        if number is None:
            raise ValueError
    except (TypeError, ValueError):
        raise ShardwiseInputError(f"constraint {knob} expects whole numbers, got {value!r}") from None
    lowest = 0 if knob == "zero_stage" else 1
    highest = 3 if knob == "zero_stage" else 1 << 20
    if not lowest <= number <= highest:
        raise ShardwiseInputError(f"constraint {knob}={number} is out of range ({lowest}..{highest})")
    return number


def _value(knob: str, value):
    if knob == "recompute":
        text = str(value).strip().lower()
        if text not in RECOMPUTE_MODES:
            raise ShardwiseInputError(f"constraint recompute={value!r}: allowed values are {', '.join(RECOMPUTE_MODES)}")
        return RECOMPUTE_MODES.index(text)
    if knob == "sequence_parallel":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "on", "yes"):
            return True
        if text in ("0", "false", "off", "no"):
            return False
        raise ShardwiseInputError(f"constraint sequence_parallel={value!r}: allowed values are on/off (true/false)")
    return _int_value(knob, value)


def parse_constraints(raw: dict[str, Any]) -> Constraints:
    pins: dict[str, tuple] = {}
    minimum: dict[str, int] = {}
    maximum: dict[str, int] = {}
    framework = None
    for key, value in raw.items():
        if value is None:
            continue
        name = key.strip().lower().replace("-", "_")
        if name == "framework":
            if value not in FRAMEWORKS:
                raise ShardwiseInputError(f"framework {value!r} is unknown; allowed: {', '.join(FRAMEWORKS)}")
            framework = value
            continue
        bound = None
        if name.startswith(("min_", "max_")):
            bound, name = name[:3], name[4:]
        name = ALIASES.get(name, name)
        if name not in KNOBS or (bound and name not in BOUNDED):
            raise ShardwiseInputError(f"unknown search constraint {key!r}; allowed: {_allowed_names()}")
        if bound:
            (minimum if bound == "min" else maximum)[name] = _int_value(name, value)
            continue
        values = tuple(dict.fromkeys(_value(name, v) for v in _as_list(value)))
        if not values:
            raise ShardwiseInputError(f"constraint {key} has no values")
        pins[name] = values
    for knob in set(minimum) & set(maximum):
        if minimum[knob] > maximum[knob]:
            raise ShardwiseInputError(f"constraints min_{knob}={minimum[knob]} > max_{knob}={maximum[knob]}")
    c = Constraints(pins, minimum, maximum, framework)
    for knob, values in pins.items():  # e.g. tp=4,8 with max_tp=2: contradictory, not "no valid plan"
        if knob in BOUNDED and not c.filter(knob, values):
            bounds = ", ".join(f"{b}_{knob}={d[knob]}" for b, d in (("min", minimum), ("max", maximum)) if knob in d)
            shown = values[0] if len(values) == 1 else list(values)
            raise ShardwiseInputError(f"constraints contradict each other: {knob}={shown} but {bounds}; "
                                      f"drop one of them")
    return c
