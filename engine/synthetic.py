"""A bare parameter count -> a standard Llama-3-like shape, flagged approximate.

The rule, read off the Llama 3 family (Llama 3 paper, Table 3: 8B 32x4096, 70B 80x8192,
405B 126x16384; Llama 3.2 1B 16x2048):
- head_dim 128 (64 below width 1024), 8 KV heads (GQA), SwiGLU with ffn = 3.5 x hidden
  (8B: 14336 / 4096) rounded up to a multiple of 256, RMSNorm, no biases, RoPE;
- the Llama 3 vocabulary of 128,256 tokens (smaller for toy sizes, where it would be most
  of the model), embeddings tied below 5 B parameters as Llama 3.2 ties them;
- width / depth close to 128 (8B: 4096/32, 405B: 16384/126); the depth is then set so the
  exact count lands as close to the request as whole layers allow (within 2 %).
"""

from __future__ import annotations

import math

from .errors import ShardwiseInputError
from .model_spec import ModelSpec
from .params import total_params

MIN_PARAMS, MAX_PARAMS = 1e6, 1e14
WIDTH_PER_LAYER = 128  # Llama 3 8B: 4096 / 32; 405B: 16384 / 126
FFN_RATIO = 3.5  # Llama 3 8B and 70B: 14336 / 4096, 28672 / 8192
KV_HEADS = 8
TIE_BELOW = 5e9  # Llama 3.2 1B/3B tie their embeddings; 8B and larger do not
TOLERANCE = 0.02


def _vocab(n: float) -> int:
    """The Llama 3 tokenizer, or smaller ones where 128K embeddings would dominate a toy model."""
    if n >= 5e8:
        return 128_256  # Llama 3
    if n >= 5e7:
        return 32_000  # Llama 2
    return 8_192 if n >= 1e7 else 1_024


def _shape(n: float, hidden: int, layers: int) -> ModelSpec:
    head_dim = 128 if hidden >= 1024 else 64
    heads = hidden // head_dim
    ffn = math.ceil(FFN_RATIO * hidden / 256) * 256
    return ModelSpec(
        name=f"synthetic-{n / 1e9:g}b", num_layers=layers, hidden_size=hidden, num_attention_heads=heads,
        num_kv_heads=math.gcd(heads, KV_HEADS), head_dim=head_dim, ffn_hidden_size=ffn, vocab_size=_vocab(n),
        tied_embeddings=n < TIE_BELOW, approximate=True,
        source="synthesised from a parameter count (Llama-3-like shape, see engine/synthetic.py)",
    )


def model_from_param_count(n: float) -> ModelSpec:
    """The Llama-3-like model closest to `n` parameters with a width/depth ratio near 128."""
    if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n):
        raise ShardwiseInputError(f"parameter count must be a number such as 70e9, got {n!r}")
    if not MIN_PARAMS <= n <= MAX_PARAMS:
        raise ShardwiseInputError(
            f"parameter count {n:.3g} is outside what shardwise can synthesise ({MIN_PARAMS:.0e} to {MAX_PARAMS:.0e})")
    best: tuple[float, float, ModelSpec] | None = None
    # Widths: multiples of 64 below 1024, then multiples of 8 heads of 128 (so 8 KV heads divide them).
    for hidden in [*range(64, 1024, 64), *range(1024, 131_072 + 1, 1024)]:
        one = _shape(n, hidden, 1)
        per_layer = total_params(_shape(n, hidden, 2)) - total_params(one)
        layers = round((n - (total_params(one) - per_layer)) / per_layer)
        if layers < 1:
            break  # wider only gets bigger
        if layers > 10_000:
            continue
        spec = _shape(n, hidden, layers)
        error = abs(total_params(spec) - n) / n
        aspect = abs(math.log(hidden / (layers * WIDTH_PER_LAYER)))
        key = (0.0 if error <= TOLERANCE else error, aspect)
        if best is None or key < best[:2]:
            best = (*key, spec)
    assert best is not None
    return best[2]
