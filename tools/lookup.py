"""lookup_model and list_hardware: what the catalogs know, as tool results."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..engine import hardware_catalog, model_catalog
from ..engine.errors import ShardwiseInputError, closest_names
from ..engine.params import active_params, total_params
from .base import Result, Tool
from .scenario import Args


class LookupModelArgs(Args):
    name: str | None = Field(None, description="e.g. llama-3.1-70b; leave out to list the catalog")


class ModelFacts(BaseModel):
    id: str
    name: str
    params: int
    active_params: int
    params_billion: float
    active_params_billion: float
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    ffn_hidden_size: int
    vocab_size: int
    max_position_embeddings: int | None
    moe: str | None = Field(None, description="e.g. '8 experts, top-2' for MoE models")
    mla: bool
    source: str


class CatalogRow(BaseModel):
    id: str
    params_billion: float
    active_params_billion: float


class LookupModelResult(Result):
    query: str | None
    found: bool
    model: ModelFacts | None = None
    suggestions: list[str] = Field(default_factory=list, description="closest catalog ids when not found")
    catalog: list[CatalogRow] = Field(default_factory=list, description="the whole catalog when no name was given")

    def summary(self) -> str:
        if self.model:
            return f"{self.model.id}: {self.model.params_billion:.2f} B params [{self.id}]"
        if self.catalog:
            return f"{len(self.catalog)} catalog models [{self.id}]"
        return f"no model {self.query!r} [{self.id}]"


def model_facts(entry) -> ModelFacts:
    spec = entry.spec
    moe = None
    if spec.moe is not None:
        moe = f"{spec.moe.num_experts} routed experts, top-{spec.moe.top_k}"
        if spec.moe.num_shared_experts:
            moe += f", {spec.moe.num_shared_experts} shared"
    total, active = total_params(spec), active_params(spec)
    return ModelFacts(id=entry.id, name=spec.name, params=total, active_params=active,
                      params_billion=round(total / 1e9, 2), active_params_billion=round(active / 1e9, 2),
                      num_layers=spec.num_layers, hidden_size=spec.hidden_size,
                      num_attention_heads=spec.num_attention_heads, num_kv_heads=spec.kv_heads,
                      head_dim=spec.head_size, ffn_hidden_size=spec.ffn_hidden_size, vocab_size=spec.vocab_size,
                      max_position_embeddings=spec.max_position_embeddings, moe=moe, mla=spec.mla is not None,
                      source=spec.source)


def lookup_model(args: LookupModelArgs) -> LookupModelResult:
    if not args.name or not args.name.strip():
        rows = [CatalogRow(id=e.id, params_billion=round(total_params(e.spec) / 1e9, 2),
                           active_params_billion=round(active_params(e.spec) / 1e9, 2))
                for e in model_catalog.list_catalog()]
        return LookupModelResult(query=None, found=False, catalog=rows)
    try:
        entry = model_catalog.find_model(args.name)
    except ShardwiseInputError:
        return LookupModelResult(query=args.name, found=False,
                                 suggestions=closest_names(args.name, model_catalog.model_ids(), limit=5))
    return LookupModelResult(query=args.name, found=True, model=model_facts(entry))


class ListHardwareArgs(Args):
    kind: Literal["gpus", "networks", "both"] | None = Field(None, description="default both")
    name: str | None = Field(None, description="one GPU or network; default all")


class GpuRow(BaseModel):
    id: str
    name: str
    memory_gib: float
    bf16_tflops: float
    fp8_tflops: float | None
    hbm_bandwidth_gbs: float
    intra_node_gbs: float = Field(description="per GPU, one direction")
    gpus_per_node: int
    default_network: str


class NetworkRow(BaseModel):
    id: str
    name: str
    bandwidth_gbs: float = Field(description="per GPU, one direction")
    latency_us: float


class ListHardwareResult(Result):
    gpus: list[GpuRow] = Field(default_factory=list)
    networks: list[NetworkRow] = Field(default_factory=list)

    def summary(self) -> str:
        return f"{len(self.gpus)} GPUs, {len(self.networks)} networks [{self.id}]"


def gpu_row(g) -> GpuRow:
    return GpuRow(id=g.id, name=g.name, memory_gib=g.memory_gib, bf16_tflops=g.bf16_tflops, fp8_tflops=g.fp8_tflops,
                  hbm_bandwidth_gbs=g.hbm_bandwidth_gbs, intra_node_gbs=g.intra_node.bandwidth_gbs,
                  gpus_per_node=g.gpus_per_node, default_network=g.default_network)


def network_row(n) -> NetworkRow:
    return NetworkRow(id=n.id, name=n.name, bandwidth_gbs=n.bandwidth_gbs, latency_us=n.latency_us)


def list_hardware(args: ListHardwareArgs) -> ListHardwareResult:
    kind = args.kind or "both"
    gpus, networks = [], []
    if args.name:
        # One name: a GPU if it is one, else a network; unknown names raise with suggestions.
        if kind in ("gpus", "both"):
            try:
                gpus = [gpu_row(hardware_catalog.get_gpu(args.name))]
            except ShardwiseInputError:
                if kind == "gpus":
                    raise
        if not gpus:
            networks = [network_row(hardware_catalog.get_network(args.name))]
        return ListHardwareResult(gpus=gpus, networks=networks)
    if kind in ("gpus", "both"):
        gpus = [gpu_row(g) for g in hardware_catalog.list_gpus()]
    if kind in ("networks", "both"):
        networks = [network_row(n) for n in hardware_catalog.list_networks()]
    return ListHardwareResult(gpus=gpus, networks=networks)


LOOKUP_MODEL = Tool("lookup_model", "A catalog model's architecture and parameter count.",
                    LookupModelArgs, LookupModelResult, lookup_model)
LIST_HARDWARE = Tool("list_hardware", "Catalog GPUs and networks with their specs.", ListHardwareArgs, ListHardwareResult, list_hardware)
