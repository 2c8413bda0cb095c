"""The results' context line names the nodes, and the scale-out network only where a step uses it.

A 1-GPU LoRA run read "on 1 × a100-80gb, ib-hdr": no byte crosses InfiniBand inside one node. Expected values:
64 H100 SXM at 8 per node (the GPU's usual node, `shardwise gpus`) = 8 nodes on the H100's default ib-ndr.
"""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.pages import DEFAULT_FORM
from shardwise.web.settings import Settings


def _context(client, **form) -> str:
    r = client.post("/ui/results", data={**DEFAULT_FORM, "seq_len": "4096", **form})
    assert r.status_code == 200
    return " ".join(html.unescape(r.text).split('<p class="context">', 1)[1].split("</p>", 1)[0].split())


def test_one_node_says_so_and_many_nodes_name_their_network():
    client = TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                   chat_service=object()))
    one = _context(client, model="llama-3.1-8b", gpu="a100-80gb", gpus="1", mode="lora", batch="", batch_unit="sequences")
    assert one.startswith("Llama-3.1-8B on 1 × a100-80gb, one node") and "ib-" not in one
    many = _context(client, model="llama-3.1-8b", gpu="h100-sxm", gpus="64", batch="1024", batch_unit="sequences")
    assert many.startswith("Llama-3.1-8B on 64 × h100-sxm, 8 nodes, ib-ndr")


def _setup(client, **form) -> str:
    r = client.post("/ui/results", data={**DEFAULT_FORM, **form})
    assert r.status_code == 200
    return " ".join(html.unescape(r.text).split('<p class="context setup">', 1)[1].split("</p>", 1)[0].split())


def test_the_setup_line_says_what_the_entries_became():
    """A page user typed "4M" tokens, or a GRPO response length, and could not see the sequences or the sequence
    length the search used (the CLI prints them on its `setup` line). Expected values by hand: 4M = 4·2^20 =
    4,194,304 tokens over 8,192-token sequences = 512 sequences; GRPO's sequence is prompt + response = verl's
    default 512 + 2,048 = 2,560 tokens, and 4,194,304 // 2,560 = 1,638 whole sequences = 4,193,280 tokens; the LoRA
    rank left empty is the CLI's default 16."""
    client = TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                   chat_service=object()))
    assert _setup(client) == ("sequence 8,192 tokens · global batch 512 sequences (4,194,304 tokens) · full training · "
                              "BF16 · Megatron")
    grpo = _setup(client, model="qwen2.5-7b", gpus="16", mode="grpo-lora", response_len="2k", framework="fsdp")
    assert grpo == ("sequence 2,560 tokens · global batch 1,638 sequences (4,193,280 tokens) · GRPO + LoRA (rank 16) · BF16 · "
                    "FSDP2 / torchtitan")
    nothing = _setup(client, gpus="1", batch="8", batch_unit="sequences")  # 70B on one H100: nothing fits
    assert nothing == "sequence 8,192 tokens · global batch 8 sequences (65,536 tokens) · full training · BF16 · Megatron"
