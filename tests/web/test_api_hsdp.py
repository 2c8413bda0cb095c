"""HSDP over REST: a plan /api/recommend returns with hsdp_replicas > 1 can be evaluated and exported.

Before, /api/recommend accepted the `hsdp` constraint and returned HSDP plans, but /api/evaluate,
/api/export and a plan object in /api/explain refused `hsdp` as an unknown field (the CLI has --hsdp).
"""

from __future__ import annotations

import tomllib

import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16, "seq_len": 4096, "global_batch": 256,
            "framework": "fsdp"}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def plan_body(strategy: dict) -> dict:
    return {"tp": strategy["tp"], "pp": strategy["pp"], "vpp": strategy["vpp"], "cp": strategy["cp"],
            "ep": strategy["ep"], "etp": strategy["etp"], "zero": strategy["zero_stage"],
            "hsdp": strategy["hsdp_replicas"], "micro_batch": strategy["micro_batch"],
            "recompute": strategy["recompute"], "sequence_parallel": strategy["sequence_parallel"]}


def test_a_recommended_hsdp_plan_evaluates_to_itself(client):
    r = client.post("/api/recommend", json={**SCENARIO, "constraints": {"hsdp": 2}, "top_k": 1})
    assert r.status_code == 200, r.text
    best = r.json()["plans"][0]
    assert best["strategy"]["hsdp_replicas"] == 2
    e = client.post("/api/evaluate", json={**SCENARIO, **plan_body(best["strategy"])})
    assert e.status_code == 200, e.text
    # Invariant: evaluating the plan recommend returned reproduces it (same knobs, same predicted step).
    assert e.json()["strategy"] == best["strategy"]
    assert e.json()["time"]["step_s"] == pytest.approx(best["time"]["step_s"], rel=1e-9)


def test_hsdp_needs_sharding_is_a_violation_not_a_422(client):
    e = client.post("/api/evaluate", json={**SCENARIO, "zero": 1, "hsdp": 2})
    assert e.status_code == 200, e.text
    assert [v["rule"] for v in e.json()["violations"]] == ["hsdp_requires_sharding"]


def test_export_writes_the_replicas(client):
    r = client.post("/api/export", json={**SCENARIO, "zero": 3, "hsdp": 2, "format": "torchtitan"})
    assert r.status_code == 200, r.text
    parallelism = tomllib.loads(r.json()["text"])["parallelism"]
    # 16 GPUs, TP=PP=CP=1 -> DP 16 = 2 replicas x 8 shards (docs/export.md: replicate degree = HSDP replicas).
    assert (parallelism["data_parallel_replicate_degree"], parallelism["data_parallel_shard_degree"]) == (2, 8)


def test_explain_takes_hsdp_in_a_plan_object(client):
    r = client.post("/api/explain", json={**SCENARIO, "a": {"zero": 3, "hsdp": 2}, "b": {"zero": 3}})
    assert r.status_code == 200, r.text
    assert r.json()["comparison"]["a"]["strategy"]["hsdp_replicas"] == 2
    assert r.json()["comparison"]["b"]["strategy"]["hsdp_replicas"] == 1


def test_hsdp_out_of_range_is_refused_naming_the_field(client):
    r = client.post("/api/evaluate", json={**SCENARIO, "zero": 3, "hsdp": 0})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "hsdp"
