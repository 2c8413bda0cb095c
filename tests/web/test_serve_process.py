"""`shardwise serve --workers 2` as a real process: it serves, and one conversation spans both workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

START_TIMEOUT_S = 60.0


def done_event(text: str) -> dict:
    for frame in text.strip().split("\n\n"):
        if frame.startswith("event: done"):
            return json.loads(frame.split("data:", 1)[1])
    raise AssertionError(f"no done event in {text[:500]!r}")


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_two_workers_serve_one_conversation(tmp_path, pick_port):
    port = pick_port()
    env = {**os.environ, "SHARDWISE_SESSION_DB": str(tmp_path / "sessions.sqlite3")}
    env.pop("SHARDWISE_MODEL", None)  # the offline planner
    server = subprocess.Popen([sys.executable, "-m", "shardwise", "serve", "--port", str(port), "--workers", "2"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, server.stdout.read().decode()
            assert time.monotonic() < deadline, "shardwise serve did not start"
            time.sleep(0.2)
        first = httpx.post(f"{base}/api/chat", json={"message": "Llama 3.1 8B on 8 H100s: what plan?"}, timeout=60)
        session = done_event(first.text)["session_id"]
        # fresh connections each time: uvicorn's workers share the socket, so these land on either process
        for gpus in (16, 32, 48, 64):
            r = httpx.post(f"{base}/api/chat", json={"message": f"what if we had {gpus} GPUs?", "session_id": session},
                           timeout=60)
            done = done_event(r.text)
            assert done["session_id"] == session
            assert done["scenario"]["gpus"] == gpus and done["scenario"]["model"].startswith("llama-3.1-8b")
    finally:
        server.send_signal(signal.SIGTERM)  # uvicorn's supervisor stops its workers
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)  # the group this test started, nothing else
            server.wait(timeout=10)
    output = server.stdout.read().decode()
    assert output.count("Started server process") == 2, output
