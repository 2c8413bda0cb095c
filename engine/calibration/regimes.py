"""Regimes of the error bands: which measured runs a prediction's uncertainty is read from.

A regime is the software stack (Megatron with Transformer Engine; PyTorch-native FSDP/
DeepSpeed; nanotron), the GPU generation and dense vs MoE — the things the calibration
residuals differ by. Bands are looked up from the most specific regime with enough runs
(`regime_keys` lists the levels, most specific first). Inputs outside the validated range
(LoRA/QLoRA, GPU generations or link kinds without runs, sizes far beyond them) get the
first-principles band instead (engine/assumptions/error_bands.py).
"""

from __future__ import annotations

from ..assumptions.compute import gpu_generation
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..training import TrainingSetup

# The software stack whose kernels and overlap a framework runs (PerformanceAssumptions.kernel_stack).
STACK_BY_FRAMEWORK = {"megatron": "megatron", "fsdp": "pytorch", "deepspeed": "pytorch", "nanotron": "nanotron"}


def stack_of(framework: str) -> str:
    return STACK_BY_FRAMEWORK.get(framework, "pytorch")


def regime_keys(stack: str, generation: str, moe: bool) -> list[str]:
    kind = "moe" if moe else "dense"
    return [f"{stack}|{generation}|{kind}", f"{stack}|{kind}", kind, "all"]


def scenario_regime_keys(model: ModelSpec, cluster: Cluster, setup: TrainingSetup) -> list[str]:
    return regime_keys(stack_of(setup.framework), gpu_generation(cluster.gpu), model.moe is not None)
