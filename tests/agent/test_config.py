"""Agent configuration: environment over the TOML file over defaults; bad values are clear errors."""

from __future__ import annotations

import pytest

from shardwise.agent.config import LOCAL_PLACEHOLDER_KEY, load_config
from shardwise.engine.errors import ShardwiseInputError


def test_defaults_are_the_offline_planner(tmp_path):
    config = load_config(env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert config.llm_enabled is False and config.fallback == "offline"
    assert config.key() == LOCAL_PLACEHOLDER_KEY


def test_the_three_standard_variables_enable_the_llm(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path), "SHARDWISE_MODEL": "qwen2.5-72b-instruct",
           "OPENAI_BASE_URL": "http://localhost:8000/v1", "OPENAI_API_KEY": "sk-abc"}
    config = load_config(env=env)
    assert (config.llm_enabled, config.model, config.base_url, config.key()) == \
        (True, "qwen2.5-72b-instruct", "http://localhost:8000/v1", "sk-abc")
    assert "sk-abc" not in repr(config)  # a SecretStr never prints


def test_file_then_environment_then_overrides(tmp_path):
    path = tmp_path / "shardwise" / "config.toml"
    path.parent.mkdir()
    path.write_text('[agent]\nmodel = "from-file"\nbase_url = "http://file/v1"\ndeadline_s = 30\n'
                    f'session_db = "{tmp_path}/s.db"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path), "SHARDWISE_MODEL": "from-env"}
    config = load_config(env=env, max_tool_rounds=3)
    assert (config.model, config.base_url, config.deadline_s, config.max_tool_rounds) == ("from-env", "http://file/v1", 30, 3)
    assert str(config.session_db) == f"{tmp_path}/s.db"


@pytest.mark.parametrize("text, words", [
    ("[agent]\ndeadline_s = -1\n", "deadline_s"),
    ("[agent]\nfallback = 'maybe'\n", "fallback"),
    ("[agent]\nunknown_key = 1\n", "unknown_key"),
    ("[agent\n", "cannot read the config file"),
])
def test_bad_files_are_one_line_errors(tmp_path, text, words):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ShardwiseInputError, match=words):
        load_config(env={"SHARDWISE_CONFIG": str(path)})


def test_missing_explicit_file_is_an_error(tmp_path):
    with pytest.raises(ShardwiseInputError, match="does not exist"):
        load_config(env={"SHARDWISE_CONFIG": str(tmp_path / "nope.toml")})


def test_llm_concurrency_and_a_session_database_url_from_the_environment(tmp_path):
    home = {"XDG_CONFIG_HOME": str(tmp_path)}  # no config file
    url = "postgresql+psycopg://shardwise@127.0.0.1/sessions"
    config = load_config(env={**home, "SHARDWISE_LLM_MAX_CONCURRENCY": "4", "SHARDWISE_SESSION_DB": url})
    assert config.llm_max_concurrency == 4 and config.session_db == url
    assert load_config(env=home).llm_max_concurrency == 16
    with pytest.raises(ShardwiseInputError, match="llm_max_concurrency"):
        load_config(env={**home, "SHARDWISE_LLM_MAX_CONCURRENCY": "0"})
