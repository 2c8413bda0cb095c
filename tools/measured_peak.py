"""A peak memory the user measured, set against the plan's prediction and its 80 % band, so an answer
says "inside / outside, by how much" from the result's fields rather than by arithmetic of its own; and, when
the plan as given does not explain it, what each likely-misdescribed setting changed alone predicts
(engine/peak_settings.py)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..engine.peak_settings import PeakAlternative, peak_alternatives, peak_explained
from ..engine.strategy import Strategy
from .figures import PlanFigures, r

SHOWN_ALTERNATIVES = 3  # the nearest few: more would bury the one that matters


class MeasuredPeak(BaseModel):
    measured_gib: float
    inside_likely: bool | None = Field(description="inside the 80 % band (None: the plan has no band)")
    minus_predicted_gib: float = Field(description="measured minus predicted peak; positive = more than predicted")
    percent_vs_predicted: float = Field(description="measured vs predicted, percent")
    outside_band_by_gib: float = Field(description="distance to the nearest end of the band; 0 inside it")
    plan_fits: bool = Field(True, description="the plan as given fits the GPU; false although the run ran = its "
                            "description is wrong somewhere")
    explained: bool = Field(True, description="the plan's 80 % band holds the measured peak")
    alternatives: list[PeakAlternative] = Field(
        default_factory=list, description="when not explained: the plan with one setting changed (recompute, ZeRO "
        "stage; not one the run's log printed), those whose band holds the measured peak first, then the nearest; "
        "none holding it = the difference is elsewhere")
    stated_by_log: list[str] = Field(default_factory=list, description="settings the log printed, so not tried, "
                                     "as an answer names them")
    above_capacity: bool = Field(False, description="the measured peak is more than the GPU's whole memory "
                                 "(capacity_gib): no allocator can report it on one GPU, so the figure or the GPU "
                                 "stated is wrong, and it is set against no band or setting")
    capacity_gib: float | None = Field(None, description="the GPU's memory the peak was checked against")


def measured_peak(measured_gib: float, predicted_gib: float, band: list[float] | None, fits: bool = True,
                  alternatives: list[PeakAlternative] = (), stated: frozenset[str] = frozenset(),
                  capacity_gib: float | None = None) -> MeasuredPeak:
    low, high = band if band else (None, None)
    inside = None if band is None else low <= measured_gib <= high
    outside = 0.0 if not band or inside else (low - measured_gib if measured_gib < low else measured_gib - high)
    return MeasuredPeak(measured_gib=r(measured_gib), inside_likely=inside,
                        minus_predicted_gib=r(measured_gib - predicted_gib, 2),
                        percent_vs_predicted=r(100 * (measured_gib - predicted_gib) / predicted_gib, 1),
                        outside_band_by_gib=r(outside, 2), plan_fits=fits,
                        explained=peak_explained(measured_gib, predicted_gib, band),
                        alternatives=[a.model_copy(update={"predicted_gib": r(a.predicted_gib),
                                                           "likely_gib": [r(x) for x in a.likely_gib] if a.likely_gib else None})
                                      for a in alternatives[:SHOWN_ALTERNATIVES]], stated_by_log=[SETTING_NAMES[x] for x in sorted(stated)],
                        above_capacity=capacity_gib is not None and measured_gib > capacity_gib,
                        capacity_gib=None if capacity_gib is None else r(capacity_gib))


# A log's plan keys (engine/training_logs) for the Strategy fields peak_alternatives tries, and how answers name them.
LOGGED_AS = {"zero": "zero_stage", "recompute": "recompute"}
SETTING_NAMES = {"zero_stage": "the ZeRO stage", "recompute": "recompute"}


def stated_by_log(reading) -> frozenset[str]:
    """The tried settings a training log printed (Megatron-LM prints both; DeepSpeed's timer and HF Trainer neither)."""
    return frozenset(field for key, field in LOGGED_AS.items() if reading is not None and key in reading.plan)


def measured_peak_of_plan(measured_gib: float, resolved, strategy: Strategy, f: PlanFigures,
                          stated: frozenset[str] = frozenset()) -> MeasuredPeak:
    """measured_peak for a resolved scenario's plan, with the alternatives when the plan does not explain it
    (settings in `stated`, printed by the run's log, are not second-guessed)."""
    explained = peak_explained(measured_gib, f.memory_gib, f.memory_gib_likely)
    # a peak above the GPU's memory is no setting's: the figure or the GPU is wrong, and the answer says that
    impossible = measured_gib > f.capacity_gib
    alternatives = [] if explained or impossible else peak_alternatives(resolved.model, resolved.cluster, resolved.setup, strategy,
                                                          measured_gib, stated)
    return measured_peak(measured_gib, f.memory_gib, f.memory_gib_likely, f.fits, alternatives,
                         stated if not explained and not impossible else frozenset(), f.capacity_gib)


def with_peak_checks(profile, runs, stated: frozenset[str] = frozenset()):
    """The profile with each run's measured peak set against its plan (measured_peak_of_plan): `calibrate --json`
    and /api/calibrate carry what the text CLI prints (outside the band, which --zero/--recompute explains it)."""
    from ..engine.evaluate import evaluate
    from .figures import plan_figures

    summaries = []
    for summary, run_ in zip(profile.runs, runs):
        if run_.peak_gib is None:
            summaries.append(summary)
            continue
        f = plan_figures(evaluate(run_.model, run_.cluster, run_.setup, run_.strategy))
        m = measured_peak_of_plan(run_.peak_gib, run_, run_.strategy, f, stated)
        summaries.append(summary.model_copy(update={
            "predicted_peak_likely_gib": f.memory_gib_likely, "peak_explained": m.explained,
            "peak_alternatives": m.alternatives, "peak_stated_by_log": m.stated_by_log}))
    return profile.model_copy(update={"runs": summaries})
