"""The performance model: seconds per optimizer step for every plan of a PlanGrid.

One idea per module: gemm_efficiency (roofline + kernel cost), compute (layer times),
topology (which link a group uses), collectives (alpha-beta), tp / cp / ep / pp / dp
(each parallelism's communication and overlap), optimizer, step (assembly).
"""

from .step import step_time, trainable_params_per_gpu

__all__ = ["step_time", "trainable_params_per_gpu"]
