"""Counts of hardware written in English words: "six HGX H100 boxes", "a dozen nodes", "two dozen B200 nodes",
"sixteen GPUs", "thirty-two H100s", "half a dozen DGX", "a hundred and twenty-eight GPUs". A count phrase is
rewritten as digits only when what follows it is hardware (GPUs, nodes, servers, a GPU's name), so "one of
them", "a couple of ideas" or "two questions" are left as written; every count reader then sees digits.

"a", "an", "one" and "single" alone are left as they are: the readers already know them ("a DGX H100", "one
8xH100 box"), and "one of" is not a count. The same reading serves the LLM path's argument repair
(tool_call_repair.py) and the planner (planner/entities.py normalise), so a model that writes `"gpus": "sixteen"` is read as the planner reads the user."""

from __future__ import annotations

import re
from functools import lru_cache

UNITS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
         "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
         "seventeen": 17, "eighteen": 18, "nineteen": 19}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000}

UNIT = "|".join(sorted(UNITS, key=len, reverse=True))
TEN = "|".join(TENS)
BELOW_100 = rf"(?:(?:{TEN})(?:[\s-]+(?:{UNIT}))?|(?:{UNIT}))"  # "thirty-two", "thirty two", "sixteen"
MULTIPLIER = rf"(?:an?|{BELOW_100})"  # "a hundred", "two hundred", "a dozen", "two dozen"
# "a hundred and twenty-eight", "two thousand and forty-eight", "one hundred twenty eight"
WITH_SCALE = rf"{MULTIPLIER}\s+(?:hundred|thousand)(?:\s+(?:and\s+)?{BELOW_100})?"
DOZENS = rf"(?:half\s+a|{MULTIPLIER})\s+dozen"  # "a dozen" 12, "half a dozen" 6, "two dozen" 24
COUPLE = r"an?\s+(?:couple|pair)(?:\s+of)?"  # "a couple of nodes", "a pair of H100 boxes": two
PHRASE = rf"(?:{WITH_SCALE}|{DOZENS}|{COUPLE}|{BELOW_100})"

HARDWARE_NOUN = r"(?:gpus?|cards|accelerators|devices|ranks|nodes?|box(?:es)?|servers?|machines?|hosts?|[dh]gx(?:s|es)?)"
GAP_WORD = r"(?:more|extra|additional|nvidia|amd|sxm\d?|pcie|\d+\s*g(?:b|ib)?|\d+\s*-?\s*gpu|x|\d+x)"


@lru_cache(maxsize=1)
def _gpu_words() -> str:
    """Words of the catalog's GPU names that name a GPU by themselves ("h100", "b200", "mi300x", "l40s")."""
    from ..engine import hardware_catalog

    words = {w for gpu in hardware_catalog.list_gpus() for name in (gpu.id, *gpu.aliases)
             for w in re.split(r"[\s\-_]+", name.lower())
             if re.search(r"[a-z]", w) and re.search(r"\d", w) and not re.fullmatch(r"\d+gb?", w)}
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


@lru_cache(maxsize=1)
def _counted_hardware() -> re.Pattern:
    gpu = rf"(?:{_gpu_words()})(?:s|'s)?"
    follows = rf"(?=\s*(?:x\s*)?(?:(?:{GAP_WORD}|{gpu})[\s-]+)*(?:{HARDWARE_NOUN}|{gpu})(?![a-z0-9]))"
    return re.compile(rf"(?<![\w-])({PHRASE})(?![\w-]){follows}")


# A node's size after its noun: "four nodes of eight", "boxes with four".
NODE_SIZE = re.compile(rf"\b((?:nodes?|box(?:es)?|servers?|machines?|hosts?)\s+(?:of|with)\s+)({PHRASE})(?![\w-])")


def phrase_value(phrase: str) -> int | None:
    """The number an English count phrase says ("a hundred and twenty-eight" -> 128), or None."""
    words = [w for w in re.split(r"[\s-]+", phrase.lower().strip()) if w and w not in ("and", "of")]
    if not words:
        return None
    if words[0] in ("a", "an") and len(words) == 2 and words[1] in ("couple", "pair"):
        return 2
    if words[:2] == ["half", "a"] and words[2:] == ["dozen"]:
        return 6
    total, current = 0, 0
    for i, w in enumerate(words):
        if w in ("a", "an") and i == 0:
            current = 1
        elif w in UNITS:
            current += UNITS[w]
        elif w in TENS:
            current += TENS[w]
        elif w == "dozen":
            current = (current or 1) * 12
        elif w in SCALES:
            total += (current or 1) * SCALES[w]
            current = 0
        else:
            return None
    return total + current


def count_value(text: str) -> int | None:
    """The number a whole text says in words ("sixteen", "two dozen"), or None when it is not only a count."""
    text = re.sub(r"\s+", " ", text.lower().strip())
    return phrase_value(text) if re.fullmatch(PHRASE, text) else None


def with_digit_counts(text: str) -> str:
    """Lower-case text with every English count of hardware written as digits ("sixteen gpus" -> "16 gpus")."""
    def digits_of(phrase: str, written: str) -> str:
        value = phrase_value(phrase)
        return str(value) if value and phrase != "one" else written  # "one" is read where it stands

    def digits(m: re.Match) -> str:
        return digits_of(m.group(1), m.group(0))

    text = _counted_hardware().sub(digits, text)
    text = NODE_SIZE.sub(lambda m: m.group(1) + digits_of(m.group(2), m.group(2)), text)
    return _paired().sub(digits, text)


@lru_cache(maxsize=1)
def _paired() -> re.Pattern:
    """A count whose hardware is said once for two: "sixteen or thirty-two H100s", "eight to sixteen GPUs" (the
    second count is digits by then, followed by the hardware)."""
    gpu = rf"(?:{_gpu_words()})(?:s|'s)?"
    return re.compile(rf"(?<![\w-])({PHRASE})(?![\w-])(?=\s*(?:or|vs\.?|versus|to|and|,)\s*\d+\s*(?:x\s*)?"
                      rf"(?:(?:{GAP_WORD}|{gpu})[\s-]+)*(?:{HARDWARE_NOUN}|{gpu})(?![a-z0-9]))")
