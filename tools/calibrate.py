"""calibrate_to_measurement: the user says what their run measured; the tool fits the profile that
run implies (engine/calibration/fit_profile.py) and says what it would change, with the command
that saves it. The chat offers it; applying it to later answers is `--profile` (the model cannot
store files)."""

from __future__ import annotations

import shlex

from pydantic import Field

from ..engine.calibration.fit_profile import Measurement, fit_profile, tokens_per_step
from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError
from .base import Result, Tool
from .figures import ScenarioFacts, r, scenario_facts
from .scenario import Args, Plan, Scenario

SCENARIO_FLAGS = (("model", "--model"), ("params", "--params"), ("gpu", "--gpu"), ("gpus", "--gpus"),
                  ("gpus_per_node", "--gpus-per-node"), ("network", "--network"), ("seq_len", "--seq-len"),
                  ("global_batch", "--global-batch"), ("global_batch_tokens", "--global-batch-tokens"),
                  ("mode", "--mode"), ("lora_rank", "--lora-rank"), ("precision", "--precision"),
                  ("framework", "--framework"))
PLAN_FLAGS = (("tp", "--tp"), ("pp", "--pp"), ("vpp", "--vpp"), ("cp", "--cp"), ("ep", "--ep"), ("etp", "--etp"),
              ("zero", "--zero"), ("micro_batch", "--micro-batch"), ("recompute", "--recompute"))
PROFILE_FILE = "my-cluster.json"


class CalibrateArgs(Args):
    scenario: Scenario
    plan: Plan
    measured_tokens_per_s_per_gpu: float | None = None
    measured_step_s: float | None = None


class CalibrateResult(Result):
    scenario: ScenarioFacts
    plan_label: str
    measured_tokens_per_s_per_gpu: float
    predicted_before: float = Field(description="tokens/s per GPU the shipped calibration predicts for this run")
    predicted_after: float = Field(description="... with the profile this run implies")
    error_before_percent: float
    error_after_percent: float
    compute_scale: float
    comm_scale: float
    network: str | None = Field(description="network the comm scale applies to (null: the run stayed in one node)")
    at_bound: list[str] = Field(description="scales clipped to their bound: the run is further off than a cluster")
    command: str = Field(description="the command that saves this profile; then pass --profile to any command")
    profile: CalibrationProfile = Field(description="the profile itself (what the command saves)")

    def hidden_from_model(self) -> set[str]:
        return {"profile"}

    def summary(self) -> str:
        return (f"calibrated on {self.plan_label}: compute ×{self.compute_scale:.3f}, "
                f"{self.predicted_before:,.0f} -> {self.predicted_after:,.0f} tokens/s/GPU [{self.id}]")


def command_line(scenario: Scenario, plan: Plan, args: CalibrateArgs) -> str:
    words = ["shardwise", "calibrate"]
    for field, flag in SCENARIO_FLAGS:
        value = getattr(scenario, field)
        if value is not None:
            words += [flag, str(value)]
    for field, flag in PLAN_FLAGS:
        value = getattr(plan, field)
        if value is not None:
            words += [flag, str(value)]
    if scenario.moe_dispatcher not in (None, "alltoall"):
        words += ["--moe-dispatcher", scenario.moe_dispatcher]
    if scenario.moe_a2a_overlap:
        words.append("--moe-a2a-overlap")
    if scenario.cuda_graphs not in (None, "none"):
        words += ["--cuda-graphs", scenario.cuda_graphs]
    if plan.sequence_parallel is False:
        words.append("--no-sp")
    if args.measured_tokens_per_s_per_gpu is not None:
        words += ["--measured-tokens-per-s-per-gpu", f"{args.measured_tokens_per_s_per_gpu:g}"]
    else:
        words += ["--measured-step-s", f"{args.measured_step_s:g}"]
    words += ["--save", PROFILE_FILE]
    return shlex.join(words)


def calibrate(args: CalibrateArgs) -> CalibrateResult:
    if (args.measured_tokens_per_s_per_gpu is None) == (args.measured_step_s is None):
        raise ShardwiseInputError("give exactly one of measured_tokens_per_s_per_gpu and measured_step_s")
    if not (args.measured_tokens_per_s_per_gpu or args.measured_step_s or 0) > 0:
        raise ShardwiseInputError("the measured value must be a positive number")
    resolved = args.scenario.resolve()
    m = args.measured_tokens_per_s_per_gpu or (
        tokens_per_step(resolved.setup) / args.measured_step_s / resolved.cluster.num_gpus)
    run = Measurement(resolved.model, resolved.cluster, resolved.setup, args.plan.strategy(), m)
    p = fit_profile([run], with_memory=False)
    s = p.runs[0]
    return CalibrateResult(
        scenario=scenario_facts(args.scenario, resolved), plan_label=args.plan.label(), measured_tokens_per_s_per_gpu=m,
        predicted_before=r(s.predicted_before, 0), predicted_after=r(s.predicted_after, 0),
        error_before_percent=r(100 * (s.predicted_before / m - 1), 1),
        error_after_percent=r(100 * (s.predicted_after / m - 1), 1), compute_scale=r(p.compute_scale),
        comm_scale=r(p.comm_scale), network=p.network, at_bound=p.at_bound,
        command=command_line(args.scenario, args.plan, args), profile=p)


CALIBRATE = Tool(
    "calibrate_to_measurement", "Calibrate to a measured run.",
    CalibrateArgs, CalibrateResult, calibrate, scenario_of=lambda a: a.scenario)
