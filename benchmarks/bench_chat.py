"""Wall time of one offline-planner answer per question family (tools, engine, templates,
config export and the SQLite session write included).

    python benchmarks/bench_chat.py            # best of 3 per question
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService

CONVERSATION = [
    ("recommend", "Llama-3.1-70B on 64 H100s, 8k context, 4M-token batches - what should I use?"),
    ("why", "why this plan?"),
    ("compare", "why TP=8 over TP=4?"),
    ("what-if", "what if we had H200s?"),
    ("evaluate", "how about TP=8 PP=2 with ZeRO-1?"),
    ("explain", "what is the pipeline bubble?"),
    ("export", "give me the DeepSpeed config"),
]


def main(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'family':<10} {'best ms':>8}  tools")
        for family, question in CONVERSATION:
            best, calls = float("inf"), []
            for i in range(repeat):
                service = ChatService(AgentConfig(session_db=Path(tmp) / f"s{i}.db"))
                session = None
                for _, earlier in CONVERSATION[:CONVERSATION.index((family, question))]:
                    session = service.ask(earlier, session).session
                start = time.perf_counter()
                answer = service.ask(question, session)
                best = min(best, time.perf_counter() - start)
                calls = [c["name"] for c in answer.tool_calls]
            print(f"{family:<10} {best * 1e3:>8.0f}  {', '.join(calls)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    main(parser.parse_args().repeat)
