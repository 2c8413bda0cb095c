"""CalibrationProfile: what a user's own measured run(s) change in the performance model.

A frozen, JSON-serialisable value (`shardwise calibrate --save P.json`, then `--profile P.json`
anywhere a prediction is made). It holds two bounded multiplicative scales and where they apply:

* `compute_scale` multiplies the compute-side efficiencies (GEMM, FP8 GEMM, attention core,
  HBM) and divides the fixed per-kernel cost — for the measured GPU, precision and framework;
* `comm_scale` multiplies the achievable bandwidth fraction of the measured scale-out network,
  when the scenario has traffic between nodes.

The profile is applied by replacing constants of a `PerformanceAssumptions` (the engine stays
pure: callers read the file and pass the profile in). A scenario on another GPU, precision or
framework gets the compute scale left out (and says so): a profile measured on H100 says
nothing about an H200's kernels.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..assumptions.calibration_bounds import COMM_SCALE_BOUNDS, COMPUTE_SCALE_BOUNDS, MAX_EFFICIENCY, MAX_LINK_FRACTION
from ..assumptions.compute import (DEFAULT_ATTENTION_EFFICIENCY, DEFAULT_FP8_GEMM_EFFICIENCY, DEFAULT_GEMM_EFFICIENCY,
                                   gpu_generation)
from ..assumptions.network import link_kind
from ..assumptions.performance import DEFAULT_ASSUMPTIONS, PerformanceAssumptions
from ..cluster import Cluster
from ..training import Framework, Precision, TrainingSetup
from ..peak_alternative import PeakAlternative
from .profile_names import catalog_gpu_id, catalog_network_id

PROFILE_VERSION = 1
# Said by export (CLI and REST) when a profile is given: it is read and checked, but changes nothing there.
NOT_IN_EXPORTS = ("the calibration profile changes predicted times only; an exported config holds none, so it is "
                  "the same with or without the profile")


class MeasuredSummary(BaseModel):
    """One measured run a profile was fitted on, with the prediction before and after."""

    # strict, as the whole profile: a file's `false` or "0.9" is refused, not coerced (JSON numbers fill floats);
    # NaN and infinity are no measurement (Python's json reads them from a file or a REST body)
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)
    model: str
    gpus: int
    seq_len: int | None = None
    global_batch: int | None = None
    plan: str
    measured_tokens_per_s_per_gpu: float = Field(gt=0)
    predicted_before: float = Field(gt=0)
    predicted_after: float = Field(gt=0)
    measured_peak_gib: float | None = Field(default=None, gt=0)
    predicted_peak_gib: float | None = Field(default=None, gt=0)
    # The measured peak set against the plan (tools/measured_peak.py, what `calibrate` prints): filled by the
    # surfaces that fit (CLI, REST), so `calibrate --json` and /api/calibrate carry the analysis the text shows.
    predicted_peak_likely_gib: list[float] | None = Field(default=None, description="the predicted peak's 80 % band")
    peak_explained: bool | None = Field(default=None, description="the band holds the measured peak (None: no peak "
                                        "measured); false = the run probably differs from its description")
    peak_alternatives: list[PeakAlternative] = Field(
        default_factory=list, description="when not explained: the plan with one setting changed (recompute, ZeRO "
        "stage), those whose band holds the measured peak first; none holding it = the difference is elsewhere")
    peak_stated_by_log: list[str] = Field(default_factory=list, description="settings the run's log printed, so "
                                          "not tried as alternatives")


def _within(value: float, bounds: tuple[float, float], name: str) -> float:
    lo, hi = bounds
    if not lo <= value <= hi:
        raise ValueError(f"{name} {value:g} is outside the allowed {lo:g}-{hi:g} "
                         "(engine/assumptions/calibration_bounds.py)")
    return value


class CalibrationProfile(BaseModel):
    # strict: a value of the wrong JSON type is refused, not coerced (`true` is no scale), on every path
    # that reads one (--profile FILE, REST bodies, the page's pasted profile); NaN/infinity are refused
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)

    version: int = PROFILE_VERSION
    gpu: str = Field(description="GPU id the compute scale was measured on")
    precision: Precision
    framework: Framework
    network: str | None = Field(default=None, description="scale-out network id the comm scale applies to "
                                                          "(None: the runs had no cross-node traffic)")
    compute_scale: float = 1.0
    comm_scale: float = 1.0
    at_bound: list[str] = Field(default_factory=list, description="scales the fit clipped to their bound")
    runs: list[MeasuredSummary] = Field(default_factory=list)

    @field_validator("version")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v != PROFILE_VERSION:
            raise ValueError(f"profile version {v} is not supported (this shardwise reads version {PROFILE_VERSION})")
        return v

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, v: str) -> str:
        return catalog_gpu_id(v)

    @field_validator("network")
    @classmethod
    def _known_network(cls, v: str | None) -> str | None:
        return catalog_network_id(v)

    @field_validator("compute_scale")
    @classmethod
    def _compute_bounds(cls, v: float) -> float:
        return _within(v, COMPUTE_SCALE_BOUNDS, "compute_scale")

    @field_validator("comm_scale")
    @classmethod
    def _comm_bounds(cls, v: float) -> float:
        return _within(v, COMM_SCALE_BOUNDS, "comm_scale")

    def label(self) -> str:
        parts = [f"compute ×{self.compute_scale:.3f} ({self.gpu}, {self.precision}, {self.framework})"]
        if self.network:
            parts.append(f"network ×{self.comm_scale:.3f} ({self.network})")
        return ", ".join(parts)


def compute_applies(profile: CalibrationProfile, cluster: Cluster, setup: TrainingSetup) -> bool:
    return (cluster.gpu.id == profile.gpu and setup.precision == profile.precision
            and setup.framework == profile.framework)


def comm_applies(profile: CalibrationProfile, cluster: Cluster) -> bool:
    return profile.network is not None and cluster.network.id == profile.network and cluster.num_nodes > 1


def profile_assumptions(profile: CalibrationProfile | None, cluster: Cluster, setup: TrainingSetup,
                        base: PerformanceAssumptions = DEFAULT_ASSUMPTIONS) -> PerformanceAssumptions:
    """`base` with the profile's scales applied where they hold for this scenario."""
    if profile is None:
        return base
    return scaled_assumptions(base, cluster,
                              profile.compute_scale if compute_applies(profile, cluster, setup) else 1.0,
                              profile.comm_scale if comm_applies(profile, cluster) else 1.0)


def scaled_assumptions(base: PerformanceAssumptions, cluster: Cluster, compute_scale: float,
                       comm_scale: float) -> PerformanceAssumptions:
    """The assumptions with the compute side × compute_scale and the cluster's scale-out link × comm_scale."""
    changes: dict = {}
    if compute_scale != 1.0:
        s = compute_scale

        def scale(d: dict[str, float]) -> dict[str, float]:
            return {k: min(v * s, MAX_EFFICIENCY) for k, v in d.items()}

        # Generations absent from the tables use the DEFAULT_* efficiencies: scale those via the
        # table entry the lookup would fall back to.
        gen = gpu_generation(cluster.gpu)
        gemm = {gen: DEFAULT_GEMM_EFFICIENCY, **base.gemm_efficiency}
        fp8 = {gen: DEFAULT_FP8_GEMM_EFFICIENCY, **base.fp8_gemm_efficiency}
        attn = {gen: DEFAULT_ATTENTION_EFFICIENCY, **base.attention_efficiency}
        changes.update(gemm_efficiency=scale(gemm), fp8_gemm_efficiency=scale(fp8), attention_efficiency=scale(attn),
                       hbm_efficiency=min(base.hbm_efficiency * s, MAX_EFFICIENCY),
                       kernel_fixed_s=base.kernel_fixed_s / s, small_kernel_fixed_s=base.small_kernel_fixed_s / s)
    if comm_scale != 1.0:
        kind = link_kind(cluster.network)
        fraction = base.bandwidth_fraction.get(kind, base.bandwidth_fraction["other"])
        changes["bandwidth_fraction"] = {**base.bandwidth_fraction, kind: min(fraction * comm_scale, MAX_LINK_FRACTION)}
    return replace(base, **changes) if changes else base
