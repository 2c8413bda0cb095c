"""The engine's explanations (engine/explain.py, engine/whatif.py) as quotable facts.

The engine speaks seconds, ratios and attribute names (`pp_bubble_s`, throughput_ratio
1.04); answers speak milliseconds, percent changes and words ("pipeline bubble", +4.0 %).
Conversions happen here, once, so neither the model nor a template does arithmetic.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .figures import MEMORY_TERMS, TIME_TERMS, r

TERM_NAMES = {attr: name for name, attr in {**TIME_TERMS, **MEMORY_TERMS}.items()}
TERM_NAMES.update({"step_s": "step time", "total_gib": "total memory"})
KNOB_NAMES = {"zero_stage": "ZeRO stage", "micro_batch": "micro-batch", "sequence_parallel": "sequence parallelism",
              "grad_accum": "gradient accumulation", "recompute": "recompute"}


def term_name(attr: str | None) -> str | None:
    return TERM_NAMES.get(attr, attr) if attr else None


def knob_name(knob: str) -> str:
    return KNOB_NAMES.get(knob, knob.upper())


def percent_change(ratio: float | None) -> float | None:
    return None if ratio is None else r(100 * (ratio - 1), 1)


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else r(1e3 * seconds, 1)


def change_text(knob: str, before, after) -> str:
    """'TP 2 → 4'; a switch reads 'sequence parallelism on → off', not 'True → False' (present.knob_value)."""
    from ..present import knob_value

    return f"{knob_name(knob)} {knob_value(before)} → {knob_value(after)}"


class CounterfactualFacts(BaseModel):
    change: str = Field(description="the one knob changed, e.g. 'TP 2 → 4'")
    outcome: str = Field(description="invalid | does_not_fit | fits | faster | slower | same")
    memory_gib: float
    memory_change_gib: float
    step_ms_change: float | None = None
    throughput_change_percent: float | None = None
    largest_time_change: str | None = Field(None, description="the time term that moves most, with its ms change")
    violations: list[str] = Field(default_factory=list)


def counterfactual_facts(c) -> CounterfactualFacts:
    time_terms = [t for t in c.terms if t.kind == "time"]
    biggest = max(time_terms, key=lambda t: abs(t.delta), default=None)
    return CounterfactualFacts(
        change=change_text(c.knob, c.before, c.after), outcome=c.outcome, memory_gib=r(c.memory_total_gib, 1),
        memory_change_gib=r(c.memory_delta_gib, 1), step_ms_change=ms(c.step_delta_s),
        throughput_change_percent=percent_change(c.throughput_ratio),
        largest_time_change=(f"{term_name(biggest.term)} {ms(biggest.delta):+g} ms" if biggest else None),
        violations=[f"[{v.rule}] {v.message}" for v in c.violations])


class BindingFacts(BaseModel):
    kind: str = Field(description="memory | validity | improvable | time_term | none")
    sentence: str = Field(description="what stops the plan from being faster, numbers included")
    change: str | None = Field(None, description="the one-knob change the sentence is about")
    term: str | None = None
    numbers: dict[str, float] = Field(default_factory=dict, description="ms, GiB and percent, as quoted")


def binding_facts(b) -> BindingFacts:
    n = b.numbers
    change = change_text(b.knob, b.before, b.after) if b.knob else None
    term = term_name(b.term)
    numbers: dict[str, float] = {}
    if "step_delta_s" in n:
        numbers["step_ms_change"] = ms(n["step_delta_s"])
    if "throughput_ratio" in n:
        numbers["throughput_change_percent"] = percent_change(n["throughput_ratio"])
    for key in ("memory_gib", "usable_gib", "capacity_gib", "over_gib", "memory_delta_gib"):
        if key in n:
            numbers[key] = r(n[key], 1)
    is_time = b.term and b.term.endswith("_s")
    for key in ("a", "b", "delta"):
        if key in n:
            numbers[f"term_{key}_{'ms' if is_time else 'gib'}"] = ms(n[key]) if is_time else r(n[key], 1)
    if b.kind == "memory" and "usable_gib" in n and change and "throughput_change_percent" in numbers:
        sentence = (f"{change} would be {numbers['throughput_change_percent']:+g}% throughput but needs "
                    f"{numbers['memory_gib']:g} GiB per GPU, more than the {numbers['usable_gib']:g} GiB usable"
                    + (f" ({term} {numbers['term_a_gib']:g} → {numbers['term_b_gib']:g} GiB)" if "term_a_gib" in numbers else "")
                    + ": memory is the binding constraint.")
    elif b.kind == "memory":
        sentence = (f"The plan needs {numbers.get('memory_gib', 0):g} GiB per GPU, {numbers.get('over_gib', 0):g} GiB "
                    f"more than usable; its largest category is {term}"
                    + (f"; {change} is the fastest single change that fits." if change else "."))
    elif b.kind == "improvable":
        sentence = f"{change} fits and would be {numbers.get('throughput_change_percent', 0):+g}% throughput."
    elif b.kind == "time_term":
        sentence = (f"Every one-knob change that fits is slower; the cheapest, {change}, costs "
                    f"{numbers.get('step_ms_change', 0):+g} ms per step, mostly {term}"
                    + (f" ({numbers['term_a_ms']:g} → {numbers['term_b_ms']:g} ms)" if "term_a_ms" in numbers else "") + ".")
    elif b.kind == "validity":
        sentence = f"The plan breaks the rule {b.rule}" + (f"; {change} breaks it too." if change else ".")
    else:
        sentence = "No one-knob change was found that makes a difference."
    return BindingFacts(kind=b.kind, sentence=sentence, change=change, term=term, numbers=numbers)


class ReasonFacts(BaseModel):
    rule: str
    numbers: dict[str, float | int | str]


def reason_facts(reason) -> ReasonFacts:
    numbers: dict[str, float | int | str] = {}
    for key, value in reason.numbers.items():
        if isinstance(value, float) and key.endswith("_s"):
            numbers[key[:-2] + "_ms"] = ms(value)
        elif isinstance(value, float) and (key.endswith("ratio") or key == "scaling_efficiency"):
            numbers[key.replace("ratio", "change_percent") if key.endswith("ratio") else "scaling_efficiency_percent"] = (
                percent_change(value) if key.endswith("ratio") else r(100 * value, 1))
        elif key == "term":
            numbers[key] = term_name(value) or value
        elif isinstance(value, float):
            numbers[key] = r(value, 2)
        else:
            numbers[key] = value
    return ReasonFacts(rule=reason.rule, numbers=numbers)
