"""Settings said once for both plans of a contrast: "full recompute, zero1 for both: CP=4 or TP=4", "compare cp4
with tp4, full recompute and zero1 on both", "tp8 pp2 vs tp4 pp4 using zero1, mb1 for both", "with zero1 mb1 in
both cases, tp8 pp2 or tp4 pp4?". Read with the contrast alone, such settings stuck to the plan written next to
them (or the two plans were read as one).

The settings are the ZeRO stage, the micro-batch and the recompute — what two layouts are compared *under*; a
degree said "for both" ("pp2 for both: tp4 or tp8") is read by the contrast rules in knobs.py. They are taken from
the sentence that holds the marker ("for both", "on both", "in both cases", "for each", "same for each", "both
with …", "either way"), on the marker's side of the layouts written in that sentence, and only when each is said
once in the message: a setting written twice belongs to each plan as written ("zero1 … vs … zero3")."""

from __future__ import annotations

import re

BOTH = re.compile(r"\b(?:for|on|in|to|across)\s+(?:both|each)(?:\s+(?:of\s+them|plans?|options?|cases?|sides?|layouts?|"
                  r"setups?|configs?|runs?))?\b|\bboth\s+(?:plans|options|cases|sides|layouts|setups|configs)\b|"
                  r"\b(?:both|each)\s+(?:with|using|use|on|at|get|have|having|running|keep)\b|\beither\s+way\b|"
                  r"\bsame\s+(?:\w+\s+)?for\s+(?:both|each)\b")
# Where the marker's sentence ends: a full stop, question mark, semicolon, colon, a bracket, a dash set off by spaces
STATEMENT_END = re.compile(r"[.?!;:()\n]+|\s-+\s")
SETTINGS = ("zero", "micro_batch", "recompute")
DEGREES = ("tp", "pp", "vpp", "cp", "ep", "etp")


def _knob_spans(text: str) -> list[tuple[int, int, str, object]]:
    from .knobs import KNOB_PATTERNS, _knob_value

    return sorted((m.start(), m.end(), knob, _knob_value(knob, m)) for knob, pattern in KNOB_PATTERNS.items()
                  for m in re.finditer(pattern, text))


def said_for_both(text: str) -> tuple[dict, str]:
    """({setting: value} said for both plans, the text without them and the marker); ({}, text) when none is."""
    from .knobs import PLAN_SEPARATOR

    marker = BOTH.search(text)
    if marker is None:
        return {}, text
    ends = [0] + [m.end() for m in STATEMENT_END.finditer(text)] + [len(text)]
    start = max(e for e in ends if e <= marker.start())
    end = min((m.start() for m in STATEMENT_END.finditer(text, marker.end())), default=len(text))
    # the part of that sentence between contrast words ("vs", "or", "than") that holds the marker
    cuts = [start] + [s.end() for s in PLAN_SEPARATOR.finditer(text, start, end)] + [end]
    lo = max(c for c in cuts if c <= marker.start())
    hi = min((s.start() for s in PLAN_SEPARATOR.finditer(text, marker.end(), end)), default=end)
    spans = _knob_spans(text)
    here = [k for k in spans if lo <= k[0] < hi]
    degrees = [k for k in here if k[2] in DEGREES]
    if degrees and marker.start() > degrees[-1][0]:
        here = [k for k in here if k[0] > degrees[-1][0]]  # "tp4 pp4 using zero1, mb1 for both": after the layout
    elif degrees and marker.end() <= degrees[0][0]:
        here = [k for k in here if k[0] < degrees[0][0]]  # "with zero1 mb1 in both cases, tp8 pp2": before it
    elif degrees:
        return {}, text  # the marker inside a layout: not read
    said_once = {knob for knob in SETTINGS if sum(k[2] == knob for k in spans) == 1}
    shared = [k for k in here if k[2] in said_once]
    if not shared:
        return {}, text
    rest = text
    for a, b, _, _ in sorted([*((k[0], k[1], None, None) for k in shared), (marker.start(), marker.end(), None, None)],
                             reverse=True):
        rest = rest[:a] + " " * (b - a) + rest[b:]
    return {k[2]: k[3] for k in shared}, rest
