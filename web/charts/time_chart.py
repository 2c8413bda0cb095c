"""Step time as stacked bars: compute, each kind of exposed communication, pipeline bubble, optimizer."""

from __future__ import annotations

from typing import Protocol, Sequence

from .svg import document, legend, rect, text

TIME_PARTS: list[tuple[str, str, str]] = [
    ("compute_s", "compute", "#0072B2"),
    ("tp_comm_s", "TP comm", "#E69F00"),
    ("cp_comm_s", "CP comm", "#56B4E9"),
    ("ep_comm_s", "EP comm", "#F0E442"),
    ("pp_comm_s", "PP comm", "#D55E00"),
    ("dp_comm_s", "DP comm", "#009E73"),
    ("pp_bubble_s", "pipeline bubble", "#BDBDBD"),
    ("optimizer_s", "optimizer step", "#CC79A7"),
    ("optimizer_phase_s", "optimizer phase", "#E7B8D4"),
    # post-training passes (absent, so without a legend entry, in plain training)
    ("rollout_s", "rollout generation", "#882255"),
    ("old_logprob_s", "policy log-prob fwd", "#44AA99"),
    ("reference_s", "reference forward", "#117733"),
    ("reward_s", "reward model fwd", "#999933"),
    ("critic_s", "critic", "#AA4499"),
]
WIDTH, PAD, LABEL_H, BAR_H, ROW_GAP, VALUE_W = 480.0, 8.0, 18.0, 20.0, 12.0, 80.0


class TimeLike(Protocol):
    step_s: float


def time_chart(rows: Sequence[tuple[str, TimeLike]], title: str = "Time per optimizer step (exposed)") -> str:
    """One stacked bar per plan on a shared millisecond scale; only parts that are present get a legend entry."""
    if not rows:
        raise ValueError("time_chart needs at least one plan")
    scale_max = max(t.step_s for _, t in rows) * 1.02 or 1.0
    plot_w = WIDTH - 2 * PAD - VALUE_W
    body: list[str] = []
    y = PAD
    present: set[str] = set()
    for label, t in rows:
        body.append(text(PAD, y + 13, label, size=13.5, fill="currentColor"))
        y += LABEL_H + 2
        x = PAD
        for field, name, color in TIME_PARTS:
            seconds = float(getattr(t, field))
            if seconds <= 0:
                continue
            present.add(field)
            w = plot_w * seconds / scale_max
            body.append(rect(x, y, w, BAR_H, color, title=f"{name}: {_ms(seconds)}", class_="seg"))
            x += w
        body.append(text(x + 6, y + 14.5, _ms(t.step_s), size=12, fill="currentColor"))
        y += BAR_H + ROW_GAP
    items = [(name, color) for field, name, color in TIME_PARTS if field in present]
    parts, used = legend(items, PAD, y + 2, WIDTH - 2 * PAD)
    body += parts
    first = rows[0][1]
    description = f"{rows[0][0]}: step {_ms(first.step_s)}; " + ", ".join(
        f"{name} {_ms(getattr(first, f))}" for f, name, _ in TIME_PARTS if getattr(first, f) > 0)
    return document(WIDTH, y + used + PAD, title, description, body, class_="chart chart-time")


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    if ms >= 1_000:
        return f"{seconds:,.2f} s"
    return f"{ms:,.1f} ms" if ms >= 1 else f"{ms:.2f} ms"
