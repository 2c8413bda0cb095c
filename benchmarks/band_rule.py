"""Session 12's band rule, read off a judge's figures (docs/performance.md, "Protocol for session 12"; unchanged in
"Protocol for session 13"): coverage first, the interval score second. benchmarks/engine_choice.py prints it beside the
figures, for the protocol's candidates only (a method printed for reference is no candidate); the lead applies it.

- Size rule: the rule applies only if the judged set has at least 15 used runs from at least 3 sources; otherwise
  nothing ships on it (a weak judge).
- A method is eligible if it holds between 75 % and 85 % of the set's used runs (run count, the band the product shows).
- Ships: the eligible method with the lowest mean interval score; if none is eligible, the method whose coverage is
  closest to 80 % (ties: the interval score).
- Item 2 (session 13: the shipped method pooled over sets 9 and 10's first runs): met if the shipped method holds
  75-85 % of the pooled used runs (the same window).
"""

from __future__ import annotations

MIN_RUNS, MIN_SOURCES = 15, 3  # the protocol's size rule
ELIGIBLE = (0.75, 0.85)  # the acceptance's window for an 80 % band (issue 14, item 2)
TARGET = 0.80


def size_rule(runs: int, sources: int) -> bool:
    return runs >= MIN_RUNS and sources >= MIN_SOURCES


def eligible(share: float) -> bool:
    return ELIGIBLE[0] <= share <= ELIGIBLE[1]


def ships(figures: dict[str, tuple[float, float]]) -> tuple[str, str]:
    """(method, why) from each method's (coverage share, mean interval score)."""
    ok = {m: f for m, f in figures.items() if eligible(f[0])}
    if ok:
        m = min(ok, key=lambda k: ok[k][1])
        return m, f"eligible ({', '.join(sorted(ok))}); lowest interval score among them"
    # distance to 80 % rounded, so that shares equally far on either side (0.70, 0.90) tie as they do in arithmetic
    m = min(figures, key=lambda k: (round(abs(figures[k][0] - TARGET), 9), figures[k][1]))
    return m, "none eligible; coverage closest to 80 % (ties: the interval score)"


def readout(runs: int, sources: int, figures: dict[str, tuple[float, float]]) -> list[str]:
    """The rule's lines for a judge's print-out."""
    lines = [f"size rule (>= {MIN_RUNS} used runs from >= {MIN_SOURCES} sources): {runs} runs, {sources} sources: "
             + ("met" if size_rule(runs, sources) else "NOT met -- a weak judge: nothing ships on it")]
    lines += [f"  {m}: {share:.1%} inside, {'eligible' if eligible(share) else 'not eligible'} (75-85 %), "
              f"interval score {score:.4f}" for m, (share, score) in figures.items()]
    if size_rule(runs, sources):
        m, why = ships(figures)
        lines.append(f"the rule ships {m}: {why}")
    return lines


def item_2(method: str, sets: list[int], coverage: dict) -> str:
    """Item 2's line: the shipped method's runs inside its band over these sets' used runs (pooled when several), met
    if the share is in the 75-85 % window. `coverage` is external_check.share's dict (inside, runs, share, ci95)."""
    where = f"sets {', '.join(map(str, sets))} pooled" if len(sets) > 1 else f"set {sets[0]}"
    return (f"item 2 ({method}, the shipped method, {where}): {coverage['inside']}/{coverage['runs']} "
            f"({coverage['share']:.1%}, CI {coverage['ci95'][0]:.0%}-{coverage['ci95'][1]:.0%}): "
            + ("met" if eligible(coverage["share"]) else "NOT met") + " (75-85 %)")
