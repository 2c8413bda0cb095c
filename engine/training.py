"""TrainingSetup: what is trained and how (independent of how it is parallelised)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .errors import SettingsInputError
from .post_training.spec import PostTraining

Mode = Literal["full", "lora", "qlora"]
# A mode as the papers write it (Hu et al. 2021 "LoRA"; Dettmers et al. 2023 "QLoRA"), for messages
MODE_WRITTEN: dict[str, str] = {"full": "full training", "lora": "LoRA", "qlora": "QLoRA"}
Precision = Literal["bf16", "fp8"]
Framework = Literal["megatron", "deepspeed", "fsdp", "nanotron"]
# How MoE layers move tokens to their experts (Megatron-Core --moe-token-dispatcher-type):
# alltoall (default), allgather, or DeepEP (--moe-token-dispatcher-type flex --moe-enable-deepep).
MoEDispatcher = Literal["alltoall", "allgather", "deepep"]
MOE_DISPATCHERS: tuple[str, ...] = ("alltoall", "allgather", "deepep")
# CUDA graphs the step is replayed with (Megatron-Core --cuda-graph-impl / --cuda-graph-scope, core_v0.16.1):
# none; per-layer = Transformer Engine make_graphed_callables per layer (--cuda-graph-impl transformer_engine,
# scope attn+mlp for dense layers, attn moe_router moe_preprocess for dropless MoE layers); full-iteration =
# the whole forward-backward as one graph (--cuda-graph-impl local --cuda-graph-scope full_iteration; newer
# Megatron-Core spells it --cuda-graph-impl full_iteration). What each removes: assumptions/cuda_graphs.py.
CudaGraphs = Literal["none", "per-layer", "full-iteration"]
CUDA_GRAPH_MODES: tuple[str, ...] = ("none", "per-layer", "full-iteration")
# Frameworks whose training step shardwise can price with CUDA graphs: Megatron-Core's own capture
# (CudaGraphManager / FullCudaGraphWrapper / TE make_graphed_callables). torchtitan (fsdp), DeepSpeed and
# nanotron ship no training-step CUDA graph option.
CUDA_GRAPH_FRAMEWORKS: tuple[str, ...] = ("megatron",)

# Megatron-Core --recompute-modules that shardwise models (megatron/core/transformer/transformer_config.py,
# `recompute_modules`): what each drops from memory and adds to the backward is in docs/memory.md ("MoE/MLA
# recipe") and engine/performance/compute.py.
RECOMPUTE_MODULE_NAMES: tuple[str, ...] = ("core_attn", "layernorm", "mla_up_proj", "moe_act")


@dataclass(frozen=True)
class MegatronOnlyOption:
    """A setup option only Megatron-Core has: when it is set, what it needs, and the sentence saying so."""

    field: str  # the TrainingSetup field
    flag: str  # the Megatron-Core flag that turns it on (content: the notes name the shardwise setting, `field`)
    used: Callable[[Any], bool]  # set away from its default
    allowed: Callable[[Any], bool]  # the setup can run it
    message: Callable[[Any], str]  # why not, and what is valid


def _on_megatron(s) -> bool:
    return s.framework == "megatron"


# Megatron-Core core_v0.16.1 options (megatron/training/arguments.py), checked in this order by TrainingSetup.
# The settings those messages name, `{like_this}`.
SETTING_NAMES = ("cuda_graphs", "framework", "recompute_modules", "grad_reduce_dtype", "fp8_param_gather",
                 "precision", "moe_a2a_overlap")

MEGATRON_ONLY_OPTIONS: tuple[MegatronOnlyOption, ...] = (
    # The messages are SettingsText templates ({cuda_graphs}, {framework}): the CLI spells them as its flags
    # (cli/main.py format_validation_error), REST and the chat read the plain names, as before.
    MegatronOnlyOption(
        "cuda_graphs", "--cuda-graph-impl", lambda s: s.cuda_graphs != "none",
        lambda s: s.framework in CUDA_GRAPH_FRAMEWORKS,
        lambda s: (f"{s.cuda_graphs} CUDA graphs are a Megatron-Core option (--cuda-graph-impl); "
                   f"{s.framework} has no CUDA-graph training step to model: use {{framework}} "
                   f"{' or '.join(CUDA_GRAPH_FRAMEWORKS)} with cuda graphs, or {{cuda_graphs}} none with {s.framework}")),
    MegatronOnlyOption(
        "recompute_modules", "--recompute-modules", lambda s: s.recompute_modules is not None, _on_megatron,
        lambda s: (f"recompute modules are a Megatron-Core option (--recompute-modules); {s.framework} "
                   f"has its own selective recompute: leave {{recompute_modules}} unset with {s.framework}")),
    MegatronOnlyOption(
        "grad_reduce_dtype", "--grad-reduce-in-bf16", lambda s: s.grad_reduce_dtype != "fp32", _on_megatron,
        lambda s: (f"grad_reduce_dtype bf16 is a Megatron-Core option (--grad-reduce-in-bf16); {s.framework} "
                   f"keeps its own gradient dtype: drop {{grad_reduce_dtype}} (the bf16 reduction) with {s.framework}")),
    MegatronOnlyOption(
        "fp8_param_gather", "--fp8-param-gather", lambda s: s.fp8_param_gather,
        lambda s: _on_megatron(s) and s.precision == "fp8",
        lambda s: ("{fp8_param_gather} keeps FP8 weights (Megatron-Core --fp8-param-gather): it needs "
                   f"{{framework}} megatron and {{precision}} fp8, not {s.framework} / {s.precision}")),
    # Was accepted on every framework and priced as overlapped (performance/ep.py), though only Megatron-Core
    # overlaps the expert all-to-all with the other micro-batch (TransformerConfig overlap_moe_expert_parallel_comm).
    MegatronOnlyOption(
        "moe_a2a_overlap", "--overlap-moe-expert-parallel-comm", lambda s: s.moe_a2a_overlap, _on_megatron,
        lambda s: (f"{{moe_a2a_overlap}} is a Megatron-Core option (--overlap-moe-expert-parallel-comm); {s.framework} "
                   f"does not overlap the expert all-to-all with another micro-batch: leave {{moe_a2a_overlap}} off "
                   f"with {s.framework}")),
)

DEFAULT_LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

# Sequences per optimizer step when none is given. Pre-training and full fine-tuning: 1,024 (TrainingSetup's
# field default below; 4M tokens at 4k). A plain LoRA/QLoRA fine-tune: 128, the default of the reference LoRA
# instruction-tuning recipes — tloen/alpaca-lora `finetune.py` (`batch_size: int = 128`) and Stanford Alpaca's
# fine-tune (Taori et al. 2023, README: "batch size 128"); a pre-training batch would make a fine-tune's step
# minutes long. One definition for the CLI, REST, the page and the chat's tools (it used to be 128 in the tools
# only, 1,024 elsewhere).
DEFAULT_FINE_TUNE_GLOBAL_BATCH = 128
FINE_TUNE_MODES = ("lora", "qlora")


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
    cuda_graphs: CudaGraphs = Field(default="none", description="CUDA graphs the step is replayed with (Megatron-Core "
                                                                "--cuda-graph-impl): none, per-layer or full-iteration")
    cp_comm_type: Literal["p2p", "a2a", "a2a+p2p", "all_gather"] = Field(
        default="p2p", description="Megatron-Core/Transformer Engine --cp-comm-type: p2p (ring attention), a2a "
                                   "(Ulysses all-to-all of heads); a2a+p2p and all_gather are priced as p2p")
    recompute_modules: tuple[str, ...] | None = Field(
        default=None, description="Megatron-Core --recompute-modules that recompute=selective means (subset of "
                                  "core_attn, layernorm, mla_up_proj, moe_act); None = shardwise's set for the "
                                  "model (engine/recompute_modules.py)")
    grad_reduce_dtype: Literal["fp32", "bf16"] = Field(
        default="fp32", description="Megatron-Core main-gradient buffer and reduction dtype: fp32 (default for BF16/FP8 "
                                    "training) or bf16 (--grad-reduce-in-bf16; Megatron-Bridge ddp.grad_reduce_in_fp32="
                                    "False, as its performance recipes run)")
    fp8_param_gather: bool = Field(
        default=False, description="Megatron-Core --fp8-param-gather: GEMM weights stored only in FP8 (no BF16 copy) "
                                   "and gathered in FP8 (Megatron-Bridge's MXFP8 preset turns it on)")
    optimizer: Literal["adamw"] = "adamw"
    post_training: PostTraining | None = Field(default=None, description="DPO/GRPO/PPO around the policy's step")
    mean_doc_len: int | None = Field(
        default=None, gt=0, le=16_777_216,
        description="packed sequences: mean length in tokens of the documents packed into one sequence, attended "
                    "with intra-document masking (varlen flash attention); None = one document per sequence")

    @model_validator(mode="after")
    def _qlora_computes_in_bf16(self) -> "TrainingSetup":
        # QLoRA keeps the frozen base in 4-bit NF4 and dequantises it to BF16 for every matmul
        # (Dettmers et al. 2023; bitsandbytes/PEFT): there is no FP8 path to predict.
        if self.mode == "qlora" and self.precision == "fp8":
            raise ValueError("QLoRA dequantises its 4-bit base to BF16 for every matmul, so it cannot train in "
                             "FP8: use precision bf16 with qlora, or mode lora/full with fp8")
        return self

    @model_validator(mode="after")
    def _known_recompute_modules(self) -> "TrainingSetup":
        unknown = [m for m in self.recompute_modules or () if m not in RECOMPUTE_MODULE_NAMES]
        if unknown:
            raise ValueError(f"recompute module(s) {', '.join(unknown)} are not modelled; valid: "
                             f"{', '.join(RECOMPUTE_MODULE_NAMES)}")
        return self

    @model_validator(mode="after")
    def _megatron_only_options(self) -> "TrainingSetup":
        for option in MEGATRON_ONLY_OPTIONS:  # in the table's order: the first one broken is the one said
            if option.used(self) and not option.allowed(self):
                template = option.message(self)
                raise SettingsInputError(template, *(n for n in SETTING_NAMES if "{" + n + "}" in template))
        return self

    @model_validator(mode="after")
    def _documents_fit_the_sequence(self) -> "TrainingSetup":
        if self.mean_doc_len is not None and self.mean_doc_len > self.seq_len:
            # named as a setting, so each surface spells it its own way (the page said "valid mean_doc_len",
            # the API field, beside a form control labelled "Packed docs (mean tokens)")
            raise SettingsInputError(f"mean document length {self.mean_doc_len:,} is longer than the sequence "
                                     f"({self.seq_len:,} tokens): packed documents are at most a sequence long; "
                                     f"valid {{mean_doc_len}}: 1-{self.seq_len:,}, or none for one document per "
                                     f"sequence", "mean_doc_len")
        return self

    @property
    def attention_length(self) -> int:
        """Keys a query can reach: the sequence, or with packed documents under intra-document masking
        the mean document length (the attention core's FLOPs and scores scale with it, docs/performance.md)."""
        return self.seq_len if self.mean_doc_len is None else self.mean_doc_len

    @model_validator(mode="after")
    def _post_training_shapes(self) -> "TrainingSetup":
        post = self.post_training
        if post is None:
            return self
        if post.algorithm == "dpo" and self.global_batch % 2:
            raise ValueError(f"DPO trains on chosen/rejected pairs, so the global batch counts 2 sequences per pair: "
                             f"{self.global_batch:,} is odd; use {self.global_batch - 1:,} or {self.global_batch + 1:,}")
        if post.generates and self.seq_len != post.sequence_len:
            raise ValueError(f"{post.algorithm.upper()} trains on prompt + response = {post.prompt_len:,} + "
                             f"{post.response_len:,} = {post.sequence_len:,} tokens per sequence, not seq_len "
                             f"{self.seq_len:,}: set the prompt and response lengths instead of the sequence length")
        return self

    @property
    def algorithm(self) -> str:
        """'sft' (plain training), 'dpo', 'grpo' or 'ppo'."""
        return self.post_training.algorithm if self.post_training is not None else "sft"

    @property
    def global_batch_tokens(self) -> int:
        return self.seq_len * self.global_batch


DEFAULT_GLOBAL_BATCH: int = TrainingSetup.model_fields["global_batch"].default


def default_global_batch(mode: str | None, group_size: int | None = None) -> int:
    """Sequences per step when none is given, for a mode as typed ('lora', 'qlora', 'full', 'dpo-lora', …):
    a fine-tune's batch for plain LoRA/QLoRA; for GRPO/PPO verl's 1,024 prompts x the group size (its default
    where none is given); else the engine's default. GRPO took the engine's 1,024 sequences = 204.8 prompts of
    its own default group of 5, which no verl run trains on."""
    from .assumptions.post_training import DEFAULT_GROUP_SIZE, DEFAULT_PROMPTS_PER_STEP

    if mode in FINE_TUNE_MODES:
        return DEFAULT_FINE_TUNE_GLOBAL_BATCH
    algorithm = str(mode or "").partition("-")[0]
    if algorithm in DEFAULT_GROUP_SIZE:
        return DEFAULT_PROMPTS_PER_STEP * (group_size or DEFAULT_GROUP_SIZE[algorithm])
    return DEFAULT_GLOBAL_BATCH
