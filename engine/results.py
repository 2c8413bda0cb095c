"""Result objects: what `evaluate` returns and `--json` prints (a stable contract).

Memory in GiB (2^30 bytes), time in seconds. Frozen: results are values.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .post_training.spec import PostTraining
from .setting_text import SettingsText, as_settings_text


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True)


class ModelSummary(_Result):
    name: str
    params: int
    active_params: int
    approximate: bool = False


class ClusterSummary(_Result):
    gpu: str
    num_gpus: int
    gpus_per_node: int
    gpu_memory_gib: float
    network: str = ""
    num_nodes: int = 1


class StrategySummary(_Result):
    tp: int
    pp: int
    vpp: int
    cp: int
    ep: int
    etp: int
    dp: int
    zero_stage: int
    micro_batch: int
    grad_accum: int
    recompute: str
    sequence_parallel: bool
    hsdp_replicas: int = 1


class Violation(_Result):
    rule: str = Field(description="stable rule name, e.g. 'tp_divides_heads'")
    message: str = Field(description="what is wrong and the nearest valid values")
    # The message as written, naming settings `{like_this}` so the CLI can say its flags: private, so neither
    # the JSON nor its schema (the REST contract) has it.
    _said: SettingsText | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, rule: str, message: "str | SettingsText") -> "Violation":
        said = as_settings_text(message)
        violation = cls(rule=rule, message=str(said))
        violation._said = said
        return violation

    def text(self) -> SettingsText:
        """The message as written (a Violation read back from JSON has only its plain message)."""
        return self._said if self._said is not None else as_settings_text(self.message)

    def spelled(self, spell) -> str:
        """The message with its settings named by `spell` (the CLI: flag_for); `message` names them plainly."""
        return self.text().spelled(spell)


class MemoryReport(_Result):
    """Per GPU, on the most loaded rank. The five categories add up to total_gib."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    other_gib: float
    total_gib: float
    capacity_gib: float
    fits: bool
    details_gib: dict[str, float] = Field(default_factory=dict, description="finer terms, named after what they hold")
    total_gib_range: list[float] | None = Field(default=None, description="[low, high] 80 % interval of the peak "
                                                "(measured-run comparisons, docs/performance.md)")
    peak_phase: str | None = Field(default=None, description="post-training: the phase that sets the peak "
                                   "(policy_training, rollout, reference_forward); null for plain training")


class TimeReport(_Result):
    """Exposed time per optimizer step; the parts add up to step_s."""

    step_s: float
    compute_s: float
    tp_comm_s: float
    cp_comm_s: float
    ep_comm_s: float
    pp_bubble_s: float
    pp_comm_s: float
    dp_comm_s: float
    optimizer_s: float
    optimizer_phase_s: float = Field(default=0.0, description=(
        "the Megatron-family optimizer phase beside AdamW's bytes (gradient clipping, main-gradient zeroing, "
        "FP8 re-quantisation, their launches); a part of step_s like optimizer_s; 0 for LoRA and other frameworks"))
    step_s_range: list[float] | None = Field(default=None, description="[low, high] 80 % interval of step_s")
    # Post-training passes outside the policy's training step (docs/post_training.md); 0 for plain training.
    rollout_s: float = 0.0
    reference_s: float = 0.0
    old_logprob_s: float = 0.0
    reward_s: float = 0.0
    critic_s: float = 0.0


class ThroughputReport(_Result):
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    mfu: float = Field(description="model FLOPs utilisation, 0..1 (definition in README)")
    hfu: float = Field(description="hardware FLOPs utilisation incl. recompute, 0..1")
    model_tflops_per_gpu: float
    tokens_per_s_per_gpu_range: list[float] | None = Field(
        default=None, description="[low, high] 80 % interval from the calibration residuals of this regime")
    range_basis: str | None = Field(default=None, description="which residuals the interval comes from")


class CostReport(_Result):
    """Price of the predicted throughput; time-to-train fields are set when a token budget is given."""

    price_per_gpu_hour: float = Field(description="USD per GPU-hour used")
    price_source: str = Field(description="'user-supplied' or where the default comes from")
    cluster_cost_per_hour: float
    cost_per_billion_tokens: float
    train_tokens: float | None = None
    time_to_train_s: float | None = None
    time_to_train_days: float | None = None
    gpu_hours: float | None = None
    total_cost: float | None = None


class PostTrainingReport(_Result):
    """What a DPO/GRPO/PPO step was modelled with; `defaults_used` names the inputs not given."""

    algorithm: str
    pairs_per_step: int | None = None
    prompt_len: int | None = None
    response_len: int | None = None
    group_size: int | None = None
    prompts_per_step: float | None = None
    inference_tp: int | None = None
    reference: str = Field(description="where the reference model's weights come from")
    defaults_used: list[str] = Field(default_factory=list)
    rollout: dict[str, float] | None = Field(default=None, description="sequences per engine, concurrent "
                                             "sequences, waves, KV cache and budget (GiB), prefill and decode (s)")


class SetupSummary(_Result):
    seq_len: int
    global_batch: int
    global_batch_tokens: int
    mode: str
    lora_rank: int = Field(default=16, description="adapter rank (used when mode is lora or qlora)")
    precision: str
    framework: str
    post_training: PostTraining | None = Field(default=None, description="DPO/GRPO/PPO: the rollout shape")
    moe_dispatcher: str = Field(default="alltoall", description="MoE token dispatcher (alltoall, allgather, deepep)")
    moe_a2a_overlap: bool = Field(default=False, description="expert all-to-all overlapped with the other micro-batch")
    cuda_graphs: str = Field(default="none", description="CUDA graphs the step is replayed with (none, per-layer, "
                                                         "full-iteration)")
    recompute_modules: list[str] | None = Field(default=None, description="Megatron-Core --recompute-modules that "
                                                "selective recompute means; None = shardwise's set for the model")
    grad_reduce_dtype: str = Field(default="fp32", description="gradient buffer and DP reduction dtype (fp32, or "
                                                               "bf16 = --grad-reduce-in-bf16)")
    fp8_param_gather: bool = Field(default=False, description="FP8 primary weights (--fp8-param-gather)")
    mean_doc_len: int | None = Field(default=None, description="packed sequences: mean document length in tokens "
                                                               "(attention by document); None = one per sequence")


class Evaluation(_Result):
    model: ModelSummary
    cluster: ClusterSummary
    strategy: StrategySummary
    valid: bool
    violations: list[Violation]
    warnings: list[Violation] = Field(default_factory=list)
    memory: MemoryReport
    time: TimeReport | None = None
    throughput: ThroughputReport | None = None
    cost: CostReport | None = None
    calibration: str | None = Field(default=None, description="the CalibrationProfile applied, and what of it applied")
    post_training: PostTrainingReport | None = None
    setup: SetupSummary | None = Field(default=None, description="the training setup the plan was evaluated "
                                       "under (evaluate; recommend states it once, at its top level)")
    export_formats: list[str] | None = Field(default=None, description="recommend: the export formats "
                                             "(`shardwise export --format`, POST /api/export's format, the chat's export) that write "
                                             "this plan; the others refuse it")
