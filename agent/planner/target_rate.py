"""A throughput the user needs, asked beside a recommendation: "we need ~12 samples/sec to finish on time, can we
hit that?", "we have to reach 50k tokens/s", "target 4,000 tok/s per GPU". Answered from the best plan's predicted
throughput and its 80 % band: reachable even at the band's bottom, at the prediction only, at the band's top only,
or not at all — said as a yes or a no, never left for the reader to work out.

Samples (sequences) are converted at the scenario's sequence length, the one the engine resolved: a sample is a
sequence of seq_len tokens in a packed pre-training or fine-tuning batch (global_batch is counted the same way).
A target is no measurement: its figure is blanked before a measured run is read (measured.py), so "can we hit 50k
tokens/s?" is not a rate to calibrate on."""

from __future__ import annotations

import re
from dataclasses import dataclass

# the wanting word, then the figure and its rate: "need ~12 samples/sec", "must hit 50k tokens per second",
# "target of 4,000 tok/s per gpu", "aiming for 1.2M tokens/s"
TARGET = re.compile(
    r"\b(?:need|needs|want|wants|require|required|requires|target(?:ing)?|aim(?:ing)?\s+(?:for|at)|goal\s+(?:is|of)|"
    r"(?:have|has|got)\s+to\s+(?:hit|reach|do|get|sustain)|must\s+(?:hit|reach|do|get|sustain))"
    r"(?:\s+(?:of|is|at\s+least|about|around|roughly|approx\.?|approximately))*\s*~?\s*"
    r"(?P<num>\d[\d,]*(?:\.\d+)?)\s*(?P<mult>k|m|million)?\s*"
    r"(?P<unit>samples?|seqs?|sequences?|examples?|tok(?:en)?s?)\s*(?:/\s*|per\s+|a\s+|an\s+|each\s+)(?:s|secs?|seconds?)\b"
    r"(?P<per_gpu>\s*(?:/\s*|per\s+)(?:gpu|device))?", re.IGNORECASE)


@dataclass(frozen=True)
class TargetRate:
    value: float  # as said, in `unit` per second
    samples: bool  # sequences per second, not tokens
    per_gpu: bool
    written: str  # the figure as the user wrote it, repeated back

    def tokens_per_s(self, seq_len: int, gpus: int) -> float:
        """The whole job's tokens/s this target asks for."""
        per = self.value * (seq_len if self.samples else 1)
        return per * gpus if self.per_gpu else per


def target_rate(text: str) -> TargetRate | None:
    m = TARGET.search(text)
    if m is None:
        return None
    mult = {"k": 1e3, "m": 1e6, "million": 1e6}.get((m.group("mult") or "").lower(), 1)
    value = float(m.group("num").replace(",", "")) * mult
    samples = not m.group("unit").lower().startswith("tok")
    written = m.group(0)[m.start("num") - m.start():].strip()
    return TargetRate(value, samples, m.group("per_gpu") is not None, written)


def without_target(text: str) -> str:
    """The text with a target's figure blanked: what is wanted is not what was measured."""
    return TARGET.sub(" ", text)


def verdict(target: TargetRate, best, seq_len: int, gpus: int) -> str:
    """reachable (even at the band's bottom) | likely (at the prediction, not the band's bottom) | borderline (only at
    the band's top) | out_of_reach (not even there). `best`: the recommendation's PlanFigures."""
    need = target.tokens_per_s(seq_len, gpus)
    low, high = (v * gpus for v in best.tokens_per_s_per_gpu_likely) if best.tokens_per_s_per_gpu_likely \
        else (best.tokens_per_s, best.tokens_per_s)
    if low >= need:
        return "reachable"
    if best.tokens_per_s >= need:
        return "likely"
    return "borderline" if high >= need else "out_of_reach"
