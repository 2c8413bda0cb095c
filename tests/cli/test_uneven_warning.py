"""The uneven-pipeline warning quotes the heaviest stage the memory model uses (it claimed
16 layers for 80 layers over PP=8·VPP=8, where the memory model puts 10 on every rank)."""

import numpy as np
import pytest

from shardwise.cli.main import main
from shardwise.engine.model_catalog import get_model
from shardwise.engine.plans import PlanGrid
from shardwise.engine.strategy import Strategy
from shardwise.engine.memory.stages import stage_load
from shardwise.engine.validity.mesh import heaviest_stage_layers


@pytest.mark.parametrize("layers, pp, vpp, chunk, heaviest", [
    # chunks of ceil(80/64) = 2 layers in order; rank 0 holds chunks 0, 8, 16, 24, 32
    # (layers 0-1, 16-17, 32-33, 48-49, 64-65); chunk 40 would start at layer 80: none left.
    (80, 8, 8, 2, 10),
    # ceil(10/4) = 3: rank 0 holds chunks 0 and 2 = layers 0-2 and 6-8.
    (10, 2, 2, 3, 6),
    # plain 1F1B: ceil(80/3) = 27 on the first stages, 26 on the last.
    (80, 3, 1, 27, 27),
])
def test_heaviest_stage_by_hand(layers, pp, vpp, chunk, heaviest):
    assert heaviest_stage_layers(layers, pp, vpp) == (chunk, heaviest)


def test_matches_the_memory_models_stage_assignment():
    model = get_model("llama-3.1-70b")  # 80 layers
    for pp in (2, 3, 4, 6, 8, 16, 32):
        for vpp in range(1, 9):
            if pp * vpp > model.num_layers:
                continue
            grid = PlanGrid.from_strategy(Strategy(pp=pp, vpp=vpp), pp * 8, 1024)
            ranks = [stage_load(model, grid, np.array([r])).layers[0] for r in range(pp)]
            assert heaviest_stage_layers(model.num_layers, pp, vpp)[1] == max(ranks), (pp, vpp)


def test_warning_text(capsys):
    code = main(["evaluate", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "128", "--tp", "2",
                 "--pp", "8", "--vpp", "8", "--json"])
    import json

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (warning,) = [w["message"] for w in out["warnings"] if w["rule"] == "uneven_pipeline_split"]
    assert "the heaviest stage holds 10 layers vs 10.00 on average" in warning
