"""One setting changed in a plan and the peak memory predicted for it: a result the calibration profile's runs
carry (engine/calibration/profile.py) and engine/peak_settings.py computes, kept apart so neither imports the other."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class PeakAlternative(BaseModel):
    """The plan as given with one setting changed, and the peak the engine predicts for it."""

    model_config = ConfigDict(frozen=True)

    setting: str  # the Strategy field changed: "recompute" or "zero_stage"
    value: str | int
    label: str  # how a plan label writes the change: "recompute=full", "ZeRO-3"
    predicted_gib: float
    likely_gib: list[float] | None  # the 80 % band of that prediction
    holds_measured: bool  # the band holds the measured peak
