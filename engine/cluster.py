"""Cluster: how many of which GPU, grouped into nodes, joined by which network."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .hardware import GPUSpec, NetworkSpec


class Cluster(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu: GPUSpec
    num_gpus: int = Field(gt=0, le=1_048_576)
    gpus_per_node: int = Field(gt=0, le=4096, description="GPUs sharing the fast intra-node link")
    network: NetworkSpec = Field(description="scale-out network between nodes")

    @model_validator(mode="after")
    def _nodes(self) -> "Cluster":
        # A count that is not a multiple of the node size is allowed (128 GPUs of NVL72).
        return self

    @property
    def num_nodes(self) -> int:
        return -(-self.num_gpus // self.gpus_per_node)
