"""REST request bodies: the CLI's flags in snake_case (`--gpus-per-node` -> `gpus_per_node`).

Unknown fields are refused (a typo such as `gpu_count` must not silently fall back to a default),
and every number has the same bounds the engine's specs enforce, so absurd values fail here
with the field named. Responses are the engine's own result models (`Evaluation`, …), the
objects `--json` prints.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, WithJsonSchema, field_validator

from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError
from ..engine.model_spec import ModelSpec
from ..engine.strategy import Recompute, Strategy
from ..engine.post_training.modes import TRAINING_MODES, training_setup
from ..engine.training import (DEFAULT_FINE_TUNE_GLOBAL_BATCH, DEFAULT_GLOBAL_BATCH, CudaGraphs, Framework, MoEDispatcher,
                               Precision, TrainingSetup)
from .settings import MAX_TOP_K

# A Hugging Face config.json pasted as text is a few KB; anything near this is not a config.
MAX_MODEL_TEXT_CHARS = 200_000
EXPORT_FORMATS = ("deepspeed", "torchtitan", "fsdp", "accelerate", "megatron", "megatron-bridge", "nanotron", "launch")
ExportFormat = Literal["deepspeed", "torchtitan", "fsdp", "accelerate", "megatron", "megatron-bridge", "nanotron", "launch"]


# Tokens per sequence (and a rollout's prompt/response): a JSON number, or the text the CLI's --seq-len takes
# ('8k' = 8192, k = 1024 as context lengths are quoted). Text is read before the int check (so a bad number
# keeps pydantic's one message, a bad text gets the example); the bound is TrainingSetup's.
MAX_TOKEN_LENGTH = 16_777_216


def _read_length(value: Any, info: ValidationInfo) -> Any:
    """'8k' -> 8192 as engine.inputs.parse_seq_len reads it; anything else is left to the int check."""
    if not isinstance(value, str):
        return value
    from ..engine.inputs import parse_seq_len  # imports the catalogs: only when needed

    try:
        return parse_seq_len(value, info.field_name)
    except ValueError:  # the error entry names the field; the message gives the example
        raise ValueError(f"expected a length such as 8192 or 8k (a positive whole number of tokens), "
                         f"got {value!r}") from None


TokenLength = Annotated[int, BeforeValidator(_read_length), Field(ge=1, le=MAX_TOKEN_LENGTH),
                        WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_TOKEN_LENGTH},
                                                  {"type": "string", "examples": ["8k"]}]})]


class _Body(BaseModel):
    # strict: a JSON value of the wrong type is refused, not coerced (`false` is not a price, "8" not a count);
    # JSON numbers still fill float fields, and the string forms ("70B", "4M") are declared where allowed.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ScenarioRequest(_Body):
    """What is trained on what: the CLI's model, cluster and training-setup flags."""

    model: str | dict[str, Any] | None = Field(
        default=None, description="catalog id (GET /api/models), or a Hugging Face config.json as a JSON object or its text",
        examples=["llama-3.1-70b"])
    params: float | str | None = Field(default=None, description="bare parameter count instead of a model, e.g. 70e9 or '70B'")
    gpu: str = Field(min_length=1, max_length=100, description="GPU id or alias (GET /api/gpus)", examples=["h100-sxm"])
    gpus: int = Field(ge=1, le=1_048_576, description="total GPUs", examples=[64])
    gpus_per_node: int | None = Field(default=None, ge=1, le=4096, description="GPUs sharing the fast intra-node link")
    network: str | None = Field(default=None, max_length=100, description="scale-out network id, e.g. ib-ndr")
    seq_len: TokenLength | None = Field(default=None, description="tokens per sequence: 8192 or '8k' (k = 1024) "
                                                                 "(default 4096; grpo/ppo: prompt + response)")
    global_batch: int | None = Field(default=None, ge=1, le=1 << 30, description=f"sequences per optimizer step (default "
                                        f"{DEFAULT_GLOBAL_BATCH}; lora/qlora {DEFAULT_FINE_TUNE_GLOBAL_BATCH}; "
                                        "grpo/ppo 1024 prompts x the group size)")
    global_batch_tokens: int | str | None = Field(
        default=None, description="tokens per optimizer step instead of global_batch: 4194304, '4M' or '512k' (M = 2^20, k = 2^10, as "
                                  "recipes mean them; --global-batch-tokens reads them alike)")
    mode: Literal[TRAINING_MODES] = "full"
    prompt_len: TokenLength | None = Field(default=None, description="grpo/ppo: prompt tokens, 512 or '0.5k' (default 512)")
    response_len: TokenLength | None = Field(default=None, description="grpo/ppo: generated tokens, 512 or '0.5k' (default 512)")
    group_size: int | None = Field(default=None, ge=1, le=4096, description="grpo/ppo: samples per prompt")
    inference_tp: int | None = Field(default=None, ge=1, le=1024, description="grpo/ppo: GPUs per rollout engine")
    reference_dtype: Literal["bf16", "fp32"] | None = Field(
        default=None, description="dpo/grpo/ppo: the frozen reference's weights (default bf16, as TRL and verl load "
                                  "it; the CLI's --reference-dtype)")
    lora_rank: int = Field(default=16, ge=1, le=65_536)
    precision: Precision = "bf16"
    framework: Framework | None = Field(default=None, description="default megatron; fsdp for qlora, which "
                                        "Megatron cannot run (engine/post_training/modes.py DEFAULT_FRAMEWORK)")
    moe_dispatcher: MoEDispatcher = Field(default="alltoall", description="MoE token dispatcher: alltoall, allgather or deepep")
    moe_a2a_overlap: bool = Field(default=False, description="expert all-to-all overlapped with the other micro-batch "
                                                              "(Megatron-Core --overlap-moe-expert-parallel-comm)")
    cuda_graphs: CudaGraphs = Field(default="none", description="CUDA graphs the step is replayed with (Megatron only): "
                                                                "none, per-layer or full-iteration")
    recompute_modules: list[str] | None = Field(
        default=None, max_length=8, description="Megatron only: --recompute-modules that selective recompute means "
                                                "(core_attn, layernorm, mla_up_proj, moe_act); null = the model's default set")
    grad_reduce_dtype: Literal["fp32", "bf16"] = Field(
        default="fp32", description="Megatron only: gradient buffer and DP reduction dtype (bf16 = --grad-reduce-in-bf16)")
    fp8_param_gather: bool = Field(default=False, description="Megatron with precision fp8 only: FP8 primary weights "
                                                              "(--fp8-param-gather)")
    mean_doc_len: int | None = Field(default=None, ge=1, le=16_777_216,
                                     description="packed sequences: mean document length in tokens, attended per "
                                                 "document (varlen flash attention); null = one per sequence")
    profile: CalibrationProfile | None = Field(
        default=None, description="a calibration profile (the JSON `shardwise calibrate --save` writes): predictions "
                                  "for its GPU/precision/framework and network use your cluster's measured scales")

    def setup(self) -> TrainingSetup:
        if self.global_batch is not None and self.global_batch_tokens is not None:
            raise ShardwiseInputError("give global_batch (sequences) or global_batch_tokens, not both")
        tokens = batch_tokens(self.global_batch_tokens) if self.global_batch_tokens is not None else None
        return training_setup(self.mode, seq_len=self.seq_len, global_batch=self.global_batch,
                              global_batch_tokens=tokens, prompt_len=self.prompt_len, response_len=self.response_len,
                              group_size=self.group_size, inference_tp=self.inference_tp,
                              reference_dtype=self.reference_dtype, lora_rank=self.lora_rank,
                              precision=self.precision, framework=self.framework,
                              moe_dispatcher=self.moe_dispatcher, moe_a2a_overlap=self.moe_a2a_overlap,
                              cuda_graphs=self.cuda_graphs, mean_doc_len=self.mean_doc_len,
                              recompute_modules=None if self.recompute_modules is None else tuple(self.recompute_modules),
                              grad_reduce_dtype=self.grad_reduce_dtype, fp8_param_gather=self.fp8_param_gather)


def batch_tokens(value: int | str) -> float:
    """4194304, '4194304', '4M' (= 4·2^20), '512k' (= 512·2^10) or '4e6' -> tokens: the engine's reading
    (parse_token_count), as `--global-batch-tokens` reads it."""
    from ..engine.inputs import parse_token_count  # imports the catalogs: only when needed

    tokens = parse_token_count(value, "global_batch_tokens")
    if tokens > 1 << 40:
        raise ShardwiseInputError(f"global_batch_tokens {value!r} is beyond any training run (at most 2^40 tokens)")
    return tokens


class PlanFields(_Body):
    """One parallelism plan: the CLI's --tp … --recompute flags. DP and grad-accum are derived."""

    tp: int = Field(default=1, ge=1, le=1024)
    pp: int = Field(default=1, ge=1, le=1024)
    vpp: int = Field(default=1, ge=1, le=128)
    cp: int = Field(default=1, ge=1, le=1024)
    ep: int = Field(default=1, ge=1, le=4096)
    etp: int = Field(default=1, ge=1, le=1024)
    zero: Literal[0, 1, 2, 3] = Field(default=1, description="ZeRO stage (3 = FSDP full shard)")
    hsdp: int = Field(default=1, ge=1, le=1_048_576,
                      description="HSDP replicas (the CLI's --hsdp): shard within DP/hsdp ranks, replicate across hsdp "
                                  "replicas; needs zero 2 or 3. A plan /api/recommend returns with hsdp_replicas > 1 "
                                  "is this field")
    micro_batch: int = Field(default=1, ge=1, le=65_536)
    recompute: Recompute = "selective"
    sequence_parallel: bool = Field(default=True, description="Megatron SP (the CLI's --no-sp sets it false)")

    @field_validator("zero", mode="before")
    @classmethod
    def _no_bool_stage(cls, value: Any) -> Any:
        if isinstance(value, bool):  # False == 0 in Python, so the literal alone would take it
            raise ValueError("Input should be 0, 1, 2 or 3")
        return value

    def strategy(self) -> Strategy:
        return Strategy(tp=self.tp, pp=self.pp, vpp=self.vpp, cp=self.cp, ep=self.ep, etp=self.etp,
                        zero_stage=self.zero, hsdp_replicas=self.hsdp, micro_batch=self.micro_batch, recompute=self.recompute,
                        sequence_parallel=self.sequence_parallel)


class CostFields(_Body):
    """The CLI's --train-tokens and --price-per-gpu-hour (evaluate and recommend alike)."""

    train_tokens: float | str | None = Field(default=None, description="token budget for time-to-train and cost: 15e12 or '15T'")
    price_per_gpu_hour: float | None = Field(default=None, ge=0, le=10_000, description="USD per GPU-hour (default: listed price)")

    def cost_args(self, step_tokens: int) -> dict:
        """The cost keywords; a budget below one step of `step_tokens` tokens is refused (a unit left off)."""
        from ..engine.inputs import parse_count
        from ..tools.cost_facts import check_budget

        tokens = parse_count(self.train_tokens, "train_tokens") if self.train_tokens is not None else None
        check_budget(tokens, step_tokens, "train_tokens", self.train_tokens)
        return {"train_tokens": tokens, "price_per_gpu_hour": self.price_per_gpu_hour}


class EvaluateRequest(CostFields, PlanFields, ScenarioRequest):
    """POST /api/evaluate: a scenario and one plan."""


class SearchFields(_Body):
    """How a search ranks plans: the CLI's --headroom and its constraint flags (--tp 8, --max-pp 4, …)."""

    headroom: float = Field(default=0.1, ge=0.0, lt=1.0, description="share of GPU memory kept free (the CLI's default 0.1)")
    constraints: dict[str, int | str | bool | list[int | str | bool]] | None = Field(
        default=None, description="pin or bound knobs of the search: {'tp': 8}, {'max_pp': 4}, {'recompute': 'full'}, "
                                  "{'zero': [1, 3]}; unknown names are refused with the allowed list",
        examples=[{"max_pp": 4}])


class RecommendRequest(CostFields, SearchFields, ScenarioRequest):
    """POST /api/recommend: a scenario; the engine searches every valid plan."""

    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K, description="how many ranked plans to return")
    export_format: ExportFormat | None = Field(
        default=None, description="the format you will export to: rank only plans it can write; `set_aside` counts "
                                  "the faster ones it refuses, by cause (shardwise recommend --export)")


class ExplainRequest(ScenarioRequest):
    """POST /api/explain: two plans compared term by term, or without them the recommended winner and its
    runner-up; then the winner's binding constraint and one-knob changes (shardwise explain --a/--b)."""

    a: str | PlanFields | None = Field(
        default=None, description="first plan: the text --a takes (\"tp=4,pp=2,zero=1,mb=1,recompute=selective\" or "
                                  "\"TP4 PP2 ZeRO1\") or an object with the plan fields of /api/evaluate; null with b "
                                  "null: the top two recommended plans", examples=["tp=4,pp=2,zero=1"])
    b: str | PlanFields | None = Field(default=None, description="second plan (needs a); null: explain a alone")
    headroom: float = Field(default=0.1, ge=0.0, lt=1.0, description="share of GPU memory kept free (the CLI's default 0.1)")

    @field_validator("a", "b")
    @classmethod
    def _readable_plan(cls, value: Any) -> Any:
        if isinstance(value, str):
            plan_strategy(value)  # refused here, with the field named, rather than later as a bare 400
        return value

    @field_validator("b")
    @classmethod
    def _b_needs_a(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and "a" in info.data and info.data["a"] is None:
            raise ValueError("needs a (the plan to compare it with); give a alone to explain one plan")
        return value

    def plans(self) -> tuple[Strategy, Strategy | None] | None:
        """(a, b) as given, or None: the caller picks the winner and runner-up."""
        if self.a is None:
            return None
        return plan_strategy(self.a), (plan_strategy(self.b) if self.b is not None else None)


def plan_strategy(plan: str | PlanFields) -> Strategy:
    from ..engine.plan_text import parse_plan  # engine's reader: the very text `--a` / `--b` take

    return parse_plan(plan) if isinstance(plan, str) else plan.strategy()


class WhatIfRequest(SearchFields, ScenarioRequest):
    """POST /api/what-if: a scenario and what changes in it; the recommendation before and after
    (shardwise what-if --change)."""

    change: str | dict[str, str | int | float | bool | list[str] | None] = Field(
        description="the inputs that change: {\"gpu\": \"h200\", \"gpus\": 128} or the text --change takes, "
                    "\"gpu=h200,gpus=128\"; inputs: gpu, gpus, gpus_per_node, network, seq_len, global_batch, "
                    "global_batch_tokens, mode, precision, framework, … (an unknown one is refused with the full list)",
        examples=[{"gpu": "h200"}])
    top_k: int = Field(default=3, ge=1, le=MAX_TOP_K, description="plans ranked on each side (the CLI's --top, default 3)")

    @field_validator("change")
    @classmethod
    def _known_inputs(cls, value: Any) -> Any:
        from ..engine.whatif import parse_changes

        parse_changes(value)  # unknown input, one given twice, none at all: refused naming `change`
        return value


class ExportRequest(PlanFields, ScenarioRequest):
    """POST /api/export: a scenario, one plan and the framework to write its config for."""

    format: ExportFormat = Field(description="which framework's config")


class CatalogModel(ModelSpec):
    """One entry of GET /api/models: what `shardwise models --json` prints."""

    id: str = Field(description="what `model` accepts")
    params: int
    active_params: int
    aliases: list[str] = Field(default_factory=list)


class ExportResponse(_Body):
    format: str
    filename: str = Field(description="a suggested file name")
    text: str = Field(description="the config, ready to paste")
    warnings: list[str] = Field(default_factory=list, description="what to do or know for the file to match the plan")


class ChatRequest(_Body):
    """POST /api/chat: one user message; `session_id` continues a conversation (null starts one)."""

    message: str = Field(min_length=1, description="what the user asked")
    session_id: str | None = Field(default=None, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
                                   description="from the `session` event of an earlier answer")
    scenario: dict[str, Any] | None = Field(
        default=None, description="optional: the page's form (the scenario fields above); the conversation continues from it")
    plan: dict[str, Any] | None = Field(
        default=None, description="optional: the plan the page shows for that scenario (tp, pp, zero, …); with a new "
                                  "scenario it becomes the plan under discussion (\"why not TP=8?\" compares with it)")
    profile: CalibrationProfile | None = Field(
        default=None, description="optional: a calibration profile (`shardwise calibrate --save`) for this message's tools")


class ErrorResponse(_Body):
    message: str = Field(description="what was wrong and what is allowed")
    errors: list[dict[str, str]] = Field(default_factory=list, description="one entry per bad field: {field, message}")
