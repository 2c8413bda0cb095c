"""A Hugging Face `config.json` (path, JSON text or dict) -> ModelSpec.

One reader per `model_type`, spelled as transformers spells the fields. Anything we cannot
interpret raises ShardwiseInputError naming the field, the model_type and what is allowed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from .errors import ShardwiseInputError
from .model_spec import ModelSpec

# Encoder-decoder and encoder-only families: shardwise plans decoder-only transformers.
NOT_DECODER_ONLY = {"t5", "mt5", "umt5", "bart", "mbart", "marian", "pegasus", "whisper", "bert", "roberta",
                    "deberta", "deberta-v2", "electra", "longt5", "switch_transformers", "flan-t5", "encoder-decoder"}


class _Config:
    """Typed access to one config dict, with errors that name the field and the model_type."""

    def __init__(self, raw: dict[str, Any], model_type: str):
        self.raw, self.model_type = raw, model_type

    def has(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def int(self, key: str, default: int | None = None, *alt: str) -> int:
        for k in (key, *alt):
            if self.raw.get(k) is not None:
                return self._positive_int(k, self.raw[k])
        if default is None:
            raise ShardwiseInputError(f"config.json (model_type {self.model_type!r}) is missing required field {key!r}")
        return default

    def opt_int(self, key: str) -> int | None:
        return self._positive_int(key, self.raw[key]) if self.raw.get(key) is not None else None

    def bool(self, key: str, default: bool) -> bool:
        value = self.raw.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ShardwiseInputError(
                f"config.json field {key!r} (model_type {self.model_type!r}) must be true or false, got {value!r}")
        return value

    def str(self, key: str, default: str) -> str:
        value = self.raw.get(key, default)
        return value if isinstance(value, str) else default

    def _positive_int(self, key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ShardwiseInputError(
                f"config.json field {key!r} (model_type {self.model_type!r}) must be a positive integer, got {value!r}")
        if value <= 0:
            raise ShardwiseInputError(
                f"config.json field {key!r} (model_type {self.model_type!r}) must be positive, got {value!r}")
        return int(value)


def _common(c: _Config, tied_default: bool) -> dict[str, Any]:
    """Fields every Llama-style config spells the same way."""
    heads = c.int("num_attention_heads")
    return dict(
        num_layers=c.int("num_hidden_layers"),
        hidden_size=c.int("hidden_size"),
        num_attention_heads=heads,
        num_kv_heads=c.int("num_key_value_heads", heads),
        head_dim=c.opt_int("head_dim"),
        ffn_hidden_size=c.int("intermediate_size"),
        vocab_size=c.int("vocab_size"),
        tied_embeddings=c.bool("tie_word_embeddings", tied_default),
        activation=c.str("hidden_act", "silu"),
        max_position_embeddings=c.opt_int("max_position_embeddings"),
    )


def _biases(c: _Config) -> dict[str, Any]:
    """`attention_bias` puts a bias on q, k, v and o (Llama, Qwen3, OLMo 2, Nemotron); `mlp_bias` on the MLP."""
    attention_bias = c.bool("attention_bias", False)
    return dict(qkv_bias=attention_bias, attention_out_bias=attention_bias, mlp_bias=c.bool("mlp_bias", False))


def _all_layers_window(c: _Config) -> dict[str, Any]:
    window = c.opt_int("sliding_window")
    return dict(sliding_window=window, sliding_window_layer_fraction=1.0 if window else 0.0)


def _llama(c: _Config) -> dict[str, Any]:
    return {**_common(c, False), **_biases(c)}


def _mistral(c: _Config) -> dict[str, Any]:
    return {**_common(c, False), **_all_layers_window(c)}


def _mixtral(c: _Config) -> dict[str, Any]:
    moe = dict(num_experts=c.int("num_local_experts"), top_k=c.int("num_experts_per_tok"),
               expert_ffn_hidden_size=c.int("intermediate_size"))
    return {**_mistral(c), "moe": moe}


def _qwen_window(c: _Config, layers: int) -> dict[str, Any]:
    # Qwen2/3: layers with index >= max_window_layers use the window, only if use_sliding_window.
    if not c.bool("use_sliding_window", False) or not c.has("sliding_window"):
        return {}
    windowed = layers - min(layers, c.int("max_window_layers", layers))
    return dict(sliding_window=c.int("sliding_window"), sliding_window_layer_fraction=windowed / layers)


def _qwen_moe(c: _Config, layers: int) -> dict[str, Any]:
    dense_layers = sorted(c.raw.get("mlp_only_layers") or [])
    if dense_layers != list(range(len(dense_layers))):
        raise ShardwiseInputError(
            f"config.json field 'mlp_only_layers' (model_type {c.model_type!r}) = {dense_layers}: only a leading "
            "run of dense layers (0, 1, ..., k-1) can be modelled")
    shared_width = c.opt_int("shared_expert_intermediate_size")
    return dict(num_experts=c.int("num_experts"), top_k=c.int("num_experts_per_tok"),
                expert_ffn_hidden_size=c.int("moe_intermediate_size"),
                num_shared_experts=1 if shared_width else 0, shared_expert_ffn_hidden_size=shared_width,
                first_k_dense_layers=len(dense_layers), layer_frequency=c.int("decoder_sparse_step", 1))


def _qwen2(c: _Config) -> dict[str, Any]:
    spec = {**_common(c, False), "qkv_bias": True}  # Qwen2 always has q/k/v biases, never an o bias
    return {**spec, **_qwen_window(c, spec["num_layers"])}


def _qwen2_moe(c: _Config) -> dict[str, Any]:
    spec = _qwen2(c)
    return {**spec, "moe": _qwen_moe(c, spec["num_layers"])}


def _qwen3(c: _Config) -> dict[str, Any]:
    spec = {**_common(c, False), **_biases(c), "qk_norm": True}
    return {**spec, **_qwen_window(c, spec["num_layers"])}


def _qwen3_moe(c: _Config) -> dict[str, Any]:
    spec = _qwen3(c)
    return {**spec, "moe": _qwen_moe(c, spec["num_layers"])}


def _deepseek(c: _Config) -> dict[str, Any]:
    spec = {**_common(c, False)}
    nope, rope = c.int("qk_nope_head_dim"), c.int("qk_rope_head_dim")
    spec["head_dim"] = nope + rope
    spec["mla"] = dict(q_lora_rank=c.opt_int("q_lora_rank"), kv_lora_rank=c.int("kv_lora_rank"),
                       qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=c.int("v_head_dim"))
    if c.has("n_routed_experts"):
        spec["moe"] = dict(num_experts=c.int("n_routed_experts"), top_k=c.int("num_experts_per_tok"),
                           expert_ffn_hidden_size=c.int("moe_intermediate_size"),
                           num_shared_experts=c.raw.get("n_shared_experts") or 0,
                           first_k_dense_layers=c.raw.get("first_k_dense_replace") or 0,
                           layer_frequency=c.int("moe_layer_freq", 1),
                           # group-limited routing (DeepSeek-V2 sec. 2.2.2, V3 sec. 2.1.2): null or absent = no limit
                           n_group=c.raw.get("n_group") or 1, topk_group=c.raw.get("topk_group") or 1)
    return spec


def _gemma(c: _Config) -> dict[str, Any]:
    spec = {**_common(c, True), **_biases(c)}
    spec["activation"] = c.str("hidden_activation", spec["activation"] if c.has("hidden_act") else "gelu_pytorch_tanh")
    return spec


def _gemma2(c: _Config) -> dict[str, Any]:
    # Pre- and post-norms around attention and MLP: 4 RMSNorms per layer; every other layer is local.
    window = c.opt_int("sliding_window")
    return {**_gemma(c), "norms_per_layer": 4, "sliding_window": window,
            "sliding_window_layer_fraction": 0.5 if window else 0.0}


# Gemma3TextConfig defaults (transformers): the multimodal checkpoints' text_config lists only fields that differ.
GEMMA3_TEXT_DEFAULTS = dict(vocab_size=262_208, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                            num_attention_heads=8, num_key_value_heads=4, head_dim=256, sliding_window=4096,
                            max_position_embeddings=131_072, hidden_activation="gelu_pytorch_tanh")


def _gemma3(c: _Config) -> dict[str, Any]:
    c = _Config({**GEMMA3_TEXT_DEFAULTS, **{k: v for k, v in c.raw.items() if v is not None}}, c.model_type)
    spec = {**_gemma(c), "norms_per_layer": 4, "qk_norm": True, "sliding_window": c.opt_int("sliding_window")}
    layers = spec["num_layers"]
    if isinstance(c.raw.get("layer_types"), list):
        if len(c.raw["layer_types"]) != layers:
            raise ShardwiseInputError(
                f"config.json field 'layer_types' (model_type {c.model_type!r}) has {len(c.raw['layer_types'])} "
                f"entries; it needs one per layer ({layers})")
        local = sum(1 for t in c.raw["layer_types"] if t == "sliding_attention")
    else:  # every `sliding_window_pattern`-th layer is global
        local = layers - layers // c.int("sliding_window_pattern", 6)
    spec["sliding_window_layer_fraction"] = local / layers if spec["sliding_window"] else 0.0
    return spec


def _phi3(c: _Config) -> dict[str, Any]:
    return {**_common(c, False), **_all_layers_window(c)}  # fused qkv_proj / gate_up_proj: same counts


def _phi(c: _Config) -> dict[str, Any]:
    # Phi-1/2: parallel block with one LayerNorm, biases everywhere, GELU MLP (lm_head bias not counted).
    return {**_common(c, False), "gated_mlp": False, "activation": c.str("hidden_act", "gelu_new"),
            "norm": "layernorm", "norms_per_layer": 1, "parallel_block": True,
            "qkv_bias": True, "attention_out_bias": True, "mlp_bias": True}


def _olmo2(c: _Config) -> dict[str, Any]:
    return {**_common(c, False), **_biases(c), "qk_norm": True, "qk_norm_full_width": True}


def _nemotron(c: _Config) -> dict[str, Any]:
    spec = {**_common(c, False), **_biases(c), "gated_mlp": False, "norm": "layernorm"}
    spec["activation"] = c.str("hidden_act", "relu2")
    return spec


def _falcon(c: _Config) -> dict[str, Any]:
    hidden = c.int("hidden_size", None, "n_embed")
    heads = c.int("num_attention_heads", None, "n_head")
    new_arch = c.bool("new_decoder_architecture", False)
    if new_arch:
        kv, norms = c.int("num_kv_heads", heads, "n_head_kv"), c.int("num_ln_in_parallel_attn", 2)
    else:
        kv = 1 if c.bool("multi_query", True) else heads
        norms = 1 if c.bool("parallel_attn", True) else 2
    bias = c.bool("bias", False)
    return dict(num_layers=c.int("num_hidden_layers", None, "n_layer"), hidden_size=hidden, num_attention_heads=heads,
                num_kv_heads=kv, ffn_hidden_size=c.int("ffn_hidden_size", 4 * hidden), gated_mlp=False,
                activation=c.str("activation", "gelu"), vocab_size=c.int("vocab_size"),
                tied_embeddings=c.bool("tie_word_embeddings", True), norm="layernorm", norms_per_layer=norms,
                parallel_block=new_arch or c.bool("parallel_attn", True),
                qkv_bias=bias, attention_out_bias=bias, mlp_bias=bias,
                max_position_embeddings=c.opt_int("max_position_embeddings"))


def _gpt2(c: _Config) -> dict[str, Any]:
    hidden = c.int("n_embd")
    positions = c.int("n_positions", 1024)
    return dict(num_layers=c.int("n_layer"), hidden_size=hidden, num_attention_heads=c.int("n_head"),
                ffn_hidden_size=c.int("n_inner", 4 * hidden), gated_mlp=False,
                activation=c.str("activation_function", "gelu_new"), vocab_size=c.int("vocab_size"),
                tied_embeddings=c.bool("tie_word_embeddings", True), norm="layernorm",
                qkv_bias=True, attention_out_bias=True, mlp_bias=True,
                learned_position_embeddings=positions, max_position_embeddings=positions)


def _gpt_neox(c: _Config) -> dict[str, Any]:
    bias = c.bool("attention_bias", True)
    return {**_common(c, False), "gated_mlp": False, "activation": c.str("hidden_act", "gelu"), "norm": "layernorm",
            "parallel_block": c.bool("use_parallel_residual", True), "qkv_bias": bias, "attention_out_bias": bias,
            "mlp_bias": True}


def _mpt(c: _Config) -> dict[str, Any]:
    hidden = c.int("d_model")
    no_bias = c.bool("no_bias", True)
    alibi = (c.raw.get("attn_config") or {}).get("alibi", False)  # without ALiBi, MPT learns positions
    return dict(num_layers=c.int("n_layers"), hidden_size=hidden, num_attention_heads=c.int("n_heads"),
                ffn_hidden_size=c.int("expansion_ratio", 4) * hidden, gated_mlp=False, activation="gelu",
                vocab_size=c.int("vocab_size"), tied_embeddings=True, norm="layernorm", norm_bias=not no_bias,
                qkv_bias=not no_bias, attention_out_bias=not no_bias, mlp_bias=not no_bias,
                learned_position_embeddings=0 if alibi else c.int("max_seq_len", 2048),
                max_position_embeddings=c.opt_int("max_seq_len"))


READERS: dict[str, Callable[[_Config], dict[str, Any]]] = {
    "llama": _llama, "mistral": _mistral, "mixtral": _mixtral,
    "qwen2": _qwen2, "qwen2_moe": _qwen2_moe, "qwen3": _qwen3, "qwen3_moe": _qwen3_moe,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "kimi_k2": _deepseek,
    "gemma": _gemma, "gemma2": _gemma2, "gemma3": _gemma3, "gemma3_text": _gemma3,
    "phi3": _phi3, "phi": _phi, "olmo2": _olmo2, "nemotron": _nemotron, "falcon": _falcon,
    "gpt2": _gpt2, "gpt_neox": _gpt_neox, "mpt": _mpt,
}


def _load(source: str | Path | dict) -> tuple[dict, str | None]:
    """The parsed config and a default name (the folder holding config.json)."""
    if isinstance(source, dict):
        return source, None
    if isinstance(source, str) and source.lstrip().startswith(("{", "[")):
        return _parse(source, "config JSON text"), None
    if not isinstance(source, (str, Path)):
        raise ShardwiseInputError(f"expected a config.json path, JSON text or dict, got {type(source).__name__}")
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise ShardwiseInputError(f"config file {str(path)!r} does not exist")
    name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ShardwiseInputError(f"cannot read config file {str(path)!r}: {exc}") from None
    return _parse(text, f"config file {str(path)!r}"), name


def _parse(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ShardwiseInputError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def _unwrap(raw: dict) -> tuple[dict, str]:
    """Multimodal wrappers (Gemma 3, LLaVA-style) keep the language model under text_config."""
    model_type = raw.get("model_type")
    text = raw.get("text_config")
    if isinstance(text, dict) and (model_type not in READERS or model_type == "gemma3"):
        inner_type = text.get("model_type") or {"gemma3": "gemma3_text"}.get(model_type)
        if inner_type in READERS:
            return text, inner_type
    return raw, model_type


def model_from_hf_config(source: str | Path | dict, name: str | None = None) -> ModelSpec:
    """A Hugging Face config.json (a path, a folder holding one, JSON text, or a dict) as a ModelSpec."""
    raw, default_name = _load(source)
    if not isinstance(raw, dict):
        raise ShardwiseInputError(f"config.json must be a JSON object ({{...}}), got a JSON {type(raw).__name__}")
    if raw.get("is_encoder_decoder") or raw.get("model_type") in NOT_DECODER_ONLY:
        raise ShardwiseInputError(
            f"model_type {raw.get('model_type')!r} is not a decoder-only transformer; shardwise plans "
            "decoder-only language models only")
    raw, model_type = _unwrap(raw)
    if not model_type and _is_shardwise_record(raw):
        return _from_shardwise_record(raw)
    if not model_type:
        raise ShardwiseInputError(f"config.json has no 'model_type'; supported: {', '.join(sorted(READERS))}")
    if model_type not in READERS:
        raise ShardwiseInputError(f"unsupported model_type {model_type!r}; supported: {', '.join(sorted(READERS))}")
    fields = READERS[model_type](_Config(raw, model_type))
    label = name or raw.get("_name_or_path") or default_name or f"hf-{model_type}"
    try:
        return ModelSpec(name=str(label), source=f"Hugging Face config.json (model_type {model_type})", **fields)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ShardwiseInputError(f"config.json (model_type {model_type!r}) is inconsistent: {problems}") from None


# What `shardwise models ID --json` (and GET /api/models) adds to a ModelSpec: derived or catalog-only fields.
SHARDWISE_RECORD_EXTRAS = ("id", "params", "active_params", "aliases")


def _is_shardwise_record(raw: dict) -> bool:
    """A model as shardwise prints it (ModelSpec's own names: num_layers, not Hugging Face's num_hidden_layers)."""
    return {"name", "num_layers", "hidden_size", "num_attention_heads"} <= raw.keys()


def _from_shardwise_record(raw: dict) -> ModelSpec:
    """`shardwise models ID --json`, edited or not, read back: dumping a catalog model and changing a field is the
    way to plan a variant (it was refused: "config.json has no 'model_type'"). Its params are recomputed."""
    fields = {k: v for k, v in raw.items() if k not in SHARDWISE_RECORD_EXTRAS}
    try:
        return ModelSpec.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'model'}: {e['msg']}" for e in exc.errors())
        raise ShardwiseInputError(f"the model record (shardwise models --json) is invalid: {problems}") from None
