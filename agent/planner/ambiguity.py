"""When two readings of a message would call different tools, one short question instead of a guess.

Three shapes are genuinely open: a bare number offered as a change ("what about 64?": 64 GPUs, or a
batch of 64?), a scaling with no object ("double it": the GPUs or the batch?), and a plan named only by
where it comes from ("the recipe's layout", with no degrees: which degrees?). Everything else is read.
"""

from __future__ import annotations

import re

from ..state import ConversationState
from .entities import Entities

BARE_NUMBER = re.compile(r"^(?:(?:ok|so|hmm|and|but)[,\s]+)*(?:what\s+about|how\s+about|and|with|try|make\s+it|maybe)\s+"
                         r"(\d[\d,]*)\s*\??$")
SCALED = re.compile(r"\b(double|halve|triple|quadruple)\s+(?:it|that|this)\b|\b(twice|half)\s+(?:that|as\s+much)\b")
FACTOR = {"double": 2, "twice": 2, "triple": 3, "quadruple": 4, "halve": 0.5, "half": 0.5}
RECIPE = re.compile(r"\b(?:the\s+|a\s+|their\s+)?(?:[\w.-]+\s+)?recipe'?s?\b")


def ask_reading(text: str, e: Entities, state: ConversationState) -> tuple[str, list[str]] | None:
    """(what is unclear, the readings to offer) or None when the message reads one way."""
    if state.scenario is None or e.has_scenario() or e.concept or e.export_format:
        return None
    m = BARE_NUMBER.match(text)
    if m and not e.plans:
        n = m.group(1)
        return f"\"{n}\" has no unit", [f"{n} GPUs", f"a global batch of {n} sequences"]
    m = SCALED.search(text)
    if m and not e.plans:
        word = m.group(1) or m.group(2)
        scale = {2: "twice", 3: "three times", 4: "four times", 0.5: "half"}[FACTOR[word]]
        return f"\"{m.group(0)}\" does not say what to scale", [f"{scale} the GPUs", f"{scale} the global batch"]
    if RECIPE.search(text) and not any(e.plans) and state.plan is not None:
        return "the recipe's degrees are not in the message", [
            "name them (for example \"TP=8 PP=2\") and I will compare them with the plan on the table"]
    return None
