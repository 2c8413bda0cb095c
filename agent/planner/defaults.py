"""Settings the user seemed to give but the planner could not read. The tools fill a missing sequence
length or batch with a default; when the message talks about one ("long-context stage", "ctx",
"batch") and none was read, the answer says which default it used instead of staying silent. Packed data
with no document length read ("packed sequences") is priced as one document per sequence, and said."""

from __future__ import annotations

import re

from ...tools.scenario import DEFAULT_SEQ_LEN, Scenario, default_global_batch
from .setup_words import PACKED

SEQ_WORDS = re.compile(r"\bctx\b|\bcontext\b(?![\s-]*parallel)|\bseq(?:uence)?[\s_-]*len(?:gth)?\b|\bseqlen\b|"
                       r"\bmax[\s_-]*len\b|\blong[\s-]*(?:context|sequences?)\b|\bcutoff[\s_-]*len\b|"
                       r"\btok(?:en)?s?\s+(?:per|each|/)\s*(?:sample|sequence|example|doc(?:ument)?)\b")
BATCH_WORDS = re.compile(r"(?<!micro)(?<!micro[\s_-])\b(?:batch(?:es)?|gbs|bsz?)\b|"
                         r"\btok(?:en)?s?\s*(?:/|per)\s*(?:step|iter(?:ation)?)\b")


def unread_defaults(text: str, scenario: Scenario) -> list[tuple[str, str]]:
    """[(what, the default used)] for settings the text mentions but the scenario leaves to the default."""
    out = []
    if scenario.seq_len is None and SEQ_WORDS.search(text):
        out.append(("sequence length", f"{DEFAULT_SEQ_LEN:,} tokens"))
    if scenario.global_batch is None and not scenario.global_batch_tokens and BATCH_WORDS.search(text):
        out.append(("global batch", f"{default_global_batch(scenario.mode):,} sequences"))
    if scenario.mean_doc_len is None and PACKED.search(text):  # "packed samples", no length: not guessed
        out.append(("mean document length of the packed data", "of one document per sequence (attention over the "
                                                               "whole sequence)"))
    return out
