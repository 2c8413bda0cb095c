"""The whole eval suite against the offline planner — the pass rate CI holds it to.

MIN_PASS_RATE is set a little below the rate measured when it was last raised (docs/evals.md
has the table and what fails). Raise it as the planner improves; never lower it to make a
change pass — a drop is a regression in the planner, the tools or the engine.
"""

import pytest

from shardwise.evals.loader import load_cases
from shardwise.evals.report import summary_table
from shardwise.evals.runner import run_suite
from shardwise.evals.targets import make_target

MIN_PASS_RATE = 0.90  # measured 0.945 (121 of 128; 16 of the 23 held-out cases) when set
# Cases written without reading the planner and never tuned on: `shardwise eval` measures and reports
# them (by_tag), the gate does not count them — a gate on them would invite tuning the planner to
# them, and then they would no longer estimate anything (docs/evals.md, "Fresh held-out set").
UNGATED_TAGS = {"holdout-fresh", "holdout-fresh-2", "holdout-fresh-3", "holdout-fresh-4", "holdout-fresh-5", "holdout-fresh-6", "holdout-fresh-7", "holdout-fresh-8",
                "holdout-fresh-9", "holdout-fresh-10", "holdout-fresh-11", "holdout-fresh-12", "holdout-fresh-13",
                "holdout-fresh-14", "holdout-fresh-15", "holdout-fresh-16", "holdout-fresh-17"}


@pytest.mark.slow
def test_offline_planner_meets_the_pass_rate():
    gated = [c for c in load_cases() if not UNGATED_TAGS & set(c.tags)]
    result = run_suite(gated, make_target("offline"))
    failing = {r.case.id: r.failures()[:3] for r in result.runs if not r.passed}
    assert result.pass_rate >= MIN_PASS_RATE, f"{summary_table(result)}\nfailing: {failing}"
