"""Load on `shardwise serve`: N people chat at once through a slow LLM. Reports, per level, how many
answers ended with `done`, how many with an `error` event, how many requests were refused (HTTP
503/429), p50/p95 time to the last event, the server's CPU seconds per chat, and whether the page
answered meanwhile.

    python benchmarks/bench_serve_load.py                  # 10, 50 and 100 users, default `shardwise serve`
    python benchmarks/bench_serve_load.py --users 100 --serve-arg=--workers --serve-arg=2
    python benchmarks/bench_serve_load.py --offline        # no LLM: the offline planner answers (CPU only)
    python benchmarks/bench_serve_load.py --users 10 --rest 200   # and 200 REST searches at once

It starts two processes on loopback and stops them at the end: benchmarks/fake_llm.py (stateless,
1.5 s per reply, a `recommend_plans` call then a short text) and `python -m shardwise serve` with
its defaults, pointed at the fake (SHARDWISE_MODEL, OPENAI_BASE_URL). Each simulated person
connects from its own loopback address (127.x.y.z), as people on a team do from their own machines,
so the per-client rate limit applies per person. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HERE = Path(__file__).parent
START_TIMEOUT_S = 60.0
USER_TIMEOUT_S = 300.0  # one chat, start to last event; far past the server's 120 s deadline
PAGE_PROBE_EVERY_S = 0.5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up within {START_TIMEOUT_S:g} s")


def stop(process: subprocess.Popen) -> None:
    """Stop a process this script started (its own process group, nothing else)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its live children (uvicorn's workers), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:  # fields[1]: the parent's pid
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


@dataclass
class Level:
    users: int
    outcomes: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)  # of chats that ended with `done`
    page: list[tuple[int, float]] = field(default_factory=list)  # (status, seconds) of GET / during the level
    wall_s: float = 0.0
    server_cpu_s: float = 0.0


async def one_chat(base: str, address: str, question: str) -> tuple[str, float]:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    start = time.monotonic()
    try:
        async with httpx.AsyncClient(transport=transport, base_url=base, timeout=USER_TIMEOUT_S) as client:
            async with client.stream("POST", "/api/chat", json={"message": question}) as response:
                if response.status_code != 200:
                    return f"http {response.status_code}", time.monotonic() - start
                last = "no event"
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        last = line[7:].strip()
                return last, time.monotonic() - start
    except httpx.HTTPError as exc:
        return f"transport {type(exc).__name__}", time.monotonic() - start


REST_BODY = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": 64, "seq_len": 8192, "global_batch_tokens": "4M",
             "top_k": 3}


async def rest_burst(base: str, requests: int) -> None:
    """`requests` POST /api/recommend at once, each from its own address: answered, refused, latency."""
    async def one(i: int) -> tuple[int, float]:
        transport = httpx.AsyncHTTPTransport(local_address=f"127.20.{i // 250}.{i % 250 + 1}")
        start = time.monotonic()
        async with httpx.AsyncClient(transport=transport, base_url=base, timeout=USER_TIMEOUT_S) as client:
            status = (await client.post("/api/recommend", json=REST_BODY)).status_code
        return status, time.monotonic() - start

    start = time.monotonic()
    results = await asyncio.gather(*(one(i) for i in range(requests)))
    wall = time.monotonic() - start
    ok = [t for status, t in results if status == 200]
    refused = sum(status in (503, 429) for status, _ in results)
    print(f"REST: {requests} POST /api/recommend at once: {len(ok)} answered, {refused} refused, "
          f"{requests - len(ok) - refused} other; p50 {percentile(ok, 50):.1f} s, p95 {percentile(ok, 95):.1f} s, "
          f"{len(ok) / wall:.0f}/s")


async def probe_page(base: str, stop_event: asyncio.Event, into: list[tuple[int, float]]) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        while not stop_event.is_set():
            start = time.monotonic()
            try:
                status = (await client.get("/")).status_code
            except httpx.HTTPError:
                status = 0
            into.append((status, time.monotonic() - start))
            try:
                await asyncio.wait_for(stop_event.wait(), PAGE_PROBE_EVERY_S)
            except TimeoutError:
                pass


async def run_level(base: str, users: int, level_index: int, server_pid: int) -> Level:
    level = Level(users)
    cpu_before = cpu_seconds(server_pid)
    done_probing = asyncio.Event()
    probe = asyncio.create_task(probe_page(base, done_probing, level.page))
    start = time.monotonic()
    # 127.<level+10>.<i // 250>.<i % 250 + 1>: a distinct client address per person and level
    chats = [one_chat(base, f"127.{level_index + 10}.{i // 250}.{i % 250 + 1}",
                      f"Llama 3.1 8B on {8 * (1 + i % 8)} H100s, 4k context: what plan? (person {i})")
             for i in range(users)]
    results = await asyncio.gather(*chats)
    level.wall_s = time.monotonic() - start
    done_probing.set()
    await probe
    level.server_cpu_s = cpu_seconds(server_pid) - cpu_before
    for outcome, seconds in results:
        level.outcomes.append(outcome)
        if outcome == "done":
            level.latencies.append(seconds)
    return level


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def report(levels: list[Level]) -> None:
    print(f"{'users':>5} {'done':>5} {'error':>5} {'refused':>7} {'other':>5} {'p50 s':>6} {'p95 s':>6} {'wall s':>6}"
          f" {'cpu/chat':>8}  page during load (ok/probes, worst s)")
    for lv in levels:
        refused = sum(o in ("http 503", "http 429") for o in lv.outcomes)
        done, error = lv.outcomes.count("done"), lv.outcomes.count("error")
        other = len(lv.outcomes) - done - error - refused
        ok = sum(status == 200 for status, _ in lv.page)
        worst = max((s for _, s in lv.page), default=float("nan"))
        print(f"{lv.users:>5} {done:>5} {error:>5} {refused:>7} {other:>5} {percentile(lv.latencies, 50):>6.1f} "
              f"{percentile(lv.latencies, 95):>6.1f} {lv.wall_s:>6.1f} {lv.server_cpu_s / lv.users:>7.2f}s"
              f"  {ok}/{len(lv.page)}, {worst:.2f}")
        odd = sorted({o for o in lv.outcomes if o not in ("done", "error", "http 503", "http 429")})
        if odd:
            print(f"      other outcomes: {', '.join(odd)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, action="append", help="concurrent people (repeatable; default 10, 50, 100)")
    parser.add_argument("--delay", type=float, default=1.5, help="seconds per fake LLM reply")
    parser.add_argument("--serve-arg", action="append", default=[], help="extra argument for `shardwise serve`")
    parser.add_argument("--offline", action="store_true", help="no LLM: every answer is the offline planner's (CPU only)")
    parser.add_argument("--rest", type=int, default=0, metavar="N",
                        help="also fire N POST /api/recommend at once after the chats (REST under a burst)")
    args = parser.parse_args()
    levels = args.users or [10, 50, 100]
    if any(not 1 <= n <= 1000 for n in levels):
        parser.error("--users must be between 1 and 1000")
    llm_port, port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SHARDWISE_MODEL": "fake-llm", "OPENAI_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
               "OPENAI_API_KEY": "not-needed", "SHARDWISE_SESSION_DB": str(Path(tmp) / "sessions.sqlite3"),
               "XDG_CONFIG_HOME": str(Path(tmp) / "config"), "XDG_STATE_HOME": str(Path(tmp) / "state")}
        if args.offline:
            env.pop("SHARDWISE_MODEL")
        log = open(Path(tmp) / "serve.log", "w")
        fake = subprocess.Popen([sys.executable, str(HERE / "fake_llm.py"), "--port", str(llm_port), "--delay",
                                 str(args.delay)], start_new_session=True)
        server = subprocess.Popen([sys.executable, "-m", "shardwise", "serve", "--port", str(port), *args.serve_arg],
                                  env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(f"http://127.0.0.1:{llm_port}/", fake)
            wait_until_up(f"{base}/api/health", server)
            answering = "offline planner" if args.offline else f"fake LLM {args.delay:g} s per reply"
            print(f"shardwise serve {' '.join(args.serve_arg) or '(defaults)'}; {answering}; "
                  f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before")
            # One chat first: the server's first answer imports the tools and warms the engine's caches
            # (~1 s); that is start-up, not load.
            warm, _ = asyncio.run(one_chat(base, "127.9.0.1", "Llama 3.1 8B on 8 H100s: what plan?"))
            print(f"warm-up chat: {warm}")
            results = [asyncio.run(run_level(base, n, i, server.pid)) for i, n in enumerate(levels)]
            report(results)
            if args.rest:
                asyncio.run(rest_burst(base, args.rest))
            after = httpx.get(f"{base}/", timeout=10).status_code
            health = httpx.get(f"{base}/api/health", timeout=10).json()
            print(f"after the load: GET / -> {after}; /api/health -> {health}; load average {os.getloadavg()[0]:.1f}")
        finally:
            stop(server)
            stop(fake)
            log.close()


if __name__ == "__main__":
    main()
