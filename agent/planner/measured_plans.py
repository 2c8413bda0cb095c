"""Which plan a measured run ran, and which plan it is set against, when a message names more than one:
"we measured 850 tok/s/gpu on tp4 pp4 — would tp8 pp2 beat it?", "would tp8 pp2 beat our run? we measured
850 tok/s/gpu on tp4 pp4", "got 1.9 s/step with TP2 PP4; compare that to TP4 PP2".

The run is the plan named in the sentence (or clause) that states the measured figure; a plan named in another
sentence of the same message is the other side of a comparison (whatever is asked of it — faster, fits, its
MFU — the comparison of the two with the run's profile answers it). Read as one, the message's knobs collapse into
the first plan written (find_plans keeps the first value of each knob), which calibrated on the wrong run. A
comparison with no second plan named but pointing at the recommendation ("would your plan beat it?") is set
against the plan under discussion."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..state import ConversationState
from .cues import COMPARE_CUE, YOURS_REF
from .knobs import find_plans
from .measured import MeasuredRun, states_figure

# Where a sentence or clause ends: a full stop, question or exclamation mark, a semicolon or colon, a dash set
# off by spaces, a line break. Not a comma: "850 tok/s/gpu on tp4 pp4, zero1" is one clause.
PIECE_END = re.compile(r"[.?!;:]+(?=\s|$)|\s-+\s|\n+")


@dataclass(frozen=True)
class MeasuredPlans:
    run: dict  # the knobs of the plan the measurement belongs to
    other: dict | None  # the plan it is compared with, when the message asks for a comparison
    other_is_discussed: bool = False  # `other` is the plan under discussion, pointed at ("your plan")


def pieces(text: str) -> list[str]:
    return [p.strip() for p in PIECE_END.split(text) if p.strip()]


def measured_plans(text: str, run: MeasuredRun, state: ConversationState) -> MeasuredPlans | None:
    """The run's own plan and the plan set against it, read from the normalised message `text`; None when the
    message does not say them apart (one plan named, or none in the measurement's own sentence)."""
    if run.kind not in ("tokens_per_s_per_gpu", "tokens_per_s_total", "step_s", "mfu", "tflops_per_gpu"):
        return None  # a log names its own plan (tools/log_run.py); an unclear rate is asked about first
    parts = pieces(text)
    where = next((i for i, p in enumerate(parts) if states_figure(p, run.kind)), None)
    if where is None:
        return None
    own = [p for p in find_plans(parts[where]) if p]
    run_at = where
    if not own and where > 0 and not COMPARE_CUE.search(parts[where - 1]):
        # the setup said just before the figure: "llama 8b on 8 h100, tp1, 4k: our job does 60,000 tokens/s",
        # "(tp8 pp4 zero1, seq 8192): step takes 62 s" (a colon or full stop between them)
        own, run_at = [p for p in find_plans(parts[where - 1]) if p], where - 1
    if len(own) != 1:
        return None  # no plan, or two, in the measurement's own sentence: read as before
    others = [p for i, part in enumerate(parts) if i not in (where, run_at) for p in find_plans(part) if p and p != own[0]]
    rest = " ".join(p for i, p in enumerate(parts) if i not in (where, run_at))
    asks_compare = COMPARE_CUE.search(rest) is not None or COMPARE_CUE.search(parts[where]) is not None
    if others:  # "would tp8 pp2 beat it?", "does tp8 pp2 fit?", "and tp8 pp2?": the comparison answers each
        return MeasuredPlans(own[0], others[0])
    if not others and asks_compare and YOURS_REF.search(text) and state.plan is not None:
        discussed = state.plan.model_dump(exclude_none=True)
        if not own[0].items() <= discussed.items():  # the run is not the plan on the table
            return MeasuredPlans(own[0], discussed, other_is_discussed=True)
    return MeasuredPlans(own[0], None)
