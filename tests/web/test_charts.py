"""The SVG charts: well-formed, accessible, proportional to the numbers they draw, and escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from shardwise.web.charts import memory_chart, pipeline_chart, time_chart
from shardwise.web.charts.pipeline_chart import MAX_MICROBATCHES_SHOWN, shown_microbatches

NS = {"svg": "http://www.w3.org/2000/svg"}


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("role") == "img" and root.get("aria-label")
    assert root.find("svg:title", NS) is not None and root.find("svg:desc", NS) is not None
    return root


def segments(root: ET.Element) -> dict[str, ET.Element]:
    """Bar segments by the name in their tooltip ('weights: 20.00 GiB' -> 'weights')."""
    out = {}
    for r in root.iter("{http://www.w3.org/2000/svg}rect"):
        title = r.find("svg:title", NS)
        if title is not None and "seg" in (r.get("class") or ""):
            out[title.text.split(":")[0]] = r
    return out


def test_memory_segments_are_proportional_and_capacity_line_sits_at_capacity(make_evaluation):
    e = make_evaluation(weights=20, gradients=10, optimizer=15, activations=12, other=3, capacity=80)
    root = parse(memory_chart([("#1 plan", e.memory)]))
    seg = segments(root)
    width = {k: float(v.get("width")) for k, v in seg.items()}
    # widths follow the GiB: weights 20 vs optimizer 15 vs gradients 10
    assert width["weights"] / width["optimizer states"] == pytest.approx(20 / 15, rel=1e-2)
    assert width["weights"] / width["gradients"] == pytest.approx(2.0, rel=1e-2)
    bar_start = min(float(r.get("x")) for r in seg.values())
    bar_width = sum(width.values())  # the total, 60 GiB
    cap = next(root.iter("{http://www.w3.org/2000/svg}line"))
    assert (float(cap.get("x1")) - bar_start) / bar_width == pytest.approx(80 / 60, rel=1e-2)


def test_memory_over_capacity_extends_past_the_line(make_evaluation):
    e = make_evaluation(weights=60, gradients=10, optimizer=15, activations=12, other=3, capacity=80)  # 100 GiB
    root = parse(memory_chart([("too big", e.memory)]))
    seg = segments(root)
    end = max(float(r.get("x")) + float(r.get("width")) for r in seg.values())
    cap_x = float(next(root.iter("{http://www.w3.org/2000/svg}line")).get("x1"))
    assert end > cap_x
    assert "does not fit" in memory_chart([("too big", e.memory)])


def test_time_chart_draws_only_the_parts_that_take_time(make_evaluation):
    e = make_evaluation(step_s=2.0)
    svg = time_chart([("#1", e.time)])
    root = parse(svg)
    names = set(segments(root))
    assert names == {"compute", "TP comm", "pipeline bubble", "DP comm", "optimizer step"}
    assert "CP comm" not in svg and "EP comm" not in svg
    width = {k: float(v.get("width")) for k, v in segments(root).items()}
    assert width["compute"] / width["TP comm"] == pytest.approx(0.7 / 0.1, rel=1e-2)


def test_text_from_users_is_escaped(make_evaluation):
    e = make_evaluation()
    svg = memory_chart([('<script>alert("x")</script> & co', e.memory)])
    assert "<script>" not in svg
    parse(svg)


@pytest.mark.parametrize("pp,vpp,m", [(4, 1, 8), (4, 2, 8), (8, 1, 64), (2, 4, 100)])
def test_pipeline_chart_draws_every_pass_of_the_microbatches_it_shows(pp, vpp, m):
    svg = pipeline_chart(pp, vpp, m, compute_s=1.0)
    root = parse(svg)
    passes = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if "pass" in (r.get("class") or "")]
    shown = shown_microbatches(pp, vpp, m)
    assert shown <= MAX_MICROBATCHES_SHOWN
    assert len(passes) == 2 * pp * vpp * shown
    assert (f"{shown} of {m} micro-batches" in svg) == (shown < m)


def test_pipeline_chart_reports_the_1f1b_bubble():
    # p = 4, m = 8: (p − 1)/(m + p − 1) = 3/11 = 27 % (Narayanan et al. 2021)
    assert "bubble) 27%" in pipeline_chart(4, 1, 8)


def test_no_interleaved_diagram_for_fewer_microbatches_than_stages():
    with pytest.raises(ValueError, match="at least pp=4"):
        pipeline_chart(4, 2, 2)
