"""An empty or unknown model, GPU or network name is refused with what is allowed in the message itself: a few
catalog ids and every place that lists all of them (the CLI command, the REST endpoint, the page's list), in the
same words on the CLI, over REST and in the chat's tools; and a chat message over the length limit says where a
config.json goes on the page and over REST (web/templates/_form.html's Model list option, web/schemas.py's
`model` field). Expected texts are built here from the catalogs' own lists, not copied from a message."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.agent.config import AgentConfig
from shardwise.agent.events import ErrorEvent
from shardwise.agent.service import ChatService
from shardwise.engine.catalog_listing import EXAMPLES
from shardwise.engine.hardware_catalog import get_gpu, get_network, list_gpus, list_networks
from shardwise.engine.model_catalog import get_model, model_ids
from shardwise.tools.dispatch import dispatch
from shardwise.web.app import create_app
from shardwise.web.settings import Settings

from support.cli_runner import run

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}
CLI_PREFIX = "shardwise: error: "


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                 chat_service=object()), raise_server_exceptions=False)


def allowed(kind: str, count: int, command: str, endpoint: str, page_list: str) -> list[str]:
    """What the message must say: each example id and the three places listing all `count` ids."""
    return [*(f"'{name}'" for name in EXAMPLES[kind]), f"all {count} ", f"`shardwise {command}`",
            f"GET /api/{endpoint}", f"the page's {page_list} list"]


def test_the_examples_are_catalog_ids():
    assert all(get_model(m).name for m in EXAMPLES["model"])
    assert [get_gpu(g).id for g in EXAMPLES["gpu"]] == list(EXAMPLES["gpu"])
    assert [get_network(n).id for n in EXAMPLES["network"]] == list(EXAMPLES["network"])


def cli(capsys, *flags) -> str:
    code, _, err = run(capsys, "recommend", *flags)
    assert code == 2 and err.startswith(CLI_PREFIX) and "Traceback" not in err
    return err[len(CLI_PREFIX):].strip()


def rest(client, body) -> str:
    r = client.post("/api/recommend", json=body)
    assert r.status_code == 400, r.text
    return r.json()["message"]


def tool(scenario) -> str:  # what the chat's model (and the offline planner) is told
    out = dispatch("recommend_plans", json.dumps({"scenario": scenario}), result_id="R1")
    assert not out.ok
    return out.errors[0]


@pytest.mark.parametrize("field, value, kind, count, where", [
    ("gpu", " ", "gpu", len(list_gpus()), ("gpus", "gpus", "GPU")),
    ("gpu", "h1OO", "gpu", len(list_gpus()), ("gpus", "gpus", "GPU")),
    ("model", "lama-8b-xyz", "model", len(model_ids()), ("models", "models", "Model")),
    ("network", "infiniband-9000", "network", len(list_networks()), ("networks", "networks", "Network")),
])
def test_a_bad_catalog_name_says_what_is_allowed_the_same_on_every_surface(capsys, client, field, value, kind,
                                                                           count, where):
    body = {**SCENARIO, "gpus": 16, field: value}
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in body.items()]
    said = {"cli": cli(capsys, *flags), "rest": rest(client, body), "chat": tool(body)}
    assert len(set(said.values())) == 1, said  # one text everywhere
    message = said["cli"]
    for part in allowed(kind, count, *where):
        assert part in message, (part, message)
    assert "(see `shardwise" not in message


def test_an_empty_model_name_in_the_chats_tools_lists_model_ids():
    message = tool({**SCENARIO, "model": " "})
    assert all(part in message for part in allowed("model", len(model_ids()), "models", "models", "Model"))


def test_a_chat_message_over_the_limit_says_where_a_config_json_goes(tmp_path):
    service = ChatService(AgentConfig(max_message_chars=100, session_db=tmp_path / "s.sqlite3"))
    [error] = [e for e in service.stream("x" * 101, None) if isinstance(e, ErrorEvent)]
    assert "101 characters" in error.message and "the limit is 100" in error.message
    # the page's Model list option (web/templates/_form.html) and the REST body's `model` field (web/schemas.py)
    assert "Paste a Hugging Face config.json" in error.message and "`model` field of POST /api/recommend" in error.message
    assert "'llama-3.1-8b'" in error.message and "GET /api/models" in error.message


def test_rest_chat_over_the_limit_says_the_same(tmp_path):
    app = create_app(Settings(max_message_chars=100), chat_service=object())
    r = TestClient(app, raise_server_exceptions=False).post("/api/chat", json={"message": "x" * 101})
    assert r.status_code == 413
    assert "Paste a Hugging Face config.json" in r.json()["message"] and "the limit is 100" in r.json()["message"]
