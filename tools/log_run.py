"""A pasted training log onto the chat's scenario and plan: the log is what ran, so what it prints
(GPUs, sequence length, global batch, precision, framework, the parallel degrees) replaces what the
conversation assumed. The log itself is read by engine/training_logs (one reader per framework)."""

from __future__ import annotations

from ..engine.errors import ShardwiseInputError
from ..engine.training_logs import LogReading
from .scenario import Plan, Scenario

PLAN_KEYS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero", "micro_batch", "recompute")


def apply_reading(scenario: Scenario, plan: Plan, reading: LogReading) -> tuple[Scenario, Plan]:
    if reading.num_gpus is not None and scenario.gpus is not None and reading.num_gpus != scenario.gpus:
        raise ShardwiseInputError(f"the {reading.framework} log ran on {reading.num_gpus} GPUs, not {scenario.gpus}")
    facts: dict = {}
    if reading.num_gpus is not None:
        facts["gpus"] = reading.num_gpus
    if reading.seq_len is not None:
        facts["seq_len"] = reading.seq_len
    if reading.global_batch is not None:
        facts.update(global_batch=reading.global_batch, global_batch_tokens=None)
    if reading.precision is not None:
        facts["precision"] = reading.precision
    if reading.setup_framework is not None:
        facts["framework"] = reading.setup_framework
    knobs = {k: reading.plan[k] for k in PLAN_KEYS if k in reading.plan}
    if "no_sp" in reading.plan:
        knobs["sequence_parallel"] = not reading.plan["no_sp"]
    return scenario.model_copy(update=facts), plan.model_copy(update=knobs)
