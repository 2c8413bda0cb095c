"""memory_per_gpu against PyTorch's own memory trackers (MemTracker, FSDPMemTracker) on real
forward + backward + AdamW steps of fake-tensor models at real widths.

The expectation of every test is the tracker's measurement; the model, setup and plan are the same
on both sides (tests/oracle/oracle_cases.py). Targets (issue 2): the peak within 5 %, each category
within 10 %. A category that is a sliver of the peak (< 2 % in the measurement) is held to 1 % of the
peak instead, as a relative error there means nothing (e.g. 0 vs a few MiB of token ids).
Apples-to-apples choices on the oracle side are documented in oracle_models.py / oracle_runs.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from oracle_cases import CASES, CATEGORIES, measured, predicted  # noqa: E402

PEAK_TOLERANCE = 0.05
CATEGORY_TOLERANCE = 0.10
SLIVER = 0.02  # of the peak


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_memory_matches_pytorch_trackers(case):
    ours, theirs = predicted(case), measured(case)
    peak = theirs["peak"]
    assert ours["peak"] == pytest.approx(peak, rel=PEAK_TOLERANCE), (ours, theirs)
    for category in CATEGORIES[:-1]:
        if theirs[category] < SLIVER * peak:
            assert abs(ours[category] - theirs[category]) <= 0.01 * peak, (category, ours, theirs)
        else:
            assert ours[category] == pytest.approx(theirs[category], rel=CATEGORY_TOLERANCE), (category, ours, theirs)
