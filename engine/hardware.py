"""GPU and network specifications (the catalog's data lives in catalog/hardware.json).

Bandwidths are per GPU, one direction, in GB/s (10^9 bytes/s); the communication
model applies achievable-fraction constants from `assumptions.py` on top of them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NetworkSpec(_Frozen):
    """A link tier: NVLink/NVSwitch inside a node, or the scale-out fabric between nodes."""

    id: str = Field(description="lower-case stable id, e.g. 'ib-ndr'")
    name: str
    bandwidth_gbs: float = Field(gt=0, le=100_000, description="per-GPU, one direction, GB/s")
    latency_us: float = Field(ge=0, le=1_000_000, description="one-message latency, microseconds")
    aliases: list[str] = Field(default_factory=list)
    source: str = ""


class GPUSpec(_Frozen):
    id: str = Field(description="lower-case stable id, e.g. 'h100-sxm'")
    name: str
    memory_gib: float = Field(gt=0, le=100_000, description="HBM capacity in GiB (2^30 bytes)")
    bf16_tflops: float = Field(gt=0, description="dense BF16 tensor-core peak, TFLOP/s")
    fp8_tflops: float | None = Field(default=None, description="dense FP8 peak; None if unsupported")
    hbm_bandwidth_gbs: float = Field(gt=0, description="HBM bandwidth, GB/s")
    intra_node: NetworkSpec = Field(description="the fast link among GPUs of one node / NVLink domain")
    gpus_per_node: int = Field(default=8, ge=1, description="usual GPUs sharing the fast link")
    default_network: str = Field(default="ib-ndr", description="usual scale-out network id")
    aliases: list[str] = Field(default_factory=list)
    vendor: str = "nvidia"
    source: str = ""

    def peak_tflops(self, precision: str) -> float:
        if precision == "fp8":
            return self.fp8_tflops or self.bf16_tflops  # no FP8 units: runs at BF16 speed
        return self.bf16_tflops
