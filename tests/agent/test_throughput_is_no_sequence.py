"""A throughput is never a sequence length (session 13): "samples at 8k tokens/s" was read as 8k-token samples.
The rate may be written with or without its unit word, per second or per GPU per second; a length beside it
("8k seq at 900 tok/s") is still read. Expected lengths are the figures written in the messages (k = 1,024)."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract, normalise
from shardwise.agent.planner.quantities import find_seq_len


@pytest.mark.parametrize("text", [
    "samples at 8k tokens/s", "samples at 8k tokens per second", "samples at 8k tokens/sec/gpu", "we get 8k tok/s",
    "8k tokens per second per GPU", "8k tok/s/gpu", "8k tps", "8k tokens a second", "8k seqs per second",
])
def test_a_rate_sets_no_sequence_length(text):
    assert find_seq_len(normalise(text)) is None


@pytest.mark.parametrize("text, seq_len", [
    ("8k seq at 900 tok/s", 8 * 1024), ("4k ctx, samples at 8k tokens/s", 4 * 1024),
    ("16k tokens/s/gpu on 8k seqs", 8 * 1024), ("seq_len 8192 at 900 tokens/s per gpu", 8192),
    ("samples of 8k tokens", 8 * 1024),  # a length said with "of", no rate after it: still a length
])
def test_a_length_beside_a_rate_is_still_read(text, seq_len):
    assert find_seq_len(normalise(text)) == seq_len


def test_the_chat_plans_at_the_default_sequence_when_only_a_rate_is_given(make_service):
    from support.chat import turns

    [done] = turns(make_service(), "llama 3.1 8b on 16 h100, gbs 256. samples at 8k tokens/s, what plan?")
    [call] = done.tool_calls
    assert call["name"] == "recommend_plans" and call["arguments"]["scenario"]["seq_len"] is None
    assert extract("llama 3.1 8b on 16 h100, gbs 256. samples at 8k tokens/s").seq_len is None
