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
