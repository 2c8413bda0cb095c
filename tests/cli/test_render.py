"""Plain-text tables stay aligned whatever the plan labels' length."""

import pytest

from shardwise.present import plans_table
from shardwise.engine.evaluate import evaluate
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup


@pytest.fixture(scope="module")
def plans():
    model, cluster, setup = get_model("mixtral-8x7b"), build_cluster("h100", 64), TrainingSetup()
    return [evaluate(model, cluster, setup, s) for s in (
        Strategy(tp=2, pp=4, vpp=2, cp=2, ep=4, zero_stage=1, recompute="selective"),  # a long MoE label
        Strategy(tp=1, ep=8, zero_stage=3, recompute="full"),
    )]


def test_columns_line_up_with_long_labels(plans):
    # labels longer than 62 characters pushed their row's numbers right of the header
    lines = plans_table(plans)
    ends = {len(line.rstrip()) for line in lines}
    assert len(ends) == 1, lines  # every row ends under the header's last column
    column = lines[0].index("tok/s/GPU")
    assert all(line[column - 1] == " " for line in lines[1:]), lines


def test_a_step_time_interval_is_read_in_one_unit():
    from shardwise.present import duration_range_ms

    # the upper end decides: from ten seconds up both ends in seconds (was '8,819.0 ms–18.4 s'), below both in ms
    assert duration_range_ms([8819.0, 18400.0]) == "8.8 s–18.4 s"
    assert duration_range_ms([412.34, 980.0]) == "412.3 ms–980.0 ms"
    assert duration_range_ms([47430.0, 66920.0]) == "47.4 s–66.9 s"
    assert duration_range_ms(None) == "n/a"
