"""`evaluate --json` is byte-for-byte the same on every run (details_gib's order changed per process)."""

import os
import subprocess
import sys

ARGS = ["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--tp", "2", "--json"]


def _run(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}  # set iteration order depends on the hash seed
    code = "import sys; from shardwise.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *ARGS], env=env, capture_output=True, text=True,
                          check=True).stdout


def test_evaluate_json_is_deterministic_across_processes():
    first, second = _run("1"), _run("2")
    assert first == second


def test_details_follow_the_category_order():
    import json

    keys = list(json.loads(_run("3"))["memory"]["details_gib"])
    categories = [k.split(".")[0] for k in keys]
    order = ["weights", "gradients", "optimizer", "activations", "other"]
    assert categories == sorted(categories, key=order.index)
