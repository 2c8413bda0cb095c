"""Calibrated constants — placeholder values before the first fit.

Regenerate with `python benchmarks/fit_calibration.py --write`.
"""

GEMM_EFFICIENCY = {"ampere": 0.70, "hopper": 0.60, "blackwell": 0.55}
FP8_GEMM_EFFICIENCY = {"hopper": 0.45, "blackwell": 0.45}
ATTENTION_EFFICIENCY = {"ampere": 0.50, "hopper": 0.45, "blackwell": 0.45}
KERNEL_FIXED_S = 6e-6
NVLINK_BANDWIDTH_FRACTION = 0.75
INFINIBAND_BANDWIDTH_FRACTION = 0.80
EFA_BANDWIDTH_FRACTION = 0.40
DP_OVERLAP_FRACTION = 0.8
FSDP_OVERLAP_FRACTION = 0.8
TP_OVERLAP_FRACTION = 0.5
