"""`--target live` end to end: config from the environment, the agent's OpenAI adapter, the real
`openai` client — its HTTP answered by respx, so nothing leaves the machine."""

import json

import httpx
import pytest
import respx

from shardwise.cli.main import main
from shardwise.engine.errors import ShardwiseInputError
from shardwise.evals.targets import make_target

BASE = "https://llm.example.test/v1"


def sse(text: str) -> httpx.Response:
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
              {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


@pytest.fixture
def endpoint(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("SHARDWISE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", BASE)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    with respx.mock(base_url=BASE, assert_all_mocked=True) as router:
        yield router


def test_live_needs_a_configured_model(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    for var in ("SHARDWISE_MODEL", "SHARDWISE_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ShardwiseInputError, match="SHARDWISE_MODEL"):
        make_target("live")


def test_repeats_give_a_pass_rate_with_an_interval(endpoint, capsys):
    # Two good answers and one that invents a number: 2 of 3 runs pass.
    replies = [sse("I only plan distributed training parallelism; no poems."),
               sse("A haiku takes 17 syllables."),
               sse("I plan distributed training parallelism, not poems.")]
    route = endpoint.post("/chat/completions").mock(side_effect=replies)
    code = main(["eval", "--target", "live", "--case", "ood-haiku", "--repeats", "3", "--json", "--no-progress"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and route.call_count == 3
    assert (data["total"], data["passed"]) == (3, 2)
    low, high = data["pass_rate_ci95"]
    assert low < 2 / 3 < high
    assert data["target"] == "live:test-model"
    assert any("unbacked number '17'" in f for f in data["cases"][0]["failures"])


def test_the_judge_over_an_openai_compatible_endpoint(endpoint):
    from shardwise.evals.case import Case
    from shardwise.evals.graders import TurnContext
    from shardwise.evals.graders.judge import judge, openai_complete
    from shardwise.evals.transcript import Reply

    reply = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": '{"score": 4, "reason": "clear, direct"}'}}]}
    route = endpoint.post("/chat/completions").mock(return_value=httpx.Response(200, json=reply))
    case = Case.model_validate({"id": "j", "family": "out_of_domain", "user": "write a haiku"})
    ctx = TurnContext(case=case, index=0, scenario=case.scenario, reply=Reply(answer="I plan parallelism."))
    verdict = judge(ctx, openai_complete("test-model", BASE, "sk-test"))
    assert (verdict.score, verdict.reason) == (4, "clear, direct")
    sent = json.loads(route.calls[0].request.content)
    assert sent["model"] == "test-model" and "I plan parallelism." in sent["messages"][1]["content"]
