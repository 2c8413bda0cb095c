"""The unit of a measured MFU a user gives (calibrate's --measured-mfu, the REST body's and the tool's measured_mfu).

One unit: a fraction of the GPU's dense peak at the run's precision, 0.45 for 45 % — as `evaluate --json` writes
`mfu`, as --headroom is a fraction, and as MAX_MEASURED_MFU bounds it. It used to be "a fraction up to 1, a percent
above", so 1.5 was silently 1.5 % (and 0.5 could not mean 0.5 %); a value above 1 is now refused — as a fraction it
is more model FLOP/s than the peak — with the fraction to give for the percent the user may have meant. The engine's
conversion (calibration/measured_value.py) then sees a fraction only.
"""

from __future__ import annotations

from .assumptions.calibration_bounds import MAX_MEASURED_MFU
from .errors import SettingsInputError


def require_mfu_fraction(mfu: float) -> float:
    """`mfu` when it is a fraction in (0, MAX_MEASURED_MFU]; else one error saying the unit and what to give."""
    if not mfu > 0:
        raise SettingsInputError("{measured_mfu} " + f"{mfu:g} is not a positive fraction of the GPU's dense peak "
                                 "(0.45 for 45 % MFU)", "measured_mfu")
    if mfu > MAX_MEASURED_MFU:
        raise SettingsInputError("{measured_mfu} " + f"{mfu:g} is above {MAX_MEASURED_MFU:g}: the MFU is a fraction "
                                 f"of the GPU's dense peak (0.45 for 45 %), and {mfu:g} would be {mfu:.0%} MFU, more "
                                 f"than the peak; for {mfu:g} % give {mfu / 100:g}", "measured_mfu")
    return mfu
