"""Time of one GEMM on one GPU: the larger of its compute time at the achievable fraction of
peak and its memory time at the achievable HBM bandwidth (the roofline, Williams et al. 2009),
plus a fixed per-kernel cost. The fixed cost is what makes small GEMMs — after TP/CP sharding
and with small micro-batches — run far below peak: a GEMM of W FLOPs reaches an efficiency
of eff · W / (W + peak · eff · KERNEL_FIXED_S).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Roofline:
    peak_flops: float  # FLOP/s of the precision the GEMMs run in
    efficiency: float  # achievable fraction of peak for large GEMMs
    hbm_bytes_per_s: float  # achievable HBM bandwidth
    kernel_fixed_s: float
    input_bytes: float  # bytes per input element (2 BF16, 1 FP8)

    def gemm_time(self, m, n, k, groups=1) -> np.ndarray:
        """`groups` independent (m×k)·(k×n) products in one (grouped) kernel."""
        m, n, k = (np.asarray(x, dtype=np.float64) for x in (m, n, k))
        flops = 2.0 * m * n * k * groups
        moved = groups * ((m * k + k * n) * self.input_bytes + m * n * 2.0)  # inputs + BF16 output
        compute = flops / (self.peak_flops * self.efficiency)
        memory = moved / self.hbm_bytes_per_s
        return np.where(flops > 0, np.maximum(compute, memory) + self.kernel_fixed_s, 0.0)

    def efficiency_of(self, m, n, k) -> np.ndarray:
        """Achieved fraction of peak for one GEMM (for explanations and tests)."""
        t = self.gemm_time(m, n, k)
        return 2.0 * np.asarray(m, float) * n * k / t / self.peak_flops
