"""PerformanceAssumptions: the constants of compute.py and network.py gathered in one frozen
value, so the performance model reads them at call time and the calibration fit can try
other values (dataclasses.replace) without touching module globals.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..hardware import GPUSpec, NetworkSpec
from . import compute as c
from . import moe as m
from . import network as n


@dataclass(frozen=True)
class PerformanceAssumptions:
    gemm_efficiency: dict[str, float] = field(default_factory=lambda: dict(c.GEMM_EFFICIENCY))
    fp8_gemm_efficiency: dict[str, float] = field(default_factory=lambda: dict(c.FP8_GEMM_EFFICIENCY))
    attention_efficiency: dict[str, float] = field(default_factory=lambda: dict(c.ATTENTION_EFFICIENCY))
    fused_attention_speedup: float = c.FUSED_ATTENTION_SPEEDUP
    kernel_stack: dict[str, str] = field(default_factory=lambda: dict(c.KERNEL_STACK_BY_FRAMEWORK))
    pytorch_gemm_factor: float = c.PYTORCH_GEMM_FACTOR
    fp8_rowwise_factor: float = c.FP8_ROWWISE_GEMM_FACTOR
    kernel_fixed_s: float = c.KERNEL_FIXED_S
    small_kernel_fixed_s: float = c.SMALL_KERNEL_FIXED_S  # memory-bound kernels (assumption, not fitted)
    host_time_per_layer: dict[str, float] = field(default_factory=lambda: dict(c.HOST_TIME_PER_LAYER_S))
    pipeline_host_time_per_tp: dict[str, float] = field(
        default_factory=lambda: dict(c.PIPELINE_HOST_TIME_PER_LAYER_PER_TP_S))
    balance_output_layer: bool = c.PIPELINE_BALANCES_OUTPUT_LAYER
    hbm_efficiency: float = c.HBM_EFFICIENCY
    bandwidth_fraction: dict[str, float] = field(default_factory=lambda: dict(n.ACHIEVABLE_BANDWIDTH_FRACTION))
    dp_overlap: dict[str, float] = field(default_factory=lambda: dict(n.DP_OVERLAP_FRACTION))
    dp_overlap_zero1: dict[str, float] = field(default_factory=lambda: dict(n.DP_OVERLAP_FRACTION_ZERO1))
    zero1_gather_host_per_rank_tensor: dict[str, float] = field(
        default_factory=lambda: dict(n.ZERO1_GATHER_HOST_S_PER_RANK_TENSOR))
    zero0_ring_step_per_tensor: dict[str, float] = field(
        default_factory=lambda: dict(n.ZERO0_ALL_REDUCE_S_PER_RING_STEP_TENSOR))
    fsdp_overlap: float = n.FSDP_OVERLAP_FRACTION
    fsdp_ring_latency_exposed: dict[str, float] = field(
        default_factory=lambda: dict(n.FSDP_RING_LATENCY_EXPOSED_FRACTION))
    zero_grads_all_reduced: dict[str, bool] = field(default_factory=lambda: dict(n.ZERO_GRADIENTS_ALL_REDUCED))
    tp_overlap: dict[str, float] = field(default_factory=lambda: dict(n.TP_OVERLAP_FRACTION))
    cp_overlap: float = n.CP_OVERLAP_FRACTION
    ep_overlap: float = n.EP_OVERLAP_FRACTION
    pp_overlap_interleaved: float = n.PP_P2P_OVERLAP_FRACTION_INTERLEAVED
    pp_overlap_1f1b: float = n.PP_P2P_OVERLAP_FRACTION_1F1B
    moe_host_time_per_expert_fwd: float = m.MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S
    optimizer_phase_fixed: dict[str, float] = field(default_factory=lambda: dict(c.OPTIMIZER_PHASE_FIXED_S))

    def gemm_eff(self, gpu: GPUSpec, precision: str, framework: str = "megatron") -> float:
        gen = c.gpu_generation(gpu)
        if precision == "fp8" and gpu.fp8_tflops:
            eff = self.fp8_gemm_efficiency.get(gen, c.DEFAULT_FP8_GEMM_EFFICIENCY)
        else:
            eff = self.gemm_efficiency.get(gen, c.DEFAULT_GEMM_EFFICIENCY)
        return eff * (1.0 if self.kernel_stack.get(framework) == "te" else self.pytorch_gemm_factor)

    def attention_eff(self, gpu: GPUSpec, framework: str = "fsdp") -> float:
        gen = c.gpu_generation(gpu)
        eff = self.attention_efficiency.get(gen, c.DEFAULT_ATTENTION_EFFICIENCY)
        if self.kernel_stack.get(framework) == "te" and gen in c.FUSED_ATTENTION_GENERATIONS:
            eff *= self.fused_attention_speedup
        return min(eff, 0.95)

    def dp_overlap_for(self, framework: str) -> float:
        return self.dp_overlap.get(framework, 0.0)

    def dp_overlap_zero1_for(self, framework: str) -> float:
        """DP overlap under ZeRO-1/2: the framework's own if it differs, else its ZeRO-0 value."""
        return self.dp_overlap_zero1.get(framework, self.dp_overlap_for(framework))

    def zero1_gather_host_for(self, framework: str) -> float:
        return self.zero1_gather_host_per_rank_tensor.get(framework, 0.0)

    def zero0_ring_step_for(self, framework: str) -> float:
        return self.zero0_ring_step_per_tensor.get(framework, 0.0)

    def fsdp_ring_latency_exposed_for(self, framework: str) -> float:
        return self.fsdp_ring_latency_exposed.get(framework, 0.0)

    def link_fraction(self, network: NetworkSpec) -> float:
        return self.bandwidth_fraction.get(n.link_kind(network), self.bandwidth_fraction["other"])

    def host_time_for(self, framework: str) -> float:
        return self.host_time_per_layer.get(framework, max(self.host_time_per_layer.values()))

    def pipeline_host_time_for(self, framework: str) -> float:
        return self.pipeline_host_time_per_tp.get(framework, 0.0)

    def tp_overlap_for(self, framework: str) -> float:
        return self.tp_overlap.get(framework, 0.0)

    def has_optimizer_phase(self, framework: str) -> bool:
        """Whether full training under `framework` pays the Megatron-family optimizer phase."""
        return framework in self.optimizer_phase_fixed

    def optimizer_phase_fixed_for(self, framework: str) -> float:
        return self.optimizer_phase_fixed.get(framework, 0.0)

    def running_as(self, framework: str, software: str) -> "PerformanceAssumptions":
        """These assumptions with `framework`'s software profile (host dispatch, pipeline host cost,
        DP and TP overlap, kernel stack, ZeRO gradient reduction, optimizer phase) replaced by `software`'s: how a
        plan made for `framework` runs under another framework's software (e.g. a Megatron plan exported
        to nanotron: engine/export/nanotron.py)."""
        if software == framework:
            return self
        return replace(
            self,
            host_time_per_layer={**self.host_time_per_layer, framework: self.host_time_for(software)},
            pipeline_host_time_per_tp={**self.pipeline_host_time_per_tp,
                                       framework: self.pipeline_host_time_for(software)},
            dp_overlap={**self.dp_overlap, framework: self.dp_overlap_for(software)},
            dp_overlap_zero1={**self.dp_overlap_zero1, framework: self.dp_overlap_zero1_for(software)},
            zero1_gather_host_per_rank_tensor={**self.zero1_gather_host_per_rank_tensor,
                                               framework: self.zero1_gather_host_for(software)},
            zero0_ring_step_per_tensor={**self.zero0_ring_step_per_tensor,
                                        framework: self.zero0_ring_step_for(software)},
            fsdp_ring_latency_exposed={**self.fsdp_ring_latency_exposed,
                                       framework: self.fsdp_ring_latency_exposed_for(software)},
            tp_overlap={**self.tp_overlap, framework: self.tp_overlap_for(software)},
            optimizer_phase_fixed=({**self.optimizer_phase_fixed, framework: self.optimizer_phase_fixed[software]}
                                   if software in self.optimizer_phase_fixed else
                                   {k: v for k, v in self.optimizer_phase_fixed.items() if k != framework}),
            kernel_stack={**self.kernel_stack, framework: self.kernel_stack.get(software, "pytorch")},
            zero_grads_all_reduced={**self.zero_grads_all_reduced,
                                    framework: self.zero_grads_all_reduced.get(software, False)})


DEFAULT_ASSUMPTIONS = PerformanceAssumptions()
