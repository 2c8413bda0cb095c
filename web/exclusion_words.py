"""The page's "Not shown" line: why plans were left out, in words. It printed the rule ids with spaces
("57,600 tp cp pp divides gpus, 1,665 zero without dp"), which read as neither a sentence nor an id one can look
up. Each phrase says what the excluded plans break (the rules' own messages, engine/validity/, say it in full);
a rule not listed here is shown by its id, as docs/search.md's rule table names it (tests/web/test_page_exclusions.py
checks every error rule of engine/validity has a phrase)."""

from __future__ import annotations

EXCLUSION_WORDS = {
    "does_not_fit": "too large for the GPU's memory",
    "tp_cp_pp_divides_gpus": "TP·CP·PP does not divide the GPUs",
    "expert_mesh_divides_gpus": "the expert mesh does not divide the GPUs",
    "dp_microbatch_divides_global_batch": "DP × micro-batch does not divide the global batch",
    "zero_without_dp": "ZeRO with nothing to shard over (DP·CP = 1)",
    "tp_divides_heads": "TP does not divide the attention heads",
    "tp_divides_kv_heads": "TP does not divide the KV heads",
    "tp_divides_ffn": "TP does not divide the FFN width",
    "cp_divides_seq": "CP does not divide the sequence",
    "sp_divides_seq": "sequence parallelism: TP does not divide the sequence",
    "ulysses_divides_heads": "Ulysses CP does not divide the heads",
    "pipeline_stages_le_layers": "more pipeline stages than layers",
    "vpp_microbatch_groups": "micro-batches do not fill the interleaved pipeline's groups",
    "vpp_requires_pp": "virtual stages without a pipeline",
    "pipeline_zero_stage": "a ZeRO stage the pipeline engine rejects",
    "ep_divides_experts": "EP does not divide the experts",
    "etp_divides_expert_ffn": "expert-TP does not divide the expert FFN",
    "framework_supports_zero": "a ZeRO stage the framework lacks",
    "framework_supports_ep": "expert parallelism the framework lacks",
    "framework_supports_etp": "expert-TP the framework lacks",
    "framework_supports_vpp": "virtual pipeline stages the framework lacks",
    "deepspeed_config_layout": "a layout DeepSpeed's config cannot express",
    "deepspeed_config_options": "options DeepSpeed's config cannot express",
    "hsdp_divides_dp": "HSDP replicas do not divide DP",
    "hsdp_requires_sharding": "HSDP without ZeRO-2/3 sharding",
    "expert_parallel_requires_moe": "expert parallelism on a model with no experts",
    "deepep_with_etp": "expert-TP, which DeepEP with this framework lacks",
    "moe_dispatcher_offered": "an MoE dispatcher the framework lacks",
    "moe_full_iteration_graphs_need_sync_free_dispatch": "full-iteration CUDA graphs with a dispatcher that syncs "
                                                         "with the host",
    "per_layer_graphs_without_full_recompute": "full recompute, which per-layer CUDA graphs cannot run",
    "dpo_microbatch_holds_pairs": "an odd DPO micro-batch (it holds whole pairs)",
    "framework_supports_setup": "a setup the framework cannot train",
    "deepspeed_config_setup": "a setup DeepSpeed's config cannot express",
}


def exclusion_words(rule: str) -> str:
    return EXCLUSION_WORDS.get(rule, rule)
