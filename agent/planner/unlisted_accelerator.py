"""An accelerator the catalog has no specs for, named with a count: "32 tenstorrent blackhole p150 cards", "16 v100s",
"8 rtx a6000 gpus", "64 mtia chips". Refused as unsupported while naming the catalog (answers.py, unknown), instead
of asking for a GPU the message already gave. Read only when no catalog GPU was found (entities.py); the vendors
named in names.UNSUPPORTED_ACCELERATORS keep their own words."""

from __future__ import annotations

import re

from .names import MODEL_FAMILIES

COUNT = r"(?<![\w.,-])(?:\d[\d,]*|two|four|eight|sixteen)\s*(?:x\s*|of\s+(?:the\s+)?)?"
NOUN = r"(?:cards?|chips?|accelerators?|gpus?|devices?|npus?|xpus?|boards?|asics?)\b"
NAME_WORD = r"[a-z][\w.+-]*"
# "32 tenstorrent blackhole p150 cards": up to four words between the count and the accelerator noun
NAMED = re.compile(rf"{COUNT}((?:{NAME_WORD}\s+){{1,4}}?){NOUN}")
# "16 v100s", "8 a6000s": a product code (letters then digits) written as a plural after a count
CODE = re.compile(rf"{COUNT}([a-z]{{1,4}}\d{{1,4}}[a-z]?)s\b")
# "64x MI355X", "8x a6000": a product code after a count written with "x" (a count of devices), plural or not
TIMES_CODE = re.compile(r"(?<![\w.,-])\d[\d,]*\s*x\s*([a-z]{1,4}\d{2,4}[a-z]{0,2})\b")
# Words that say nothing about which accelerator: a vendor alone ("8 nvidia gpus"), a quantity, a form factor
GENERIC = {"nvidia", "amd", "intel", "the", "our", "my", "their", "your", "more", "new", "extra", "additional", "same",
           "identical", "other", "older", "newer", "fast", "faster", "slow", "slower", "cheap", "cheaper", "big", "bigger",
           "small", "smaller", "spare", "free", "idle", "available", "rented", "cloud", "local", "total", "whole", "modern",
           "consumer", "datacenter", "data", "center", "sxm", "sxm4", "sxm5", "pcie", "nvlink", "nvlinked", "connected",
           "such", "those", "these", "single", "separate", "different", "gpu", "gpus", "of", "x", "a", "an", "in", "on",
           "per", "each", "all", "total", "physical", "virtual", "shared", "dedicated", "h100", "a100", "similar",
           # an architecture, not a part: "8 blackwell gpus" may be a catalog B200, so it is asked which
           "ampere", "hopper", "blackwell", "ada", "lovelace", "instinct", "cdna3", "geforce", "rtx", "radeon"}
NOT_A_CODE = re.compile(rf"^(?:tp|pp|cp|ep|vpp|etp|dp|mbs?|gbs|bs|zero|fp|bf|int|nf|sm|ib|gen|rank|layer)\d|^(?:{MODEL_FAMILIES})")
MEMORY_SIZE = re.compile(r"^\d+g(?:i)?b$|gb$")


def unlisted_accelerator(text: str) -> str | None:
    """The accelerator a (normalised) message names with a count that no catalog GPU matched, as written; or None."""
    for m in TIMES_CODE.finditer(text):  # "64x mi355x. … which gpus": the code, before any words up to a noun
        if not NOT_A_CODE.match(m.group(1)):
            return m.group(1)
    for m in NAMED.finditer(text):
        words = [w for w in m.group(1).split() if w not in GENERIC and not MEMORY_SIZE.search(w)]
        if words and not re.match(rf"(?:{MODEL_FAMILIES})\b", words[0]):
            return " ".join(words)
    for m in CODE.finditer(text):
        if not NOT_A_CODE.match(m.group(1)):
            return m.group(1)
    return None
