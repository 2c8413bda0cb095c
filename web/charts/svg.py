"""A few helpers to write SVG as text: escaped attributes, shapes, and an accessible wrapper.

Charts are built from engine numbers and names, but a model name can come from a pasted
config.json, so every piece of text goes through `escape`.
"""

from __future__ import annotations

from html import escape as _escape

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"


def escape(text: object) -> str:
    return _escape(str(text), quote=True)


def attrs(**kw: object) -> str:
    """Keyword arguments as SVG attributes; `class_` -> class, `stroke_width` -> stroke-width."""
    parts = []
    for key, value in kw.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        if isinstance(value, float):
            value = f"{value:.2f}".rstrip("0").rstrip(".")
        parts.append(f'{name}="{escape(value)}"')
    return " ".join(parts)


def rect(x: float, y: float, w: float, h: float, fill: str, title: str | None = None, **kw: object) -> str:
    inner = f"<title>{escape(title)}</title>" if title else ""
    return f"<rect {attrs(x=x, y=y, width=max(w, 0.0), height=h, fill=fill, **kw)}>{inner}</rect>"


def text(x: float, y: float, content: object, size: float = 12, anchor: str = "start", **kw: object) -> str:
    return f"<text {attrs(x=x, y=y, font_size=size, text_anchor=anchor, **kw)}>{escape(content)}</text>"


def line(x1: float, y1: float, x2: float, y2: float, stroke: str, **kw: object) -> str:
    return f"<line {attrs(x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke, **kw)}/>"


def document(width: float, height: float, title: str, description: str, body: list[str], class_: str) -> str:
    """A responsive SVG: shrinks with its container (never grows past its drawn size, so text keeps its
    size on a laptop), announced to screen readers as one image."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" {attrs(viewBox=f"0 0 {width:.0f} {height:.0f}", class_=class_, role="img", font_family=FONT)} '
        f'style="max-width:{width:.0f}px" '
        f'preserveAspectRatio="xMinYMin meet" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title><desc>{escape(description)}</desc>"
        + "".join(body) + "</svg>"
    )


def legend(items: list[tuple[str, str]], x: float, y: float, max_width: float, size: float = 12) -> tuple[list[str], float]:
    """Colour swatches with labels, wrapped to `max_width`; returns the SVG parts and the height used."""
    parts, cx, cy, row_h = [], x, y, size + 8
    for label, color in items:
        w = 14 + 6 + len(label) * size * 0.58 + 16
        if cx + w > x + max_width and cx > x:
            cx, cy = x, cy + row_h
        parts.append(rect(cx, cy, 14, 14, color, rx=2))
        parts.append(text(cx + 20, cy + 11.5, label, size=size, fill="currentColor"))
        cx += w
    return parts, cy - y + row_h
