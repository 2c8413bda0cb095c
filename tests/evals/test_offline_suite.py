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


@pytest.mark.slow
def test_offline_planner_meets_the_pass_rate():
    result = run_suite(load_cases(), make_target("offline"))
    failing = {r.case.id: r.failures()[:3] for r in result.runs if not r.passed}
    assert result.pass_rate >= MIN_PASS_RATE, f"{summary_table(result)}\nfailing: {failing}"
