"""Default prices per GPU-hour, USD, for time-to-train cost estimates.

Approximate public on-demand list prices of 8-GPU cloud instances, divided by 8, as listed
in mid-2025 (Lambda Cloud and AWS EC2 price pages; AMD and GB200 from neocloud list prices).
Prices move quickly and negotiated/reserved rates are often 30-60 % lower: pass
`--price-per-gpu-hour` (or `price_per_gpu_hour=`) with your own rate. Unknown GPUs fall back
to DEFAULT_PRICE_PER_GPU_HOUR and the report says so.
"""

from __future__ import annotations

PRICE_PER_GPU_HOUR: dict[str, tuple[float, str]] = {
    "a100-40gb": (1.29, "Lambda Cloud on-demand 8x A100 40GB SXM, 2025"),
    "a100-80gb": (1.79, "Lambda Cloud on-demand 8x A100 80GB SXM, 2025"),
    "h100-sxm": (2.99, "Lambda Cloud on-demand 8x H100 SXM, 2025"),
    "h100-pcie": (2.49, "Lambda Cloud on-demand 1x H100 PCIe, 2025"),
    "h800": (2.99, "assumed equal to H100 SXM"),
    "h200": (3.79, "approximate 2025 neocloud on-demand 8x H200"),
    "b200": (4.99, "Lambda Cloud on-demand 8x B200, 2025"),
    "b300": (5.99, "approximate 2025 neocloud list price, B300 HGX"),
    "gb200": (6.00, "approximate 2025 neocloud list price, GB200 NVL72"),
    "gb300": (7.00, "approximate 2025 neocloud list price, GB300 NVL72"),
    "mi300x": (2.50, "approximate 2025 neocloud on-demand 8x MI300X"),
    "mi325x": (2.90, "approximate 2025 neocloud on-demand 8x MI325X"),
    "mi250x": (1.50, "approximate; mostly HPC allocations"),
    "l40s": (1.00, "approximate 2025 on-demand L40S"),
    "a10g": (1.01, "AWS EC2 g5.xlarge on-demand, us-east-1, 2025"),
    "rtx-4090": (0.50, "approximate 2025 community-cloud price"),
}
DEFAULT_PRICE_PER_GPU_HOUR = 3.00
# Plausibility limits for what a user types, so a slip ("1e30 tokens", "$2500/h" for a whole node typed per GPU)
# gets an error instead of a cost with 30 digits. Llama 3's 15.6T tokens (Llama 3 Herd, 2024) is the largest
# published pre-training budget we know of; 1e15 leaves 60x room. The dearest list price above is $7/GPU-hour;
# 1,000 leaves two orders of magnitude for any currency-of-account or on-prem amortisation.
MAX_TRAIN_TOKENS = 1e15
MAX_PRICE_PER_GPU_HOUR = 1000.0
DEFAULT_PRICE_SOURCE = "no listed price for this GPU; generic default, set your own"
