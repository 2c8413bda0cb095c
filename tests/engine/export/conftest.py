"""Scenarios for the export tests: catalog models on H100 clusters, plans chosen by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shardwise.engine.export import export_plan
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup


# Helper modules beside the tests (export_*_tools.py) import by name under --import-mode=importlib.
sys.path.insert(0, str(Path(__file__).parent))


class Scenario:
    def __init__(self, model: str, gpus: int, *, gpus_per_node: int | None = None, seq_len: int = 4096,
                 global_batch: int = 256, precision: str = "bf16", framework: str = "megatron",
                 mode: str = "full", **strategy):
        self.model = get_model(model)
        self.cluster = build_cluster("h100-sxm", gpus, gpus_per_node)
        self.setup = TrainingSetup(seq_len=seq_len, global_batch=global_batch, precision=precision,
                                   framework=framework, mode=mode)
        self.strategy = Strategy(**strategy)

    def export(self, fmt: str):
        return export_plan(fmt, self.model, self.cluster, self.setup, self.strategy)


@pytest.fixture
def scenario():
    return Scenario
