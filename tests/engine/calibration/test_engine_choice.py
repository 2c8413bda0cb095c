"""benchmarks/engine_choice.py: the figure the session 10 protocol's engine decision reads."""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from engine_choice import mean_abs_log_each_group_once  # noqa: E402


def test_each_group_counts_once():
    # Group a has two runs (|log| 0.1 and 0.3, mean 0.2), group b one run (|log| 0.5):
    # each group once = (0.2 + 0.5) / 2 = 0.35; run by run it would be (0.1 + 0.3 + 0.5) / 3 = 0.3.
    assert math.isclose(mean_abs_log_each_group_once([0.1, -0.3, 0.5], ["a", "a", "b"]), 0.35)


def test_sign_does_not_cancel():
    assert math.isclose(mean_abs_log_each_group_once([0.2, -0.2], ["a", "b"]), 0.2)
