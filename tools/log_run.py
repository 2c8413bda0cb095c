"""A pasted training log onto the chat's scenario and plan: the log is what ran, so what it prints
(GPUs, sequence length, global batch, precision, framework, the parallel degrees) replaces what the
conversation assumed. The log itself is read by engine/training_logs (one reader per framework)."""

from __future__ import annotations

from ..engine.errors import ShardwiseInputError
from ..engine.training_logs import LogReading
from .scenario import Plan, Scenario

# Frameworks whose global batch, when not set, is the per-device batch times the data-parallel degree (one
# micro-batch per step, no gradient accumulation): torchtitan, `training.global_batch_size = -1` ("defaults to
# local_batch_size * data-parallel degree", torchtitan/config/job_config.py).
NO_ACCUMULATION = ("torchtitan",)
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
    elif scenario.framework is None and reading.default_framework is not None:
        facts["framework"] = reading.default_framework  # the log cannot say (HF Trainer): its default, said by the tool
    knobs = {k: reading.plan[k] for k in PLAN_KEYS if k in reading.plan}
    if "no_sp" in reading.plan:
        knobs["sequence_parallel"] = not reading.plan["no_sp"]
    scenario, plan = scenario.model_copy(update=facts), plan.model_copy(update=knobs)
    if reading.framework in NO_ACCUMULATION and scenario.global_batch is None and not scenario.global_batch_tokens \
            and plan.micro_batch and scenario.gpus:
        model_parallel = (plan.tp or 1) * (plan.pp or 1) * (plan.cp or 1)
        if scenario.gpus % model_parallel == 0:
            scenario = scenario.model_copy(update={"global_batch": plan.micro_batch * scenario.gpus // model_parallel})
    return scenario, plan
