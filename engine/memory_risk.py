"""When the recommended plan may not fit: its point estimate fits the usable memory (the search ranks by it), but the
upper end of its 80 % memory band is above the GPU's capacity — the threshold the page and `evaluate` use for their
band note (present.memory_band_note), so every surface warns about the same plans. The headroom is the search's
margin on the point estimate; the band is the estimate's error, so the band's top is held against the capacity. The band is the memory model's error on measured peaks
(engine/calibration/intervals.py memory_band: one multiplicative band per software stack, so the same factor for every
plan of a search); 1 run in 10 peaks above its upper end. Among the plans predicted within the ranking resolution of
the best (coverage.RANKING_RESOLUTION: closer than measured runs can order), the fastest whose whole band fits is
named: choosing it costs no speed the model can tell apart."""

from __future__ import annotations

import math

import numpy as np

from .calibration.coverage import RANKING_RESOLUTION
from .calibration.intervals import memory_band
from .calibration.profile import CalibrationProfile
from .cluster import Cluster
from .evaluate import evaluate
from .export.carriers import refusal
from .model_spec import ModelSpec
from .recommendation import MemoryRisk
from .training import TrainingSetup

GIB = 2**30


def memory_risk(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, fitting, step_s: np.ndarray,
                memory_bytes: np.ndarray, best_index: int, headroom: float, profile: CalibrationProfile | None = None,
                export_format: str | None = None) -> MemoryRisk | None:
    """`fitting`, `step_s`, `memory_bytes`: the search's fitting plans, fastest first (search.Ranking); `best_index`:
    the plan recommended among them (0, or the first the export format writes). None when its band fits."""
    usable = cluster.gpu.memory_gib * (1.0 - headroom)
    capacity = cluster.gpu.memory_gib
    factor = math.exp(memory_band(setup).high)  # the band's upper end over the point estimate
    upper = memory_bytes / GIB * factor
    if upper[best_index] <= capacity:
        return None
    best_step = step_s[best_index]
    near = (step_s < best_step * (1.0 + RANKING_RESOLUTION)) & (upper <= capacity)
    near[: best_index + 1] = False
    band_fits, slower = None, None
    for i in np.flatnonzero(near):
        strategy = fitting.strategy(int(i))
        if export_format is not None and refusal(export_format, model, cluster, setup, strategy) is not None:
            continue  # a plan the asked format cannot write is no alternative to one it can
        band_fits = evaluate(model, cluster, setup, strategy, headroom, profile=profile).model_copy(update={"setup": None})
        slower = round(100.0 * (1.0 - best_step / step_s[i]), 2)
        break
    return MemoryRisk(upper_gib=round(float(upper[best_index]), 3), usable_gib=round(usable, 3),
                      capacity_gib=cluster.gpu.memory_gib, band_fits=band_fits, band_fits_slower_percent=slower)
