"""POST /api/calibrate: `shardwise calibrate` over HTTP — one measured run (a figure, or the text of a
training log) in, the calibration profile out, the same object `shardwise calibrate --json` prints.

A log is what ran: what it prints (GPUs, sequence length, global batch, precision, framework, the
parallel degrees) fills the request, and a field the request sets to something else is refused (the
CLI's rule for flags beside --from-log), never silently overridden either way.
"""

from __future__ import annotations

from pydantic import Field

from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError
from ..engine.mfu_unit import require_mfu_fraction
from ..engine.training_logs import LogReading
from .schemas import PlanFields, ScenarioRequest

MEASURED = ("measured_tokens_per_s_per_gpu", "measured_step_s", "measured_mfu", "log")


def _measured(description: str):
    return Field(default=None, gt=0, allow_inf_nan=False, description=description)


class CalibrateRequest(PlanFields, ScenarioRequest):
    """The measured run's scenario and plan, and exactly one of what was measured."""

    measured_tokens_per_s_per_gpu: float | None = _measured("tokens per second per GPU the run reached")
    measured_step_s: float | None = _measured("seconds per optimizer step")
    measured_mfu: float | None = _measured("MFU as a fraction of the GPU's dense peak: 0.45 for 45 % (a value "
                                                  "above 1 is a 400), in shardwise's definition (README)")
    measured_peak_gib: float | None = _measured("peak memory per GPU (compared, not fitted)")
    profile: CalibrationProfile | None = Field(
        default=None, description="not taken: calibrate fits a profile from the measured run alone (one given is a 400)")
    log: str | None = Field(default=None, min_length=1, description=(
        "instead of a figure: the text of a Megatron-LM, torchtitan, DeepSpeed or Hugging Face Trainer log "
        "(the printed arguments and some throughput lines; the body limit applies)"))


def _log_says(reading: LogReading) -> dict[str, object]:
    """The log's facts under the request's field names (no_sp -> sequence_parallel; HSDP is not a request field)."""
    said = {k: v for k, v in reading.facts().items() if k not in ("no_sp", "hsdp")}
    if "no_sp" in reading.plan:
        said["sequence_parallel"] = not reading.plan["no_sp"]
    return said


def with_log(req: CalibrateRequest, reading: LogReading) -> CalibrateRequest:
    said = _log_says(reading)
    for key, value in said.items():
        if key in req.model_fields_set and getattr(req, key) != value:
            raise ShardwiseInputError(f"the {reading.framework} log says {key}={value} but the request has {key}="
                                      f"{getattr(req, key)}: the log is what ran (drop the field, or send the log of "
                                      "the run the fields describe)")
    if "global_batch" in said and req.global_batch_tokens is not None:
        raise ShardwiseInputError(f"the {reading.framework} log says global_batch={said['global_batch']} sequences, "
                                  "so global_batch_tokens would be ignored: drop it")
    if req.measured_peak_gib is not None and reading.peak_gib is not None \
            and abs(req.measured_peak_gib - reading.peak_gib) > 0.05:
        raise ShardwiseInputError(f"the {reading.framework} log says peak memory {reading.peak_gib:.2f} GiB but "
                                  f"measured_peak_gib is {req.measured_peak_gib:g}: give one or the other")
    if "framework" not in said and "framework" not in req.model_fields_set and reading.default_framework:
        said["framework"] = reading.default_framework  # the log cannot say (HF Trainer): the CLI's default too
    return req.model_copy(update=said)


def calibrate(req: CalibrateRequest) -> CalibrationProfile:
    from ..engine.calibration.fit_profile import Measurement, fit_profile
    from ..engine.calibration.measured_value import tokens_from_log, tokens_from_mfu, tokens_from_step_time
    from ..engine.training_logs import read_log
    from ..tools.log_run import derived_global_batch
    from ..tools.measured_peak import stated_by_log, with_peak_checks
    from .engine_calls import cluster, resolve_model

    if req.profile is not None:
        raise ShardwiseInputError("calibrate fits a profile from the measured run; it does not take one (drop profile)")
    given = [name for name in MEASURED if getattr(req, name) is not None]
    if len(given) != 1:
        raise ShardwiseInputError(f"give exactly one of {', '.join(MEASURED)}; got {len(given)}"
                                  + (f" ({', '.join(given)})" if given else ""))
    reading = None
    if req.log is not None:
        reading = read_log(req.log, "the log")
        micro_batch_given = "micro_batch" in req.model_fields_set
        req = with_log(req, reading)
        if req.global_batch is None and req.global_batch_tokens is None:
            # torchtitan prints no global batch: the chat's and the CLI's derivation (local batch x DP degree)
            derived = derived_global_batch(reading, req.gpus, req.micro_batch if micro_batch_given else None,
                                           req.tp, req.pp, req.cp)
            if derived is not None:
                req = req.model_copy(update={"global_batch": derived.global_batch})
        if reading.tokens_per_s_per_gpu is None and reading.step_s is None and req.seq_len is None:
            raise ShardwiseInputError(f"the {reading.framework} log gives samples/s; set seq_len to turn it into "
                                      "tokens/s")
    model, where, setup = resolve_model(req), cluster(req), req.setup()
    strategy = req.strategy()
    if reading is not None and reading.plan.get("hsdp"):
        strategy = type(strategy)(**{**strategy.model_dump(), "hsdp_replicas": reading.plan["hsdp"]})
    if reading is not None:
        tokens = tokens_from_log(reading, setup, where)
    elif req.measured_mfu is not None:
        tokens = tokens_from_mfu(require_mfu_fraction(req.measured_mfu), model, setup, where)
    elif req.measured_step_s is not None:
        tokens = tokens_from_step_time(req.measured_step_s, setup, where)
    else:
        tokens = req.measured_tokens_per_s_per_gpu
    peak = req.measured_peak_gib or (reading.peak_gib if reading else None)
    run_ = Measurement(model=model, cluster=where, setup=setup, strategy=strategy, tokens_per_s_per_gpu=tokens,
                       peak_gib=peak)
    # the measured peak's analysis, as `calibrate --json` carries it (settings the log printed are not tried)
    return with_peak_checks(fit_profile([run_]), [run_], stated_by_log(reading))
