"""A measured run answered: the calibrate tool on the run the user describes (measured.py), with the plan
it ran — the plan named in the message, else the plan under discussion ("ran exactly that overnight"; for a
pasted log, the plan the user said they run, not one recommended to them), with a pasted log's own degrees
and setup over both (tools/log_run.py, as the tool applies them). What cannot be calibrated to is answered
before any call: a zero, an MFU above 100 %, a tokens/s said neither per GPU nor for the whole job."""

from __future__ import annotations

import re
from dataclasses import replace

from ...engine.assumptions.calibration_bounds import MAX_MEASURED_MFU
from ...engine.errors import ShardwiseInputError
from ...engine.hardware_catalog import get_gpu
from ...engine.training import TrainingSetup
from ...prompts.render import render
from ...tools.log_run import apply_reading
from ...tools.scenario import Scenario
from ..state import ConversationState
from .cues import ALTERNATIVE
from .entities import Entities, normalise
from .measured import MeasuredRun, several_runs
from .measured_plans import MeasuredPlans
from .measured_scale import scale_asked
from .turn import Turn, plan_with, result_or_error, scenario_args

# An FSDP run with no sharding stage said shards parameters, gradients and optimizer states: ZeRO-3. PyTorch
# FSDP's default sharding_strategy is FULL_SHARD (torch.distributed.fsdp.FullyShardedDataParallel), and
# torchtitan shards over every data-parallel rank by default (`parallelism.data_parallel_shard_degree = -1`).
FSDP_ZERO = 3
DEFAULT_PRECISION = TrainingSetup.model_fields["precision"].default  # what a run that names none trains in


# The prediction asked for beside the measurement ("what MFU should we be seeing? we measure ~38 %"): the plan's
# evaluation first, then how the measurement compares. A request to calibrate ("calibrate", "correct for it")
# asks for the calibration only.
PREDICTION_ASKED = re.compile(r"\bshould\s+(?:we|i|it|you)\s+(?:be\s+)?(?:see|seeing|get|getting|expect|expecting|hit|hitting)\b|"
                              r"\bwhat\s+(?:does|would|do)\s+(?:the\s+model|shardwise|you|it)\s+(?:predict|expect|say)\b")
CALIBRATION_ASKED = re.compile(r"\b(?:re-?)?calibrat\w*|\bcorrect\s+for\b|\badjust\b|\bprofile\b")


def calibrate_answer(run: MeasuredRun, e: Entities, state: ConversationState, scenario: Scenario, turn: Turn,
                     message: str = "", against: MeasuredPlans | None = None) -> str | None:
    """`against`: the run's plan and a plan to compare it with, when the message names both (measured_plans.py)."""
    if run.kind == "rate_unclear":  # per GPU or for the whole job: a factor of the GPU count, asked rather than guessed
        return render("offline/measured_rate_unclear.md.j2")
    if run.kind == "log_unusable":  # "elapsed time per iteration (ms): 0.0": no step time to fit, said so
        return render("offline/measured_log_unusable.md.j2", zero=run.zero, reason=run.reason)
    if run.value == 0:  # "we measured 0 tok/s/GPU": nothing to fit, and not to be dropped in silence
        return render("offline/measured_zero.md.j2")
    tflops = None
    if run.kind == "tflops_per_gpu" and scenario.gpu is not None:  # "hitting ~410 TFLOPS per GPU": the MFU it is
        run, tflops = as_mfu(run, scenario)
    if run.kind == "mfu" and run.value / 100 > MAX_MEASURED_MFU:
        return render("offline/measured_mfu_impossible.md.j2", mfu=run.value / 100, tflops=tflops)
    knobs = e.plans[0] if e.plans else {}
    same_model = state.scenario is not None and (state.scenario.model, state.scenario.params) == (scenario.model,
                                                                                                 scenario.params)
    # a pasted log is the run they said they run; a figure, the plan under discussion, else the plan of the run they
    # reported before ("that's per micro-batch, 32 per step. now?" after a figure that could not be fitted)
    discussed = state.user_plan if run.kind == "log" or state.plan is None else state.plan
    plan = plan_with(None if len(knobs) >= 2 or not same_model else discussed, knobs)
    framework_said = scenario.framework
    if run.reading is not None:
        try:
            scenario, plan = apply_reading(scenario, plan, run.reading)
        except ShardwiseInputError:
            pass  # the log contradicts the message (its GPU count): the tool's error says how
    if run.reading is not None and e.global_batch is None and not e.global_batch_tokens and e.grad_accum:
        # "batch_size 4 per dp rank, no grad accum" beside a log whose mesh has TP=2: the global batch counts the
        # data-parallel ranks the log's plan leaves (micro-batch x accumulation x GPUs / model-parallel degrees)
        batch = replace(e, plans=[plan.model_dump(exclude_none=True)]).batch_from_accum(scenario.gpus)
        if batch:
            scenario = scenario.model_copy(update={"global_batch": batch, "global_batch_tokens": None})
    # A log that cannot say its backend (HF Trainer), with none said: the tool applies the log's default and says so.
    assumed = run.reading is not None and run.reading.setup_framework is None and framework_said is None
    if assumed:
        scenario = scenario.model_copy(update={"framework": None})
    if scenario.framework == "fsdp" and "zero" not in plan.model_dump(exclude_none=True):
        plan = plan.model_copy(update={"zero": FSDP_ZERO})  # "torchtitan, pure FSDP": sharded data parallel is ZeRO-3
    missing = scenario.missing()
    if missing:
        return render("offline/need_more.md.j2", missing=missing, family="calibrate",
                      known=scenario.model_dump(exclude_none=True))
    if not plan.model_dump(exclude_none=True):
        return None  # no plan known for the run: the caller answers the rest and asks for it
    parts = []
    text = normalise(message)
    scale = scale_asked(message, scenario) if against is None or against.other is None else None
    if PREDICTION_ASKED.search(text) and not CALIBRATION_ASKED.search(text) and scale is None:
        evaluated = turn.call("evaluate_plan", {"scenario": scenario_args(scenario), "plan": plan.model_dump()})
        parts.append(result_or_error(evaluated, "offline/evaluate.md.j2").strip())
    out = turn.call("calibrate_to_measurement", {"scenario": scenario_args(scenario), "plan": plan.model_dump(),
                                                 **run.tool_arguments(scenario.gpus)})
    parts.append((render("offline/calibrate.md.j2", r=out.result, total=run.kind == "tokens_per_s_total",
                         said_range=range_text(run), tflops=tflops, per_micro_batch=run.per_micro_batch) if out.ok
                  else result_or_error(out, "offline/calibrate.md.j2")).strip())
    if out.ok and several_runs(message, run.kind):  # "6900 on tp2 pp4 and 6100 on tp4 pp2": one fitted, said so
        parts[-1] += "\n\n" + render("offline/calibrate_one_run.md.j2", r=out.result).strip()
    if out.ok and against is not None and against.other is not None:
        parts.append(_compared_calibrated(turn, scenario, plan, against, out))
    elif out.ok and ALTERNATIVE.search(text):  # "we measured … on tp2 pp4. what would you run instead?"
        parts.append(_best_calibrated(turn, scenario, out))
    elif out.ok and scale is not None:  # "[log of 8 GPUs] what should we expect on 64 GPUs?"
        parts.append(_what_if_calibrated(turn, scenario, scale, out))
    return "\n\n---\n\n".join(parts)


def call_with_profile(turn: Turn, profile, name: str, args: dict):
    """A tool call made with the profile just fitted to the user's run, for this answer only: keeping it for later
    answers is the user's choice (the offer the calibration answer makes)."""
    kept, turn.profile = turn.profile, profile
    try:
        return turn.call(name, args)
    finally:
        turn.profile = kept


def _what_if_calibrated(turn: Turn, scenario: Scenario, change: Scenario, calibrated) -> str:
    """The other cluster size asked beside the measurement, from the run's scenario, predicted with the profile just
    fitted to the run (for this answer only, as the comparison above)."""
    out = call_with_profile(turn, calibrated.result.profile, "what_if",
                            {"scenario": scenario_args(scenario), "change": change.model_dump(mode="json")})
    if not out.ok:
        return result_or_error(out, "offline/what_if.md.j2").strip()
    return (render("offline/calibrated_what_if.md.j2", r=calibrated.result).strip() + "\n\n"
            + render("offline/what_if.md.j2", r=out.result).strip())


def as_mfu(run: MeasuredRun, scenario: Scenario) -> tuple[MeasuredRun, dict]:
    """A measured TFLOP/s per GPU as the MFU it is: achieved over the GPU's dense peak at the run's precision (the
    catalog's peak, engine/hardware.py `peak_tflops`), with what it was, for the answer to say."""
    gpu = get_gpu(scenario.gpu)
    precision = scenario.precision or DEFAULT_PRECISION
    peak = gpu.peak_tflops(precision)
    percent = 100 * run.value / peak
    ranged = tuple(100 * v / peak for v in run.said_range) if run.said_range else None
    return (MeasuredRun("mfu", percent, said_range=ranged),
            {"value": run.value, "peak": peak, "gpu": gpu.name, "precision": precision, "percent": percent})


RANGE_UNITS = {"tokens_per_s_per_gpu": ("{:,.0f}", " tokens/s per GPU"), "tokens_per_s_total": ("{:,.0f}", " tokens/s in total"),
               "step_s": ("{:,.3g}", " s per step"), "mfu": ("{:.3g}", "% MFU")}


def range_text(run: MeasuredRun) -> str | None:
    """"3,800–4,100 tokens/s per GPU": the range the user gave, in the unit of the figure fitted."""
    if run.said_range is None or run.kind not in RANGE_UNITS:
        return None
    number, unit = RANGE_UNITS[run.kind]
    low, high = run.said_range
    return f"{number.format(low)}–{number.format(high)}{unit}"


def _best_calibrated(turn: Turn, scenario: Scenario, calibrated) -> str:
    """The plan asked for beside the measurement ("is there a faster plan?"), searched with the profile just fitted
    to the run (for this answer only, as the comparison above)."""
    out = call_with_profile(turn, calibrated.result.profile, "recommend_plans",
                            {"scenario": scenario_args(scenario), "top_k": 3, "headroom": None, "constraints": None})
    if not out.ok:
        return result_or_error(out, "offline/recommend.md.j2").strip()
    return (render("offline/calibrated_recommend.md.j2", r=calibrated.result).strip() + "\n\n"
            + render("offline/recommend.md.j2", r=out.result).strip())


# Settings the other plan of "would tp8 pp2 beat it?" keeps from the measured run when it does not say them: the
# question changes the layout, not the run's ZeRO stage, micro-batch or recompute. Parallel degrees are not
# carried: "tp4 cp2 … would tp8 beat it?" names TP=8 with no CP.
CARRIED = ("zero", "micro_batch", "recompute")


def _compared_calibrated(turn: Turn, scenario: Scenario, plan, against: MeasuredPlans, calibrated) -> str:
    """The comparison asked beside the measurement, both plans predicted with the profile just fitted to the run
    (for this answer only: keeping it for later answers is still the user's choice, offered above)."""
    run_plan = plan.model_dump()
    other = {**{k: run_plan[k] for k in CARRIED if run_plan.get(k) is not None}, **against.other}
    out = call_with_profile(turn, calibrated.result.profile, "compare_plans",
                            {"scenario": scenario_args(scenario), "plan_a": run_plan,
                             "plan_b": plan_with(None, other).model_dump()})
    if not out.ok:
        return result_or_error(out, "offline/compare.md.j2").strip()
    return (render("offline/calibrated_compare.md.j2", r=calibrated.result, discussed=against.other_is_discussed,
                   c=out.result).strip()
            + "\n\n" + render("offline/compare.md.j2", r=out.result).strip())
