"""The bundled GPU and network catalog (data/hardware.json), and user-defined hardware.

`get_gpu` / `get_network` accept a catalog id or alias ("H100", "h100-sxm5", "NVIDIA H100 80GB"),
a path to a JSON file, or inline JSON text with the GPUSpec / NetworkSpec fields. A GPU's
`intra_node` may be a network id ("nvlink4") or a full network object.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .catalog_listing import catalog_hint
from .errors import ShardwiseInputError, unknown_name_error
from .hardware import GPUSpec, NetworkSpec

DATA_FILE = Path(__file__).parent / "data" / "hardware.json"
VENDOR_WORDS = ("nvidia", "amd", "instinct", "geforce", "tesla")

Spec = TypeVar("Spec", bound=BaseModel)


def _key(name: str) -> str:
    """'NVIDIA H100-SXM5 80GB' -> 'h100sxm580gb': case, vendor words and separators do not matter."""
    words = [w for w in re.split(r"[\s_\-/]+", name.strip().lower()) if w and w not in VENDOR_WORDS]
    return "".join(words)


def _index(specs: list, kind: str) -> dict[str, Any]:
    index: dict[str, Any] = {}
    for spec in specs:
        for name in (spec.id, spec.name, *spec.aliases):
            other = index.setdefault(_key(name), spec)
            if other is not spec:
                raise AssertionError(f"{kind} name {name!r} is ambiguous: {other.id} and {spec.id}")
    return index


@lru_cache(maxsize=1)
def _catalog() -> tuple[dict[str, NetworkSpec], dict[str, GPUSpec], dict, dict]:
    raw = json.loads(DATA_FILE.read_text())
    networks = {n["id"]: NetworkSpec(**n) for n in raw["networks"]}
    gpus = {g["id"]: GPUSpec(**{**g, "intra_node": networks[g["intra_node"]]}) for g in raw["gpus"]}
    for gpu in gpus.values():
        assert gpu.default_network in networks, f"{gpu.id}: unknown default_network {gpu.default_network}"
    return networks, gpus, _index(list(networks.values()), "network"), _index(list(gpus.values()), "gpu")


def list_gpus() -> list[GPUSpec]:
    return list(_catalog()[1].values())


def list_networks() -> list[NetworkSpec]:
    return list(_catalog()[0].values())


def _user_defined(text: str, kind: str) -> dict | None:
    """Inline JSON text or a path to a .json file -> the dict, else None (it is a name)."""
    stripped = text.strip()
    if stripped.startswith("{"):
        source, body = f"inline {kind} JSON", stripped
    elif stripped.lower().endswith(".json"):
        path = Path(stripped)
        if not path.is_file():
            raise ShardwiseInputError(f"{kind} file {stripped!r} does not exist")
        source, body = f"{kind} file {stripped!r}", path.read_text(encoding="utf-8")
    else:
        return None
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ShardwiseInputError(f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise ShardwiseInputError(f"{source} must be a JSON object with the {kind} fields")
    return data


def _build(cls: type[Spec], data: dict, kind: str) -> Spec:
    try:
        return cls(**data)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc'])) or kind}: {e['msg']}" for e in exc.errors())
        fields = ", ".join(name for name, f in cls.model_fields.items() if f.is_required())
        raise ShardwiseInputError(f"custom {kind} is invalid: {bad} (required fields: {fields})") from None


def get_network(name: str) -> NetworkSpec:
    """A network by id or alias, or a user-defined one (JSON file or text with the NetworkSpec fields)."""
    if isinstance(name, NetworkSpec):
        return name
    if not isinstance(name, str) or not name.strip():
        raise ShardwiseInputError(f"empty network name: give {catalog_hint('network', len(_catalog()[0]))}")
    custom = _user_defined(name, "network")
    if custom is not None:
        return _build(NetworkSpec, {"id": "custom", "name": "custom network", **custom}, "network")
    spec = _catalog()[2].get(_key(name))
    if spec is None:
        raise unknown_name_error("network", name, list(_catalog()[0]))
    return spec


def get_gpu(name: str) -> GPUSpec:
    """A GPU by id or alias, or a user-defined one (JSON file or text with the GPUSpec fields)."""
    if isinstance(name, GPUSpec):
        return name
    if not isinstance(name, str) or not name.strip():
        raise ShardwiseInputError(f"empty GPU name: give {catalog_hint('gpu', len(_catalog()[1]))}")
    custom = _user_defined(name, "gpu")
    if custom is not None:
        custom = {"id": "custom", "name": "custom GPU", **custom}
        intra = custom.get("intra_node")
        # `shardwise gpus ID --json` prints the link's bandwidth beside its id; that record, edited, is the way
        # to define a GPU, so the field is read (a changed value is the link's bandwidth), not refused as extra.
        bandwidth = custom.pop("intra_node_bandwidth_gbs", None)
        if isinstance(intra, str):
            custom["intra_node"] = get_network(intra)
            if bandwidth is not None and bandwidth != custom["intra_node"].bandwidth_gbs:
                link = {**custom["intra_node"].model_dump(), "bandwidth_gbs": bandwidth}
                custom["intra_node"] = _build(NetworkSpec, link, "gpu's intra_node (intra_node_bandwidth_gbs)")
        elif intra is None:
            raise ShardwiseInputError(
                "custom gpu is invalid: intra_node is missing (a network id such as 'nvlink4' or an object with "
                "id, name, bandwidth_gbs, latency_us)")
        return _build(GPUSpec, custom, "gpu")
    spec = _catalog()[3].get(_key(name))
    if spec is None:
        raise unknown_name_error("gpu", name, list(_catalog()[1]))
    return spec
