"""Ground truth, computed by the engine at eval time from a turn's scenario.

Nothing here is stored in the case files, so a case stays right when the formulas improve:
the plan an answer must recommend is whatever `engine.search.recommend` returns today, the
verdict on a given plan is whatever `engine.evaluate.evaluate` says, and the term that decides
"why A over B" is the exposed-time (or memory) term the engine finds largest between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from ..engine.errors import ShardwiseInputError
from . import scenario as sc
from .case import Scenario

if TYPE_CHECKING:
    from ..engine.results import Evaluation

# Words an answer uses for each exposed-time term of TimeReport (one alternative suffices).
TIME_TERM_WORDS: dict[str, list[str]] = {
    "compute_s": [r"compute", r"FLOP", r"recomput", r"GEMM", r"arithmetic"],
    "tp_comm_s": [r"TP comm", r"tensor[- ]parallel\w*\s+comm", r"all-?reduce", r"all-?gather", r"reduce-?scatter"],
    "cp_comm_s": [r"CP comm", r"context[- ]parallel\w*\s+comm", r"ring attention", r"all-?gather", r"KV exchange"],
    "ep_comm_s": [r"EP comm", r"all-?to-?all", r"expert[- ]parallel\w*\s+comm", r"token dispatch"],
    "pp_bubble_s": [r"bubble", r"pipeline (?:fill|flush|idle)"],
    "pp_comm_s": [r"PP comm", r"pipeline[- ]parallel\w*\s+comm", r"point-to-point", r"p2p", r"send/recv",
                  r"activation transfer"],
    "dp_comm_s": [r"DP comm", r"data[- ]parallel\w*\s+comm", r"gradient (?:all-?reduce|reduce-?scatter|sync)",
                  r"all-?reduce", r"reduce-?scatter"],
    "optimizer_s": [r"optimi[sz]er"],
}
MEMORY_WORDS = [r"memory", r"\bOOM\b", r"out of memory", r"does(?:n't| not) fit", r"won't fit", r"GiB"]
INVALID_WORDS = [r"invalid", r"not valid", r"isn't valid", r"not (?:a )?(?:divisor|divisible)", r"does(?:n't| not) divide",
                 r"must divide", r"violat", r"cannot", r"can't", r"impossible", r"not possible", r"not allowed"]
NOT_FIT_WORDS = [r"does(?:n't| not) fit", r"won't fit", r"will not fit", r"cannot fit", r"can't fit", r"out of memory",
                 r"\bOOM\b", r"exceed", r"too (?:big|large|much memory)", r"over (?:the )?(?:capacity|budget|memory)",
                 r"not enough memory", r"no (?:valid |feasible )?(?:plan|configuration|layout|strategy)\w* (?:fits|works)",
                 r"nothing fits", r"infeasible", r"no plan"]
FITS_WORDS = [r"\bfits?\b", r"within (?:the )?(?:memory|capacity|\d)", r"headroom", r"enough memory", r"free"]


@dataclass(frozen=True)
class Truth:
    kind: str
    plan: dict | None = None  # the engine's recommended plan ({tp, pp, dp, ...}), None when nothing fits
    evaluation: "Evaluation | None" = None  # of that plan, or of the plan asked about
    evaluations: "tuple[Evaluation, ...]" = ()  # compare: A and B
    winner: int | None = None  # compare: 0 for A, 1 for B, None for neither/tie
    deciding_term: str | None = None  # compare: TimeReport field, "memory" or "validity"
    keywords: tuple[tuple[str, ...], ...] = field(default_factory=tuple)  # facts the answer must state
    is_moe: bool = False
    error: str | None = None  # the engine rejected the scenario (bad input is the point of some cases)
    stated: tuple = ()  # figures the answer must state: options -> groups -> (kind, value) (evals/stated.py)


def evaluate(*args, profile=None):
    from ..engine.evaluate import evaluate as engine_evaluate  # imported when first needed

    return engine_evaluate(*args, profile=profile)


def plan_fields(e: "Evaluation") -> dict:
    s = e.strategy
    return {"tp": s.tp, "pp": s.pp, "vpp": s.vpp, "cp": s.cp, "ep": s.ep, "etp": s.etp, "dp": s.dp,
            "zero": s.zero_stage, "micro_batch": s.micro_batch, "grad_accum": s.grad_accum,
            "recompute": s.recompute}


def _scenario_key(s: Scenario) -> str:
    return s.model_dump_json(exclude_none=True)


@lru_cache(maxsize=256)
def _recommend_cached(key: str, profile_json: str | None = None):
    from ..engine.calibration.profile import CalibrationProfile
    from ..engine.search import recommend

    specs = sc.build(Scenario.model_validate_json(key))
    profile = CalibrationProfile.model_validate_json(profile_json) if profile_json else None
    return recommend(specs.model, specs.cluster, specs.setup, top_k=1, profile=profile)


def _profile_json(profile) -> str | None:
    return profile.model_dump_json() if profile is not None else None


# A GPU count ends the number: not a digit, a decimal, a unit or a name's suffix — so "32" is not
# found in "Qwen2.5-32B", "32k context" or "32 GB" ("32 GPUs", "32x H100", "32 × H100" still count).
GPU_COUNT_END = r"(?![\d,]|\.\d|[a-wyz]|\s*(?:[GMT]i?B|%|ms)\b)"


def fix_words(nothing) -> list[str]:
    """What the engine says would make a plan fit, as words an answer would use for each fix."""
    words: list[str] = []
    if nothing is None:
        return words
    if nothing.min_gpus:
        words += [rf"(?<![\d,.]){n}{GPU_COUNT_END}" for n in (nothing.min_gpus, f"{nothing.min_gpus:,}")]
    if nothing.larger_gpu:
        words += _gpu_words(nothing.larger_gpu)
    rule_words = {"lora": [r"\bLoRA\b"], "qlora": [r"QLoRA"], "recompute_full": [r"full (?:activation )?recomput"],
                  "zero3": [r"ZeRO[- ]?3", r"\bFSDP\b"], "more_gpus": [r"more GPUs"]}
    for option in nothing.options:
        if option.applicable and option.fits:
            if option.rule == "larger_gpu" and option.change.get("gpu"):
                words += _gpu_words(str(option.change["gpu"]))
            words += rule_words.get(option.rule, [])
    return sorted(set(words))


def _gpu_words(gpu: str) -> list[str]:
    from ..engine.hardware_catalog import get_gpu

    try:
        spec = get_gpu(gpu)
        names = [spec.id, spec.name, *spec.aliases]
    except ShardwiseInputError:
        names = [gpu]
    return [re.escape(n).replace(r"\-", "[- ]?").replace(r"\ ", "[- ]?") for n in names]


def recommend_truth(s: Scenario, profile=None) -> Truth:
    """`profile`: the user's CalibrationProfile (evals/truth_profile.py), None for the shipped calibration."""
    try:
        rec = _recommend_cached(_scenario_key(s), _profile_json(profile))
        is_moe = sc.build(s).model.is_moe
    except ShardwiseInputError as exc:
        return Truth(kind="recommend", error=str(exc))
    if not rec.plans:
        # graders/plan.py requires "nothing fits"; here: one of the fixes the engine found must be named
        words = fix_words(rec.nothing_fits)
        return Truth(kind="recommend", is_moe=is_moe, keywords=(tuple(words),) if words else ())
    best = rec.plans[0]
    return Truth(kind="recommend", plan=plan_fields(best), evaluation=best, is_moe=is_moe)


def evaluate_truth(s: Scenario, plan: dict, profile=None) -> Truth:
    try:
        specs = sc.build(s)
        e = evaluate(specs.model, specs.cluster, specs.setup, sc.strategy(plan), profile=profile)
    except ShardwiseInputError as exc:
        return Truth(kind="evaluate", error=str(exc))
    if not e.valid:
        words = INVALID_WORDS
    elif not e.memory.fits:
        words = NOT_FIT_WORDS
    else:
        words = FITS_WORDS
    return Truth(kind="evaluate", evaluation=e, plan=plan_fields(e), keywords=(tuple(words),),
                 is_moe=specs.model.is_moe)


def _feasible(e: "Evaluation") -> bool:
    return e.valid and e.memory.fits and e.time is not None


def compare_truth(s: Scenario, plans: list[dict], profile=None) -> Truth:
    try:
        specs = sc.build(s)
        a, b = (evaluate(specs.model, specs.cluster, specs.setup, sc.strategy(p), profile=profile) for p in plans)
    except ShardwiseInputError as exc:
        return Truth(kind="compare", error=str(exc))
    if not _feasible(a) and not _feasible(b):
        return Truth(kind="compare", evaluations=(a, b), keywords=(tuple(INVALID_WORDS + NOT_FIT_WORDS),))
    if _feasible(a) != _feasible(b):
        loser = b if _feasible(a) else a
        term = "validity" if not loser.valid else "memory"
        words = INVALID_WORDS if term == "validity" else MEMORY_WORDS
        return Truth(kind="compare", evaluations=(a, b), winner=0 if _feasible(a) else 1, deciding_term=term,
                     keywords=(tuple(words),))
    if a.time.step_s == b.time.step_s:
        return Truth(kind="compare", evaluations=(a, b))
    winner = 0 if a.time.step_s < b.time.step_s else 1
    win, lose = (a, b) if winner == 0 else (b, a)
    # The term that decides: the largest saving the winner makes over the loser.
    term = max(TIME_TERM_WORDS, key=lambda f: getattr(lose.time, f) - getattr(win.time, f))
    return Truth(kind="compare", evaluations=(a, b), winner=winner, deciding_term=term,
                 keywords=(tuple(TIME_TERM_WORDS[term]),))


STRATEGY_FIELDS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero", "micro_batch", "recompute")


def resolve_plan(s: Scenario, plan: dict, profile=None) -> dict:
    """A case plan may be relative: {from: recommended, tp: 8} is the engine's pick with TP=8
    (with the user's profile when the turn has one)."""
    if plan.get("from") != "recommended":
        return plan
    best = recommend_truth(s, profile)
    if best.plan is None:
        raise ShardwiseInputError("the case's plan is relative to the recommendation, and nothing fits")
    base = {k: best.plan[k] for k in STRATEGY_FIELDS}
    return {**base, **{k: v for k, v in plan.items() if k != "from"}}


def compute(kind: str, s: Scenario, plan: dict | None = None, plans: list[dict] | None = None,
            measured=None, profile=None) -> Truth:
    """`profile`: a CalibrationProfile the truth is computed with (a turn's `profile: measured`,
    evals/truth_profile.py); a calibrate (or calibrate_compare) truth always starts from the shipped calibration."""
    from .truth_calibrate_compare import calibrate_compare_truth
    from .truth_impossible import impossible_truth
    from .truth_uncertainty import calibrate_truth, memory_range_truth, range_truth

    try:
        if kind == "recommend":
            return recommend_truth(s, profile)
        if kind == "evaluate":
            return evaluate_truth(s, resolve_plan(s, plan or {}, profile), profile)
        if kind == "compare":
            return compare_truth(s, [resolve_plan(s, p, profile) for p in plans or []], profile)
        if kind in ("range", "step_range"):
            return range_truth(kind, s, resolve_plan(s, plan or {}, profile), profile)
        if kind == "calibrate":
            return calibrate_truth(s, resolve_plan(s, plan or {}), measured)
        if kind == "calibrate_compare":
            return calibrate_compare_truth(s, resolve_plan(s, plan or {}), [resolve_plan(s, p) for p in plans or []],
                                           measured)
        if kind == "impossible":
            return impossible_truth(s, resolve_plan(s, plan) if plan else {}, measured)
        if kind == "memory_range":
            return memory_range_truth(s, resolve_plan(s, plan or {}, profile), measured, profile)
    except ShardwiseInputError as exc:
        return Truth(kind=kind, error=str(exc))
    return Truth(kind="none")
