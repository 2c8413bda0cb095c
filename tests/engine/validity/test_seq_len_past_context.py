"""A sequence longer than the model's context (max_position_embeddings) is a warning on every plan: the
numbers are for the length given, but the model was never trained there (a learned position table has no
rows past it). Before, Llama-2-7B at 128k or GPT-2 at 4k was planned without a word."""

from __future__ import annotations

from pathlib import Path

from shardwise.engine.evaluate import evaluate
from shardwise.engine.hf_config import model_from_hf_config
from shardwise.engine.inputs import build_cluster, resolve_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

CLUSTER = build_cluster("h100-sxm", 8)
FIXTURES = Path(__file__).parents[2] / "fixtures" / "hf_configs"


def said(model, seq_len: int) -> list[str]:
    e = evaluate(model, CLUSTER, TrainingSetup(seq_len=seq_len, global_batch=8), Strategy(tp=8))
    return [w.message for w in e.warnings if w.rule == "seq_len_past_context"]


def test_past_the_context_is_said():
    # Llama-2-7B: max_position_embeddings 4,096 (its HF config); 128k = 131,072 > 4,096.
    llama2 = resolve_model("llama-2-7b")
    assert llama2.max_position_embeddings == 4096
    (message,) = said(llama2, 131_072)
    assert "131,072" in message and "4,096-token context" in message


def test_at_or_under_the_context_says_nothing():
    assert said(resolve_model("llama-2-7b"), 4096) == []
    assert said(resolve_model("llama-3.1-8b"), 131_072) == []  # Llama 3.1: 131,072 positions


def test_a_learned_position_table_is_named():
    # GPT-2's config.json: n_positions 1,024 learned absolute positions; 4,096 > 1,024.
    gpt2 = model_from_hf_config((FIXTURES / "gpt2.json").read_text())
    assert gpt2.learned_position_embeddings == 1024
    (message,) = said(gpt2, 4096)
    assert "learned position table has 1,024 rows" in message
