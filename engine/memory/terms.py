"""Named byte arrays filed under the four tensor categories, and picking the peak among phases."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CATEGORIES = ("weights", "gradients", "optimizer", "activations")


@dataclass
class Terms:
    """`name -> bytes per plan`, each name filed under one category ("weights.sharded", …)."""

    values: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, category: str, name: str, value) -> "Terms":
        assert category in CATEGORIES, category
        key = f"{category}.{name}"
        self.values[key] = self.values.get(key, 0.0) + np.asarray(value, dtype=float)
        return self

    def merged(self, other: "Terms") -> "Terms":
        out = Terms(dict(self.values))
        for key, value in other.values.items():
            out.values[key] = out.values.get(key, 0.0) + value
        return out

    def category(self, category: str, n: int) -> np.ndarray:
        total = np.zeros(n)
        for key, value in self.values.items():
            if key.startswith(category + "."):
                total = total + value
        return total

    def total(self, n: int) -> np.ndarray:
        return sum((self.category(c, n) for c in CATEGORIES), np.zeros(n))


def pick_largest(candidates: list[Terms], n: int) -> tuple[Terms, np.ndarray]:
    """Per plan, the candidate with the largest total; returns its terms and the winning index."""
    totals = np.stack([c.total(n) for c in candidates])
    winner = np.argmax(totals, axis=0)
    names = sorted({key for c in candidates for key in c.values})
    picked = Terms()
    for key in names:
        column = np.stack([np.broadcast_to(c.values.get(key, 0.0), (n,)) for c in candidates])
        picked.values[key] = np.take_along_axis(column, winner[None, :], axis=0)[0]
    return picked, winner
