"""The REST tests' shared setup for profiles: one scenario (as a body and as CLI flags), a test client, and a
profile fitted by the CLI on that very scenario (H100, bf16, Megatron, 2 nodes on ib-ndr), so it applies to it."""

from fastapi.testclient import TestClient

from shardwise.cli.main import main as cli
from shardwise.web.app import create_app
from shardwise.web.settings import Settings

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16, "seq_len": 4096, "global_batch": 256}
FLAGS = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "16", "--seq-len", "4096", "--global-batch", "256"]


def api_client() -> TestClient:
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def fitted_profile(folder):
    """`shardwise calibrate` on SCENARIO with TP=2 measured at 5,000 tokens/s per GPU, saved in `folder`."""
    path = folder / "profile.json"
    assert cli(["calibrate", *FLAGS, "--tp", "2", "--measured-tokens-per-s-per-gpu", "5000", "--save", str(path)]) == 0
    return path
