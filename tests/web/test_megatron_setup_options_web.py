"""recompute_modules / grad_reduce_dtype / fp8_param_gather over REST and on the page: the CLI's flags in, the
CLI's answer out; the engine's message for invalid use."""

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


BODY = {"model": "llama-3.2-1b", "gpu": "h100-sxm", "gpus": 8, "global_batch": 64, "precision": "fp8",
        "recompute_modules": ["core_attn", "layernorm"], "grad_reduce_dtype": "bf16", "fp8_param_gather": True}


def test_the_body_is_the_cli_flags(client, capsys):
    r = client.post("/api/evaluate", json=BODY)
    assert r.status_code == 200, r.text
    assert cli(["evaluate", "--model", "llama-3.2-1b", "--gpu", "h100-sxm", "--gpus", "8", "--global-batch", "64",
                "--precision", "fp8", "--recompute-modules", "core_attn,layernorm", "--grad-reduce-in-bf16",
                "--fp8-param-gather", "--json"]) == 0
    assert r.json() == json.loads(capsys.readouterr().out)
    assert r.json()["setup"]["grad_reduce_dtype"] == "bf16"


def test_invalid_use_is_refused_with_the_engines_message(client):
    r = client.post("/api/evaluate", json={**BODY, "precision": "bf16"})
    assert r.status_code in (400, 422) and "needs framework megatron and precision fp8" in r.text
    r = client.post("/api/evaluate", json={**BODY, "recompute_modules": ["mlp"]})
    assert r.status_code in (400, 422) and "recompute module(s) mlp are not modelled" in r.text
    assert client.post("/api/evaluate", json={**BODY, "grad_reduce_dtype": "fp16"}).status_code == 422


def test_the_page_form_sends_the_options():
    from shardwise.web.pages import form_to_request

    setup = form_to_request({"model": "llama-3.2-1b", "gpu": "h100-sxm", "gpus": "8", "precision": "fp8",
                             "grad_reduce_dtype": "bf16", "fp8_param_gather": "on",
                             "recompute_modules": "core_attn, layernorm"}).setup()
    assert (setup.grad_reduce_dtype, setup.fp8_param_gather, setup.recompute_modules) == \
        ("bf16", True, ("core_attn", "layernorm"))
    setup = form_to_request({"model": "llama-3.2-1b", "gpu": "h100-sxm", "gpus": "8"}).setup()
    assert (setup.grad_reduce_dtype, setup.fp8_param_gather, setup.recompute_modules) == ("fp32", False, None)


def test_the_page_shows_the_fields(client):
    page = client.get("/").text
    assert 'name="grad_reduce_dtype"' in page and 'name="fp8_param_gather"' in page
    assert 'name="recompute_modules"' in page
