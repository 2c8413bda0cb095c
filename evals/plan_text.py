"""Read the parallelism plan an answer recommends out of its prose.

Answers write plans in many ways: "TP=8, PP=4, DP=2", "TP8 PP4 ZeRO1 mb1", "8-way tensor
parallel with 4 pipeline stages", "ZeRO stage 1", "selective recompute", or a markdown
table with a TP/PP/DP header. The recommended plan is the first one the answer states: the
first paragraph (or table row) that names a TP or PP degree; degrees elsewhere in the answer
(alternatives, what-ifs) are not part of it.
"""

from __future__ import annotations

import re

from .numbers import DEGREE, degree_label

Plan = dict[str, "int | str"]

INT_FIELDS = ("tp", "pp", "dp", "cp", "ep", "etp", "vpp", "zero", "micro_batch", "grad_accum")

# Prose forms, each giving one degree: (pattern, field). The number is group "n".
_PROSE: list[tuple[re.Pattern, str]] = [
    (re.compile(rf"(?P<n>\d+)[\s-]*(?:way|x|×)?[\s-]*{word}", re.I), field)
    for word, field in [(r"tensor[\s-]*parallel", "tp"), (r"pipeline[\s-]*parallel", "pp"),
                        (r"data[\s-]*parallel", "dp"), (r"context[\s-]*parallel", "cp"),
                        (r"expert[\s-]*parallel", "ep"), (r"pipeline[\s-]*stages", "pp"),
                        (r"(?:data[\s-]*parallel[\s-]*)?replicas", "dp"), (r"virtual[\s-]*(?:pipeline[\s-]*)?stages", "vpp")]
] + [
    (re.compile(rf"{word}(?:ism)?(?:\s*(?:size|degree|group|dimension))?\s*(?:of\s+|[=:]\s*|\(\s*)?(?P<n>\d+)\b(?![-\s]*(?:GiB|GB|ms|s\b|%))", re.I), field)
    for word, field in [(r"tensor[\s-]*parallel", "tp"), (r"pipeline[\s-]*parallel", "pp"),
                        (r"data[\s-]*parallel", "dp"), (r"context[\s-]*parallel", "cp"),
                        (r"expert[\s-]*parallel", "ep"), (r"virtual[\s-]*pipeline(?:[\s-]*(?:stages|parallel))?", "vpp"),
                        (r"micro[\s-]*batch(?:es)?", "micro_batch")]
]
_RECOMPUTE = [
    (re.compile(r"\b(?:no|without|none)\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                r"|\b(?:recompute|recomputation|activation checkpointing)\s*[:=]?\s*(?:none|off|disabled)\b", re.I), "none"),
    (re.compile(r"\bselective\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                r"|\b(?:recompute|recomputation|checkpointing)\s*[:=]?\s*selective\b", re.I), "selective"),
    (re.compile(r"\bfull\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                r"|\b(?:recompute|recomputation|checkpointing)\s*[:=]?\s*full\b|\brc-full\b", re.I), "full"),
    (re.compile(r"\brc-selective\b", re.I), "selective"),
    (re.compile(r"\brc-none\b", re.I), "none"),
]
_FSDP = re.compile(r"\bFSDP\b|\bfull[\s-]shard", re.I)


def _degrees_in(text: str) -> list[tuple[int, str, int]]:
    """(position, field, value) for every degree written in `text`."""
    found = []
    for m in DEGREE.finditer(text):
        field = degree_label(m.group("label"))
        if field in ("fsdp", "hsdp", "global_batch"):
            continue
        found.append((m.start(), field, int(m.group("num"))))
    for pattern, field in _PROSE:
        for m in pattern.finditer(text):
            found.append((m.start(), field, int(m.group("n"))))
    return sorted(found)


def _table_rows(block: str) -> list[dict[str, str]]:
    """Markdown table rows as {header: cell}."""
    lines = [ln.strip() for ln in block.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 3:
        return []
    header = [c.strip().lower() for c in lines[0].strip("|").split("|")]
    rows = []
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows.append(dict(zip(header, cells)))
    return rows


def _plan_from_row(row: dict[str, str]) -> Plan:
    plan: Plan = {}
    for header, cell in row.items():
        field = degree_label(re.sub(r"[^a-z ]", "", header).strip()) if header else ""
        names = {"tensor parallel": "tp", "pipeline parallel": "pp", "data parallel": "dp", "zero stage": "zero"}
        field = names.get(header, field)
        m = re.search(r"\d+", cell)
        if field in INT_FIELDS and m:
            plan[field] = int(m.group(0))
        elif field.startswith("recomput") or field == "rc":
            plan["recompute"] = cell.strip().lower()
    return plan


def stated_plan(text: str) -> Plan | None:
    """The first plan the answer states, as {field: value}; None when it states none."""
    for block in re.split(r"\n\s*\n", text):
        for row in _table_rows(block):
            plan = _plan_from_row(row)
            if "tp" in plan or "pp" in plan:
                return plan
        degrees = _degrees_in(block)
        if not any(f in ("tp", "pp") for _, f, _ in degrees):
            continue
        plan: Plan = {}
        for _, field, value in degrees:
            if field in INT_FIELDS:
                plan.setdefault(field, value)
        modes = [(m.start(), mode) for pattern, mode in _RECOMPUTE for m in pattern.finditer(block)]
        if modes:
            plan["recompute"] = min(modes)[1]
        if "zero" not in plan and _FSDP.search(block):
            plan["zero"] = 3
        return plan
    return None


def every_stated_plan(text: str) -> list[Plan]:
    """Every paragraph's plan, in order (for 'compare'-style answers)."""
    plans = []
    for block in re.split(r"\n\s*\n", text):
        plan = stated_plan(block)
        if plan:
            plans.append(plan)
    return plans
