"""`shardwise serve` checks its settings before it listens."""

from __future__ import annotations

import pytest

from shardwise.cli.main import main


@pytest.mark.timeout(30)  # were the check missing, serve would start and block here
def test_an_unreachable_session_database_stops_serve_with_a_clear_error(capsys, monkeypatch):
    monkeypatch.setenv("SHARDWISE_SESSION_DB", "postgresql+psycopg://shardwise:hunter2@127.0.0.1:9/sessions")
    assert main(["serve", "--port", "8999"]) == 2
    err = capsys.readouterr().err
    assert "cannot open the session database postgresql+psycopg://shardwise:***@127.0.0.1:9/sessions" in err
    assert "hunter2" not in err and "Traceback" not in err


@pytest.mark.timeout(30)  # NaN passed `<= 0` and serve started with a timeout nothing can meet
@pytest.mark.parametrize("value", ["nan", "inf", "0"])
def test_a_non_finite_llm_timeout_stops_serve(capsys, value):
    assert main(["serve", "--port", "8999", "--llm-timeout", value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("shardwise: error: --llm-timeout must be positive and finite") and err.count("\n") == 1


@pytest.mark.parametrize("var", ["SHARDWISE_CHAT_DEADLINE_S", "SHARDWISE_LLM_TIMEOUT_S", "SHARDWISE_WORK_MAX_WAIT_S"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_non_finite_seconds_in_the_environment_are_refused(var, value):
    from shardwise.engine.errors import ShardwiseInputError
    from shardwise.web.settings import Settings

    with pytest.raises(ShardwiseInputError, match=f"{var} must be positive and finite"):
        Settings.from_env({var: value})
