"""The user's profile in a conversation: "with our profile, what do we get at 64 GPUs?"

A turn marked `profile: measured` has its ground truth computed with the CalibrationProfile that
the case's latest earlier turn with a measured speed implies — the same one-run fit the
`calibrate` truth makes (engine/calibration/fit_profile.py), on that turn's scenario and plan. So
the plan an answer must give after calibrating, and the figures of a range, are the calibrated
engine's, as `shardwise recommend --profile` would give them. Where the profile does not apply
(another GPU, precision or framework: docs/performance.md, "Your own cluster") the engine drops it,
and the truth is the uncalibrated one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import scenario as sc
from .case import Case, Measured, Scenario

if TYPE_CHECKING:
    from ..engine.calibration.profile import CalibrationProfile


def fit_to_measured(s: Scenario, plan: dict, measured: Measured) -> "CalibrationProfile":
    """The profile one measured run implies (its speed only; a measured peak is compared, not fitted)."""
    from ..engine.calibration.fit_profile import Measurement, fit_profile
    from .truth_uncertainty import measured_tokens_per_s_per_gpu

    specs = sc.build(s)
    m = measured_tokens_per_s_per_gpu(s, plan, measured)
    return fit_profile([Measurement(specs.model, specs.cluster, specs.setup, sc.strategy(plan), m)],
                       with_memory=False)


def measured_turn(case: Case, index: int) -> int | None:
    """The latest turn before `index` that gives a measured speed (None: there is none)."""
    for j in range(index - 1, -1, -1):
        t = case.turns[j]
        if t.measured is not None and t.measured.has_speed and t.plan:
            return j
    return None


def profile_for(case: Case, index: int) -> "CalibrationProfile | None":
    """The profile turn `index` is graded with: None unless the turn says `profile: measured`."""
    from .truth import resolve_plan

    if case.turns[index].profile != "measured":
        return None
    j = measured_turn(case, index)
    if j is None:  # the case validator refuses this; kept as a guard
        raise ValueError(f"{case.id}: turn {index + 1} has `profile: measured` and no earlier measured turn")
    scenario = case.scenarios()[j]
    turn = case.turns[j]
    return fit_to_measured(scenario, resolve_plan(scenario, turn.plan), turn.measured)
