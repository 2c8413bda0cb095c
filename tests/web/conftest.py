"""Shared helpers for the web tests: a uvicorn server on a free loopback port, scripted chat services."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Iterator

import pytest

SERVER_START_TIMEOUT_S = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def live_server(app) -> Iterator[str]:
    """Run `app` under uvicorn on 127.0.0.1 in a background thread; yields its base URL."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class ScriptedChat:
    """A chat service that replays fixed events (the agent's contract: session, delta, tool, configs, done)."""

    def __init__(self, events: list[tuple[str, dict]] | None = None):
        self.events = events if events is not None else [
            ("session", {"session_id": "s-test", "mode": "offline planner"}),
            ("tool", {"name": "recommend_plans", "arguments": {"gpus": 8}, "summary": "best of 12 plans"}),
            ("delta", {"text": "Use **TP=8**.\n\n"}),
            ("delta", {"text": "It fits in 61 GiB."}),
            ("configs", {"configs": {"deepspeed": '{"train_batch_size": 8}'}}),
            ("done", {"session_id": "s-test"}),
        ]
        self.calls: list[tuple[str, str | None]] = []

    def stream(self, message: str, session_id: str | None):
        self.calls.append((message, session_id))
        yield from self.events


class SlowChat:
    """Yields one event, then keeps yielding slowly until closed; records that its `finally` ran."""

    def __init__(self, step_s: float = 0.05, steps: int = 400):
        self.step_s, self.steps = step_s, steps
        self.closed = threading.Event()
        self.produced = 0

    def stream(self, message: str, session_id: str | None):
        try:
            yield ("session", {"session_id": "s-slow"})
            for i in range(self.steps):
                time.sleep(self.step_s)
                self.produced += 1
                yield ("delta", {"text": f"{i} "})
            yield ("done", {})
        finally:
            self.closed.set()


@pytest.fixture
def scripted_chat() -> ScriptedChat:
    return ScriptedChat()


@pytest.fixture(scope="session")
def serve():
    """`with serve(app) as base_url: ...` — the app under uvicorn on a free loopback port."""
    return live_server


@pytest.fixture(scope="session")
def pick_port():
    """A free loopback port (for a second server, e.g. the page that embeds the widget)."""
    return free_port


@pytest.fixture(scope="session")
def chat_script():
    """ScriptedChat(events): a chat service that replays the given events."""
    return ScriptedChat


@pytest.fixture
def slow_chat() -> SlowChat:
    return SlowChat()


@pytest.fixture(scope="module")
def api_client():
    """The app with no chat and no rate limit in the way, server errors returned as responses: for tests of what
    REST and the page answer to a request (a test file defining its own `client` uses that instead)."""
    from fastapi.testclient import TestClient

    from shardwise.web.app import create_app
    from shardwise.web.settings import Settings

    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                 chat_service=object()), raise_server_exceptions=False)


def evaluation(label_tp: int = 8, pp: int = 1, vpp: int = 1, grad_accum: int = 16, weights: float = 20.0,
               gradients: float = 10.0, optimizer: float = 15.0, activations: float = 12.0, other: float = 3.0,
               capacity: float = 80.0, step_s: float = 2.0, model_name: str = "test-model"):
    """An Evaluation with chosen numbers (for layout tests that must not depend on the engine's formulas)."""
    from shardwise.engine.results import (ClusterSummary, Evaluation, MemoryReport, ModelSummary, StrategySummary,
                                          ThroughputReport, TimeReport)

    total = weights + gradients + optimizer + activations + other
    compute = step_s * 0.7
    return Evaluation(
        model=ModelSummary(name=model_name, params=70_000_000_000, active_params=70_000_000_000),
        cluster=ClusterSummary(gpu="h100-sxm", num_gpus=64, gpus_per_node=8, gpu_memory_gib=capacity, network="ib-ndr",
                               num_nodes=8),
        strategy=StrategySummary(tp=label_tp, pp=pp, vpp=vpp, cp=1, ep=1, etp=1, dp=64 // (label_tp * pp),
                                 zero_stage=1, micro_batch=1, grad_accum=grad_accum, recompute="selective",
                                 sequence_parallel=True),
        valid=True, violations=[],
        memory=MemoryReport(weights_gib=weights, gradients_gib=gradients, optimizer_gib=optimizer,
                            activations_gib=activations, other_gib=other, total_gib=total, capacity_gib=capacity,
                            fits=total <= capacity),
        time=TimeReport(step_s=step_s, compute_s=compute, tp_comm_s=step_s * 0.1, cp_comm_s=0.0, ep_comm_s=0.0,
                        pp_bubble_s=step_s * 0.1, pp_comm_s=0.0, dp_comm_s=step_s * 0.05, optimizer_s=step_s * 0.05),
        throughput=ThroughputReport(tokens_per_s=1e6 / step_s, tokens_per_s_per_gpu=1e6 / step_s / 64, mfu=0.4,
                                    hfu=0.45, model_tflops_per_gpu=400.0),
    )


@pytest.fixture
def make_evaluation():
    return evaluation
