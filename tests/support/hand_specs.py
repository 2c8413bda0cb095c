"""Hardware and model written out by hand for the step-time tests, independent of the catalogs:
H100 SXM datasheet figures (989 dense BF16 TFLOP/s, 3.35 TB/s HBM3, NVLink 4 at 450 GB/s per
direction, one 400 Gb/s NDR NIC = 50 GB/s per GPU) and Llama-3-8B's published shape."""

from __future__ import annotations

from shardwise.engine.hardware import GPUSpec, NetworkSpec
from shardwise.engine.model_spec import ModelSpec

NVLINK = NetworkSpec(id="nvlink4", name="NVLink 4", bandwidth_gbs=450, latency_us=3.0)
IB = NetworkSpec(id="ib-ndr", name="IB NDR", bandwidth_gbs=50, latency_us=10.0)
H100 = GPUSpec(id="h100-sxm", name="H100", memory_gib=80, bf16_tflops=989, fp8_tflops=1979, hbm_bandwidth_gbs=3350,
               intra_node=NVLINK)
LLAMA3_8B = ModelSpec(name="llama3-8b", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                      ffn_hidden_size=14336, vocab_size=128256)
