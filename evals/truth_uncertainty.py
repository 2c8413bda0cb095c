"""Ground truth for the questions about a prediction's uncertainty and about calibrating it.

- "range" / "step_range": the turn's plan evaluated; the answer must state both ends of its 80 %
  interval — of the throughput or the step time ("range"), of the step time ("step_range").
- "memory_range": the turn's plan evaluated; the answer must state both ends of the 80 % interval
  of its peak memory per GPU (MemoryReport.total_gib_range). Given a measured peak (`measured:
  {peak_gib: X}`), it must also state the predicted peak (total_gib) that the measurement is set
  against. A peak is compared, not fitted (engine/calibration/fit_profile.py), so no scale.
- "calibrate": the profile the engine fits to the turn's measured run (engine/calibration/
  fit_profile.py). The answer must state what the engine predicted for that run before
  calibrating (tokens/s per GPU or the step time it implies), and what the calibration changes
  (the compute or network scale, or the gap between prediction and measurement in %).

A measured step time becomes tokens/s per GPU by the batch's tokens (global batch × sequence
length, the case's scenario) over the step time and the GPUs; a measured MFU by the prediction's
tokens/s per GPU scaled by measured/predicted MFU (MFU is model FLOPs per second over peak, so it
is proportional to tokens/s for one model and plan).
"""

from __future__ import annotations

from . import scenario as sc
from .case import Measured, Scenario


def _evaluate(s: Scenario, plan: dict, profile=None):
    from .truth import evaluate

    specs = sc.build(s)
    return specs, evaluate(specs.model, specs.cluster, specs.setup, sc.strategy(plan), profile=profile)


def range_truth(kind: str, s: Scenario, plan: dict, profile=None):
    from .truth import Truth, plan_fields

    specs, e = _evaluate(s, plan, profile)
    if not (e.valid and e.memory.fits and e.time is not None and e.time.step_s_range
            and e.throughput.tokens_per_s_per_gpu_range):
        return Truth(kind=kind, evaluation=e, error="the plan has no predicted step time (invalid or out of memory)")
    low_s, high_s = e.time.step_s_range
    step: tuple = ((("time", low_s),), (("time", high_s),))
    low_t, high_t = e.throughput.tokens_per_s_per_gpu_range
    throughput: tuple = ((("throughput", low_t),), (("throughput", high_t),))
    options = (step,) if kind == "step_range" else (throughput, step)
    # plan: the plan evaluated, so that `plan: auto` on a "best plan, with an error bar" turn grades it
    return Truth(kind=kind, evaluation=e, plan=plan_fields(e), stated=options, is_moe=specs.model.is_moe)


def measured_tokens_per_s_per_gpu(s: Scenario, plan: dict, measured: Measured) -> float:
    if measured.tokens_per_s_per_gpu is not None:
        return measured.tokens_per_s_per_gpu
    if measured.step_s is not None:
        return sc.global_batch(s) * sc.seq_len(s) / measured.step_s / s.gpus
    _, e = _evaluate(s, plan)
    return e.throughput.tokens_per_s_per_gpu * measured.mfu / e.throughput.mfu


def calibrate_truth(s: Scenario, plan: dict, measured: Measured):
    from .truth import Truth
    from .truth_profile import fit_to_measured

    specs = sc.build(s)
    m = measured_tokens_per_s_per_gpu(s, plan, measured)
    profile = fit_to_measured(s, plan, measured)
    before = profile.runs[0].predicted_before
    tokens_per_step = sc.global_batch(s) * sc.seq_len(s)
    said_before = (("throughput", before), ("time", tokens_per_step / before / s.gpus))
    changed = [("scale", profile.compute_scale), ("percent", 100 * (before / m - 1)),
               ("percent", 100 * (m / before - 1))]
    if profile.network and abs(profile.comm_scale - 1) > 0.02:  # a scale of ~1 says nothing changed
        changed.append(("scale", profile.comm_scale))
    groups: tuple = (said_before, tuple(changed))
    if measured.peak_gib is not None:  # the measured peak is set against the predicted one
        _, e = _evaluate(s, plan)
        groups += ((("memory", e.memory.total_gib),),)
    return Truth(kind="calibrate", stated=(groups,), is_moe=specs.model.is_moe)


def memory_range_truth(s: Scenario, plan: dict, measured: Measured | None = None, profile=None):
    from .truth import Truth, plan_fields

    specs, e = _evaluate(s, plan, profile)
    if not (e.valid and e.memory.total_gib_range):
        return Truth(kind="memory_range", evaluation=e, error="the plan has no memory interval (invalid)")
    low, high = e.memory.total_gib_range
    groups: tuple = ((("memory", low),), (("memory", high),))
    if measured is not None and measured.peak_gib is not None:
        groups = ((("memory", e.memory.total_gib),),) + groups
    return Truth(kind="memory_range", evaluation=e, plan=plan_fields(e), stated=(groups,), is_moe=specs.model.is_moe)
