"""A message cut into clauses, and whether a clause asks for something.

"We fine-tune Qwen2.5-72B with LoRA on 16 A100s, 4k context. What setup, and why not TP=8?" is three
clauses: a statement of the scenario, then two questions ("What setup", "why not TP=8?"). A clause
boundary is the end of a sentence, or a coordinator (", and", "; then", "also", "plus") followed by
a word that opens a request (why, what, how, which, is, can, give, export, compare, explain, ...).
A clause too short to stand alone ("and why?") stays with the clause before it: it asks the same
thing again, more insistently.
"""

from __future__ import annotations

import re

OPENERS = (r"why|what|what's|whats|how|which|where|is|are|does|do|did|can|could|would|will|should|shall|"
           r"give|show|export|compare|explain|tell|list|estimate|generate|write|send|dump|print|break|"
           r"recommend|suggest|pick|check|evaluate|walk|also|then|and|if")
SENTENCE_END = re.compile(r"[.?!;]+(?=\s|$)|\n+")  # "2.5" has no space after its point
COORDINATOR = re.compile(rf"(?:,\s*|\s+)(?:and\s+also|and\s+then|and|then|also|plus)\s+(?=(?:{OPENERS})\b)")
# A clause asks for something: a question mark, a question or request word at its start, or a request verb.
ASKS = re.compile(rf"\?|(?:^|[,;:(]|\s-+|->)\s*(?:(?:ok|so|and|also|then|but|hmm|pls|please|cool|great|thanks|right)[,\s]+)*"
                  rf"(?:{OPENERS})\b|"
                  r"\b(?:recommend|suggest|compare|explain|export|estimate|evaluate|check|review|give\s+me|"
                  r"show\s+me|tell\s+me|need|want)\b|"
                  r"\b(?:best|fastest|optimal|ideal|right|recommended)\s+(?:\w+\s+)?(?:plan|layout|setup|config|parallelism|"
                  r"strategy|sharding)\b")
MIN_WORDS = 3  # "and why?", "which?" add no request of their own


def split_clauses(text: str) -> list[str]:
    """The clauses of a (normalised) message, in order."""
    pieces: list[str] = []
    start = 0
    for end in [*SENTENCE_END.finditer(text), None]:  # each sentence keeps its own "?" or "."
        sentence = text[start:end.end() if end else len(text)]
        start = end.end() if end else len(text)
        if sentence.strip(" .;\n"):
            pieces += [p for p in COORDINATOR.split(sentence) if p.strip()]
    clauses: list[str] = []
    for piece in (p.strip(" ,\n") for p in pieces):
        if clauses and len(piece.split()) < MIN_WORDS:
            clauses[-1] = f"{clauses[-1]}, {piece}"
        else:
            clauses.append(piece)
    return clauses


def asks(clause: str) -> bool:
    return ASKS.search(clause) is not None
