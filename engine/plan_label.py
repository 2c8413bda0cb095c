"""One formatter for a plan's name, in the styles its readers need.

    plan_label(strategy, "cli")    'TP=8 PP=2 DP=4 ZeRO-1 mb=1 recompute=selective SP'
    plan_label(strategy, "cli-full") 'TP=8 PP=2 VPP=1 CP=1 EP=1 ETP=1 DP=4 ZeRO-1 mb=1 recompute=selective SP'
                                   (`evaluate`'s plan line: every degree, 1s included, in the CLI's notation)
    plan_label(strategy, "tools")  'TP=8 PP=2 DP=4 ZeRO-1 micro-batch=1 recompute=selective'
                                   (SP is the default there: only a plan with it off says so, '… no-SP')
    plan_label(strategy, "page")   'TP 8 · SP · PP 2 · DP 4 · ZeRO-1 · mb 1 · selective recompute'
    plan_label(strategy, "chart")  'TP8 PP2 DP4 ZeRO-1 mb1 rc-selective'  (a chart row, where space is short)
    plan_label(strategy, "engine") 'TP8 PP2 ZeRO1 mb1 rc-selective'       (Strategy.label(): logs, file names)

Every style writes the knobs in the same order — TP, PP, VPP, CP, EP, ETP, DP, ZeRO, HSDP,
micro-batch, recompute — and a degree of 1 is left out except where a style always shows PP (or, cli-full,
every degree).
DP is shown when the plan knows it (a StrategySummary does; a bare Strategy needs the GPU count).
Works on anything with the Strategy's attribute names (Strategy, StrategySummary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Style = Literal["cli", "cli-full", "tools", "page", "chart", "engine"]
DEGREES = ("pp", "vpp", "cp", "ep", "etp")


@dataclass(frozen=True)
class LabelStyle:
    degree: str  # how "TP" and its value are written: "{name}={value}"
    join: str
    always_pp: bool  # PP=1 written out
    zero: str
    hsdp: bool  # HSDP replicas written when more than 1
    micro_batch: str
    recompute: str
    no_recompute: str | None  # how recompute "none" is said, when not by the recompute pattern
    sp: Literal["after_tp", "last", "off_only", None]  # where sequence parallelism is named (only when TP > 1);
    # off_only: last, and only when it is off (a plan and the same plan without SP must not read alike)
    all_degrees: bool = False  # every degree written, 1s included (a full account of the plan)


STYLES: dict[str, LabelStyle] = {
    "cli": LabelStyle("{name}={value}", " ", True, "ZeRO-{}", True, "mb={}", "recompute={}", None, "last"),
    "cli-full": LabelStyle("{name}={value}", " ", True, "ZeRO-{}", True, "mb={}", "recompute={}", None, "last",
                           all_degrees=True),
    "tools": LabelStyle("{name}={value}", " ", False, "ZeRO-{}", True, "micro-batch={}", "recompute={}", None, "off_only"),
    "page": LabelStyle("{name} {value}", " · ", False, "ZeRO-{}", False, "mb {}", "{} recompute", "no recompute",
                       "after_tp"),
    "chart": LabelStyle("{name}{value}", " ", False, "ZeRO-{}", False, "mb{}", "rc-{}", None, None),
    "engine": LabelStyle("{name}{value}", " ", True, "ZeRO{}", False, "mb{}", "rc-{}", None, None),
}


def plan_label(s, style: Style) -> str:
    st = STYLES[style]
    degree = lambda name, value: st.degree.format(name=name.upper(), value=value)  # noqa: E731
    parts = [degree("tp", s.tp)]
    tp_sp = s.tp > 1 and getattr(s, "sequence_parallel", False)
    if st.sp == "after_tp" and tp_sp:
        parts.append("SP")
    for name in DEGREES:
        value = getattr(s, name, 1)
        if value > 1 or (name == "pp" and st.always_pp) or st.all_degrees:
            parts.append(degree(name, value))
    dp = getattr(s, "dp", None)
    if isinstance(dp, int):
        parts.append(degree("dp", dp))
    parts.append(st.zero.format(s.zero_stage))
    if st.hsdp and getattr(s, "hsdp_replicas", 1) > 1:
        parts.append(degree("hsdp", s.hsdp_replicas))
    parts.append(st.micro_batch.format(s.micro_batch))
    parts.append(st.no_recompute if s.recompute == "none" and st.no_recompute else st.recompute.format(s.recompute))
    if st.sp == "last" and s.tp > 1:
        parts.append("SP" if s.sequence_parallel else "no-SP")
    if st.sp == "off_only" and s.tp > 1 and not s.sequence_parallel:
        parts.append("no-SP")
    return st.join.join(parts)
