"""Server-side SVG charts: memory per GPU against capacity, step time by part, pipeline schedule."""

from .memory_chart import memory_chart
from .pipeline_chart import pipeline_chart
from .time_chart import time_chart

__all__ = ["memory_chart", "pipeline_chart", "time_chart"]
