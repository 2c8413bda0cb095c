"""What the results panel shows, computed from the engine's Recommendation: rows, charts, configs.

The templates only lay this out; every number here is read from an engine result object.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from .charts import memory_chart, pipeline_chart, time_chart
from .schemas import EXPORT_FORMATS, ExportRequest, RecommendRequest

log = logging.getLogger("shardwise.web")
# Plans drawn in the bar charts: the winner and the runners-up a reader can still compare by eye.
PLANS_IN_CHARTS = 5
FORMAT_TITLES = {"deepspeed": "DeepSpeed", "torchtitan": "torchtitan", "fsdp": "FSDP2", "accelerate": "Accelerate",
                 "megatron": "Megatron-LM", "megatron-bridge": "Megatron-Bridge", "nanotron": "Nanotron",
                 "launch": "Launch"}


def plan_label(s: Any) -> str:
    """'TP 8 · PP 2 · DP 4 · ZeRO-1 · mb 1 · selective recompute' from a StrategySummary."""
    parts = [f"TP {s.tp}"]
    for name in ("pp", "vpp", "cp", "ep", "etp"):
        value = getattr(s, name, 1)
        if value > 1:
            parts.append(f"{name.upper()} {value}")
    parts += [f"DP {s.dp}", f"ZeRO-{s.zero_stage}", f"mb {s.micro_batch}", f"{s.recompute} recompute"]
    if getattr(s, "sequence_parallel", False) and s.tp > 1:
        parts.insert(1, "SP")
    return " · ".join(parts)


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
    why: list[str] = field(default_factory=list)
    nothing_fits: str | None = None
    suggestions: list[str] = field(default_factory=list)

    @property
    def best(self) -> Any:
        return self.rows[0].evaluation if self.rows else None


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _evaluation(plan: Any) -> Any:
    """A ranked plan is an Evaluation, or wraps one."""
    return plan if _get(plan, "memory") is not None else _get(plan, "evaluation")


def _texts(items: Any) -> list[str]:
    out = []
    for item in items or []:
        if isinstance(item, str):
            out.append(item)
        else:
            msg = _get(item, "message") or _get(item, "text") or _get(item, "summary")
            if msg:
                out.append(str(msg))
    return out


def build_view(rec: Any, request: RecommendRequest | None = None, exports: bool = True) -> ResultView:
    plans = [_evaluation(p) for p in (_get(rec, "plans") or [])]
    plans = [p for p in plans if p is not None]
    rows = [PlanRow(rank=i + 1, label=plan_label(e.strategy), evaluation=e, memory_gib=e.memory.total_gib,
                    step_ms=e.time.step_s * 1e3 if e.time else None,
                    tokens_per_s_per_gpu=e.throughput.tokens_per_s_per_gpu if e.throughput else None,
                    mfu=e.throughput.mfu if e.throughput else None) for i, e in enumerate(plans)]
    view = ResultView(rows=rows, searched=_get(rec, "searched"), excluded=dict(_get(rec, "excluded") or {}))
    if rows:
        best = rows[0].evaluation
        view.model, view.cluster = best.model, best.cluster
        charted = rows[:PLANS_IN_CHARTS]
        view.memory_svg = Markup(memory_chart([(f"#{r.rank} {r.label}", r.evaluation.memory) for r in charted]))
        timed = [(f"#{r.rank} {r.label}", r.evaluation.time) for r in charted if r.evaluation.time]
        if timed:
            view.time_svg = Markup(time_chart(timed))
        s = best.strategy
        if s.pp > 1:
            compute = best.time.compute_s if best.time else None
            try:
                view.pipeline_svg = Markup(pipeline_chart(s.pp, s.vpp, s.grad_accum, compute, s.recompute))
            except ValueError as exc:  # e.g. an interleaved schedule the engine already flags
                log.info("no pipeline diagram: %s", exc)
        view.why = _texts(_get(rec, "why") or _get(_get(rec, "explanation"), "reasons"))
        if exports and request is not None:
            view.configs = export_tabs(request, s)
    else:
        view.nothing_fits = (_get(rec, "message") or _get(_get(rec, "nothing_fits"), "message")
                             or "No plan fits in memory on this cluster.")
        view.suggestions = _texts(_get(rec, "suggestions") or _get(_get(rec, "nothing_fits"), "suggestions"))
    return view


def export_tabs(request: RecommendRequest, s: Any) -> list[ConfigTab]:
    """Every framework's config for the winning plan; a framework that cannot express it says why."""
    from . import engine_calls
    from ..engine.errors import ShardwiseInputError

    scenario = request.model_dump(exclude={"top_k", "headroom", "constraints"})
    plan = {"tp": s.tp, "pp": s.pp, "vpp": s.vpp, "cp": s.cp, "ep": s.ep, "etp": s.etp, "zero": s.zero_stage,
            "micro_batch": s.micro_batch, "recompute": s.recompute, "sequence_parallel": s.sequence_parallel}
    tabs = []
    for fmt in EXPORT_FORMATS:
        title = FORMAT_TITLES.get(fmt, fmt)
        try:
            out = engine_calls.export(ExportRequest(**scenario, **plan, format=fmt))
            tabs.append(ConfigTab(fmt, title, out.filename, out.text))
        except ShardwiseInputError as exc:
            tabs.append(ConfigTab(fmt, title, engine_calls.default_filename(fmt), None, str(exc)))
        except ImportError:
            return []  # the exporters are not installed in this build
        except Exception:  # noqa: BLE001 - one broken exporter must not take the page down
            log.exception("export to %s failed", fmt)
            tabs.append(ConfigTab(fmt, title, engine_calls.default_filename(fmt), None,
                                  "this export failed unexpectedly; it has been logged"))
    return tabs
