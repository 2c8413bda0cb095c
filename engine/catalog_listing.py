"""What a catalog name may be, said in the message itself and the same on every surface.

A refusal of an empty or unknown model, GPU or network name reaches a CLI user, a REST client and a chat user
alike; pointing all of them at a CLI command (`shardwise gpus`) leaves two of them with nowhere to look. So the
message names a few catalog ids and every place that lists all of them: the CLI command, the REST endpoint and
the page's list. The examples are well-known entries of each catalog (tests check they are catalog ids).
"""

from __future__ import annotations

EXAMPLES = {"model": ("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-14b"),
            "gpu": ("h100-sxm", "a100-80gb", "b200"),
            "network": ("ib-ndr", "roce-400g", "eth-100g")}
LISTED_AT = {"model": ("`shardwise models`", "GET /api/models", "the page's Model list"),
             "gpu": ("`shardwise gpus`", "GET /api/gpus", "the page's GPU list"),
             "network": ("`shardwise networks`", "GET /api/networks", "the page's Network list")}
KIND_NAME = {"model": "model", "gpu": "GPU", "network": "network"}


def examples(kind: str) -> str:
    """"'h100-sxm', 'a100-80gb' or 'b200'"."""
    quoted = [f"'{name}'" for name in EXAMPLES[kind]]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def where_listed(kind: str, count: int) -> str:
    """"all 16 GPU ids: `shardwise gpus`, GET /api/gpus or the page's GPU list"."""
    cli, rest, page = LISTED_AT[kind]
    return f"all {count} {KIND_NAME[kind]} ids: {cli}, {rest} or {page}"


def catalog_hint(kind: str, count: int) -> str:
    """"a GPU id such as 'h100-sxm', 'a100-80gb' or 'b200' (all 16 GPU ids: …)"."""
    article = "an" if KIND_NAME[kind][0] in "aeiou" else "a"
    return f"{article} {KIND_NAME[kind]} id such as {examples(kind)} ({where_listed(kind, count)})"
