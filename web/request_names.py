"""What an unknown REST field most likely meant, said in the refusal.

README promises "request bodies use the CLI's names in snake_case", and a few flags are spelled otherwise in a
body (`--top` is `top_k`, a search's `--tp 8` pin goes in `constraints`); a body written from the CLI's help was
refused as "unknown field" with no hint. A name the endpoint does not know is answered with the field the CLI's
flag became, or else the closest field of that endpoint (a typo such as `seqlen`).
"""

from __future__ import annotations

import difflib

# CLI flags (their argparse dest) that a request body spells differently: the body field, and how to write it.
# Suggested only where the endpoint has that field (`top` means nothing to /api/evaluate).
CLI_SPELLINGS = {
    "top": ("top_k", "top_k (the CLI's --top)"),
    "export": ("export_format", "export_format (the CLI's --export)"),
    "no_sp": ("sequence_parallel", "sequence_parallel: false (the CLI's --no-sp)"),
    "sp": ("sequence_parallel", "sequence_parallel: true or false"),
    "grad_reduce_in_bf16": ("grad_reduce_dtype", "grad_reduce_dtype: \"bf16\" (the CLI's --grad-reduce-in-bf16)"),
    "max": ("constraints", "constraints, e.g. {\"max_pp\": 4} (the CLI's --max pp=4)"),
}
# Other tools' names for a setting (Megatron-LM's, Hugging Face's, torchrun's), which a difflib ratio cannot reach.
OTHER_NAMES = {"gpu_count": "gpus", "n_gpus": "gpus", "world_size": "gpus", "nproc_per_node": "gpus_per_node",
               "seq_length": "seq_len", "sequence_length": "seq_len", "max_seq_len": "seq_len",
               "global_batch_size": "global_batch", "micro_batch_size": "micro_batch",
               "tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp",
               "context_parallel_size": "cp", "expert_model_parallel_size": "ep", "model_name": "model"}
# Fields a response's `strategy` carries that a request cannot set: they follow from the others (a body copied
# from a response was refused with no word on why).
DERIVED = {"dp": "DP follows from the GPUs: gpus / (tp · cp · pp)",
           "grad_accum": "gradient accumulation follows from the batch: global_batch / (dp · micro_batch)",
           "expert_dp": "expert DP follows from the GPUs: gpus / (ep · etp · pp)"}
# A search (recommend, what-if) takes the CLI's pins in `constraints`, not as plan fields.
PLAN_KNOBS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero", "hsdp", "micro_batch", "recompute")
SEARCHES = ("/api/recommend", "/api/what-if")
# How close a typo must be to a field to be suggested (difflib's ratio: 0.75 takes `seqlen` -> `seq_len` and
# `gpu` -> `gpus`, and leaves a name with no near field to /docs rather than guess).
CLOSE_ENOUGH = 0.75


def request_fields(path: str) -> tuple[str, ...]:
    """The body fields of the endpoint at `path` (empty for a path without a JSON body)."""
    from .calibrate import CalibrateRequest
    from .schemas import EvaluateRequest, ExplainRequest, ExportRequest, RecommendRequest, WhatIfRequest

    models = {"/api/evaluate": EvaluateRequest, "/api/recommend": RecommendRequest, "/api/explain": ExplainRequest,
              "/api/what-if": WhatIfRequest, "/api/export": ExportRequest, "/api/calibrate": CalibrateRequest}
    model = models.get(path.rstrip("/"))
    return tuple(model.model_fields) if model is not None else ()


def meant(name: str, path: str) -> str | None:
    """The body field `name` (unknown at `path`) most likely stands for, as words for the message; None: no guess."""
    if path.rstrip("/") in SEARCHES and name in PLAN_KNOBS:
        return f"constraints, e.g. {{\"{name}\": …}} (a search takes the CLI's --{name.replace('_', '-')} pin there)"
    fields = request_fields(path)
    if path.rstrip("/") in SEARCHES and name == "sp":
        return "constraints, e.g. {\"sp\": \"off\"} (the CLI's --sp off)"
    if name in CLI_SPELLINGS and CLI_SPELLINGS[name][0] in fields:
        return CLI_SPELLINGS[name][1]
    if OTHER_NAMES.get(name) in fields:
        return OTHER_NAMES[name]
    if path.rstrip("/") in SEARCHES and OTHER_NAMES.get(name) in PLAN_KNOBS:
        return meant(OTHER_NAMES[name], path)
    close = difflib.get_close_matches(name, fields, n=1, cutoff=CLOSE_ENOUGH)
    return close[0] if close else None
