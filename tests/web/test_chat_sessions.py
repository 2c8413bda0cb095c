"""Conversations with the real advisor (offline planner): across worker processes, and seeded by the form."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings


def events(text: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for frame in text.strip().split("\n\n"):
        lines = frame.splitlines()
        name = next((x[6:].strip() for x in lines if x.startswith("event:")), None)
        data = "".join(x[5:].strip() for x in lines if x.startswith("data:"))
        if name:
            out.setdefault(name, []).append(json.loads(data))
    return out


def worker(db) -> TestClient:
    """One uvicorn worker's worth of state: its own app and ChatService, the shared SQLite file."""
    from shardwise.agent.config import load_config
    from shardwise.agent.service import ChatService

    service = ChatService(load_config(env={"SHARDWISE_SESSION_DB": str(db)}))
    return TestClient(create_app(Settings(session_db=db), chat_service=service))


@pytest.fixture
def db(tmp_path):
    return tmp_path / "sessions.sqlite3"


def test_a_follow_up_on_another_worker_continues_the_conversation(db):
    first, second = worker(db), worker(db)
    a = events(first.post("/api/chat", json={"message": "Llama 3.1 8B on 8 H100s, 4k context, what plan?"}).text)
    session = a["session"][0]["session_id"]
    assert a["done"][0]["scenario"]["gpus"] == 8
    assert a["configs"][0]["configs"]  # configs attached to the answer

    b = events(second.post("/api/chat", json={"message": "what if we had 64 GPUs?", "session_id": session}).text)
    assert b["session"][0]["session_id"] == session
    scenario = b["done"][0]["scenario"]
    assert scenario["gpus"] == 64 and scenario["model"] == a["done"][0]["scenario"]["model"]  # the model carried over
    assert b["done"][0]["plan"]["cluster"]["num_gpus"] == 64


def test_the_forms_scenario_seeds_the_next_question(db):
    client = worker(db)
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16, "seq_len": 4096, "global_batch": 256}
    r = events(client.post("/api/chat", json={"message": "what if we had H200s?", "scenario": form}).text)
    assert "error" not in r, r.get("error")
    scenario = r["done"][0]["scenario"]
    assert scenario["gpu"].startswith("h200") and scenario["model"] == "llama-3.1-8b" and scenario["gpus"] == 16
    assert r["done"][0]["plan"]["cluster"]["gpu"].startswith("h200")


def test_a_bad_scenario_from_the_page_is_an_error_event(db):
    client = worker(db)
    r = events(client.post("/api/chat", json={"message": "what plan?", "scenario": {"gpus": "many"}}).text)
    assert r["error"][0]["kind"] == "input" and "gpus" in r["error"][0]["message"]


def test_the_plan_the_page_shows_is_the_plan_a_why_not_question_compares_with(db):
    """The form's scenario and the plan its results show: "why not TP=8?" compares TP=8 with that plan."""
    client = worker(db)
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8, "seq_len": 4096, "global_batch": 256}
    shown = {"tp": 1, "pp": 1, "zero": 1, "micro_batch": 1, "recompute": "selective"}
    r = events(client.post("/api/chat", json={"message": "why not TP=8?", "scenario": form, "plan": shown}).text)
    assert "error" not in r, r.get("error")
    compare = [t for t in r["tool"] if t["name"] == "compare_plans"]
    assert compare and compare[-1]["ok"]
    args = compare[-1]["arguments"]
    assert {k: args["scenario"][k] for k in form} == form
    plans = [args["plan_a"], args["plan_b"]]
    assert any(p["tp"] == 8 for p in plans) and any(p["tp"] == 1 and p["zero"] == 1 for p in plans)


def test_a_bad_plan_from_the_page_is_an_error_event(db):
    client = worker(db)
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}
    r = events(client.post("/api/chat", json={"message": "why not TP=8?", "scenario": form, "plan": {"tp": "x"}}).text)
    assert r["error"][0]["kind"] == "input" and r["error"][0]["message"].startswith("plan: tp")
