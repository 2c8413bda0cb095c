"""evaluate(): one plan in, one Evaluation out — validity, memory, time and throughput."""

from __future__ import annotations

import numpy as np

from . import validity
from .arrays import MemoryArrays, TimeArrays
from .calibration import extrapolation_warnings
from .calibration.annotate import profile_note, with_ranges
from .calibration.profile import CalibrationProfile, profile_assumptions
from .cluster import Cluster
from .cost import cost_report
from .memory import memory_per_gpu
from .model_spec import ModelSpec
from .params import active_params, total_params
from .performance import step_time
from .plans import PlanGrid
from .post_training.modes import mode_name
from .post_training.report import post_training_report, post_training_warnings
from .results import (ClusterSummary, Evaluation, SetupSummary, Violation, MemoryReport, ModelSummary, StrategySummary,
                      ThroughputReport, TimeReport)
from .strategy import Strategy
from .training import TrainingSetup

GIB = 2**30


def model_summary(model: ModelSpec) -> ModelSummary:
    return ModelSummary(name=model.name, params=total_params(model), active_params=active_params(model),
                        approximate=model.approximate)


def cluster_summary(cluster: Cluster) -> ClusterSummary:
    return ClusterSummary(gpu=cluster.gpu.id, num_gpus=cluster.num_gpus, gpus_per_node=cluster.gpus_per_node,
                          gpu_memory_gib=cluster.gpu.memory_gib, network=cluster.network.id,
                          num_nodes=cluster.num_nodes)


def strategy_summary(grid: PlanGrid, i: int) -> StrategySummary:
    s = grid.strategy(i)
    return StrategySummary(tp=s.tp, pp=s.pp, vpp=s.vpp, cp=s.cp, ep=s.ep, etp=s.etp, dp=int(grid.dp[i]),
                           zero_stage=s.zero_stage, micro_batch=s.micro_batch, grad_accum=int(grid.grad_accum[i]),
                           recompute=s.recompute, sequence_parallel=bool(grid.sp[i]),
                           hsdp_replicas=s.hsdp_replicas)


CATEGORY_ORDER = ("weights", "gradients", "optimizer", "activations", "other")


def _detail_order(key: str) -> tuple:
    """'<category>.<term>' in the report's category order, then by name: the same order every run
    (the memory model gathers terms in sets, whose order changes from one process to the next)."""
    category, _, term = key.partition(".")
    rank = CATEGORY_ORDER.index(category) if category in CATEGORY_ORDER else len(CATEGORY_ORDER)
    return rank, category, term


def memory_report(mem: MemoryArrays, i: int, capacity_gib: float, headroom: float = 0.0) -> MemoryReport:
    total = float(mem.total[i]) / GIB
    return MemoryReport(
        weights_gib=float(mem.weights[i]) / GIB, gradients_gib=float(mem.gradients[i]) / GIB,
        optimizer_gib=float(mem.optimizer[i]) / GIB, activations_gib=float(mem.activations[i]) / GIB,
        other_gib=float(mem.other[i]) / GIB, total_gib=total, capacity_gib=capacity_gib,
        fits=total <= capacity_gib * (1.0 - headroom),
        details_gib={k: float(mem.details[k][i]) / GIB for k in sorted(mem.details, key=_detail_order)},
        peak_phase=str(mem.peak_phase[i]) if mem.peak_phase is not None else None,
    )


def time_report(t: TimeArrays, i: int) -> TimeReport:
    return TimeReport(step_s=float(t.step[i]), compute_s=float(t.compute[i]), tp_comm_s=float(t.tp_comm[i]),
                      cp_comm_s=float(t.cp_comm[i]), ep_comm_s=float(t.ep_comm[i]),
                      pp_bubble_s=float(t.pp_bubble[i]), pp_comm_s=float(t.pp_comm[i]),
                      dp_comm_s=float(t.dp_comm[i]), optimizer_s=float(t.optimizer[i]),
                      optimizer_phase_s=float(np.broadcast_to(t.optimizer_phase, t.step.shape)[i]),
                      **{f"{name}_s": float(np.broadcast_to(getattr(t, name), t.step.shape)[i])
                         for name in POST_TRAINING_PASSES})


POST_TRAINING_PASSES = ("rollout", "reference", "old_logprob", "reward", "critic")


def throughput_report(t: TimeArrays, i: int, cluster: Cluster, setup: TrainingSetup,
                      tokens_per_step: int) -> ThroughputReport:
    step = float(t.step[i])
    peak = cluster.gpu.peak_tflops(setup.precision) * 1e12 * cluster.num_gpus
    return ThroughputReport(
        tokens_per_s=tokens_per_step / step,
        tokens_per_s_per_gpu=tokens_per_step / step / cluster.num_gpus,
        mfu=float(t.model_flops_per_step[i]) / step / peak,
        hfu=float(t.hardware_flops_per_step[i]) / step / peak,
        model_tflops_per_gpu=float(t.model_flops_per_step[i]) / step / cluster.num_gpus / 1e12,
    )


def outside_validated_range(model: ModelSpec, cluster: Cluster, setup: TrainingSetup) -> list[Violation]:
    """Inputs far from the measured runs the time model was calibrated on: its error band widens."""
    return [Violation(rule="outside_validated_range", message=m) for m in extrapolation_warnings(model, cluster, setup)]


def evaluate(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, strategy: Strategy,
             headroom: float = 0.0, train_tokens: float | None = None,
             price_per_gpu_hour: float | None = None, profile: CalibrationProfile | None = None) -> Evaluation:
    """Everything shardwise predicts for one plan. An invalid plan is a result, not an error.
    `profile`: a CalibrationProfile from the user's own measured run (None: the shipped calibration)."""
    grid = PlanGrid.from_strategy(strategy, cluster.num_gpus, setup.global_batch)
    errors, warnings = validity.violations(model, cluster, setup, strategy)
    warnings = warnings + outside_validated_range(model, cluster, setup) + post_training_warnings(model, cluster, setup)
    mem = memory_per_gpu(model, cluster, setup, grid)
    calibrated = {"assumptions": profile_assumptions(profile, cluster, setup)} if profile else {}
    times = step_time(model, cluster, setup, grid, **calibrated) if not errors else None
    tokens_per_step = int(grid.dp[0] * grid.micro_batch[0] * grid.grad_accum[0]) * setup.seq_len
    memory, time, throughput = with_ranges(
        model, cluster, setup, profile, memory_report(mem, 0, cluster.gpu.memory_gib, headroom),
        time_report(times, 0) if times is not None else None,
        throughput_report(times, 0, cluster, setup, tokens_per_step) if times is not None else None)
    return Evaluation(
        model=model_summary(model),
        cluster=cluster_summary(cluster),
        strategy=strategy_summary(grid, 0),
        valid=not errors,
        violations=errors,
        warnings=warnings,
        memory=memory,
        time=time,
        throughput=throughput,
        cost=(cost_report(tokens_per_step / float(times.step[0]), cluster.num_gpus, cluster.gpu.id, train_tokens,
                          price_per_gpu_hour) if times is not None else None),
        calibration=profile_note(profile, cluster, setup),
        post_training=post_training_report(model, cluster, setup),
        setup=setup_summary(setup),
    )


def setup_summary(setup: TrainingSetup) -> SetupSummary:
    return SetupSummary(seq_len=setup.seq_len, global_batch=setup.global_batch,
                        global_batch_tokens=setup.global_batch_tokens, mode=mode_name(setup),
                        lora_rank=setup.lora_rank, precision=setup.precision, framework=setup.framework,
                        moe_dispatcher=setup.moe_dispatcher, moe_a2a_overlap=setup.moe_a2a_overlap,
                        cuda_graphs=setup.cuda_graphs,
                        recompute_modules=None if setup.recompute_modules is None else list(setup.recompute_modules),
                        grad_reduce_dtype=setup.grad_reduce_dtype, fp8_param_gather=setup.fp8_param_gather,
                        post_training=setup.post_training, mean_doc_len=setup.mean_doc_len)


__all__ = ["evaluate", "np"]
