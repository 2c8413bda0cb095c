"""The GPU and network a profile names must be ones shardwise knows, as their catalog ids.

A profile applies only where `cluster.gpu.id == profile.gpu` (and the same for the network), so a
misspelt or aliased name in a hand-edited profile would be accepted and then never apply. Here an
alias becomes its id ("h100" -> "h100-sxm") and an unknown name is refused with the catalog's
"did you mean". "custom" is what `calibrate` writes for a user-defined GPU or network (inline JSON),
so it stays valid. Names that look like inline JSON or a .json path are refused, never read: a profile
can arrive in a REST body, and the server must not open files a client names.
"""

from __future__ import annotations

from ..catalog_listing import catalog_hint
from ..hardware_catalog import get_gpu, get_network, list_gpus, list_networks

CUSTOM_ID = "custom"


def _looks_like_a_definition(name: str) -> bool:
    text = name.strip()
    return text.startswith("{") or text.lower().endswith(".json")


def catalog_gpu_id(name: str) -> str:
    if name == CUSTOM_ID:
        return name
    if _looks_like_a_definition(name):
        raise ValueError(f"gpu must be {catalog_hint('gpu', len(list_gpus()))}, not a definition")
    return get_gpu(name).id  # ShardwiseInputError is a ValueError: pydantic reports it on the field


def catalog_network_id(name: str | None) -> str | None:
    if name is None or name == CUSTOM_ID:
        return name
    if _looks_like_a_definition(name):
        raise ValueError(f"network must be {catalog_hint('network', len(list_networks()))}, not a definition")
    return get_network(name).id
