"""A case's scenario -> the engine's specs (model, cluster, training setup, plan).

Units follow the CLI's conventions: "8k" context = 8192 tokens; a "4M"-token batch is
4·2^20 tokens (training recipes count in powers of two), turned into sequences by the
sequence length. This is deliberately not tools/scenario.py: ground truth must not share
the code that turns a tool call into specs, or a bug there would grade itself correct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..engine.cluster import Cluster
from ..engine.errors import ShardwiseInputError
from ..engine.inputs import build_cluster, parse_count, resolve_model
from ..engine.model_spec import ModelSpec
from ..engine.post_training.modes import default_framework
from ..engine.strategy import Strategy
from ..engine.training import TrainingSetup
from .case import Scenario

DEFAULT_SEQ_LEN = 4096  # the CLI's default (cli/common.py)
DEFAULT_GLOBAL_BATCH = 1024
# A LoRA/QLoRA fine-tune given no batch: 128 sequences, as alpaca-lora's finetune.py and Stanford Alpaca
# use (the advisor's documented default, docs/agent.md); written here again, not imported from tools/.
DEFAULT_FINE_TUNE_GLOBAL_BATCH = 128


def tokens(text: int | float | str) -> int:
    """'8k' -> 8192, '4M' -> 4194304, '32768' -> 32768 (k and M are binary, as recipes mean them)."""
    if isinstance(text, (int, float)):
        return int(text)
    s = text.strip().lower().replace(",", "").replace("_", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmg]?)", s)
    if not m:
        raise ShardwiseInputError(f"expected a token count such as 8192, 8k or 4M, got {text!r}")
    scale = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}[m.group(2)]
    return int(round(float(m.group(1)) * scale))


@dataclass(frozen=True)
class Specs:
    model: ModelSpec
    cluster: Cluster
    setup: TrainingSetup


def seq_len(s: Scenario) -> int:
    return tokens(s.seq_len) if s.seq_len is not None else DEFAULT_SEQ_LEN


def global_batch(s: Scenario) -> int:
    """Sequences per optimizer step."""
    if s.global_batch is not None:
        return s.global_batch
    if s.global_batch_tokens is not None:
        return max(1, round(tokens(s.global_batch_tokens) / seq_len(s)))
    return DEFAULT_FINE_TUNE_GLOBAL_BATCH if s.mode in ("lora", "qlora") else DEFAULT_GLOBAL_BATCH


def build(s: Scenario) -> Specs:
    if not (s.model or s.params) or not s.gpu or not s.gpus:
        raise ShardwiseInputError("scenario needs a model (or params), a gpu and a gpu count")
    model = resolve_model(s.model, parse_count(s.params, "params") if s.params else None)
    cluster = build_cluster(s.gpu, s.gpus, s.gpus_per_node, s.network)
    setup_args = dict(seq_len=seq_len(s), global_batch=global_batch(s))
    for name in ("mode", "lora_rank", "precision", "framework"):
        if getattr(s, name) is not None:
            setup_args[name] = getattr(s, name)
    # no framework given: the mode's default, as every surface plans it (Megatron; FSDP2 for QLoRA, which Megatron
    # cannot run: engine/post_training/modes.py DEFAULT_FRAMEWORK)
    setup_args.setdefault("framework", default_framework(s.mode or "full"))
    return Specs(model, cluster, TrainingSetup(**setup_args))


def strategy(plan: dict) -> Strategy:
    """A case's plan dict ({tp: 8, pp: 2, zero: 1, ...}) -> Strategy; `dp` is derived, so dropped."""
    names = {"zero": "zero_stage", "mb": "micro_batch", "sp": "sequence_parallel"}
    args = {names.get(k, k): v for k, v in plan.items() if k not in ("dp", "grad_accum")}
    return Strategy(**args)
