"""Memory per GPU as stacked bars (weights, gradients, optimizer, activations, other) against capacity."""

from __future__ import annotations

from typing import Protocol, Sequence

from .svg import document, legend, line, rect, text

# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
MEMORY_PARTS: list[tuple[str, str, str]] = [
    ("weights_gib", "weights", "#0072B2"),
    ("gradients_gib", "gradients", "#E69F00"),
    ("optimizer_gib", "optimizer states", "#009E73"),
    ("activations_gib", "activations", "#CC79A7"),
    ("other_gib", "other (context, NCCL, fragmentation)", "#8C8C8C"),
]
CAPACITY_COLOR = "#D55E00"
WIDTH, PAD, LABEL_H, BAR_H, ROW_GAP = 480.0, 8.0, 18.0, 20.0, 12.0
VALUE_W = 120.0  # room right of the bars for "61.2 / 80 GiB"


class MemoryLike(Protocol):
    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    other_gib: float
    total_gib: float
    capacity_gib: float
    fits: bool


def memory_chart(rows: Sequence[tuple[str, MemoryLike]], title: str = "Memory per GPU (most loaded rank)") -> str:
    """One stacked bar per plan, all on one GiB scale, with the GPU's capacity as a dashed line."""
    if not rows:
        raise ValueError("memory_chart needs at least one plan")
    capacity = rows[0][1].capacity_gib
    scale_max = max([capacity] + [m.total_gib for _, m in rows]) * 1.04
    plot_w = WIDTH - 2 * PAD - VALUE_W
    x_of = lambda gib: PAD + plot_w * gib / scale_max  # noqa: E731
    body: list[str] = []
    y = PAD + 14  # room for the capacity label
    top = y
    for label, m in rows:
        body.append(text(PAD, y + 13, label, size=13.5, fill="currentColor"))
        y += LABEL_H + 2
        x = PAD
        for field, name, color in MEMORY_PARTS:
            value = float(getattr(m, field))
            if value <= 0:
                continue
            w = x_of(value) - PAD
            body.append(rect(x, y, w, BAR_H, color, title=f"{name}: {value:.2f} GiB", class_="seg"))
            x += w
        cap_x = x_of(capacity)  # the capacity line crosses the bar, not the label above it
        body.append(line(cap_x, y - 3, cap_x, y + BAR_H + 3, CAPACITY_COLOR, stroke_width=2, stroke_dasharray="4 3"))
        verdict = "fits" if m.fits else "does not fit"
        # the value sits right of both the bar and the capacity line, so the line never crosses it
        body.append(text(max(x_of(m.total_gib), x_of(capacity) + 2) + 6, y + 14.5, f"{m.total_gib:.1f} / {capacity:g} GiB",
                         size=12, fill="currentColor", font_weight="600" if not m.fits else None))
        body.append(f"<desc>{verdict}</desc>")
        y += BAR_H + ROW_GAP
    cap_x = x_of(capacity)
    body.append(text(cap_x, top - 2, f"capacity {capacity:g} GiB", size=11.5, anchor="end" if cap_x > WIDTH / 2 else "start",
                     fill=CAPACITY_COLOR))
    parts, used = legend([(name, color) for _, name, color in MEMORY_PARTS], PAD, y + 2, WIDTH - 2 * PAD)
    body += parts
    height = y + used + PAD
    first = rows[0][1]
    description = (f"{rows[0][0]}: {first.total_gib:.1f} GiB of {capacity:g} GiB; "
                   + ", ".join(f"{name} {getattr(first, f):.1f} GiB" for f, name, _ in MEMORY_PARTS))
    return document(WIDTH, height, title, description, body, class_="chart chart-memory")
