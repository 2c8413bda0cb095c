"""Read the parallelism plan an answer recommends out of its prose.

Answers write plans in many ways: "TP=8, PP=4, DP=2", "`TP=8 DP=8 ZeRO-3 micro-batch=2`",
"8-way tensor parallel with 4 pipeline stages", "ZeRO stage 1", "selective recompute", or a
markdown table with a TP/PP/DP header — and they often name more than one plan ("changes from
A to **B**", "TP=16 is impossible; the recommended plan is …", alternatives).

Short quotations are example questions ("how about TP=8 PP=2?"), not plans. A *mention* is a run of degrees written close together on one line. The recommended plan is
the mention the answer marks as such — after "recommend", "best", "use", "go with", "to" or
"→" — over one it marks as the past or the loser ("from", "before", "instead of", "vs",
"alternative", "runner-up"); among equals, the first. A lone degree ("use EP=1") is talk about
one knob, not a plan, and is chosen only when the answer names no fuller plan. Degrees the chosen mention leaves out are
taken from later mentions of the same paragraph that do not contradict it ("Use TP=8 PP=2.
Keep ZeRO-1 and micro-batch 1."). A degree never mentioned is 1 by convention
(graders/plan.py decides what must be stated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .numbers import DEGREE, QUOTED, degree_label

Plan = dict[str, "int | str"]

INT_FIELDS = ("tp", "pp", "dp", "cp", "ep", "etp", "vpp", "zero", "micro_batch", "grad_accum")
MAX_GAP = 40  # characters between two degrees of one mention ("TP=8, PP=2 and DP=4")

# Prose forms, each giving one degree: (pattern, field). The number is group "n".
_PROSE: list[tuple[re.Pattern, str]] = [
    (re.compile(rf"(?P<n>\d+)[\s-]*(?:way|x|×)?[\s-]*{word}", re.I), field)
    for word, field in [(r"tensor[\s-]*parallel", "tp"), (r"pipeline[\s-]*parallel", "pp"),
                        (r"data[\s-]*parallel", "dp"), (r"context[\s-]*parallel", "cp"),
                        (r"expert[\s-]*parallel", "ep"), (r"pipeline[\s-]*stages", "pp"),
                        (r"(?:data[\s-]*parallel[\s-]*)?replicas", "dp"), (r"virtual[\s-]*(?:pipeline[\s-]*)?stages", "vpp")]
] + [
    (re.compile(rf"{word}(?:ism)?(?:\s*(?:size|degree|group|dimension))?\s*(?:of\s+|[=:]\s*|\(\s*)?(?P<n>\d+)\b"
                r"(?![-\s]*(?:GiB|GB|ms|s\b|%))", re.I), field)
    for word, field in [(r"tensor[\s-]*parallel", "tp"), (r"pipeline[\s-]*parallel", "pp"),
                        (r"data[\s-]*parallel", "dp"), (r"context[\s-]*parallel", "cp"),
                        (r"expert[\s-]*parallel", "ep"), (r"virtual[\s-]*pipeline(?:[\s-]*(?:stages|parallel))?", "vpp"),
                        (r"micro[\s-]*batch(?:es)?", "micro_batch")]
]
_RECOMPUTE = [
    (re.compile(r"\b(?:no|without|none)\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                r"|\b(?:recompute|recomputation|activation checkpointing)\s*[:=]?\s*(?:none|off|disabled)\b"
                r"|\brc-none\b", re.I), "none"),
    (re.compile(r"\bselective\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                r"|\b(?:recompute|recomputation|checkpointing)\s*[:=]?\s*selective\b|\brc-selective\b", re.I), "selective"),
    (re.compile(r"\bfull\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                r"|\b(?:recompute|recomputation|checkpointing)\s*[:=]?\s*full\b|\brc-full\b", re.I), "full"),
]
_FSDP = re.compile(r"\bFSDP\b|\bfull[\s-]shard", re.I)
_NOT_IN_MENTION = re.compile(r"[.!?](?:\s|$)|\n")  # a sentence end splits mentions

# Words just before a mention that mark it as the recommendation, or as not the recommendation.
_CHOSEN = re.compile(r"(?:\b(?:recommend\w*|best(?: plan)?|fastest|optimal|winner|wins|go with|use|choose|pick|"
                     r"suggest\w*|becomes|to|is)|→|->|=>|:)\W*$", re.I)  # whole words: "because" is not "use"
_NOT_CHOSEN = re.compile(r"(?:from|before|instead of|rather than|vs\.?|versus|over|alternatives?|runner[- ]up|"
                         r"compared (?:to|with)|than|not|isn't|won't|avoid|unlike)\W*$", re.I)
_NOT_CHOSEN_ANYWHERE = re.compile(r"alternative|runner[- ]up|instead of|rather than|previous|was\b|before", re.I)
CUE_WINDOW = 48  # characters before a mention read for those words


@dataclass
class Mention:
    start: int
    end: int
    degrees: list[tuple[str, int]] = field(default_factory=list)

    def fields(self) -> dict:
        out: dict = {}
        for name, value in self.degrees:
            if name in INT_FIELDS:
                out.setdefault(name, value)
        return out


def _degrees_in(text: str) -> list[tuple[int, int, str, int]]:
    """(start, end, field, value) for every degree written in `text`, in order."""
    found = []
    for m in DEGREE.finditer(text):
        name = degree_label(m.group("label"))
        if name in INT_FIELDS:
            found.append((m.start(), m.end(), name, int(m.group("num"))))
    for pattern, name in _PROSE:
        for m in pattern.finditer(text):
            found.append((m.start(), m.end(), name, int(m.group("n"))))
    found.sort()
    # Overlapping matches ("micro-batch 2" as a label and as prose) count once.
    out: list[tuple[int, int, str, int]] = []
    for item in found:
        if out and item[0] < out[-1][1] and item[2] == out[-1][2]:
            continue
        out.append(item)
    return out


def runs(text: str) -> list[Mention]:
    """Degrees written close together on one line, each run with distinct fields."""
    runs: list[Mention] = []
    for start, end, name, value in _degrees_in(text):
        last = runs[-1] if runs else None
        gap = text[last.end:start] if last else ""
        if last and start - last.end <= MAX_GAP and not _NOT_IN_MENTION.search(gap) \
                and name not in dict(last.degrees):
            last.end = max(last.end, end)
            last.degrees.append((name, value))
        else:
            runs.append(Mention(start, end, [(name, value)]))
    return runs


def mentions(text: str) -> list[Mention]:
    """Runs that name a parallel degree (a ZeRO stage alone is not a plan)."""
    return [m for m in runs(text) if {"tp", "pp", "dp", "cp", "ep"} & {n for n, _ in m.degrees}]


def _is_plan(m: Mention) -> bool:
    """Two degrees or more: a plan. One alone ("use EP=1", "TP 8 → 4 would…") is talk about a knob."""
    return len(m.degrees) >= 2


def _score(text: str, m: Mention) -> int:
    line_start = text.rfind("\n", 0, m.start) + 1
    before = text[max(line_start, m.start - CUE_WINDOW):m.start].replace("*", "").replace("`", "")
    if _NOT_CHOSEN.search(before) or _NOT_CHOSEN_ANYWHERE.search(before):
        return -1
    if _CHOSEN.search(before):
        return 1
    return 0


def _recompute_near(text: str, start: int, end: int) -> str | None:
    line_end = text.find("\n", end)
    window = text[start:line_end if line_end >= 0 else len(text)]
    hits = [(m.start(), mode) for pattern, mode in _RECOMPUTE for m in pattern.finditer(window)]
    return min(hits)[1] if hits else None


def _table_rows(block: str) -> list[dict[str, str]]:
    """Markdown table rows as {header: cell}."""
    lines = [ln.strip() for ln in block.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 3:
        return []
    header = [c.strip().lower() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[2:]]


def _plan_from_row(row: dict[str, str]) -> Plan:
    names = {"tensor parallel": "tp", "pipeline parallel": "pp", "data parallel": "dp", "zero stage": "zero"}
    plan: Plan = {}
    for header, cell in row.items():
        name = names.get(header) or degree_label(re.sub(r"[^a-z ]", "", header).strip())
        m = re.search(r"\d+", cell)
        if name in INT_FIELDS and m:
            plan[name] = int(m.group(0))
        elif name.startswith("recomput"):
            plan["recompute"] = cell.strip().strip("`").lower()
    return plan


def _from_table(block: str) -> Plan | None:
    for row in _table_rows(block):
        plan = _plan_from_row(row)
        if "tp" in plan or "pp" in plan:
            return plan
    return None


def stated_plan(text: str) -> Plan | None:
    """The plan the answer recommends, as {field: value}; None when it states none. Short
    quotations ("how about TP=8 PP=2?") are example questions, not plans."""
    text = QUOTED.sub(lambda m: " " * len(m.group(0)), text)
    blocks = re.split(r"\n\s*\n", text)
    candidates: list[tuple[int, int, int, Mention, str]] = []  # (-score, block, position, mention, block text)
    for b, block in enumerate(blocks):
        for m in mentions(block):
            candidates.append((-_score(block, m), b, m.start, m, block))
    if any(_is_plan(c[3]) for c in candidates):
        candidates = [c for c in candidates if _is_plan(c[3])]
    if not candidates:
        for block in blocks:
            plan = _from_table(block)
            if plan:
                return plan
        return None
    _, b, _, chosen, block = min(candidates, key=lambda c: c[:3])
    plan: Plan = chosen.fields()
    for m in runs(block):  # fill in from the rest of the paragraph, never overriding
        if m.start > chosen.start:
            extra = m.fields()
            if any(k in plan and plan[k] != v for k, v in extra.items()):
                break
            for k, v in extra.items():
                plan.setdefault(k, v)
    recompute = _recompute_near(block, chosen.start, chosen.end)
    if recompute:
        plan["recompute"] = recompute
    if "zero" not in plan and _FSDP.search(block):
        plan["zero"] = 3
    return plan
