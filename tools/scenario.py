"""The arguments every engine tool shares: the scenario (model, cluster, training setup) and a plan.

Names follow the CLI flags in snake_case (`--gpus-per-node` -> `gpus_per_node`, `--zero` ->
`zero`), so a tool call, a REST body and a command line say the same thing. Every field is
optional in the schema (strict mode sends null for what is unused); `Scenario.resolve()`
turns it into engine specs and raises ShardwiseInputError with what is missing or wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..engine.cluster import Cluster
from ..engine.errors import ShardwiseInputError
from ..engine.inputs import build_cluster, resolve_model
from ..engine.model_spec import ModelSpec
from ..engine.plan_label import plan_label
from ..engine.strategy import Strategy
from ..engine.post_training.modes import TRAINING_MODES, training_setup
from ..engine.training import DEFAULT_FINE_TUNE_GLOBAL_BATCH, DEFAULT_GLOBAL_BATCH, TrainingSetup, default_global_batch

DEFAULT_SEQ_LEN = TrainingSetup.model_fields["seq_len"].default
# The batch defaults are the engine's (engine/training.py), one definition for every surface.


class Args(BaseModel):
    """Base of every tool's arguments: unknown keys are an error the model is told about."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Scenario(Args):
    """What is trained, on what; leave out what the user did not say."""

    model: str | None = Field(None, description="catalog id, e.g. llama-3.1-70b")
    params: str | None = Field(None, description="size if not in the catalog, e.g. 70B")
    gpu: str | None = Field(None, description="GPU id, e.g. h100-sxm")
    gpus: int | None = Field(None, description="total GPUs")
    gpus_per_node: int | None = None
    network: str | None = Field(None, description="network id, e.g. ib-ndr")
    seq_len: int | None = Field(None, description=f"8k = 8192; default {DEFAULT_SEQ_LEN}")
    global_batch: int | None = Field(None, description=f"sequences per step; default {DEFAULT_GLOBAL_BATCH}, "
                                                       f"lora/qlora {DEFAULT_FINE_TUNE_GLOBAL_BATCH}")
    global_batch_tokens: str | None = Field(None, description="or tokens per step, e.g. 4M")
    mode: Literal[TRAINING_MODES] | None = None
    prompt_len: int | None = Field(None, description="grpo/ppo; default 512")
    response_len: int | None = Field(None, description="grpo/ppo only; default 512")
    group_size: int | None = Field(None, description="grpo/ppo samples per prompt; default 5 grpo, 1 ppo")
    inference_tp: int | None = Field(None, description="grpo/ppo GPUs per rollout engine; default 2")
    lora_rank: int | None = None
    precision: Literal["bf16", "fp8"] | None = None
    framework: Literal["megatron", "deepspeed", "fsdp", "nanotron"] | None = None
    # default alltoall: Megatron-Core's own default (said here, not in the prompt, to keep its token budget)
    moe_dispatcher: Literal["alltoall", "allgather", "deepep"] | None = Field(
        None, description="default alltoall")
    moe_a2a_overlap: bool | None = None  # the expert all-to-all overlapped (Megatron-Core's name says it)
    mean_doc_len: int | None = Field(None, description="packed docs: mean tokens per doc")
    cuda_graphs: Literal["none", "per-layer", "full-iteration"] | None = Field(
        None, description="Megatron only; default none")
    # Megatron-Core options the page's form and the CLI set (--grad-reduce-in-bf16, --fp8-param-gather,
    # --recompute-modules): without them the page's chat priced its plan at their defaults. No descriptions: the
    # names are Megatron's own and every word here is paid in each tool's schema (tests/agent/test_prompt_budget.py).
    grad_reduce_dtype: Literal["fp32", "bf16"] | None = None
    fp8_param_gather: bool | None = None
    recompute_modules: list[str] | None = None  # the engine refuses an unknown name, listing the known ones

    def merged_over(self, base: "Scenario | None") -> "Scenario":
        """This scenario with its null fields taken from `base` (a model/params pair counts as one field)."""
        if base is None:
            return self
        mine = self.model_dump(exclude_none=True)
        if "model" in mine or "params" in mine:
            base = base.model_copy(update={"model": None, "params": None})
        if "global_batch" in mine or "global_batch_tokens" in mine:
            base = base.model_copy(update={"global_batch": None, "global_batch_tokens": None})
        if "gpu" in mine:  # a new GPU type brings its own node size and network unless given
            base = base.model_copy(update={"gpus_per_node": None, "network": None})
        return Scenario(**{**base.model_dump(exclude_none=True), **mine})

    def missing(self) -> list[str]:
        need = []
        if not self.model and not self.params:
            need.append("model (a catalog name, or params: a parameter count)")
        if not self.gpu:
            need.append("gpu (a GPU type such as h100-sxm)")
        if self.gpus is None:
            need.append("gpus (how many)")
        return need

    def resolve(self) -> "ResolvedScenario":
        need = self.missing()
        if need:
            raise ShardwiseInputError("the scenario is incomplete: give " + ", ".join(need))
        model = resolve_model(self.model, self.params)
        if self.gpus is None or self.gpus <= 0:
            raise ShardwiseInputError(f"gpus must be a positive whole number, got {self.gpus!r}")
        cluster = build_cluster(self.gpu, self.gpus, self.gpus_per_node, self.network)
        if self.seq_len is not None and self.seq_len <= 0:
            raise ShardwiseInputError(f"seq_len must be positive, got {self.seq_len}")
        for name in ("prompt_len", "response_len", "group_size", "inference_tp"):
            if (getattr(self, name) or 1) <= 0:
                raise ShardwiseInputError(f"{name} must be positive, got {getattr(self, name)}")
        if self.global_batch is not None and self.global_batch_tokens:
            raise ShardwiseInputError("give global_batch (sequences) or global_batch_tokens, not both")
        if self.global_batch is not None and self.global_batch <= 0:
            raise ShardwiseInputError(f"global_batch must be positive, got {self.global_batch}")
        setup = training_setup(self.mode or "full", seq_len=self.seq_len, global_batch=self.global_batch,
                               global_batch_tokens=self.global_batch_tokens or None, prompt_len=self.prompt_len,
                               response_len=self.response_len, group_size=self.group_size,
                               inference_tp=self.inference_tp, lora_rank=self.lora_rank or 16,
                               precision=self.precision or "bf16", framework=self.framework or None,  # none given: the mode's default (Megatron; FSDP2 for QLoRA)
                               moe_dispatcher=self.moe_dispatcher or "alltoall",
                               moe_a2a_overlap=bool(self.moe_a2a_overlap), mean_doc_len=self.mean_doc_len,
                               cuda_graphs=self.cuda_graphs or "none", grad_reduce_dtype=self.grad_reduce_dtype or "fp32",
                               fp8_param_gather=bool(self.fp8_param_gather),
                               recompute_modules=None if self.recompute_modules is None else tuple(self.recompute_modules))
        return ResolvedScenario(model=model, cluster=cluster, setup=setup)


@dataclass(frozen=True)
class ResolvedScenario:
    model: ModelSpec
    cluster: Cluster
    setup: TrainingSetup


class Plan(Args):
    """A parallelism plan; a knob left out is 1, ZeRO-1, micro-batch 1, selective recompute, SP on."""

    tp: int | None = None
    pp: int | None = None
    vpp: int | None = Field(None, description="virtual stages per rank")
    cp: int | None = None
    ep: int | None = None
    etp: int | None = Field(None, description="expert TP")
    zero: int | None = Field(None, description="stage 0-3")
    micro_batch: int | None = None
    recompute: Literal["none", "selective", "full"] | None = None
    sequence_parallel: bool | None = None

    def strategy(self) -> Strategy:
        values = {"tp": self.tp, "pp": self.pp, "vpp": self.vpp, "cp": self.cp, "ep": self.ep, "etp": self.etp,
                  "zero_stage": self.zero, "micro_batch": self.micro_batch, "recompute": self.recompute,
                  "sequence_parallel": self.sequence_parallel}
        return Strategy(**{k: v for k, v in values.items() if v is not None})

    @classmethod
    def from_strategy(cls, s) -> "Plan":
        """From a Strategy or a StrategySummary."""
        return cls(tp=s.tp, pp=s.pp, vpp=s.vpp, cp=s.cp, ep=s.ep, etp=s.etp, zero=s.zero_stage,
                   micro_batch=s.micro_batch, recompute=s.recompute, sequence_parallel=s.sequence_parallel)

    def label(self) -> str:
        return plan_label(self.strategy(), "tools")
