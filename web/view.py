"""What the results panel shows, computed from the engine's Recommendation: rows, charts, configs.

The templates only lay this out; every number here is read from an engine result object.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from ..engine.plan_label import plan_label
from ..present import TERM_LABELS, count_noun, memory_risk_lines, mfu_basis, seconds, signed
from .charts import memory_chart, pipeline_chart, time_chart
from .schemas import EXPORT_FORMATS, ExportRequest, RecommendRequest, ScenarioRequest
from .setting_labels import page_text

log = logging.getLogger("shardwise.web")
# Plans drawn in the bar charts: the winner and the runners-up a reader can still compare by eye.
PLANS_IN_CHARTS = 5
FORMAT_TITLES = {"deepspeed": "DeepSpeed", "torchtitan": "torchtitan", "fsdp": "FSDP2", "accelerate": "Accelerate",
                 "megatron": "Megatron-LM", "megatron-bridge": "Megatron-Bridge", "nanotron": "Nanotron",
                 "launch": "Launch"}


def speed_words(speedup: float) -> str:
    """1.083 -> '8.3% faster'; 1.0002 -> '0.02% faster' (as many digits as it takes to be non-zero)."""
    percent = (speedup - 1.0) * 100
    digits = 1 if percent >= 1 else 2 if percent >= 0.01 else 3
    return f"{percent:.{digits}f}% faster"


@dataclass(frozen=True)
class PlanRow:
    rank: int
    label: str
    evaluation: Any
    memory_gib: float
    step_ms: float | None
    tokens_per_s_per_gpu: float | None
    mfu: float | None


@dataclass(frozen=True)
class ConfigTab:
    format: str
    title: str
    filename: str
    text: str | None
    error: str | None = None


@dataclass(frozen=True)
class TermLine:
    label: str
    winner: str  # formatted value of the recommended plan
    other: str  # formatted value of the plan it beats
    delta: str  # winner − other


@dataclass(frozen=True)
class WhyView:
    """Why #1 beats the first alternative that is predicted slower (engine.explain.compare)."""

    against_rank: int
    against_label: str
    speedup: float
    speed_words: str
    decisive: list[TermLine]
    offsetting: list[TermLine]
    tie_note: str | None = None


@dataclass(frozen=True)
class FixLine:
    change: str
    verdict: str
    detail: str


@dataclass(frozen=True)
class NothingFitsView:
    headline: str
    fixes: list[FixLine]
    blocking: list[str]


@dataclass
class ResultView:
    rows: list[PlanRow]
    model: Any = None
    cluster: Any = None
    searched: int | None = None
    excluded: dict[str, int] = field(default_factory=dict)
    memory_svg: Markup | None = None
    time_svg: Markup | None = None
    pipeline_svg: Markup | None = None
    configs: list[ConfigTab] = field(default_factory=list)
    why: WhyView | None = None
    near_ties: str | None = None
    nothing_fits: NothingFitsView | None = None
    post_training: str | None = None
    setup: str | None = None  # what was searched for: sequence, global batch (sequences and tokens), mode, precision
    mfu_basis: str = ""  # " of the FP8 peak" for an FP8 scenario (present.mfu_basis), as the CLI says it
    memory_risk: list[str] = field(default_factory=list)  # present.memory_risk_lines: may not fit, the safer plan

    @property
    def best(self) -> Any:
        return self.rows[0].evaluation if self.rows else None

    @property
    def plan_json(self) -> str:
        """The winner in the chat tools' plan names: the page hands it to the chat as the plan on the table."""
        from ..tools.scenario import Plan

        return Plan.from_strategy(self.best.strategy).model_dump_json(exclude_none=True) if self.rows else ""


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _evaluation(plan: Any) -> Any:
    """A ranked plan is an Evaluation, or wraps one."""
    return plan if _get(plan, "memory") is not None else _get(plan, "evaluation")


def build_view(rec: Any, request: RecommendRequest | None = None, exports: bool = True) -> ResultView:
    plans = [_evaluation(p) for p in (_get(rec, "plans") or [])]
    plans = [p for p in plans if p is not None]
    rows = [PlanRow(rank=i + 1, label=plan_label(e.strategy, 'page'), evaluation=e, memory_gib=e.memory.total_gib,
                    step_ms=e.time.step_s * 1e3 if e.time else None,
                    tokens_per_s_per_gpu=e.throughput.tokens_per_s_per_gpu if e.throughput else None,
                    mfu=e.throughput.mfu if e.throughput else None) for i, e in enumerate(plans)]
    view = ResultView(rows=rows, searched=_get(rec, "searched"), excluded=dict(_get(rec, "excluded") or {}),
                      mfu_basis=mfu_basis(_get(_get(rec, "setup"), "precision"),
                                          rows[0].evaluation.warnings if rows else ()))
    view.setup = setup_line(_get(rec, "setup"))
    if rows:
        best = rows[0].evaluation
        view.model, view.cluster = best.model, best.cluster
        charted = rows[:PLANS_IN_CHARTS]
        view.memory_svg = Markup(memory_chart([(f"#{r.rank} {plan_label(r.evaluation.strategy, 'chart')}", r.evaluation.memory)
                                               for r in charted]))
        timed = [(f"#{r.rank} {plan_label(r.evaluation.strategy, 'chart')}", r.evaluation.time) for r in charted if r.evaluation.time]
        if timed:
            view.time_svg = Markup(time_chart(timed))
        s = best.strategy
        if s.pp > 1:
            compute = best.time.compute_s if best.time else None
            try:
                view.pipeline_svg = Markup(pipeline_chart(s.pp, s.vpp, s.grad_accum, compute, s.recompute))
            except ValueError as exc:  # e.g. an interleaved schedule the engine already flags
                log.info("no pipeline diagram: %s", exc)
        view.why = why_it_wins(plans)
        view.near_ties = near_ties_note(_get(rec, "near_best") or 0, _get(rec, "ranking_resolution") or 0.0)
        view.post_training = post_training_note(best)
        # the CLI prints these under its BEST line (cli/recommend.py); the page under the recommended plan
        view.memory_risk = memory_risk_lines(_get(rec, "memory_risk"), "page")
        if exports and request is not None:
            view.configs = export_tabs(request, s)
    elif _get(rec, "nothing_fits") is not None:
        view.nothing_fits = nothing_fits_view(rec.nothing_fits)
    return view


# The form's own words for the setup's values (its select options), so the line reads as what was chosen.
SETUP_MODE_WORDS = {"full": "full training", "lora": "LoRA", "qlora": "QLoRA", "dpo": "DPO", "grpo": "GRPO", "ppo": "PPO"}
FRAMEWORK_WORDS = {"megatron": "Megatron", "deepspeed": "DeepSpeed", "fsdp": "FSDP2 / torchtitan", "nanotron": "nanotron"}


def setup_line(setup: Any) -> str | None:
    """'sequence 8,192 tokens · global batch 512 sequences (4,194,304 tokens) · full training · BF16 · Megatron':
    the numbers the search used, as the CLI's `setup` line gives them. The form takes "4M" tokens (rounded down to
    whole sequences) and, for GRPO/PPO with a response length, builds the sequence from prompt + response; without
    this line a page user could not see what their entries became."""
    if setup is None:
        return None
    mode = "-".join(SETUP_MODE_WORDS.get(part, part) for part in str(_get(setup, "mode")).split("-"))
    mode = mode.replace("-LoRA", " + LoRA").replace("-QLoRA", " + QLoRA")
    if "LoRA" in mode:  # the rank sizes the adapters: said, as the chat says "QLoRA (rank 16)"
        mode += f" (rank {_get(setup, 'lora_rank')})"
    return (f"sequence {_get(setup, 'seq_len'):,} tokens · global batch {count_noun(_get(setup, 'global_batch'), 'sequence')} "
            f"({_get(setup, 'global_batch_tokens'):,} tokens) · {mode} · {str(_get(setup, 'precision')).upper()} · "
            f"{FRAMEWORK_WORDS.get(_get(setup, 'framework'), _get(setup, 'framework'))}")


PEAK_PHASES = {"policy_training": "the policy's training step", "rollout": "rollout generation",
               "reference_forward": "the reference forward"}


def post_training_note(best: Any) -> str | None:
    """One sentence on a DPO/GRPO/PPO step: what was modelled, where the memory peaks, the defaults used."""
    p = _get(best, "post_training")
    if p is None:
        return None
    phase = PEAK_PHASES.get(best.memory.peak_phase or "", best.memory.peak_phase)
    if p.algorithm == "dpo":
        return f"DPO, {p.pairs_per_step:,} pairs per step; reference: {p.reference}. Memory peaks during {phase}."
    note = (f"{p.algorithm.upper()} co-located: prompt {p.prompt_len:,} + response {p.response_len:,} tokens, "
            f"{count_noun(p.group_size, 'sample')} per prompt, rollout on engines of "
            f"{count_noun(p.inference_tp, 'GPU')}; reference: "
            f"{p.reference}. Memory peaks during {phase}.")
    if p.defaults_used:
        note += f" Not given, verl's defaults used: {', '.join(d.replace('_', ' ') for d in p.defaults_used)}."
    return note


def near_ties_note(near_best: int, resolution: float) -> str | None:
    if not near_best:
        return None
    verb = "is" if near_best == 1 else "are"
    return (f"{count_noun(near_best, 'other plan')} {verb} predicted within {resolution:.0%} of this one: closer "
            f"than the model can rank (measured runs order such pairs little better than chance). Choose among them "
            f"on what you trust — fewer parallel dimensions, a layout you have run.")


def why_it_wins(plans: list[Any]) -> WhyView | None:
    """Against the first alternative predicted slower, as `shardwise recommend` explains it."""
    from ..engine.explain import compare

    if len(plans) < 2:
        return None
    best = plans[0]
    for rank, other in enumerate(plans[1:], start=2):
        cmp = compare(best, other)
        if cmp.decided_by != "tie":
            break
    else:
        tied = count_noun(len(plans) - 1, "plan") + (" predicts" if len(plans) == 2 else " predict")
        return WhyView(2, plan_label(plans[1].strategy, 'page'), 1.0, "", [], [],
                       tie_note=f"the next {tied} the same step time; the winner is first "
                                "by memory, then by the simpler layout")
    line = lambda t: TermLine(TERM_LABELS.get(t.term, t.term), seconds(t.a), seconds(t.b), signed(t.a - t.b, "s"))  # noqa: E731
    return WhyView(rank, plan_label(other.strategy, 'page'), cmp.speedup or 1.0, speed_words(cmp.speedup or 1.0),
                   [line(t) for t in cmp.decisive[:3]], [line(t) for t in cmp.offsetting[:2]])


CHANGE_WORDS = {"num_gpus": "{} GPUs", "mode": "{} training", "recompute": "{} recompute", "zero_stage": "ZeRO-{}",
                "gpu": "{}", "gpus_per_node": "{} GPUs per node"}


MODE_WORDS = {"lora": "LoRA", "qlora": "QLoRA", "full": "full"}
RULE_WORDS = {"larger_gpu": "a larger GPU", "more_gpus": "more GPUs"}  # a fix with no single value (it read "larger gpu")


def change_words(change: dict[str, Any], rule: str) -> str:
    """{'num_gpus': 384} -> '384 GPUs'; {'mode': 'qlora'} -> 'QLoRA training'."""
    words = [CHANGE_WORDS.get(k, k + "={}").format(MODE_WORDS.get(v, v) if k == "mode" else v)
             for k, v in change.items() if v is not None]
    return ", ".join(words) or RULE_WORDS.get(rule, rule.replace("_", " "))


def nothing_fits_view(n: Any) -> NothingFitsView:
    """The engine's NothingFits: the leanest plan's memory, and each change that would (or would not) fit."""
    if n.reason == "no_valid_plan":
        return NothingFitsView("Every combination of TP, PP, CP, EP and DP breaks a rule on this cluster.", [],
                               [page_text(v) for v in n.blocking])
    lean = f" ({plan_label(n.lowest_memory_plan, 'page')})" if n.lowest_memory_plan is not None else ""
    headline = (f"The leanest valid plan{lean} needs {n.lowest_memory_gib:.1f} GiB per GPU; "
                f"{n.usable_gib:.1f} GiB are usable ({n.capacity_gib:g} GiB less headroom).")
    fixes = []
    for o in n.options:
        change = change_words(o.change, o.rule)
        if not o.applicable:
            fixes.append(FixLine(change, "not applicable", o.note))
            continue
        need = f"needs {o.lowest_memory_gib:.1f} GiB" if o.lowest_memory_gib is not None else ""
        plan = f"leanest plan {plan_label(o.plan, 'page')}" if (o.fits and o.plan is not None) else ""
        fixes.append(FixLine(change, "fits" if o.fits else "does not fit",
                             " · ".join(x for x in (need, plan, o.note) if x)))
    return NothingFitsView(headline, fixes, [])


def export_tabs(request: RecommendRequest, s: Any) -> list[ConfigTab]:
    """Every framework's config for the winning plan; a framework that cannot express it says why."""
    from . import engine_calls
    from ..engine.errors import ShardwiseInputError

    # the scenario alone: the search's and the cost's fields are not an export's (ExportRequest refuses them)
    scenario = request.model_dump(include=set(ScenarioRequest.model_fields))
    plan = {"tp": s.tp, "pp": s.pp, "vpp": s.vpp, "cp": s.cp, "ep": s.ep, "etp": s.etp, "zero": s.zero_stage,
            "hsdp": s.hsdp_replicas, "micro_batch": s.micro_batch, "recompute": s.recompute, "sequence_parallel": s.sequence_parallel}
    tabs = []
    for fmt in EXPORT_FORMATS:
        title = FORMAT_TITLES.get(fmt, fmt)
        try:
            out = engine_calls.export(ExportRequest(**scenario, **plan, format=fmt))
            tabs.append(ConfigTab(fmt, title, out.filename, out.text))
        except ShardwiseInputError as exc:
            tabs.append(ConfigTab(fmt, title, engine_calls.default_filename(fmt), None, page_text(exc)))
        except ImportError:
            return []  # the exporters are not installed in this build
        except Exception:  # noqa: BLE001 - one broken exporter must not take the page down
            log.exception("export to %s failed", fmt)
            tabs.append(ConfigTab(fmt, title, engine_calls.default_filename(fmt), None,
                                  "this export failed unexpectedly; it has been logged"))
    # Formats that can express the plan first (stable otherwise), so the open tab holds a file.
    return sorted(tabs, key=lambda tab: tab.text is None)
