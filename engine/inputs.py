"""Turn what a user types (names, paths, counts) into specs. Bad input raises
ShardwiseInputError with what was wrong and what is allowed."""

from __future__ import annotations

import math
from pathlib import Path

from .cluster import Cluster
from .errors import SettingsInputError, ShardwiseInputError
from .hardware_catalog import get_gpu, get_network
from .hf_config import model_from_hf_config
from .model_catalog import get_model
from .model_spec import ModelSpec
from .synthetic import model_from_param_count


def resolve_model(model: str | None = None, params: float | str | None = None) -> ModelSpec:
    """A catalog name, a path to a Hugging Face config.json, JSON text, or a bare parameter count."""
    if model and params is not None:
        raise SettingsInputError("give either a model ({model}) or a parameter count ({params}), not both",
                                 "model", "params")
    if params is not None:
        return model_from_param_count(parse_count(params, "params"))
    if not model:
        raise SettingsInputError("no model given: pass {model} NAME|config.json or {params} 70e9", "model", "params")
    text = model.strip()
    if text.startswith("{"):
        return model_from_hf_config(text)
    if text.endswith(".json") or "/" in text and Path(text).exists():
        path = Path(text)
        if not path.exists():
            raise ShardwiseInputError(f"config file {text!r} does not exist")
        return model_from_hf_config(path)
    return get_model(text)


def parse_count(value: float | str, what: str) -> float:
    """'70e9', '70B', '7.5b', '405000000000' -> float; rejects zero, negatives and nonsense.

    `what` is the setting the value was given for (params, train_tokens, …): the refusal names it
    as each surface does (SettingsInputError)."""
    raw = value
    if isinstance(value, str):
        s = value.strip().lower().replace("_", "").replace(",", "")
        scale = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}.get(s[-1:], 1.0)
        if s[-1:] in "kmbt":
            s = s[:-1]
        try:
            value = float(s) * scale
        except ValueError:
            raise SettingsInputError("{" + what + "}" + f" expects a number such as 70e9 or 70B, got {raw!r}",
                                     what) from None
    if not math.isfinite(value) or value <= 0:
        raise SettingsInputError("{" + what + "}" + f" must be a positive number, got {raw!r}", what)
    return float(value)


# "4M tokens" in a training recipe means 4·2^20 (Llama 3's 4M-token batch is 512 × 8192);
# the suffixes K/M read as binary units for token counts, as context lengths are quoted.
TOKEN_SUFFIX_SCALE = {"k": 2**10, "m": 2**20}


def parse_token_count(value: float | str, what: str = "global_batch_tokens") -> float:
    """'4M' -> 4·2^20, '512k' -> 512·2^10, '4e6' / 4000000 -> as written."""
    text = str(value).strip().lower().replace("_", "").replace(",", "")
    if text.endswith("tokens"):
        text = text[: -len("tokens")].strip()
    try:
        if text[-1:] in TOKEN_SUFFIX_SCALE:
            return parse_count(text[:-1], what) * TOKEN_SUFFIX_SCALE[text[-1]]
        return parse_count(text, what)
    except SettingsInputError:
        # parse_count's refusal gave a parameter count's examples (70e9, 70B) and the lower-cased text.
        raise SettingsInputError("{" + what + "}" + f" expects a positive number of tokens such as 4M (4·2^20), "
                                 f"512k or 4194304, got {value!r}", what) from None


def parse_seq_len(value: int | str, what: str = "seq_len") -> int:
    """'8192', '8k', '32K', '0.5k', '1e4', 8192 -> tokens (k = 1024, as context lengths are quoted). A length that
    is not a whole number of tokens ('3.7k' = 3,788.8), not finite or not positive is refused, never truncated.
    One reading for every surface: the CLI's --seq-len/--prompt-len/--response-len, REST bodies, the page's form."""
    text = str(value).strip().lower().replace(",", "").replace("_", "")
    try:
        tokens = float(text[:-1]) * TOKEN_SUFFIX_SCALE["k"] if text.endswith("k") else float(text)
    except ValueError:
        tokens = math.nan
    if isinstance(value, bool) or not math.isfinite(tokens) or tokens <= 0 or tokens != int(tokens):
        raise SettingsInputError("{" + what + "}" + " expects a sequence length such as 8192 or 8k (a positive whole "
                                 f"number of tokens), got {value!r}", what)
    return int(tokens)


def global_batch_from_tokens(tokens: float | str, seq_len: int) -> int:
    """Sequences per step for a token budget per step, to the nearest whole sequence. A budget
    that rounds to no sequence at all is an error, not silently one sequence."""
    count = parse_token_count(tokens)
    sequences = round(count / seq_len)
    if sequences < 1:
        written = f"{tokens}" + ("" if f"{tokens}" in (f"{count:.0f}", f"{count:,.0f}") else f" = {count:,.0f}")
        raise ShardwiseInputError(f"a global batch of {written} tokens is less than one sequence of {seq_len:,} "
                                  f"tokens; give at least {seq_len:,} tokens per step")
    return sequences


def build_cluster(gpu: str, num_gpus: int, gpus_per_node: int | None = None,
                  network: str | None = None) -> Cluster:
    spec = get_gpu(gpu)
    if num_gpus is None or num_gpus <= 0:
        raise SettingsInputError(f"{{gpus}} must be a positive whole number, got {num_gpus!r}", "gpus")
    if num_gpus > 1_048_576:
        raise SettingsInputError(f"{{gpus}} {num_gpus} is beyond any cluster shardwise models (at most 1,048,576)",
                                 "gpus")
    per_node = gpus_per_node or spec.gpus_per_node
    if per_node <= 0:
        raise SettingsInputError(f"{{gpus_per_node}} must be positive, got {per_node}", "gpus_per_node")
    if gpus_per_node is not None and gpus_per_node > num_gpus:
        raise SettingsInputError(
            f"{{gpus_per_node}} {gpus_per_node} is larger than the cluster ({{gpus}} {num_gpus}): give at most "
            f"{num_gpus} GPUs per node, or more GPUs", "gpus_per_node", "gpus")
    per_node = min(per_node, num_gpus)  # the GPU's usual node size on a cluster smaller than one node
    net = get_network(network or spec.default_network)
    return Cluster(gpu=spec, num_gpus=num_gpus, gpus_per_node=per_node, network=net)
