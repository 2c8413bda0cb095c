"""Which catalogs a message asks to see, beside whatever else it asks: "if not, which gpus and models do you actually
support", "what hardware do you cover?", "list the models you know". A message that names an unknown GPU or model
and asks this gets the refusal and the lists asked for (answers.py, unknown), not the refusal alone."""

from __future__ import annotations

import re

# "which/what <up to four words> (do/can) you (actually) support/know/cover/handle/model", "list the … you know"
ASKED = re.compile(r"\b(?:which|what|list)\b(?P<what>(?:\s+[\w/&+-]+){1,4}?)\s+(?:(?:do|can|does|will)\s+)?(?:you|shardwise)"
                   r"\s+(?:\w+\s+)?(?:support|know|cover|handle|model|plan\s+for)\b"
                   r"|\blist\b(?P<listed>(?:\s+[\w/&+-]+){1,4}?)\s+(?:you|shardwise)\s+(?:\w+\s+)?(?:support|know|cover)\b")
GPUS = re.compile(r"\b(?:gpus?|hardware|accelerators?|cards|chips)\b")
MODELS = re.compile(r"\bmodels?\b|\barchitectures?\b")


def catalogs_asked(text: str) -> tuple[bool, bool]:
    """(the GPUs are asked for, the models are asked for) in a normalised message."""
    gpus = models = False
    for m in ASKED.finditer(text):
        what = m.group("what") or m.group("listed") or ""
        gpus, models = gpus or GPUS.search(what) is not None, models or MODELS.search(what) is not None
    return gpus, models
