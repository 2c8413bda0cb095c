"""A peak memory the user measured, set against the plan's prediction and its 80 % band, so an answer
says "inside / outside, by how much" from the result's fields rather than by arithmetic of its own."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .figures import r


class MeasuredPeak(BaseModel):
    measured_gib: float
    inside_likely: bool | None = Field(description="inside the 80 % band (None: the plan has no band)")
    minus_predicted_gib: float = Field(description="measured minus predicted peak; positive = more than predicted")
    percent_vs_predicted: float = Field(description="measured vs predicted, percent")
    outside_band_by_gib: float = Field(description="distance to the nearest end of the band; 0 inside it")


def measured_peak(measured_gib: float, predicted_gib: float, band: list[float] | None) -> MeasuredPeak:
    low, high = band if band else (None, None)
    inside = None if band is None else low <= measured_gib <= high
    outside = 0.0 if not band or inside else (low - measured_gib if measured_gib < low else measured_gib - high)
    return MeasuredPeak(measured_gib=r(measured_gib), inside_likely=inside,
                        minus_predicted_gib=r(measured_gib - predicted_gib, 2),
                        percent_vs_predicted=r(100 * (measured_gib - predicted_gib) / predicted_gib, 1),
                        outside_band_by_gib=r(outside, 2))
