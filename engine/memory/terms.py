"""Named byte arrays filed under the four tensor categories, and keeping the heaviest moment."""

from __future__ import annotations

import numpy as np

CATEGORIES = ("weights", "gradients", "optimizer", "activations")


class Terms:
    """`"<category>.<name>" -> bytes per plan` for one moment of the step."""

    def __init__(self, values: dict[str, np.ndarray] | None = None):
        self.values: dict[str, np.ndarray] = dict(values or {})

    def add(self, category: str, name: str, value) -> "Terms":
        assert category in CATEGORIES, category
        key = f"{category}.{name}"
        self.values[key] = self.values.get(key, 0.0) + np.asarray(value, dtype=float)
        return self

    def category(self, category: str, n: int) -> np.ndarray:
        total = np.zeros(n)
        for key, value in self.values.items():
            if key.startswith(category + "."):
                total = total + value
        return total

    def total(self, n: int) -> np.ndarray:
        total = np.zeros(n)
        for value in self.values.values():
            total = total + value
        return total


class Heaviest:
    """Keeps, per plan, the terms of the moment with the largest total seen so far."""

    def __init__(self, n: int):
        self.n = n
        self.total = np.full(n, -np.inf)
        self.terms = Terms()
        self.phase = np.full(n, "", dtype=object)  # label of the heaviest moment's phase

    def offer(self, moment: Terms, phase: str = "") -> None:
        total = moment.total(self.n)
        heavier = total > self.total
        if not heavier.any():
            return
        self.phase = np.where(heavier, phase, self.phase)
        for key in set(self.terms.values) | set(moment.values):
            self.terms.values[key] = np.where(heavier, moment.values.get(key, 0.0), self.terms.values.get(key, 0.0))
        self.total = np.where(heavier, total, self.total)
