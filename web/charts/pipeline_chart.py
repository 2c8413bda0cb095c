"""The pipeline schedule as a diagram: one row per pipeline rank, forward and backward boxes, idle gaps."""

from __future__ import annotations

from .pipeline_schedule import bubble_fraction, makespan, simulate
from .svg import document, legend, rect, text

# Backward costs about twice the forward (input and weight gradients; Narayanan et al. 2021, §3.1);
# full recompute replays the forward during backward.
BACKWARD_PER_FORWARD = 2.0
BACKWARD_PER_FORWARD_FULL_RECOMPUTE = 3.0
# Enough micro-batches to show warm-up, steady state and cool-down without thousands of boxes.
MAX_MICROBATCHES_SHOWN = 24
FORWARD_COLORS = ["#56B4E9", "#9AD0F0", "#2E86C1", "#BFE3F7"]
BACKWARD_COLORS = ["#E69F00", "#F3C766", "#B87F00", "#F8DDA0"]
WIDTH, PAD, LEFT = 720.0, 12.0, 64.0


def shown_microbatches(pp: int, vpp: int, microbatches: int) -> int:
    """How many micro-batches the diagram draws: all of them when few, else about two per stage."""
    n = min(microbatches, max(2 * pp, 4), MAX_MICROBATCHES_SHOWN)
    if vpp > 1:  # the interleaved schedule works in groups of pp micro-batches
        if microbatches < pp:
            raise ValueError(f"the interleaved schedule needs at least pp={pp} micro-batches, the step has {microbatches}")
        n = max(pp, n - n % pp)
    return n


def pipeline_chart(pp: int, vpp: int, microbatches: int, compute_s: float | None = None,
                   recompute: str = "selective", title: str | None = None) -> str:
    """`compute_s`: one rank's compute per optimizer step (from the time report) sets the time axis;
    without it the axis is in forward-pass units."""
    shown = shown_microbatches(pp, vpp, microbatches)
    ratio = BACKWARD_PER_FORWARD_FULL_RECOMPUTE if recompute == "full" else BACKWARD_PER_FORWARD
    per_microbatch = compute_s / microbatches if compute_s else 1.0 + ratio
    forward = per_microbatch / (1.0 + ratio)
    passes = simulate(pp, vpp, shown, forward, forward * ratio)
    span, bubble = makespan(passes), bubble_fraction(passes, pp)
    row_h = max(10.0, min(26.0, 320.0 / pp))
    plot_w = WIDTH - LEFT - PAD
    body: list[str] = []
    top = PAD + 16
    schedule = f"interleaved 1F1B, {vpp} chunks per rank" if vpp > 1 else "1F1B"
    subtitle = (f"{schedule}: {shown} of {microbatches} micro-batches shown; idle (bubble) {bubble * 100:.0f}% of the time shown"
                if shown < microbatches else f"{schedule}, {microbatches} micro-batches; idle (bubble) {bubble * 100:.0f}%")
    body.append(text(PAD, PAD + 4, subtitle, size=12, fill="currentColor"))
    for s in range(pp):
        y = top + s * row_h
        body.append(text(LEFT - 8, y + row_h * 0.7, f"rank {s}", size=min(12.0, row_h * 0.8), anchor="end", fill="currentColor"))
        body.append(rect(LEFT, y + 1, plot_w, row_h - 2, "#EEEEEE", class_="idle"))
    for p in passes:
        x, w = LEFT + plot_w * p.start / span, plot_w * (p.end - p.start) / span
        y = top + p.stage * row_h
        colors = FORWARD_COLORS if p.kind == "F" else BACKWARD_COLORS
        label = f"{'forward' if p.kind == 'F' else 'backward'} micro-batch {p.microbatch + 1}" + (
            f", chunk {p.chunk + 1}" if vpp > 1 else "")
        body.append(rect(x, y + 1, w, row_h - 2, colors[p.chunk % len(colors)], title=label,
                         stroke="#FFFFFF", stroke_width=0.5, class_=f"pass pass-{p.kind}"))
        if w >= 14 and row_h >= 14:
            body.append(text(x + w / 2, y + row_h * 0.68, p.microbatch + 1, size=min(10.5, row_h * 0.55), anchor="middle", fill="#1A1A1A"))
    y = top + pp * row_h + 4
    unit = _axis_label(span, compute_s is not None)
    body.append(text(LEFT, y + 12, "0", size=11, fill="currentColor"))
    body.append(text(LEFT + plot_w, y + 12, unit, size=11, anchor="end", fill="currentColor"))
    items = [("forward", FORWARD_COLORS[0]), ("backward", BACKWARD_COLORS[0]), ("idle (bubble)", "#EEEEEE")]
    parts, used = legend(items, LEFT, y + 20, WIDTH - LEFT - PAD)
    body += parts
    title = title or f"Pipeline schedule, PP={pp}" + (f", VPP={vpp}" if vpp > 1 else "")
    description = f"{schedule} across {pp} pipeline ranks; idle share {bubble * 100:.1f}% over {shown} micro-batches"
    return document(WIDTH, y + 20 + used + PAD, title, description, body, class_="chart chart-pipeline")


def _axis_label(span: float, real_time: bool) -> str:
    if not real_time:
        return f"{span:.0f} forward-pass units"
    return f"{span * 1e3:,.0f} ms" if span >= 1e-3 else f"{span * 1e6:,.0f} µs"
