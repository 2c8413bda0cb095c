"""Which engine framework a measured row's software stack runs as (TrainingSetup.framework), read from the row's
`framework` column: one table, searched in order, the first marker the column holds (lower case) decides.

The engine's framework prices the host dispatch per layer, the TP-communication overlap, the kernel stack
(Transformer Engine or PyTorch-native), the gradient buckets, FSDP's per-layer rings and Megatron's optimizer phase
(engine/assumptions/*.py). A stack gets the framework whose *training loop and parallel engine* it runs, since that
is what those terms model; where none does, it is unmodelled and its rows are excluded.

Until session 12 the parser labelled every row that was not nanotron/FSDP/Composer/torchtitan `megatron`, so
DeepSpeed, Colossal-AI, Lightning, FlashAttention-script and Meta's PyTorch rows paid Megatron's constants (the
optimizer phase, TP overlap and Transformer Engine kernels included). The markers below were written from the
distinct `framework` values of measured_runs.csv, the Playbook sweep and external sets 1-8 (docs/performance.md,
"Session 12: loader readings"); a stack no marker names is excluded as unknown rather than given Megatron's terms.
"""

from __future__ import annotations

from typing import NamedTuple


class StackReading(NamedTuple):
    marker: str  # matched in the row's framework column, lower case
    framework: str | None  # TrainingSetup.framework; None: no engine framework fits (the row is excluded)
    reason: str


# Order matters: a more specific marker comes before a marker it contains or that its rows also hold
# ('megatron-deepspeed' before 'deepspeed'; 'nemo automodel' before 'nemo'; 'mlperf training' before
# 'pytorch', since MLPerf systems list their PyTorch containers; 'jax' before everything).
STACK_FRAMEWORKS: tuple[StackReading, ...] = (
    # first: a JAX stack is unmodelled whatever else its column names (an MLPerf submission, a NeMo-like recipe)
    StackReading("jax", None, "JAX/XLA framework (MaxText, PaxML): not a framework the engine models"),
    StackReading("nanotron", "nanotron",
                 "the Ultra-Scale Playbook's framework, a plannable one since issue 13"),
    StackReading("megatron-deepspeed", "megatron",
                 "Megatron-LM's model and TP layers with DeepSpeed's pipeline engine and ZeRO: the engine reads TP with "
                 "PP as Megatron-DeepSpeed, i.e. `megatron` (its `deepspeed` is plain DeepSpeed driven by its JSON "
                 "config, whose pipeline runs with TP = 1: engine/validity/deepspeed_config.py)"),
    StackReading("mlperf training", "megatron",
                 "MLPerf Training's LLM benchmarks on NVIDIA GPUs run NVIDIA's NeMo / Megatron-Core implementation "
                 "(the rows' config paths: .../implementations/nemo, Megatron-Bridge); a system's framework field lists "
                 "the containers of all its benchmarks (PyTorch, MXNet, DGL, HugeCTR)"),
    StackReading("nemo automodel", "fsdp",
                 "NeMo AutoModel trains Hugging Face models with PyTorch FSDP2/DTensor, not Megatron-Core"),
    StackReading("megatron", "megatron",
                 "Megatron-LM, Megatron-Core, Megatron-Bridge and Megatron-LM forks (Megatron-LLaMA, FlagScale, "
                 "Pai-Megatron-Patch, MegaScale, the zero-bubble and MS-AMP forks)"),
    StackReading("nemo", "megatron", "NeMo's LLM training runs on Megatron-Core (NeMo Megatron, NeMo Framework)"),
    StackReading("deepspeed", "deepspeed", "DeepSpeed's engine (Hugging Face models under DeepSpeed ZeRO)"),
    StackReading("colossal-ai", "deepspeed",
                 "Colossal-AI's LowLevelZero plugin is ZeRO-1/2 after DeepSpeed's (replicated parameters, gradients "
                 "reduce-scattered in buckets during backward, one all-gather after the step) on PyTorch kernels; its "
                 "used rows run that plugin. FSDP's per-layer gathers (`fsdp`) are not what it does"),
    StackReading("internevo", None,
                 "InternEvo's Hybrid ZeRO (optimizer states sharded within a sub-group of its own size) with its own "
                 "TP and overlap: neither DeepSpeed's ZeRO, FSDP's per-layer gathers nor Megatron; its columns name "
                 "kernels (FlashAttention, Apex) that other entries would otherwise match (lead, session 12, before "
                 "any set-9 prediction)"),
    StackReading("torchtitan", "fsdp", "PyTorch FSDP2/DTensor (torchtitan and its forks)"),
    StackReading("composer", "fsdp", "MosaicML Composer / LLM Foundry on PyTorch FSDP"),
    StackReading("fsdp", "fsdp", "a PyTorch FSDP/FSDP2 stack (fms-fsdp, OLMo-core, KempnerForge, ...)"),
    StackReading("lightning", "fsdp",
                 "PyTorch Lightning DDP (or its ZeRO-1 strategy): PyTorch-native data parallelism and kernels"),
    StackReading("flashattention", "fsdp",
                 "the FlashAttention authors' training code: a PyTorch model with their kernels under DDP "
                 "(Lightning), no TP/PP of its own"),
    StackReading("huggingface", "fsdp", "Hugging Face transformers models under PyTorch DDP/Trainer/Accelerate"),
    StackReading("hugging face", "fsdp", "the same stack spelt in two words (set 9's columns)"),
    StackReading("meta llama 3 training stack", "fsdp",
                 "Meta's PyTorch-native 4D parallelism (FSDP as DP, TP, PP, CP): torchtitan is its open version"),
    StackReading("pytorch", "fsdp",
                 "a plain PyTorch stack not named above: PyTorch-native data parallelism and kernels"),
)


def stack_reading(framework_column: str) -> StackReading | None:
    """The table's first entry whose marker the column holds; None if no marker does."""
    text = framework_column.lower()
    return next((s for s in STACK_FRAMEWORKS if s.marker in text), None)


def framework_for_stack(framework_column: str) -> tuple[str | None, str]:
    """(engine framework, why not) for a row's framework column: (framework, "") or (None, the exclusion reason)."""
    reading = stack_reading(framework_column)
    if reading is None:
        return None, f"software stack {framework_column!r} is in no entry of the stack table (stacks.py)"
    if reading.framework is None:
        return None, reading.reason
    return reading.framework, ""
