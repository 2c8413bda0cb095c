"""Agent configuration: environment first, then a TOML file, then defaults.

The LLM is enabled by naming a model (SHARDWISE_MODEL or `model` in the file); without
one, chat runs on the offline planner. OPENAI_BASE_URL points at any OpenAI-compatible
server (vLLM, Ollama, llama.cpp, LM Studio, Azure's /openai/v1); OPENAI_API_KEY may be
omitted for local servers that do not check it.

File: $SHARDWISE_CONFIG, else $XDG_CONFIG_HOME/shardwise/config.toml, table [agent]:

    [agent]
    model = "gpt-4o-mini"
    base_url = "http://localhost:8000/v1"
    api_key = "..."
    fallback = "offline"        # or "none": answer with an error when the LLM is unreachable
    session_db = "~/.local/state/shardwise/sessions.sqlite3"   # or a SQLAlchemy URL (postgresql+psycopg://…)
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from ..engine.errors import ShardwiseInputError
from .sessions import is_database_url

LOCAL_PLACEHOLDER_KEY = "not-needed"  # openai's client insists on a key; local servers ignore it


def _state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "shardwise"


class AgentConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = Field(default=None, description="LLM name; None = offline planner")
    base_url: str | None = Field(default=None, description="None = the openai client's default (api.openai.com)")
    api_key: SecretStr | None = None
    fallback: Literal["offline", "none"] = Field(
        default="offline", description="when the LLM is unreachable: answer with the offline planner, or report it")
    stream: bool = Field(default=True, description="stream tokens; turn off for servers that cannot stream tools")
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    request_timeout_s: float = Field(default=60.0, gt=0, le=3600, description="one HTTP request")
    connect_timeout_s: float = Field(default=10.0, gt=0, le=600)
    max_retries: int = Field(default=2, ge=0, le=10, description="on 429, 5xx, timeouts and dropped connections")
    # 16 requests in flight at ~2 s each is ~480 requests a minute: under the 500 RPM of OpenAI's
    # first usage tier; a local vLLM batches that many at once. Per server process.
    llm_max_concurrency: int = Field(default=16, ge=1, le=10_000,
                                     description="LLM requests open at once per process; the rest wait their turn")
    deadline_s: float = Field(default=180.0, gt=0, le=3600, description="wall clock for one answer, tools included")
    max_tool_rounds: int = Field(default=8, ge=1, le=50, description="model turns that may call tools")
    history_token_budget: int = Field(default=6000, ge=500, le=1_000_000, description="tokens of past conversation sent")
    encoding: Literal["o200k_base", "cl100k_base"] = "o200k_base"
    max_message_chars: int = Field(default=4000, ge=10, le=1_000_000, description="longest user message accepted")
    session_db: Path | str = Field(default_factory=lambda: _state_dir() / "sessions.sqlite3",
                                   description="a SQLite file, or a SQLAlchemy URL such as postgresql+psycopg://host/db")

    @property
    def llm_enabled(self) -> bool:
        return bool(self.model)

    def key(self) -> str:
        return self.api_key.get_secret_value() if self.api_key else LOCAL_PLACEHOLDER_KEY


ENV_VARS = {"SHARDWISE_MODEL": "model", "OPENAI_BASE_URL": "base_url", "OPENAI_API_KEY": "api_key",
            "SHARDWISE_SESSION_DB": "session_db", "SHARDWISE_LLM_FALLBACK": "fallback",
            "SHARDWISE_LLM_MAX_CONCURRENCY": "llm_max_concurrency"}


def config_path(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("SHARDWISE_CONFIG"):
        return Path(env["SHARDWISE_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "shardwise" / "config.toml"


def load_config(env: dict[str, str] | None = None, **overrides) -> AgentConfig:
    """Environment variables beat the file; keyword overrides (CLI flags) beat both."""
    env = os.environ if env is None else env
    values: dict = {}
    path = config_path(env)
    if path.exists():
        try:
            values.update(tomllib.loads(path.read_text()).get("agent", {}))
        except (tomllib.TOMLDecodeError, OSError, AttributeError) as exc:
            raise ShardwiseInputError(f"cannot read the config file {path}: {exc}") from None
    elif env.get("SHARDWISE_CONFIG"):
        raise ShardwiseInputError(f"SHARDWISE_CONFIG points at {path}, which does not exist")
    for var, field in ENV_VARS.items():
        if env.get(var):
            values[field] = env[var]
    values.update({k: v for k, v in overrides.items() if v is not None})
    if "session_db" in values and not is_database_url(str(values["session_db"])):
        values["session_db"] = Path(str(values["session_db"])).expanduser()
    try:
        return AgentConfig(**values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ShardwiseInputError(f"invalid agent configuration ({path}): {problems}") from None
