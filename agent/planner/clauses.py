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
COORDINATOR = re.compile(rf"(?:,\s*|\s+)(?:and\s+also|and\s+then|and|then|also|plus)\s+"
                         rf"(?=(?:(?:pls|plz|please|kindly|can\s+you|could\s+you|can\s+u|roughly|approximately|about|around|\w+ly)\s+)?(?:{OPENERS})\b)")
# Requests listed as nouns: "best plan, its memory breakdown, and the megatron-bridge config please"
REQUEST_NOUN = re.compile(r"^(?:the\s+|its\s+|a\s+|an\s+|your\s+|their\s+)?(?:best\s+|fastest\s+|recommended\s+)?"
                          r"(?:plan|layout|setup|memory(?:\s+breakdown)?|breakdown|step\s+time|mfu|throughput|"
                          r"[\w-]+\s+(?:config|args|flags|yaml|json|toml|script))\b")
# A clause asks for something: a question mark, a question or request word at its start, or a request verb.
ASKS = re.compile(rf"\?|(?:^|[,;:(]|\s-+|->)\s*(?:(?:ok|so|and|also|then|but|hmm|pls|please|cool|great|thanks|right|roughly|about|around|\w+ly)[,\s]+)*"
                  rf"(?:{OPENERS})\b|"
                  r"\b(?:recommend|suggest|compare|explain|eli5|define|describe|clarify|export|estimate|evaluate|check|review|give\s+me|"
                  r"show\s+me|tell\s+me|need|want)\b|"
                  r"\b(?:best|fastest|optimal|ideal|right|recommended)\s+(?:\w+\s+)?(?:plan|layout|setup|config|parallelism|"
                  r"strategy|sharding)\b")
MIN_WORDS = 3  # "and why?", "which?" add no request of their own


LIST = re.compile(r",\s*(?:and\s+)?|\s+(?:and|\+|&)\s+")


def _listed(piece: str) -> list[str]:
    """A piece that lists requests as nouns, cut into them; else the piece."""
    tail = re.split(r"(?<=[:;])\s+", piece)  # "… 2M tokens/step: best plan, its memory …"
    head, body = (" ".join(tail[:-1]), tail[-1]) if len(tail) > 1 else ("", piece)
    items = [i.strip() for i in LIST.split(body) if i.strip()]
    if len(items) >= 2 and all(REQUEST_NOUN.search(i) for i in items):
        return ([head] if head else []) + items
    return [piece]


def split_clauses(text: str) -> list[str]:
    """The clauses of a (normalised) message, in order."""
    pieces: list[str] = []
    start = 0
    for end in [*SENTENCE_END.finditer(text), None]:  # each sentence keeps its own "?" or "."
        sentence = text[start:end.end() if end else len(text)]
        start = end.end() if end else len(text)
        if sentence.strip(" .;\n"):
            pieces += [item for p in COORDINATOR.split(sentence) if p.strip() for item in _listed(p)]
    clauses: list[str] = []
    for piece in (p.strip(" ,\n") for p in pieces):
        if clauses and len(piece.split()) < MIN_WORDS:
            clauses[-1] = f"{clauses[-1]}, {piece}"
        else:
            clauses.append(piece)
    return clauses


def asks(clause: str) -> bool:
    """A question or request; a short noun phrase naming what is wanted ("its memory breakdown") counts."""
    return ASKS.search(clause) is not None or REQUEST_NOUN.search(clause) is not None and len(clause.split()) <= 6
