"""What a prediction says about its own uncertainty and calibration: the 80 % intervals put on
the memory, time and throughput reports (intervals.py), and which part of a user's
CalibrationProfile applied to the scenario, in words."""

from __future__ import annotations

from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..results import MemoryReport, ThroughputReport, TimeReport
from ..training import TrainingSetup
from .intervals import memory_band, throughput_band
from .profile import CalibrationProfile, comm_applies, compute_applies


def profile_note(profile: CalibrationProfile | None, cluster: Cluster, setup: TrainingSetup) -> str | None:
    """What of a calibration profile applies to this scenario, in words, with the flags that would apply the rest."""
    if profile is None:
        return None
    parts = []
    compute, comm = compute_applies(profile, cluster, setup), comm_applies(profile, cluster)
    if compute:
        parts.append(f"compute ×{profile.compute_scale:.3f}")
    else:
        parts.append(f"compute scale not applied (profile measured on {profile.gpu}/{profile.precision}/"
                     f"{profile.framework}, this is {cluster.gpu.id}/{setup.precision}/{setup.framework}; "
                     f"{_compute_flags(profile, cluster, setup)} applies it)")
    if profile.network:
        parts.append(f"network ×{profile.comm_scale:.3f}" if comm
                     else f"network scale not applied (measured on {profile.network}, "
                          f"this is {cluster.network.id}{'' if cluster.num_nodes > 1 else ' in one node'}; "
                          f"{_network_flags(profile, cluster)})")
    # "calibrated:" only when every scale changed its numbers; a profile that holds in part says "in part" (the
    # page read "Calibrated: …, compute scale not applied" as a contradiction), one that holds nowhere says so first
    applied = [compute] + ([comm] if profile.network else [])
    lead = "calibrated: " if all(applied) else "calibrated in part: " if any(applied) else "profile not applied: "
    return lead + ", ".join(parts)


def _compute_flags(profile: CalibrationProfile, cluster: Cluster, setup: TrainingSetup) -> str:
    """The flags whose values differ from the profile's: `--framework fsdp`, `--gpu h100-sxm --precision fp8`."""
    wanted = (("--gpu", profile.gpu, cluster.gpu.id), ("--precision", profile.precision, setup.precision),
              ("--framework", profile.framework, setup.framework))
    return " ".join(f"{flag} {want}" for flag, want, have in wanted if want != have)


def _network_flags(profile: CalibrationProfile, cluster: Cluster) -> str:
    """The network scale needs the profile's network and traffic between nodes (engine/calibration/profile.py)."""
    if cluster.network.id != profile.network:
        return f"--network {profile.network} on more than one node applies it" if cluster.num_nodes == 1 \
            else f"--network {profile.network} applies it"
    return f"it applies across nodes: more --gpus than the {cluster.gpus_per_node} in one node"


def with_ranges(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, profile: CalibrationProfile | None,
                 memory: MemoryReport, time: TimeReport | None,
                 throughput: ThroughputReport | None) -> tuple[MemoryReport, TimeReport | None, ThroughputReport | None]:
    """The reports with their 80 % intervals (engine/calibration/intervals.py)."""
    memory = memory.model_copy(update={"total_gib_range": list(memory_band(setup).around(memory.total_gib))})
    if time is None or throughput is None:
        return memory, time, throughput
    band = throughput_band(model, cluster, setup, profile)
    time = time.model_copy(update={"step_s_range": list(band.inverse_around(time.step_s))})
    throughput = throughput.model_copy(update={
        "tokens_per_s_per_gpu_range": list(band.around(throughput.tokens_per_s_per_gpu)), "range_basis": band.basis})
    return memory, time, throughput
