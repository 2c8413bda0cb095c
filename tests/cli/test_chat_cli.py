"""`shardwise ask` and `shardwise chat`: the JSON contract, sessions across invocations, configs,
bad input, and an LLM endpoint that cannot be reached."""

from __future__ import annotations

import json

import pytest

from shardwise.cli.main import main

QUESTION = "Llama-3.1-8B on 8 H100s, 4k context, 256 sequences per step"


@pytest.fixture(autouse=True)
def offline_env(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for var in ("SHARDWISE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "SHARDWISE_CONFIG", "SHARDWISE_SESSION_DB",
                "SHARDWISE_LLM_FALLBACK"):
        monkeypatch.delenv(var, raising=False)


def ask_json(capsys, *args):
    code = main(["ask", *args, "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def test_ask_json_contract_and_plan_equals_evaluate_json(capsys):
    code, data, _ = ask_json(capsys, QUESTION)
    assert code == 0
    assert set(data) >= {"answer", "session", "tool_calls", "plan", "configs"}
    assert data["tool_calls"][0]["name"] == "recommend_plans"
    assert {"name", "arguments", "result"} <= set(data["tool_calls"][0])
    s = data["plan"]["strategy"]
    flags = ["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--seq-len", "4096",
             "--global-batch", "256", "--tp", str(s["tp"]), "--pp", str(s["pp"]), "--vpp", str(s["vpp"]),
             "--cp", str(s["cp"]), "--ep", str(s["ep"]), "--etp", str(s["etp"]), "--zero", str(s["zero_stage"]),
             "--micro-batch", str(s["micro_batch"]), "--recompute", s["recompute"], "--json"]
    if not s["sequence_parallel"] and s["tp"] > 1:
        flags.append("--no-sp")
    assert main(flags) == 0
    printed = json.loads(capsys.readouterr().out)
    for key in ("model", "cluster", "strategy", "valid", "violations", "time", "throughput"):
        assert data["plan"][key] == printed[key], key
    assert data["plan"]["memory"]["total_gib"] == printed["memory"]["total_gib"]
    assert data["configs"] and all(isinstance(v, str) and v for v in data["configs"].values())


def test_session_continues_across_invocations(capsys):
    code, first, _ = ask_json(capsys, QUESTION, "--session", "team-a")
    assert code == 0 and first["session"] == "team-a"
    code, second, _ = ask_json(capsys, "what if we had H200s?", "--session", "team-a")
    call = second["tool_calls"][0]
    assert call["name"] == "what_if" and call["arguments"]["scenario"]["model"] == "llama-3.1-8b"


def test_plain_ask_prints_the_answer_and_how_to_continue(capsys):
    assert main(["ask", QUESTION]) == 0
    out = capsys.readouterr()
    assert "Recommended plan" in out.out and "configs attached" in out.out
    assert "--session s-" in out.err


@pytest.mark.parametrize("question, words", [("", "empty"), ("x" * 4001, "limit is 4,000")])
def test_bad_questions_exit_2_with_one_line(capsys, question, words):
    assert main(["ask", question]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_session_name_exits_2(capsys):
    assert main(["ask", "hi", "--session", "no spaces allowed"]) == 2
    assert "session name" in capsys.readouterr().err


def test_unreachable_llm_falls_back_or_fails_clearly(capsys, monkeypatch):
    monkeypatch.setenv("SHARDWISE_MODEL", "some-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # discard port: connection refused
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnop")
    code, data, err = ask_json(capsys, QUESTION)
    assert code == 0 and data["mode"] == "offline"  # the offline planner's answer, and what went wrong
    assert data["error"].startswith("cannot reach the LLM endpoint (http://127.0.0.1:9/v1)")
    assert "warning: cannot reach the LLM endpoint" in err
    assert data["plan"] is not None and data["answer"]
    monkeypatch.setenv("SHARDWISE_LLM_FALLBACK", "none")
    code, data, err = ask_json(capsys, QUESTION)
    assert code == 1 and "cannot reach the LLM endpoint (http://127.0.0.1:9/v1)" in err
    assert "sk-test-abcdefghijklmnop" not in err + json.dumps(data)


def test_offline_flag_overrides_a_configured_llm(capsys, monkeypatch):
    monkeypatch.setenv("SHARDWISE_MODEL", "some-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    code, data, _ = ask_json(capsys, QUESTION, "--offline")
    assert code == 0 and data["mode"] == "offline" and not data["answer"].startswith("_The language model")


def test_bad_config_file_is_a_clear_error(capsys, monkeypatch, tmp_path):
    path = tmp_path / "agent.toml"
    path.write_text("[agent]\ntemperature = 'hot'\n")
    monkeypatch.setenv("SHARDWISE_CONFIG", str(path))
    assert main(["ask", "hi"]) == 2
    assert "invalid agent configuration" in capsys.readouterr().err


def test_terminal_chat_session_with_commands(capsys, monkeypatch, tmp_path):
    from shardwise.engine.export import export_all
    from shardwise.engine.inputs import build_cluster
    from shardwise.engine.model_catalog import get_model
    from shardwise.engine.search import recommend
    from shardwise.engine.training import TrainingSetup
    from shardwise.tools.scenario import Plan

    lines = iter([QUESTION, "/configs", f"/save {tmp_path / 'out'}", "/session", "/bogus", "/quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    assert main(["chat"]) == 0
    out = capsys.readouterr().out
    assert "offline planner" in out and "Recommended plan" in out and "/config NAME" in out
    scenario = (get_model("llama-3.1-8b"), build_cluster("h100", 8), TrainingSetup(seq_len=4096, global_batch=256))
    best = recommend(*scenario, top_k=1).plans[0]
    exported = export_all(*scenario, Plan.from_strategy(best.strategy).strategy())
    for out_file in exported.values():
        if hasattr(out_file, "text"):
            assert (tmp_path / "out" / out_file.filename).read_text() == out_file.text


def test_chat_ends_on_eof(capsys, monkeypatch):
    def eof(prompt=""):
        raise EOFError

    monkeypatch.setattr("builtins.input", eof)
    assert main(["chat"]) == 0
