"""Bounds on what one user measurement may change (shardwise calibrate).

A profile fitted on a user's own run scales two groups of constants: the compute side (GEMM,
attention and HBM efficiency for that GPU, precision and framework) and the achievable
bandwidth of the scale-out network. One noisy run (a straggler, a warm-up step, the wrong
--gpus) must not produce nonsense, so both scales are clipped to these ranges and the CLI
says when a fit hit a bound.
"""

from __future__ import annotations

# Compute-efficiency scale (multiplies GEMM, FP8 GEMM, attention and HBM efficiency; divides the
# fixed per-kernel cost). Upper bound 1.25: the fitted Hopper BF16 GEMM efficiency is 0.64, and
# ×1.25 = 0.80 is what cuBLAS microbenchmarks reach on a large GEMM (compute.py cites ~0.70-0.75
# on H100 SXM, 0.80-0.85 on A100): a training step cannot beat its own microbenchmarks.
# Lower bound 0.5: the worst calibration source (Megatron-Bridge releases of one configuration)
# spreads up to 40 % between software versions (docs/performance.md), i.e. a factor ~0.6; 0.5
# leaves room for a slower cluster but not for a run that was, say, 5× off because it was
# measured during warm-up.
COMPUTE_SCALE_BOUNDS: tuple[float, float] = (0.5, 1.25)

# Network scale (multiplies the achievable-bandwidth fraction of the cluster's scale-out link).
# Upper bound 1.5: bounded in practice by MAX_LINK_FRACTION below (InfiniBand is fitted at 0.98
# of datasheet already; RoCE/Ethernet/EFA sit at 0.46-0.9 and a well-tuned fabric can do better).
# Lower bound 0.25: NCCL over a mis-configured fabric (TCP fallback instead of RDMA, wrong
# NIC-GPU affinity) measures a quarter of the RDMA bandwidth or worse in nccl-tests.
COMM_SCALE_BOUNDS: tuple[float, float] = (0.25, 1.5)

# No link delivers more than its datasheet bandwidth, whatever the scale.
MAX_LINK_FRACTION = 1.0
# No kernel class runs above this share of its peak after scaling (the attention model caps at
# the same value, performance.py).
MAX_EFFICIENCY = 0.95

# A measured run cannot do more model FLOPs per second than the GPU's dense peak of its precision
# (MFU in shardwise's definition, README: model FLOPs / dense peak; HFU >= MFU, and HFU <= 1 is
# physics). A measurement above it is a mistyped figure or unit (tokens/s of the whole job given as
# per GPU, samples for tokens, a step time in ms given as s), not a cluster: calibrate refuses it
# instead of fitting a scale at its bound and saving that profile.
MAX_MEASURED_MFU = 1.0

# Ridge weight of the fit: the solution minimises Σ (log predicted/measured)² + RIDGE·Σ (log scale)².
# With one run and two scales the problem is under-determined; a small ridge picks the
# minimum-norm split, which gives each scale the share of the error its term explains (a run
# whose exposed communication is 5 % of the step moves the network scale very little).
FIT_RIDGE = 1e-3
# Relative step of the finite differences, and Gauss-Newton iterations (converges in 3-4 on
# the calibration runs; the model is smooth in both scales).
FIT_STEP = 1e-3
FIT_ITERATIONS = 8
