"""An empty recompute_modules list is refused on every surface, as the CLI's --recompute-modules refuses it.

Before, REST (`"recompute_modules": []`) took it: `selective` then recomputed nothing (recompute none under
another name) and the Megatron-LM export wrote a bare `--recompute-modules` with no module after it.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from shardwise.cli.main import main as cli
from shardwise.engine.training import TrainingSetup
from shardwise.web.app import create_app
from shardwise.web.settings import Settings

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}


def test_engine_refuses_an_empty_list_and_keeps_none_as_the_default():
    with pytest.raises(ValidationError, match="recompute_modules is empty"):
        TrainingSetup(recompute_modules=())
    assert TrainingSetup(recompute_modules=None).recompute_modules is None
    assert TrainingSetup(recompute_modules=("core_attn",)).recompute_modules == ("core_attn",)


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


@pytest.mark.parametrize("endpoint,extra", [("evaluate", {}), ("export", {"format": "megatron"}),
                                            ("recommend", {"top_k": 1})])
def test_rest_refuses_an_empty_list(client, endpoint, extra):
    r = client.post(f"/api/{endpoint}", json={**SCENARIO, **extra, "recompute_modules": []})
    assert r.status_code == 400, r.text
    assert "recompute_modules is empty" in r.json()["message"]


def test_cli_refuses_it_too(capsys):
    with pytest.raises(SystemExit) as stopped:  # argparse's one-line error, exit 2
        cli(["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--recompute-modules", ","])
    assert stopped.value.code == 2
    assert "expected module names" in capsys.readouterr().err
