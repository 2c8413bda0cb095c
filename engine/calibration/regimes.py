"""Regimes of the error bands: which measured runs a prediction's uncertainty is read from.

A regime is the software stack (Megatron with Transformer Engine; PyTorch-native FSDP/
DeepSpeed; nanotron), the GPU generation and dense vs MoE — the things the calibration
residuals differ by. Bands are looked up from the most specific regime with enough runs
(`regime_keys` lists the levels, most specific first). Inputs outside the validated range
(LoRA/QLoRA, GPU generations or link kinds without runs, sizes far beyond them, a stack with fewer than
15 runs of the scenario's kind, so that the lookup falls past `stack|kind`) get their band widened
(intervals.OUTSIDE_RANGE_WIDENING; coverage.extrapolation_warnings names why).
"""

from __future__ import annotations

from ..assumptions.compute import gpu_generation
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..training import TrainingSetup

# The software stack whose kernels and overlap a framework runs (PerformanceAssumptions.kernel_stack).
STACK_BY_FRAMEWORK = {"megatron": "megatron", "fsdp": "pytorch", "deepspeed": "pytorch", "nanotron": "nanotron"}
# How a warning names a stack to the user.
STACK_NAMES = {"megatron": "Megatron (Transformer Engine)", "pytorch": "PyTorch-native (FSDP/DeepSpeed)",
               "nanotron": "nanotron"}


def stack_of(framework: str) -> str:
    return STACK_BY_FRAMEWORK.get(framework, "pytorch")


def kind_of(moe: bool) -> str:
    return "moe" if moe else "dense"


def stack_kind_key(stack: str, moe: bool) -> str:
    """The stack's own band for dense or MoE models; a lookup that falls past it borrows other stacks' runs."""
    return f"{stack}|{kind_of(moe)}"


def regime_keys(stack: str, generation: str, moe: bool) -> list[str]:
    kind = kind_of(moe)
    return [f"{stack}|{generation}|{kind}", stack_kind_key(stack, moe), kind, "all"]


def scenario_regime_keys(model: ModelSpec, cluster: Cluster, setup: TrainingSetup) -> list[str]:
    return regime_keys(stack_of(setup.framework), gpu_generation(cluster.gpu), model.moe is not None)
