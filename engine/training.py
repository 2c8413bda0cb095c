"""TrainingSetup: what is trained and how (independent of how it is parallelised)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Mode = Literal["full", "lora", "qlora"]
Precision = Literal["bf16", "fp8"]
Framework = Literal["megatron", "deepspeed", "fsdp"]
# How MoE layers move tokens to their experts (Megatron-Core --moe-token-dispatcher-type):
# alltoall (default), allgather, or DeepEP (--moe-token-dispatcher-type flex --moe-enable-deepep).
MoEDispatcher = Literal["alltoall", "allgather", "deepep"]
MOE_DISPATCHERS: tuple[str, ...] = ("alltoall", "allgather", "deepep")

DEFAULT_LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class TrainingSetup(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    seq_len: int = Field(default=4096, gt=0, le=16_777_216, description="tokens per sequence")
    global_batch: int = Field(default=1024, gt=0, le=1 << 30, description="sequences per optimizer step")
    mode: Mode = "full"
    lora_rank: int = Field(default=16, gt=0, le=65_536)
    lora_targets: tuple[str, ...] = DEFAULT_LORA_TARGETS
    precision: Precision = "bf16"
    framework: Framework = "megatron"
    moe_dispatcher: MoEDispatcher = Field(default="alltoall", description="MoE token dispatcher (ignored for dense models)")
    moe_a2a_overlap: bool = Field(default=False, description="Megatron-Core --overlap-moe-expert-parallel-comm: "
                                                             "expert all-to-all hidden behind the other micro-batch")
    optimizer: Literal["adamw"] = "adamw"

    @model_validator(mode="after")
    def _qlora_computes_in_bf16(self) -> "TrainingSetup":
        # QLoRA keeps the frozen base in 4-bit NF4 and dequantises it to BF16 for every matmul
        # (Dettmers et al. 2023; bitsandbytes/PEFT): there is no FP8 path to predict.
        if self.mode == "qlora" and self.precision == "fp8":
            raise ValueError("QLoRA dequantises its 4-bit base to BF16 for every matmul, so it cannot train in "
                             "FP8: use precision bf16 with qlora, or mode lora/full with fp8")
        return self

    @property
    def global_batch_tokens(self) -> int:
        return self.seq_len * self.global_batch
