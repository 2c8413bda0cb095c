"""Another cluster size asked beside a measured run: "[log of 8 GPUs] what should we expect on 64 GPUs?",
"we measured 850 tok/s/gpu on 64 h100 … and if we go to 128?". The run is calibrated on its own size; the
question is a what-if from that scenario to the size asked, predicted with the profile just fitted (it was
answered on the run's own size, the question left out).

A sentence asks it when it is a question or a what-if (a "?", "what if", "expect", "would", "scale", "go to")
and names a GPU or node count other than the run's."""

from __future__ import annotations

import re

from ...tools.scenario import Scenario
from .entities import extract
from .measured import without_log_lines

ASKS = re.compile(r"\?|\bwhat\s+if\b|\bexpect\w*\b|\bwould\b|\bscal(?:e|ed|ing)\b|\bgo(?:ing)?\s+to\b|\bmov(?:e|ing)\s+to\b|"
                  r"\bif\s+we\b|\bwith\s+more\b|\bon\s+a\s+bigger\b")
SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")


def scale_asked(message: str, scenario: Scenario) -> Scenario | None:
    """The change (GPU count, and the node size or GPU when said with it) asked beside the run, or None."""
    for sentence in reversed([s for s in SENTENCE.split(without_log_lines(message)) if s.strip()]):
        if not ASKS.search(sentence.lower()):
            continue
        e = extract(sentence)
        if e.plans or e.model is not None:
            continue  # another plan is a comparison (measured_plans.py); a model named, another scenario
        change = e.scenario_patch(default_gpu=scenario.gpu, base_gpus=scenario.gpus,
                                  base_per_node=scenario.gpus_per_node, base=scenario)
        if change.gpus is not None and change.gpus != scenario.gpus:
            return change
    return None
