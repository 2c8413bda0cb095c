"""Ground truth for a measurement and a comparison in one message: "tp2 zero1 gives us 4,480 tok/s/GPU
measured — how far off are you, and would tp1 + zero3 be faster on our cluster?"

The answer must do both halves. The first is the `calibrate` truth of the measured run (the prediction
before calibrating, and what the fit changes; evals/truth_uncertainty.py). The second is the `compare`
truth of the two plans (evals/truth.py), priced with the profile that same measurement implies (the one-run
fit of evals/truth_profile.py) — "on our cluster" is the calibrated engine, as `shardwise compare --profile`
would price it after `shardwise calibrate --save`. So the answer must state the calibration's figures and
name the term that decides A vs B once calibrated.
"""

from __future__ import annotations

from .case import Measured, Scenario


def calibrate_compare_truth(s: Scenario, plan: dict, plans: list[dict], measured: Measured):
    from .truth import Truth, compare_truth
    from .truth_profile import fit_to_measured
    from .truth_uncertainty import calibrate_truth

    calibration = calibrate_truth(s, plan, measured)
    comparison = compare_truth(s, plans, fit_to_measured(s, plan, measured))
    if calibration.error or comparison.error:
        return Truth(kind="calibrate_compare", error=calibration.error or comparison.error)
    return Truth(kind="calibrate_compare", stated=calibration.stated, evaluations=comparison.evaluations,
                 winner=comparison.winner, deciding_term=comparison.deciding_term, keywords=comparison.keywords,
                 is_moe=calibration.is_moe)
