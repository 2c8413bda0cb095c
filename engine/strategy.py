"""Strategy: one parallelism plan. DP and gradient accumulation are derived, not chosen."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Recompute = Literal["none", "selective", "full"]
RECOMPUTE_MODES: tuple[Recompute, ...] = ("none", "selective", "full")


class Strategy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = Field(default=1, ge=1, le=1024, description="tensor parallel")
    pp: int = Field(default=1, ge=1, le=1024, description="pipeline parallel stages")
    vpp: int = Field(default=1, ge=1, le=128, description="virtual stages per pipeline rank (interleaved 1F1B)")
    cp: int = Field(default=1, ge=1, le=1024, description="context parallel")
    ep: int = Field(default=1, ge=1, le=4096, description="expert parallel")
    etp: int = Field(default=1, ge=1, le=1024, description="tensor parallel inside experts")
    zero_stage: int = Field(default=1, ge=0, le=3, description="0 none, 1 optimizer, 2 +grads, 3 +params (FSDP)")
    hsdp_replicas: int = Field(default=1, ge=1, description="HSDP: shard within DP/replicas, replicate across")
    sequence_parallel: bool = Field(default=True, description="Megatron SP; only meaningful when tp > 1")
    micro_batch: int = Field(default=1, ge=1, le=65_536, description="sequences per micro-batch")
    recompute: Recompute = "selective"

    @property
    def sp(self) -> bool:
        return self.sequence_parallel and self.tp > 1

    def model_parallel_size(self) -> int:
        return self.tp * self.cp * self.pp

    def dp(self, num_gpus: int) -> int:
        """Data-parallel degree for the dense part; may be fractional-invalid (checked by validity)."""
        return num_gpus // self.model_parallel_size()

    def label(self) -> str:
        """'TP8 PP2 ZeRO1 mb1 rc-selective': for logs and file names (engine/plan_label.py has every style)."""
        from .plan_label import plan_label

        return plan_label(self, "engine")
