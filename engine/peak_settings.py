"""A measured peak the plan as given does not explain: what each likely-misdescribed setting, changed alone, predicts.

A peak outside the plan's 80 % memory band, or a plan that does not fit although the run ran, says the run's
description is wrong somewhere. The settings a description most often gets wrong, and that move the peak most,
are activation recompute (most logs never print it: DeepSpeed's throughput timer and HF Trainer's metrics do not)
and the ZeRO stage. Each other value of each, alone, is predicted with the engine's own memory model and band, and
marked when its band holds the measured peak; none holding it says the difference is elsewhere (a setting the
engine does not model, such as checkpointing only some layers, or the figure itself). Pure; nothing fitted here."""

from __future__ import annotations

from .cluster import Cluster
from .peak_alternative import PeakAlternative
from .evaluate import evaluate
from .model_spec import ModelSpec
from .strategy import Strategy
from .training import TrainingSetup

# The settings tried, each alone, with every value a plan can have (engine/strategy.py).
TRIED_SETTINGS = {"recompute": ("none", "selective", "full"), "zero_stage": (0, 1, 2, 3)}
LABELS = {"recompute": "recompute={}", "zero_stage": "ZeRO-{}"}  # as plan labels write them (engine/plan_label.py)


# Without a band (none is shipped for the scenario's stack), a prediction this close to the measured peak explains it.
UNBANDED_PEAK_TOLERANCE = 0.10


def peak_explained(measured_gib: float, predicted_gib: float, likely_gib: list[float] | None) -> bool:
    """Does the plan as given explain the measured peak: its 80 % band holds it (a plan predicted above the GPU's
    memory whose band holds a peak that ran is the prediction's error, not the description's)?"""
    if likely_gib:
        return likely_gib[0] <= measured_gib <= likely_gib[1]
    return abs(measured_gib / predicted_gib - 1) <= UNBANDED_PEAK_TOLERANCE


def peak_alternatives(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, strategy: Strategy,
                      measured_gib: float, stated: frozenset[str] = frozenset()) -> list[PeakAlternative]:
    """Every valid single-setting change of TRIED_SETTINGS with its predicted peak, except the settings in `stated`
    (printed by the run's own log: what ran, not a guess): those whose band holds `measured_gib` first, then by
    distance from it."""
    out = []
    for setting, values in TRIED_SETTINGS.items():
        if setting in stated:
            continue
        for value in values:
            if value == getattr(strategy, setting):
                continue
            e = evaluate(model, cluster, setup, strategy.model_copy(update={setting: value}))
            if not e.valid:
                continue
            band = e.memory.total_gib_range
            out.append(PeakAlternative(setting=setting, value=value, label=LABELS[setting].format(value),
                                       predicted_gib=e.memory.total_gib, likely_gib=band,
                                       holds_measured=bool(band and band[0] <= measured_gib <= band[1])))
    return sorted(out, key=lambda a: (not a.holds_measured, abs(a.predicted_gib - measured_gib)))
