"""`shardwise models`, `shardwise gpus`, `shardwise networks`: list the catalogs or show one entry."""

from __future__ import annotations

import argparse

from ..engine.errors import ShardwiseInputError
from ..engine.hardware import GPUSpec, NetworkSpec
from ..engine.hardware_catalog import get_gpu, get_network, list_gpus, list_networks
from ..engine.inputs import resolve_model
from ..engine.model_catalog import find_model, list_catalog
from ..engine.model_spec import ModelSpec
from ..engine.params import active_params, total_params
from ..present import model_record
from .common import print_json


def register(subparsers) -> None:
    for name, what, handler in [("models", "models (ids for --model)", run_models),
                                ("gpus", "GPUs (ids for --gpu)", run_gpus),
                                ("networks", "networks (ids for --network)", run_networks)]:
        p = subparsers.add_parser(name, help=f"list the bundled {what}", description=f"List the bundled {what}, or show one.")
        p.add_argument("name", nargs="?", help="show this one in full (id or alias)")
        p.add_argument("--json", action="store_true", help="print JSON (a list of objects with `id`)")
        p.set_defaults(handler=handler)


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _billions(n: int) -> str:
    # Chosen on the rounded value: 999.9 M printed "1,000M" (gemma-3-1b) instead of "1.00B".
    return f"{n / 1e9:,.2f}B" if round(n / 1e6) >= 1000 else f"{n / 1e6:,.0f}M"


# --- models ---------------------------------------------------------------------------------

def _kind(m: ModelSpec) -> str:
    parts = ["MoE %dx top-%d" % (m.moe.num_experts, m.moe.top_k)] if m.moe else ["dense"]
    if m.mla:
        parts.append("MLA")
    elif m.kv_heads == 1:
        parts.append("MQA")
    elif m.kv_heads < m.num_attention_heads:
        parts.append(f"GQA {m.kv_heads}kv")
    return ", ".join(parts)


def _value_text(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"  # 70,553,706,496 parameters read at a glance; --json keeps the bare number
    if isinstance(v, float):
        return f"{v:,g}"  # 989.0 -> 989, 3350.0 -> 3,350
    if isinstance(v, list):
        return ", ".join(map(str, v))
    return str(v)


def record_text(record: dict) -> str:
    """A model's record as `shardwise models ID` prints it: `--json`'s fields, for reading. norm_bias is left out
    under RMSNorm, which has no bias whatever the field says (ModelSpec.norm_bias: "RMSNorm never"); it read
    "norm rmsnorm ... norm_bias True" for every Llama."""
    skip = {"norm_bias"} if record.get("norm") == "rmsnorm" else set()
    return "\n".join(f"{k:<32}{_value_text(v)}" for k, v in record.items()
                     if v not in (None, [], {}) and k not in skip)


def run_models(args: argparse.Namespace) -> int:
    if args.name:
        try:
            entry = find_model(args.name)
            model, record = entry.spec, model_record(entry.spec, entry.id, entry.aliases)
        except ShardwiseInputError:
            matching = _matching_entries(args.name)
            if matching:  # `shardwise models llama`: the family, not "unknown model 'llama'"
                return _print_models(matching, args.json, f"models whose id or alias contains {args.name!r} "
                                                          "(`shardwise models ID` shows one in full):")
            model = resolve_model(args.name)  # a config.json path or JSON text; re-raises a clear error otherwise
            record = model_record(model)
        if args.json:
            print_json(record)
        else:
            print(record_text(record))
        return 0
    return _print_models(list_catalog(), args.json)


def _matching_entries(name: str) -> list:
    """Catalog entries whose id or an alias contains `name` (a bare word: a path or JSON text is a config)."""
    word = name.strip().lower()
    if not word or any(c in word for c in "/\\{") or word.endswith(".json"):
        return []
    return [e for e in list_catalog() if any(word in n.lower() for n in (e.id, *e.aliases))]


def _print_models(entries: list, as_json: bool, title: str | None = None) -> int:
    if as_json:
        print_json([model_record(e.spec, e.id, e.aliases) for e in entries])
        return 0
    rows = [[e.id, _billions(total_params(e.spec)), _billions(active_params(e.spec)), e.spec.num_layers,
             e.spec.hidden_size, e.spec.num_attention_heads, e.spec.vocab_size, _kind(e.spec)] for e in entries]
    print((title + "\n" if title else "") + table(["id", "params", "active", "layers", "hidden", "heads", "vocab", "kind"], rows))
    return 0


# --- GPUs and networks ------------------------------------------------------------------------

def gpu_record(gpu: GPUSpec) -> dict:
    return {**gpu.model_dump(mode="json"), "intra_node": gpu.intra_node.id,
            "intra_node_bandwidth_gbs": gpu.intra_node.bandwidth_gbs}


def run_gpus(args: argparse.Namespace) -> int:
    if args.name:
        gpu = get_gpu(args.name)
        if args.json:
            print_json(gpu_record(gpu))
        else:
            print("\n".join(f"{k:<28}{_value_text(v)}" for k, v in gpu_record(gpu).items()))
        return 0
    gpus = list_gpus()
    if args.json:
        print_json([gpu_record(g) for g in gpus])
        return 0
    rows = [[g.id, g.name, f"{g.memory_gib:g}", f"{g.bf16_tflops:g}", f"{g.fp8_tflops:g}" if g.fp8_tflops else "-",
             f"{g.hbm_bandwidth_gbs:g}", f"{g.intra_node.id} {g.intra_node.bandwidth_gbs:g}", g.gpus_per_node,
             g.default_network] for g in gpus]
    print(table(["id", "name", "GiB", "BF16 TF", "FP8 TF", "HBM GB/s", "intra-node GB/s", "per node", "network"], rows))
    print("\nTFLOP/s are dense peaks; link bandwidths are per GPU, one direction. `shardwise gpus ID` shows sources.")
    return 0


def run_networks(args: argparse.Namespace) -> int:
    if args.name:
        net: NetworkSpec = get_network(args.name)
        if args.json:
            print_json(net)
        else:
            print("\n".join(f"{k:<16}{_value_text(v)}" for k, v in net.model_dump().items()))
        return 0
    nets = list_networks()
    if args.json:
        print_json([n.model_dump(mode="json") for n in nets])
        return 0
    print(table(["id", "name", "GB/s per GPU", "latency us"],
                [[n.id, n.name, f"{n.bandwidth_gbs:g}", f"{n.latency_us:g}"] for n in nets]))
    return 0
