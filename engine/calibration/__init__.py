"""Calibration and accuracy: the measured runs shipped with the engine (data/), the engine's
predictions for them, error and rank-agreement metrics, and the validated range."""

from .coverage import coverage, extrapolation_warnings
from .report import ValidationReport, build_report
from .runs import CalibrationRun, load_runs, used_runs

__all__ = ["CalibrationRun", "ValidationReport", "build_report", "coverage", "extrapolation_warnings",
           "load_runs", "used_runs"]
