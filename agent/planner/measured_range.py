"""A measured figure given as a range: "between 3,800 and 4,100 tok/s/gpu", "3.8-4.1k tokens/s per GPU",
"11 to 12 s per step", "38–41% MFU". One run is fitted to one figure, so the range is read as its middle and
the answer says so (a lower or upper end taken silently moved the fit by half the range).

The range is rewritten as its middle in the text and the usual readers (measured.py) read the figure; it
counts only when the figure they read is that middle, so "2-4 nodes … 3 s per step" is no range of the step.
"""

from __future__ import annotations

import re

NUM = r"\d[\d,]*(?:\.\d+)?"
RANGE = re.compile(rf"(?<![\w.,-])(?:(between)\s+)?~?\s*({NUM})\s*(k)?\s*(%)?\s*(?:(?<=\s)and|-|–|—|to)\s*~?\s*({NUM})\s*(k)?(?![\w.])")
WIDEST = 2.0  # a high end more than twice the low is no spread of one measurement, but two figures


def _value(number: str, thousands: str | None) -> float:
    return float(number.replace(",", "")) * (1000 if thousands else 1)


def middle_of_range(text: str) -> tuple[str, float, float] | None:
    """(the text with the first range written as its middle, low, high), or None when it holds none."""
    for m in RANGE.finditer(text):
        between, a, a_k, a_pct, b, b_k = m.groups()
        if " and " in m.group(0) and not between:
            continue  # "3800 and 4100": two figures, not a range
        low, high = float(a.replace(",", "")), _value(b, b_k)
        low = low * 1000 if b_k and not a_k and low * 1000 <= high else _value(a, a_k)  # "3.8-4.1k"
        if not 0 < low < high <= WIDEST * low:
            continue
        middle = (low + high) / 2
        return text[:m.start()] + f"{middle:g}" + text[m.end():], low, high
    return None
