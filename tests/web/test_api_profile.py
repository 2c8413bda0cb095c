"""REST `profile`: the JSON `shardwise calibrate --save` writes, in any request body, gives the same
answer as the CLI's `--profile FILE`; a bad one is a 422 naming the field."""

from __future__ import annotations

import json

import pytest

from fastapi.testclient import TestClient

from shardwise.cli.main import main as cli
from shardwise.web.app import create_app
from shardwise.web.settings import Settings
from support.api_profile import FLAGS, SCENARIO, api_client, fitted_profile

@pytest.fixture(scope="module")
def client():
    return api_client()


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory):
    return fitted_profile(tmp_path_factory.mktemp("p"))


def test_evaluate_with_profile_matches_the_cli(client, capsys, profile_file):
    capsys.readouterr()
    profile = json.loads(profile_file.read_text())
    r = client.post("/api/evaluate", json={**SCENARIO, "tp": 2, "profile": profile})
    assert r.status_code == 200, r.text
    assert cli(["evaluate", *FLAGS, "--tp", "2", "--profile", str(profile_file), "--json"]) == 0
    assert r.json() == json.loads(capsys.readouterr().out)
    assert r.json()["throughput"]["tokens_per_s_per_gpu"] == pytest.approx(5000, rel=1e-3)
    assert r.json()["calibration"].startswith("calibrated")


def test_recommend_takes_a_profile(client, profile_file):
    plain = client.post("/api/recommend", json={**SCENARIO, "top_k": 1}).json()
    calibrated = client.post("/api/recommend", json={**SCENARIO, "top_k": 1,
                                                     "profile": json.loads(profile_file.read_text())}).json()
    assert calibrated["plans"][0]["calibration"] and plain["plans"][0]["calibration"] is None


def test_bad_profile_is_a_422_naming_the_field(client):
    bad = {"gpu": "h100-sxm", "precision": "bf16", "framework": "megatron", "compute_scale": 9}
    r = client.post("/api/evaluate", json={**SCENARIO, "profile": bad})
    assert r.status_code == 422 and "compute_scale" in r.text
    # strict as the rest of the body: a JSON boolean or string is no scale (schemathesis found `false` coerced)
    for wrong in (True, "0.9"):
        r = client.post("/api/evaluate", json={**SCENARIO, "profile": {**bad, "compute_scale": wrong}})
        assert r.status_code == 422 and "compute_scale" in r.text


def test_page_shows_the_interval_and_takes_a_pasted_profile(client, profile_file):
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "16", "seq_len": "4096", "batch": "256",
            "batch_unit": "sequences", "mode": "full", "precision": "bf16", "framework": "megatron"}
    plain = client.post("/ui/results", data=form)
    assert plain.status_code == 200 and "likely " in plain.text and "Calibrated:" not in plain.text
    calibrated = client.post("/ui/results", data={**form, "profile_json": profile_file.read_text()})
    assert calibrated.status_code == 200 and "Calibrated: compute" in calibrated.text
    bad = client.post("/ui/results", data={**form, "profile_json": "{not json"})
    assert bad.status_code == 400 and "calibration profile is not JSON" in bad.text


def test_chat_request_profile_reaches_the_service():
    from shardwise.web.chat import wire_events

    seen = []

    class Chat:
        def stream(self, message, session_id, profile=None):
            seen.append(profile)
            yield ("done", {})

    from shardwise.engine.calibration.profile import CalibrationProfile

    p = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.9)
    list(wire_events(Chat(), "hi", None, profile=p))
    list(wire_events(Chat(), "hi", None))
    assert seen == [p, None]


def test_chat_request_profile_reaches_the_async_service():
    """The same through `awire_events` -> `astream` (the path /api/chat takes for the agent's service)."""
    import asyncio

    from shardwise.agent.offload import INLINE
    from shardwise.engine.calibration.profile import CalibrationProfile
    from shardwise.web.chat import awire_events

    seen = []

    class Chat:
        async def astream(self, message, session_id, *, offload, deadline_s=None, profile=None):
            seen.append(profile)
            yield ("done", {})

    async def drain(**kw):
        return [e async for e in awire_events(Chat(), "hi", None, offload=INLINE, **kw)]

    p = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.9)
    asyncio.run(drain(profile=p))
    asyncio.run(drain())
    assert seen == [p, None]


def test_offline_chat_over_rest_uses_the_profile(tmp_path, profile_file):
    from shardwise.agent.config import AgentConfig
    from shardwise.agent.service import ChatService

    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    app = create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=service)
    r = TestClient(app).post("/api/chat", json={"message": "Llama-3.1-8B on 16 H100s, 4k context, 256 sequences - plan?",
                                                "profile": json.loads(profile_file.read_text())})
    assert r.status_code == 200 and "Calibrated: compute" in r.text


def test_page_gives_step_time_and_memory_their_intervals_as_the_cli_does(client):
    # The CLI prints "step ... likely a s–b s" and "likely peak (80 % band)"; the page showed only the throughput's.
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "16", "seq_len": "4096", "batch": "256",
            "batch_unit": "sequences", "mode": "full", "precision": "bf16", "framework": "megatron"}
    page = client.post("/ui/results", data=form).text
    best = client.post("/api/recommend", json={**SCENARIO, "top_k": 1}).json()["plans"][0]
    step, (lo, hi) = best["time"]["step_s"], best["time"]["step_s_range"]
    said = f"likely {lo:.2f}–{hi:.2f} s" if step >= 1 else f"likely {lo * 1e3:,.0f}–{hi * 1e3:,.0f} ms"
    assert said in page
    m_lo, m_hi = best["memory"]["total_gib_range"]
    assert f"likely {m_lo:.1f}–{m_hi:.1f}" in page


def test_export_says_the_profile_changes_nothing_in_a_config(client, capsys, profile_file):
    # It was read, checked and dropped without a word (CLI and REST alike).
    profile = json.loads(profile_file.read_text())
    r = client.post("/api/export", json={**SCENARIO, "tp": 2, "format": "megatron", "profile": profile})
    assert r.status_code == 200 and any("changes predicted times only" in w for w in r.json()["warnings"])
    plain = client.post("/api/export", json={**SCENARIO, "tp": 2, "format": "megatron"}).json()
    assert plain["text"] == r.json()["text"]
    capsys.readouterr()
    assert cli(["export", *FLAGS, "--tp", "2", "--format", "megatron", "--profile", str(profile_file)]) == 0
    assert "changes predicted times only" in capsys.readouterr().err
