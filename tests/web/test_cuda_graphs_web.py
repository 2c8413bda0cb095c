"""cuda_graphs over REST and on the page: the CLI's name in, the CLI's answer out."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.cli.main import main as cli
from shardwise.web.app import create_app
from shardwise.web.settings import Settings


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def test_cuda_graphs_in_the_body_is_the_cli_flag(client, capsys):
    body = {"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "gpus": 16, "seq_len": 4096, "global_batch": 256,
            "ep": 8, "moe_dispatcher": "deepep", "cuda_graphs": "full-iteration"}
    r = client.post("/api/evaluate", json=body)
    assert r.status_code == 200, r.text
    assert cli(["evaluate", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--gpus", "16", "--seq-len", "4096",
                "--global-batch", "256", "--ep", "8", "--moe-dispatcher", "deepep", "--cuda-graphs", "full-iteration",
                "--json"]) == 0
    assert r.json() == json.loads(capsys.readouterr().out)
    assert client.post("/api/evaluate", json={**body, "cuda_graphs": "always"}).status_code == 422
    refused = client.post("/api/evaluate", json={**body, "framework": "fsdp"})
    assert refused.status_code in (400, 422) and "cuda_graphs none with fsdp" in refused.text  # the body's field name


def test_the_page_form_sends_graphs_and_dispatcher():
    from shardwise.web.pages import form_to_request

    req = form_to_request({"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "gpus": "16", "moe_dispatcher": "deepep",
                           "cuda_graphs": "full-iteration"})
    setup = req.setup()
    assert (setup.moe_dispatcher, setup.cuda_graphs) == ("deepep", "full-iteration")
    assert form_to_request({"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8"}).setup().cuda_graphs == "none"
