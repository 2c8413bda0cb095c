"""A pasted training log onto the chat's scenario and plan: the log is what ran, so what it prints
(GPUs, sequence length, global batch, precision, framework, the parallel degrees) replaces what the
conversation assumed. The log itself is read by engine/training_logs (one reader per framework)."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.errors import ShardwiseInputError
from ..engine.training_logs import LogReading
from .scenario import Plan, Scenario

# Frameworks whose global batch, when not set, is the per-device batch times the data-parallel degree (one
# micro-batch per step, no gradient accumulation): torchtitan, `training.global_batch_size = -1` ("defaults to
# local_batch_size * data-parallel degree", torchtitan/config/job_config.py).
NO_ACCUMULATION = ("torchtitan",)
PLAN_KEYS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero", "micro_batch", "recompute")


@dataclass(frozen=True)
class DerivedBatch:
    """A global batch the log implies but does not print, and how, to be said with it."""

    global_batch: int
    said: str


def derived_global_batch(reading: LogReading, gpus: int | None, micro_batch: int | None, tp: int | None,
                         pp: int | None, cp: int | None) -> DerivedBatch | None:
    """The global batch of a run whose framework steps one micro-batch per data-parallel rank (NO_ACCUMULATION):
    local batch x data-parallel degree, the degree being the GPUs over the model-parallel ones (torchtitan's mesh:
    dp_replicate x dp_shard = GPUs / (pp x cp x tp)). None when the log is another framework's, the local batch
    (the micro-batch) or the GPU count is not known, or the degrees do not divide the GPUs. One rule for the
    chat, `calibrate --from-log` and POST /api/calibrate."""
    if reading.framework not in NO_ACCUMULATION or reading.global_batch is not None or not micro_batch or not gpus:
        return None  # (a log that prints its global batch is read, not derived)
    model_parallel = (tp or 1) * (pp or 1) * (cp or 1)
    if gpus % model_parallel:
        return None
    data_parallel = gpus // model_parallel
    batch = micro_batch * data_parallel
    return DerivedBatch(batch, f"global batch {batch} = local batch {micro_batch} x data-parallel degree "
                               f"{data_parallel} (the {reading.framework} log does not print it; its default "
                               "global_batch_size -1 is local_batch_size x the data-parallel degree)")


def apply_reading(scenario: Scenario, plan: Plan, reading: LogReading) -> tuple[Scenario, Plan]:
    if reading.num_gpus is not None and scenario.gpus is not None and reading.num_gpus != scenario.gpus:
        raise ShardwiseInputError(f"the {reading.framework} log ran on {reading.num_gpus} GPUs, not {scenario.gpus}")
    said = reading.facts()
    facts = {k: said[k] for k in ("gpus", "seq_len", "global_batch", "precision", "framework") if k in said}
    if "global_batch" in facts:
        facts["global_batch_tokens"] = None
    if "framework" not in facts and scenario.framework is None and reading.default_framework is not None:
        facts["framework"] = reading.default_framework  # the log cannot say (HF Trainer): its default, said by the tool
    knobs = {k: said[k] for k in PLAN_KEYS if k in said}
    if "no_sp" in reading.plan:
        knobs["sequence_parallel"] = not reading.plan["no_sp"]
    scenario, plan = scenario.model_copy(update=facts), plan.model_copy(update=knobs)
    if scenario.global_batch is None and not scenario.global_batch_tokens:
        derived = derived_global_batch(reading, scenario.gpus, plan.micro_batch, plan.tp, plan.pp, plan.cp)
        if derived is not None:
            scenario = scenario.model_copy(update={"global_batch": derived.global_batch})
    return scenario, plan
