"""recommend's "why it beats X (+N% tokens/s)" gives as many digits as it takes to be non-zero: Llama-3.1-8B on
8 A100 at 4k read "(+0.00% tokens/s)", a win by nothing, where the page said "0.004% faster"."""

from __future__ import annotations

import json

import pytest

from shardwise.cli.recommend import gain_percent
from support.cli_runner import run


@pytest.mark.parametrize("speedup,text", [(1.0057, "+0.57%"), (1.0100, "+1.00%"), (1.0000434, "+0.004%"),
                                          (1.0002, "+0.02%")])
def test_gain_digits(speedup, text):
    assert gain_percent(speedup) == text


def test_a_tiny_win_is_not_printed_as_zero(capsys):
    scenario = ["--model", "llama-3.1-8b", "--gpu", "a100-80gb", "--gpus", "8", "--seq-len", "4k", "--top", "2"]
    code, out, _ = run(capsys, "recommend", *scenario, "--json")
    first, second = (p["time"]["step_s"] for p in json.loads(out)["plans"][:2])
    code, text, _ = run(capsys, "recommend", *scenario)
    assert code == 0
    line = next(x for x in text.splitlines() if x.startswith("why it beats"))
    # tokens/s is global batch tokens / step time, so the gain is the ratio of the step times, less one
    assert f"({gain_percent(second / first)} tokens/s):" in line and "+0.00%" not in line
