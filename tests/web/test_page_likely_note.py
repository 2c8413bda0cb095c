"""The page says once what its "likely" ranges are and where they come from (the CLI's `likely = …` line).

Expectations: the band's runs are the engine's own `range_basis` for the same scenario through REST; the
section named is a real heading of docs/performance.md; "8 in 10" is what an 80 % band of measured runs means
(engine/assumptions/error_bands.py: 10th-90th percentile of log(measured / predicted)), not claimed for a band
widened for an unchecked regime.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import shardwise
from shardwise.engine.results import MemoryReport
from shardwise.present import likely_note
from shardwise.web.app import create_app
from shardwise.web.pages import DEFAULT_FORM
from shardwise.web.settings import Settings

DOCS = Path(shardwise.__file__).parent / "docs" / "performance.md"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def test_the_page_says_once_what_likely_is_and_which_runs_it_comes_from(client):
    scenario = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16, "seq_len": 4096, "global_batch": 256}
    best = client.post("/api/recommend", json={**scenario, "top_k": 1}).json()["plans"][0]
    basis = best["throughput"]["range_basis"]
    assert basis.startswith("80 % band of ") and "widened" not in basis
    page = client.post("/ui/results", data={**DEFAULT_FORM, "model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "16",
                                            "seq_len": "4096", "batch": "256", "batch_unit": "sequences"})
    text = html.unescape(page.text)
    assert text.count("“Likely” is an 80 % band") == 1
    assert "8 in 10 measured runs" in text
    assert f"step time and throughput, {basis.removeprefix('80 % band of ')}" in text
    assert "(docs/performance.md, “Error bars”)" in text and "\n## Error bars\n" in DOCS.read_text(encoding="utf-8")


def test_a_widened_band_is_not_said_to_hold_8_in_10():
    class Throughput:
        range_basis = "80 % band of 69 calibration and external runs (megatron|ampere|dense), widened ×2: outside"

    memory = MemoryReport(weights_gib=1, gradients_gib=1, optimizer_gib=1, activations_gib=1, other_gib=1, total_gib=5,
                          capacity_gib=80, fits=True, total_gib_range=[4.0, 6.0])
    note = likely_note(Throughput(), memory)
    assert "8 in 10" not in note and "widened ×2" in note and "memory, the runs that report their peak" in note
    assert likely_note(None, memory.model_copy(update={"total_gib_range": None})) is None
