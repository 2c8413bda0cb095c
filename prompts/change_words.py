"""A what-if's change said as the CLI says it: plan knobs by their plan-label names ('SP on → off', 'ZeRO 3 → 1',
present.knob_change), and the scenario's inputs by their names in words ('MoE dispatcher alltoall → deepep',
'sequence 4096 → 8192'), never as a tool argument ('moe_dispatcher', 'seq_len')."""

from __future__ import annotations

from ..present import KNOB_LABELS, knob_change

# The what_if tool's input fields (tools/what_if.py CLUSTER_AND_SETUP) in words; a field not named here
# (precision, framework, network) already reads as a word.
INPUT_LABELS = {"gpu": "GPU", "gpus": "GPUs", "gpus_per_node": "GPUs per node", "seq_len": "sequence",
                "global_batch": "global batch", "global_batch_tokens": "global batch tokens", "mode": "training",
                "lora_rank": "LoRA rank", "moe_dispatcher": "MoE dispatcher", "moe_a2a_overlap": "EP all-to-all overlap",
                "mean_doc_len": "mean document length", "cuda_graphs": "CUDA graphs",
                "grad_reduce_dtype": "gradient reduction", "fp8_param_gather": "FP8 parameter gather",
                "recompute_modules": "recompute modules"}


def change_words(field: str, before, after) -> str:
    """('sequence_parallel', True, False) -> 'SP on → off'; ('seq_len', 4096, 8192) -> 'sequence 4096 → 8192'."""
    if field in KNOB_LABELS:
        return knob_change(field, before, after)
    return knob_change(INPUT_LABELS.get(field, field), before, after)
