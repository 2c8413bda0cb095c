"""An eval case, as data: what the user says, the scenario it describes, and what a good
answer must do. Ground truth is not stored here — it is computed from the scenario by the
engine at eval time (truth.py), so cases do not go stale when the formulas improve.

YAML shape (one file holds a list of cases; a single-turn case may put `user` and `expect`
at the top level instead of `turns`):

    - id: rec-70b-64h100
      family: recommend
      scenario: {model: llama-3-70b, gpu: h100, gpus: 64, seq_len: 8k, global_batch_tokens: 4M}
      user: "llama3 70b on 8x H100 nodes, 8k ctx, 4M tok batch - what parallelism?"
      expect:
        tools: [recommend_plans]
        plan: auto

A turn may `change` the scenario (what-if, follow-ups: cumulative over the turns), name the
`plan` asked about (evaluate) or the two `plans` compared, and override its `truth` kind (by
default the family's). A plan may be relative to the engine's pick: {from: recommended, tp: 8}.

A side-by-side turn ("H100 or H200: the best plan on each") lists its `sides` instead of one
`expect.plan`, each with a `label` an answer names it by, an optional `change` to the turn's
scenario, and `expect: {plan: auto}` when that side's plan is asked for (graders/per_side.py):

      sides:
        - {label: H100, expect: {plan: auto}}
        - {label: H200, change: {gpu: h200}, expect: {plan: auto}}
"""

from __future__ import annotations

from typing import Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

FAMILIES = ("recommend", "evaluate", "compare", "whatif", "explain", "export", "nothing_fits",
            "multi_turn", "out_of_domain", "adversarial")
Family = Literal["recommend", "evaluate", "compare", "whatif", "explain", "export", "nothing_fits",
                 "multi_turn", "out_of_domain", "adversarial"]

# Behaviours that fail a case wherever they occur (graders/tools.py implements each).
Forbidden = Literal["echo_system_prompt", "leak_secret", "invent_config", "tool_error", "empty_answer"]

# What the engine computes as this turn's ground truth. "range": the answer must state the 80 %
# interval of the turn's plan (throughput or step time); "step_range": of its step time;
# "calibrate": the prediction before calibrating to the turn's `measured` run, and the scale fitted;
# "memory_range": the 80 % interval of the plan's peak memory (and, given a measured peak, the prediction);
# "calibrate_compare": a measurement and an "A or B?" in one message — what "calibrate" requires, and the
# deciding term of A vs B priced with the profile that measurement implies; "impossible": a measurement no run
# can produce (MFU above 100 %, a peak above the GPU's memory), to be refused with the figure that shows it.
TruthKind = Literal["recommend", "evaluate", "compare", "range", "step_range", "calibrate", "memory_range",
                    "calibrate_compare", "impossible", "none"]


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Scenario(_Data):
    """The training setup the user describes, in the engine's terms (see scenario.py)."""

    model: str | None = None
    params: str | None = Field(default=None, description="bare parameter count, e.g. '13B'")
    gpu: str | None = None
    gpus: int | None = Field(default=None, gt=0)
    gpus_per_node: int | None = Field(default=None, gt=0)
    network: str | None = None
    seq_len: int | str | None = Field(default=None, description="tokens; '8k' means 8192")
    global_batch: int | None = Field(default=None, gt=0, description="sequences per step")
    global_batch_tokens: int | str | None = Field(default=None, description="'4M' means 4·2^20 tokens")
    mode: Literal["full", "lora", "qlora"] | None = None
    lora_rank: int | None = None
    precision: Literal["bf16", "fp8"] | None = None
    framework: Literal["megatron", "deepspeed", "fsdp", "nanotron"] | None = None

    def merged(self, patch: "Scenario | None") -> "Scenario":
        if patch is None:
            return self
        changes = patch.model_dump(exclude_none=True)
        if "global_batch" in changes:
            changes.setdefault("global_batch_tokens", None)
        if "global_batch_tokens" in changes:
            changes.setdefault("global_batch", None)
        if "model" in changes:
            changes.setdefault("params", None)
        if "params" in changes:
            changes.setdefault("model", None)
        if "gpu" in changes:  # a new GPU type comes with its own node size and network unless given
            changes.setdefault("gpus_per_node", None)
            changes.setdefault("network", None)
        return self.model_copy(update=changes)


class ToolExpectation(_Data):
    """A tool call the turn must make: one of `name`, whose arguments carry the scenario's key
    values (when `scenario` is true) and the given `args`."""

    name: list[str]
    args: dict[str, Union[int, float, str, bool, list[Union[int, str]]]] = Field(
        default_factory=dict, description="a list is a set of alternatives")
    scenario: bool = Field(default=True, description="check model/gpu/gpus/seq_len/batch/mode against the scenario")
    scenario_keys: list[str] | None = Field(default=None, description="only these scenario keys (None: all given)")
    plans: bool = Field(default=True, description="the turn's plan(s) must be among the arguments")

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value):
        if isinstance(value, str):
            return {"name": [value]}
        if isinstance(value, list):
            return {"name": value}
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return {**value, "name": [value["name"]]}
        return value


Keyword = Union[str, list[str]]  # a list is a set of alternatives; each is a case-insensitive regex


class Expect(_Data):
    tools: list[ToolExpectation] = Field(default_factory=list)
    budget: int = Field(default=6, ge=0, description="most tool calls allowed in this turn")
    plan: Literal["auto", "none"] | None = Field(
        default=None, description="auto: the plan stated must equal the engine's recommendation "
                                  "(or the answer must say nothing fits when the engine finds nothing)")
    plan_fields: list[str] | None = Field(default=None, description="fields the stated plan must give")
    keywords: list[Keyword] = Field(default_factory=list)
    truth_keywords: bool = Field(default=True, description="also require the facts the engine's truth implies")
    forbidden: list[Forbidden] = Field(default_factory=lambda: ["echo_system_prompt", "leak_secret",
                                                                "invent_config", "empty_answer"])
    forbidden_patterns: list[str] = Field(default_factory=list, description="regexes the answer must not match")
    numbers: bool = Field(default=True, description="every number stated must be backed by a tool result")


class SideExpect(_Data):
    """What one side of a side-by-side answer must give (graders/sides.py)."""

    plan: Literal["auto"] | None = Field(
        default=None, description="auto: the plan stated for this side must equal the engine's recommendation "
                                  "for the side's scenario (or say nothing fits when the engine finds nothing)")
    plan_fields: list[str] | None = Field(default=None, description="fields the side's plan must give")


class Side(_Data):
    """One side of an "A vs B" question: how an answer names it, and its scenario (the turn's
    scenario with `change` applied; no change: the turn's scenario itself)."""

    label: Keyword = Field(description="how an answer names this side: a case-insensitive regex, or a list of "
                                       "alternatives, each starting a word ('H100', ['LoRA', 'low-rank'])")
    name: str | None = Field(default=None, description="what failure messages call it (default: the first label)")
    change: Scenario | None = None
    expect: SideExpect = Field(default_factory=SideExpect)

    def labels(self) -> list[str]:
        return [self.label] if isinstance(self.label, str) else list(self.label)

    @property
    def title(self) -> str:
        return self.name or self.labels()[0]


class Measured(_Data):
    """What the user says their run measured: at most one speed figure (tokens/s per GPU, step
    time or MFU), and/or the peak memory per GPU."""

    tokens_per_s_per_gpu: float | None = Field(default=None, gt=0)
    step_s: float | None = Field(default=None, gt=0)
    mfu: float | None = Field(default=None, gt=0, lt=1, description="a fraction: 38 % is 0.38")
    peak_gib: float | None = Field(default=None, gt=0, description="peak memory per GPU, GiB (compared, not fitted)")

    @property
    def has_speed(self) -> bool:
        return any(v is not None for v in (self.tokens_per_s_per_gpu, self.step_s, self.mfu))

    @model_validator(mode="after")
    def _one(self) -> "Measured":
        speeds = sum(v is not None for v in (self.tokens_per_s_per_gpu, self.step_s, self.mfu))
        if speeds > 1 or (speeds == 0 and self.peak_gib is None):
            raise ValueError("`measured` gives exactly one of tokens_per_s_per_gpu, step_s, mfu "
                             "(and may add peak_gib), or peak_gib alone")
        return self


class Turn(_Data):
    user: str = Field(min_length=1)
    change: Scenario | None = Field(default=None, description="what this turn changes in the scenario (cumulative)")
    truth: TruthKind | None = Field(default=None, description="default: from the family")
    plan: dict[str, Union[int, str, bool]] | None = Field(default=None, description="the plan asked about (evaluate)")
    plans: list[dict[str, Union[int, str, bool]]] | None = Field(default=None, description="A and B (compare)")
    sides: list[Side] | None = Field(default=None, description="side-by-side: each side's plan graded on its own")
    measured: Measured | None = Field(default=None, description="the user's measured run (truth: calibrate)")
    profile: Literal["measured"] | None = Field(
        default=None, description="measured: the truth is computed with the profile fitted to the latest earlier "
                                  "turn's measured run (\"with our profile …\"; evals/truth_profile.py)")
    expect: Expect = Field(default_factory=Expect)

    @model_validator(mode="after")
    def _sides_apart(self) -> "Turn":
        if self.sides is None:
            return self
        if len(self.sides) < 2:
            raise ValueError("`sides` needs two sides or more")
        names = [label.lower() for side in self.sides for label in side.labels()]
        if len(names) != len(set(names)):
            raise ValueError("each side needs its own label")
        if self.expect.plan is not None:
            raise ValueError("a side-by-side turn states its plans per side (`sides: [{expect: {plan: auto}}]`), "
                             "not in `expect.plan`")
        return self

    def side_scenarios(self, scenario: Scenario) -> list[Scenario]:
        """Each side's scenario, from the turn's effective one."""
        return [scenario.merged(side.change) for side in self.sides or []]


class Case(_Data):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    family: Family
    description: str = ""
    scenario: Scenario = Field(default_factory=Scenario)
    turns: list[Turn] = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _single_turn(cls, value):
        if isinstance(value, dict) and "user" in value and "turns" not in value:
            value = dict(value)
            turn = {k: value.pop(k) for k in ("user", "change", "expect", "truth", "plan", "plans", "sides", "measured",
                                              "profile")
                    if k in value}
            value["turns"] = [turn]
        return value

    @model_validator(mode="after")
    def _plans_given(self) -> "Case":
        for i, t in enumerate(self.turns):
            kind = truth_kind(self, t)
            if kind in ("compare", "calibrate_compare") and (not t.plans or len(t.plans) != 2):
                raise ValueError(f"turn {i + 1}: a {kind} turn needs `plans: [A, B]`")
            if kind in ("evaluate", "range", "step_range", "calibrate", "memory_range", "calibrate_compare") and not t.plan:
                raise ValueError(f"turn {i + 1}: a {kind} turn needs `plan: {{...}}`")
            if kind in ("calibrate", "calibrate_compare") and (t.measured is None or not t.measured.has_speed):
                raise ValueError(f"turn {i + 1}: a {kind} turn needs `measured: {{...}}` with a speed figure "
                                 "(tokens_per_s_per_gpu, step_s or mfu)")
            if kind == "impossible" and (t.measured is None or (t.measured.has_speed and not t.plan)):
                raise ValueError(f"turn {i + 1}: an impossible turn needs `measured: {{...}}`, and a `plan` when it "
                                 "gives a speed figure")
            if t.profile and not any(p.measured is not None and p.measured.has_speed and p.plan
                                     for p in self.turns[:i]):
                raise ValueError(f"turn {i + 1}: `profile: measured` needs an earlier turn with a `plan` and a "
                                 "measured speed (tokens_per_s_per_gpu, step_s or mfu)")
            if t.profile and kind in ("calibrate", "calibrate_compare", "impossible"):
                raise ValueError(f"turn {i + 1}: a {kind} turn starts from the shipped calibration; "
                                 "`profile: measured` does not apply to it")
        return self

    def scenarios(self) -> list[Scenario]:
        """The effective scenario at each turn (the base plus every change so far)."""
        out, current = [], self.scenario
        for t in self.turns:
            current = current.merged(t.change)
            out.append(current)
        return out


DEFAULT_TRUTH: dict[str, TruthKind] = {
    "recommend": "recommend", "evaluate": "evaluate", "compare": "compare", "whatif": "recommend",
    "explain": "none", "export": "recommend", "nothing_fits": "recommend", "multi_turn": "recommend",
    "out_of_domain": "none", "adversarial": "none",
}


def truth_kind(case: Case, turn: Turn) -> TruthKind:
    return turn.truth or DEFAULT_TRUTH[case.family]
