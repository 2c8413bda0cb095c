"""recommend's words about exports: which formats write each plan, and — with `--export FMT` —
the faster plans that format refuses, set aside by cause."""

from __future__ import annotations

from ..engine.export import planning_framework
from ..engine.plan_label import plan_label
from ..engine.recommendation import Recommendation
from ..present import count_noun
from .flags import flag_for


def set_aside_lines(r: Recommendation) -> list[str]:
    """Under the header: what the chosen format costs the ranking."""
    if r.export_format is None:
        return []
    fmt = r.export_format
    lines = []
    runs_on = planning_framework(fmt, r.setup.framework)
    if runs_on != r.setup.framework:
        lines.append(f"note     {fmt} runs {runs_on}-style plans and these were ranked for {r.setup.framework}: "
                     f"add --framework {runs_on} for its own times")
    total = sum(a.count for a in r.set_aside)
    if not total:
        # with no plan ranked (nothing valid or nothing fits) there is nothing it writes or sets aside to speak of
        return lines + ([f"export   {fmt}: it writes every plan ranked here, none set aside"] if r.plans else [])
    where = (f"{count_noun(total, 'fitting plan')} ranked above the last plan shown" if r.plans
             else f"all {r.export_checked:,} fitting plans checked")
    lines.append(f"export   {fmt}: only plans it writes are ranked; {where} set aside:")
    best_step = r.plans[0].time.step_s if r.plans else None
    for a in r.set_aside:
        faster = f", {against_best_kept(best_step, a.fastest_step_s)}" if best_step and a.fastest_step_s else ""
        fastest = f" (fastest: {plan_label(a.fastest, 'cli')}{faster})" if a.fastest else ""
        lines.append(f"  {a.count:>5,} × {a.spelled(flag_for)[0]}{fastest}")
    return lines


def against_best_kept(best_step_s: float, step_s: float) -> str:
    """A set-aside plan's tokens/s against the best plan kept. Plans are set aside while the kept ones are
    gathered, so one may rank between two kept plans, below the best: it is then slower, said as such."""
    gain = best_step_s / step_s - 1  # tokens/s ratio at the same batch, minus 1
    if gain > 0:
        return f"+{gain:.1%} tokens/s over the best plan kept"
    if gain == 0:
        return "as fast as the best plan kept"
    return f"{-gain:.1%} fewer tokens/s than the best plan kept, ranked below it"


def nothing_exportable(r: Recommendation) -> list[str]:
    hints = dict.fromkeys(a.spelled(flag_for)[1] for a in r.set_aside if a.hint)
    return ([f"NOTHING EXPORTABLE: {r.fitting:,} plans fit, but {r.export_format} writes none of the "
             f"{r.export_checked:,} checked (why: above). What would work:"] + [f"  {h}" for h in hints])


def carried_lines(r: Recommendation) -> list[str]:
    """Numbered like the alternatives table: the formats that write each plan."""
    if not r.plans or r.plans[0].export_formats is None:
        return []
    lines = ["", "exports (formats that write each plan: shardwise export --format F; the others refuse it):"]
    for i, p in enumerate(r.plans, 1):
        lines.append(f"  {i:<3}{', '.join(p.export_formats) or 'none'}")
    return lines
