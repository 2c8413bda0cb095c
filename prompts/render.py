"""Jinja templates for everything shardwise says in words: the LLM's system prompt, the
offline planner's answers and the concept explanations (shared by the chat and the CLI).

StrictUndefined: a template that names a value the caller did not pass fails loudly in
tests instead of printing an empty string into an answer.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import jinja2

from ..present import count_noun, duration_ms, duration_range_ms
from .change_words import change_words
from .step_units import duration_in, step_amount, step_change

TEMPLATE_DIR = Path(__file__).parent


def _num(value, digits: int = 1) -> str:
    """1234.5 -> '1,234.5'; None -> 'n/a'. Numbers are rounded for reading, never recomputed."""
    if value is None:
        return "n/a"
    if isinstance(value, int) or float(value).is_integer() and abs(value) >= 1000:
        return f"{int(round(value)):,}"
    return f"{value:,.{digits}f}"


def _signed(value, digits: int = 1) -> str:
    """-2.94 -> '-2.9'; a change that rounds to zero reads '+0.0', never '-0.0': the sign is read off the
    printed digits (as present.signed does for the CLI)."""
    if value is None:
        return "n/a"
    shown = f"{abs(value):,.{digits}f}"
    negative = value < 0 and any(ch in "123456789" for ch in shown)
    return ("-" if negative else "+") + shown


# A setting written as code in an exporter's note: `gradient_accumulation_steps=16`, `tp_plan="auto"`,
# `data.train_batch_size=64` (a name with "_" or "."; plan labels such as "TP=2" are not code).
CODE_SETTING = re.compile(r"\b([A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s,;)]+)")


def _settings_in_words(note: str) -> str:
    """An exporter's note said in words: 'Accelerator(gradient_accumulation_steps=16)' ->
    'Accelerator(gradient_accumulation_steps set to 16)'. The chat answer describes the settings; the file
    carries them as code (its NOTE comments), so the answer never reads as a config typed by hand."""
    return CODE_SETTING.sub(lambda m: f"{m.group(1)} set to {m.group(2)}", note)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # markdown for terminals and the web's sanitising renderer, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["num"] = _num
    env.filters["signed"] = _signed
    env.filters["duration"] = duration_ms
    env.filters["duration_range"] = duration_range_ms
    env.filters["in_words"] = _settings_in_words
    env.filters["knob_change"] = lambda c: change_words(c.field, c.before, c.after)  # 'SP on → off', as the CLI
    env.filters["count_noun"] = count_noun  # '1 other plan', '170 other plans'
    env.filters["duration_in"] = duration_in  # a step time in the unit of the steps beside it
    env.filters["step_change"] = step_change  # a step's change in the step's unit, signed
    env.filters["step_amount"] = step_amount  # the same, unsigned ('2.6 s less per step')
    return env


def render(name: str, **context) -> str:
    text = environment().get_template(name).render(**context)
    # Templates are written for reading; collapse the blank lines their logic leaves behind.
    lines, blank = [], 0
    for line in text.splitlines():
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"


def template_names(folder: str) -> list[str]:
    return sorted(p.stem.removesuffix(".md") for p in (TEMPLATE_DIR / folder).glob("*.md.j2"))


def system_prompt(scenario: str | None = None, plan: str | None = None) -> str:
    """The LLM's system prompt: the tools' shared arguments, the rules, the conversation's state. The tools
    themselves are described once, in their schemas."""
    from ..tools.schema import shared_definitions

    return render("system.md.j2", definitions=shared_definitions(), scenario=scenario, plan=plan)
