"""A measured peak is read in the unit the user wrote and converted once (session 12): an nvidia-smi-style
"81.5 GB" on an 80 GiB H100 is 81.5e9 / 2**30 = 75.9 GiB, which fits, so it is set against the band, not
refused; a figure truly above the GPU's memory still is. The H100 SXM5 80GB holds 80 GiB (catalog memory_gib).
Log readers keep each framework's own arithmetic, read in the installed frameworks' sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService
from shardwise.engine.training_logs import read_log

from support.chat import turns

SETUP = "llama 3 70b on 64 h100, seq 4096, gbs 512, tp 8 pp 2 zero 1 mb 1 recompute selective."
LOGS = Path(__file__).parents[1] / "fixtures" / "logs"


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"))


def _peak(done):
    [call] = [c for c in done.tool_calls if c["name"] == "estimate_memory"]
    return call["result"]["measured_peak"]


@pytest.mark.parametrize("said, gib, written", [
    ("nvidia-smi peak was 81.5 GB per GPU - does that match?", 81.5e9 / 2**30, "81.5 GB = 75.9 GiB"),
    ("nvidia-smi showed 81559MiB used at peak, is that expected?", 81559 * 2**20 / 2**30, "81,559 MiB = 79.6 GiB"),
])
def test_a_peak_in_gb_or_mib_under_the_gpus_memory_is_compared_and_the_conversion_said(service, said, gib, written):
    [done] = turns(service, f"{SETUP} {said}")
    peak = _peak(done)
    assert peak["measured_gib"] == pytest.approx(gib, abs=0.01) and peak["above_capacity"] is False
    assert written in done.answer and "impossible" not in done.answer


def test_a_peak_in_gb_truly_above_the_gpus_memory_is_still_refused(service):
    # 90 GB = 90e9 / 2**30 = 83.8 GiB > 80 GiB
    [done] = turns(service, f"{SETUP} nvidia-smi peak was 90 GB per GPU - does that match?")
    peak = _peak(done)
    assert peak["measured_gib"] == pytest.approx(90e9 / 2**30, abs=0.01) and peak["above_capacity"] is True
    assert "Your measured 83.8 GiB per GPU is impossible" in done.answer and "90 GB = 83.8 GiB" in done.answer


def _installed_source(relative: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(relative.split("/")[0])
    if spec is None or spec.submodule_search_locations is None:
        pytest.skip(f"{relative.split('/')[0]} is not installed")
    return (Path(list(spec.submodule_search_locations)[0]).parent / relative).read_text()


def test_deepspeeds_gb_label_is_bytes_over_1024_cubed_so_its_log_is_read_as_gib():
    # deepspeed/utils/timer.py prints "MaxMemAllocated={}GB" of max_memory_allocated() / 1024**3
    source = _installed_source("deepspeed/utils/timer.py")
    assert "MaxMemAllocated={}GB" in source and "max_memory_allocated() / 1024**3" in source
    assert read_log((LOGS / "deepspeed.log").read_text()).peak_gib == pytest.approx(19.61)  # the log's largest


def test_torchtitans_memory_line_is_gib():
    # torchtitan/components/metrics.py _to_gib: bytes / (1024 * 1024 * 1024); the log prints "memory: {:5.2f}GiB"
    source = _installed_source("torchtitan/components/metrics.py")
    assert "_gib_in_bytes = 1024 * 1024 * 1024" in source
    text = (LOGS / "torchtitan.log").read_text()
    assert "GiB" in text and read_log(text).peak_gib is not None


def test_deepspeeds_maxmemallocated_said_in_prose_keeps_deepspeeds_arithmetic(service):
    # "MaxMemAllocated=78.5GB" is DeepSpeed's own label for bytes / 1024**3 (checked above): 78.5 GiB, not 73.1
    [done] = turns(service, f"{SETUP} deepspeed's timer says MaxMemAllocated=78.5GB, does that match?")
    assert _peak(done)["measured_gib"] == pytest.approx(78.5)
    assert "DeepSpeed's MaxMemAllocated=78.5GB is 78.5 GiB" in done.answer
