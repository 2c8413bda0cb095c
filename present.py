"""How plans and their numbers are written for people, shared by the CLI and the web page:
term names, durations, signed differences, token counts, the plans table, a model's record.
Plan names come from the one formatter, engine/plan_label.py (the CLI's style is "cli").
Formatting only: every number is the engine's, rounded for reading."""

from __future__ import annotations

from .engine.model_spec import ModelSpec
from .engine.params import active_params, total_params
from .engine.plan_label import plan_label
from .engine.recommendation import MemoryRisk
from .engine.results import Evaluation, MemoryReport, StrategySummary

TERM_LABELS = {
    "compute_s": "compute", "tp_comm_s": "TP communication", "cp_comm_s": "CP communication",
    "ep_comm_s": "EP communication", "pp_bubble_s": "pipeline bubble", "pp_comm_s": "PP communication",
    "dp_comm_s": "DP communication", "optimizer_s": "optimizer step",
    "optimizer_phase_s": "optimizer phase", "step_s": "step",
    "rollout_s": "rollout generation", "old_logprob_s": "policy log-prob fwd", "reference_s": "reference forward",
    "reward_s": "reward model forward", "critic_s": "critic",
    "weights_gib": "weights", "gradients_gib": "gradients", "optimizer_gib": "optimizer states",
    "activations_gib": "activations", "other_gib": "other", "total_gib": "total memory",
}


def plan_text(s: StrategySummary) -> str:
    """The same plan in the form `--a` / `--b` accept."""
    return (f"tp={s.tp},pp={s.pp},vpp={s.vpp},cp={s.cp},ep={s.ep},etp={s.etp},zero={s.zero_stage},"
            f"hsdp={s.hsdp_replicas},mb={s.micro_batch},recompute={s.recompute},"
            f"sp={'on' if s.sequence_parallel else 'off'}")


SECONDS_FROM_MS = 10_000  # from ten seconds up a step time reads better in seconds


def duration_ms(milliseconds: float | None) -> str:
    """A step time given in ms, as people say it: '412.3 ms', or '59.9 s' from ten seconds up
    (the chat's answers and the compare tool's sentence)."""
    if milliseconds is None:
        return "n/a"
    if abs(milliseconds) >= SECONDS_FROM_MS:
        return f"{milliseconds / 1000:,.1f} s"
    return f"{milliseconds:,.1f} ms"


def duration_range_ms(bounds: list[float] | None) -> str:
    """[8819.0, 18400.0] -> '8.8 s–18.4 s': both ends of a step time's interval in one unit, the upper end's
    (duration_ms on each end would read '8,819.0 ms–18.4 s')."""
    if not bounds:
        return "n/a"
    low, high = bounds
    if abs(high) >= SECONDS_FROM_MS:
        return f"{low / 1000:,.1f} s–{high / 1000:,.1f} s"
    return f"{duration_ms(low)}–{duration_ms(high)}"


def seconds(value: float) -> str:
    return f"{value * 1e3:,.1f} ms" if abs(value) < 1 else f"{value:,.2f} s"


def likely(bounds: list[float] | None) -> str:
    """[1110.2, 1280.7] -> '1,110–1,281' (an 80 % interval, as the engine reports it)."""
    return f"{bounds[0]:,.0f}–{bounds[1]:,.0f}" if bounds else ""


def memory_band_note(m: MemoryReport) -> str | None:
    """One line, on the page and in the CLI, when a plan that fits at its point estimate has an 80 % memory band
    whose upper end is past the GPU's capacity (strictly above it): 1 run in 10 peaks above the band's top. A plan
    that does not fit gets nothing more (its verdict says so; a short run would not help). The page shows it for
    the recommended plan, which always fits."""
    if not m.fits or not m.total_gib_range or m.total_gib_range[1] <= m.capacity_gib:
        return None
    return f"the band's upper end is above the {m.capacity_gib:g} GiB: check the peak in a short run"


def memory_risk_lines(risk: MemoryRisk | None, style: str = "cli") -> list[str]:
    """The recommended plan may not fit (Recommendation.memory_risk, engine/memory_risk.py): the top of its 80 % memory
    band is above the GPU's capacity while its point estimate fits. Two lines, for the CLI under its BEST line and the
    page under the recommended plan: what may not fit, and the fastest plan within the ranking resolution whose whole
    band fits (or that none does). Nothing when the band fits."""
    if risk is None:
        return []
    head = (f"may not fit: up to {risk.upper_gib:.1f} GiB at the top of its 80 % memory band, above the "
            f"{risk.capacity_gib:g} GiB (1 run in 10 peaks above the band)")
    e = risk.band_fits
    if e is None or not e.memory.total_gib_range:
        return [head, f"no plan as fast (within the ranking resolution) keeps its band within {risk.capacity_gib:g} GiB: "
                      f"check the peak in a short run"]
    return [head, f"{plan_label(e.strategy, style)} keeps its band within it (up to {e.memory.total_gib_range[1]:.1f} "
                  f"GiB) for {risk.band_fits_slower_percent:.1f}% fewer tokens/s"]


def likely_note(throughput, memory: MemoryReport) -> str | None:
    """What the page's "likely" ranges are and where they come from, said once under the figures (the CLI says it
    on its `likely = …` line): the band's runs (the engine's range_basis) and docs/performance.md "Error bars"."""
    basis = getattr(throughput, "range_basis", None) if throughput is not None else None
    sources = ([f"step time and throughput, {basis.removeprefix('80 % band of ')}"] if basis else []) + \
              (["memory, the runs that report their peak"] if memory.total_gib_range else [])
    if not sources:
        return None
    # "8 in 10" is what a band of measured runs means; a band widened for an unchecked regime says so in its basis.
    meaning = "" if basis and "widened" in basis else \
        " (8 in 10 measured runs came within such a band of the model's prediction for them)"
    return f"“Likely” is an 80 % band{meaning} — {'; '.join(sources)} (docs/performance.md, “Error bars”)."


def mfu_basis(precision: str | None, warnings=()) -> str:
    """' of the FP8 peak' after an FP8 run's MFU: it is taken against the FP8 dense peak (docs/performance.md,
    "FLOPs, MFU and HFU"), twice BF16's on Hopper and Blackwell, so an FP8 plan's MFU read as a collapse beside the
    BF16 figures people quote. Nothing after a BF16 MFU, the usual basis, nor on a GPU without FP8 units (the
    plan's `fp8_unsupported` warning: GPUSpec.peak_tflops then takes the BF16 peak)."""
    if precision != "fp8" or any(getattr(w, "rule", None) == "fp8_unsupported" for w in warnings):
        return ""
    return " of the FP8 peak"


def plan_line(e: Evaluation, precision: str | None = None) -> str:
    """`precision`: the scenario's, where the evaluation does not carry its setup (a recommendation's plans)."""
    if e.throughput is None or e.time is None:
        return f"{plan_label(e.strategy, 'cli')}: memory {e.memory.total_gib:.1f} GiB"
    t = e.throughput
    precision = precision or (e.setup.precision if e.setup is not None else None)
    band = f", likely {likely(t.tokens_per_s_per_gpu_range)}" if t.tokens_per_s_per_gpu_range else ""
    return (f"{t.tokens_per_s_per_gpu:,.0f} tokens/s/GPU{band} ({t.tokens_per_s:,.0f} tokens/s), "
            f"MFU {t.mfu:.1%}{mfu_basis(precision, e.warnings)}, "
            f"step {seconds(e.time.step_s)}, memory {e.memory.total_gib:.1f} of {e.memory.capacity_gib:g} GiB"
            + ("" if e.memory.fits else " — DOES NOT FIT"))  # explain's --a/--b can name such a plan


def calibration_lines(e: Evaluation, indent: str) -> list[str]:
    """The profile note under a plan line, when a --profile was given."""
    return [f"{indent}{e.calibration}"] if e.calibration else []


def plans_table(plans: list[Evaluation]) -> list[str]:
    labels = [plan_label(e.strategy, "cli") for e in plans]
    width = max([len("plan"), *map(len, labels)]) + 2  # MoE labels outgrow any fixed width
    number = len(str(len(plans))) + 2
    lines = [f"  {'#':<{number}}{'plan':<{width}}{'tok/s/GPU':>10}{'MFU':>7}{'step':>11}{'GiB':>7}"]
    for i, (e, label) in enumerate(zip(plans, labels), 1):
        t = e.throughput
        lines.append(f"  {i:<{number}}{label:<{width}}{t.tokens_per_s_per_gpu:>10,.0f}{t.mfu:>7.1%}"
                     f"{seconds(e.time.step_s):>11}{e.memory.total_gib:>7.1f}")
    return lines


def signed(value: float, unit: str) -> str:
    """A difference with its sign: '+1.2 ms', '−0.57 GiB'. The sign is read off the printed digits, so a
    difference that rounds to zero reads '+0.00 GiB', never '−0.00 GiB'."""
    if unit == "s":
        shown = seconds(abs(value))
        negative = value < 0 and any(ch in "123456789" for ch in shown)
        return ("−" if negative else "+") + shown
    shown = f"{abs(value):.2f}"
    negative = value < 0 and any(ch in "123456789" for ch in shown)
    return f"{'−' if negative else '+'}{shown} {unit}"


# Plan knobs (StrategySummary's fields, engine/explain's and engine/whatif's knob names) as the plan label
# writes them: a one-knob change reads "SP on → off", not "sequence_parallel True → False".
KNOB_LABELS = {"tp": "TP", "pp": "PP", "vpp": "VPP", "cp": "CP", "ep": "EP", "etp": "ETP", "dp": "DP",
               "zero_stage": "ZeRO", "micro_batch": "micro-batch", "grad_accum": "grad-accum",
               "recompute": "recompute", "sequence_parallel": "SP", "hsdp_replicas": "HSDP replicas"}


def knob_value(value) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def knob_change(knob: str, before, after) -> str:
    """('sequence_parallel', True, False) -> 'SP on → off'; ('zero_stage', 3, 1) -> 'ZeRO 3 → 1'."""
    return f"{KNOB_LABELS.get(knob, knob)} {knob_value(before)} → {knob_value(after)}"


def count_noun(n: int, singular: str, plural: str | None = None) -> str:
    """(1, 'other plan') -> '1 other plan'; (21, 'other plan') -> '21 other plans'."""
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"


def tokens_text(n: float) -> str:
    """15e12 -> '15T', 2.5e9 -> '2.5B'."""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if n >= scale:
            return f"{n / scale:,.4g}{unit}"
    return f"{n:,.0f}"


def model_record(model: ModelSpec, model_id: str | None = None, aliases: tuple[str, ...] = ()) -> dict:
    return {"id": model_id or model.name, "params": total_params(model), "active_params": active_params(model),
            "aliases": list(aliases), **model.model_dump(mode="json")}
