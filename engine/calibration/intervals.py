"""80 % intervals for a prediction: throughput, step time and peak memory.

The band of a scenario is read from engine/assumptions/error_bands.py (generated from the
out-of-fold calibration residuals, cross_fit.py / out_of_fold.py, by benchmarks/fit_error_bands.py) at the most specific regime with
enough runs (regimes.py), sized for a cluster the data has never seen (band method v4 or v5,
new_cluster.py: the regime's scatter around its sources plus the spread of the sources' levels; v5 also
counts the runs of external sets 1-2, external_items.py; band_methods.py names them). With a
CalibrationProfile whose compute scale applies, a stack whose shipped families give enough
transfer-check runs (PyTorch-native FSDP/DeepSpeed, nanotron; dense) gets the calibrated band from those residuals; the others (Megatron: a handful of Bridge runs;
MoE) keep their regime band, because the transfer check cannot justify narrowing it. Inputs outside the
validated range get their band widened by OUTSIDE_RANGE_WIDENING — among them a software stack with fewer
than 15 calibration runs of the scenario's kind (coverage.stack_warning), whose lookup falls past its own
stack|kind band to the pooled one of other stacks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..assumptions import error_bands as eb
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..training import TrainingSetup
from .band_methods import band_runs
from .coverage import extrapolation_warnings
from .profile import CalibrationProfile, compute_applies
from .regimes import scenario_regime_keys, stack_of

# Inputs the calibration runs do not cover (LoRA/QLoRA, DPO/GRPO/PPO post-training, AMD/Ada GPUs,
# uncalibrated networks, sizes > 2× the validated range, a stack without its own dense/MoE band) have no measured runs to size their band from. The README
# states "±30 % or worse" for them; we double the regime's band in log space (the dense bands
# are about ±15 %, so this gives about ±30 %, MoE about ±60-80 %). Not checked on data: none exists.
OUTSIDE_RANGE_WIDENING = 2.0
# Megatron and DeepSpeed runs in the calibration data do not report peak memory; their memory
# band borrows the PyTorch-native stack's (torchtitan), the only fully modelled stack measured.
MEMORY_BAND_FALLBACK = "pytorch"


@dataclass(frozen=True)
class Band:
    low: float  # log(measured / predicted) at the 10th percentile
    high: float  # ... at the 90th
    basis: str  # where it comes from, for the reader

    def around(self, value: float) -> tuple[float, float]:
        return value * math.exp(self.low), value * math.exp(self.high)

    def inverse_around(self, value: float) -> tuple[float, float]:
        """For a time: measured time = predicted / (measured/predicted throughput)."""
        return value * math.exp(-self.high), value * math.exp(-self.low)


def _lookup(table: dict, keys: list[str]) -> tuple[str, tuple[float, float, int]] | None:
    for k in keys:
        if k in table:
            return k, table[k]
    return None


def throughput_band(model: ModelSpec, cluster: Cluster, setup: TrainingSetup,
                    profile: CalibrationProfile | None = None, bands: dict | None = None,
                    calibrated_bands: dict | None = None) -> Band:
    """The shipped band; `bands`/`calibrated_bands` replace the shipped tables (to report another
    band method on the same lookup: benchmarks/external_check.py)."""
    bands = eb.THROUGHPUT_BANDS if bands is None else bands
    calibrated_bands = eb.CALIBRATED_BANDS if calibrated_bands is None else calibrated_bands
    keys = scenario_regime_keys(model, cluster, setup)
    key, (lo, hi, n) = _lookup(bands, keys)
    basis = f"80 % band of {n} {band_runs(eb.THROUGHPUT_BAND_METHOD)} ({key})"
    if profile is not None and compute_applies(profile, cluster, setup):
        kind = "moe" if model.moe is not None else "dense"
        cal = _lookup(calibrated_bands, [f"calibrated|{stack_of(setup.framework)}|{kind}"])
        if cal is not None:
            key, (lo, hi, n) = cal
            basis = f"80 % band of {n} runs predicted after calibrating on one run ({key})"
        else:
            basis += "; the profile does not narrow it (too few calibrated runs of this stack to check)"
    if extrapolation_warnings(model, cluster, setup) or setup.post_training is not None:
        # post-training (DPO/GRPO/PPO): no measured run times its extra passes (docs/post_training.md)
        lo, hi = lo * OUTSIDE_RANGE_WIDENING, hi * OUTSIDE_RANGE_WIDENING
        basis += f", widened ×{OUTSIDE_RANGE_WIDENING:g}: outside the validated range (unchecked)"
    return Band(lo, hi, basis)


def memory_band(setup: TrainingSetup) -> Band:
    stack = stack_of(setup.framework)
    key, (lo, hi, n) = _lookup(eb.MEMORY_BANDS, [stack, MEMORY_BAND_FALLBACK])
    return Band(lo, hi, f"80 % band of {n} measured peaks ({key})")
