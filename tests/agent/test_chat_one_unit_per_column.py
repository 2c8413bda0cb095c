"""A column, row or list of times in the chat's answers is written in one unit, chosen once from the largest time in
it (seconds from 10,000 ms up, present.SECONDS_FROM_MS; prompts/step_units.py): the side-by-side step row read
"34.5 s | 8,6xx.x ms", an evaluation's time terms "compute: 56.6 s … TP communication: 978.1 ms", the alternatives'
step column could mix both, and a step beside its interval "9,500.0 ms (likely 7.4 s–12.0 s)". Side-by-side GPU
columns name the memory the engine counts, in GiB, beside the memory row in GiB (they read "141GB")."""

from __future__ import annotations

import re

from support.chat import turns

TIME = re.compile(r"(\d[\d,]*\.\d+) (ms|s)\b")


def _units(text: str) -> set[str]:
    return {unit for _, unit in TIME.findall(text)}


def test_the_side_by_side_step_row_has_one_unit(make_service):
    # 8 GPUs take ~34 s a step, 32 GPUs a quarter of it (under 10 s): both in seconds, as the larger one is
    [done] = turns(make_service(), "llama 3.1 8b, a100 80gb, 4k, gbs 256: 8 vs 32 gpus?")
    steps = [r["result"]["best"]["step_ms"] for r in done.tool_calls]
    assert max(steps) >= 10_000 > min(steps)
    row = next(line for line in done.answer.splitlines() if line.startswith("| step |"))
    assert _units(row) == {"s"} and len(TIME.findall(row)) == 2


def test_an_evaluations_time_terms_share_the_steps_unit(make_service):
    # Llama-3.1-70B, TP4 PP2 on 64 H100s: a ~59 s step whose communication terms are under a second
    [done] = turns(make_service(), "llama 3.1 70b on 64 h100, 8k, gbs 512. tp4 pp2 zero1, how fast?")
    plan = done.tool_calls[0]["result"]["plan"]
    assert plan["step_ms"] >= 10_000 and min(t["value"] for t in plan["time_terms"]) < 1_000
    terms = done.answer.split("Time per step")[1]
    assert _units(terms) == {"s"} and len(TIME.findall(terms)) == len(plan["time_terms"])
    overhead = next(line for line in done.answer.splitlines() if line.startswith("- Largest overhead"))
    assert _units(overhead) == {"s"}


def test_a_short_steps_terms_stay_in_ms(make_service):
    [done] = turns(make_service(), "llama 3.1 8b on 16 h100, 4k, gbs 256. we run tp2 zero1 mb2. how fast?")
    assert done.tool_calls[0]["result"]["plan"]["step_ms"] < 10_000
    assert _units(done.answer.split("Time per step")[1]) == {"ms"}


def test_the_alternatives_step_column_has_one_unit(make_service):
    [done] = turns(make_service(), "llama 3.1 70b on 64 h100, 8k, gbs 512. best plan?")
    table = done.answer.split("Alternatives")[1].split("Searched")[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert rows and len({_units(row.split("|")[3]).pop() for row in rows}) == 1


def test_the_side_by_side_names_gpus_by_the_memory_it_counts(make_service):
    [done] = turns(make_service(), "llama 3.1 8b, 16 gpus, 4k, gbs 256: h100 vs h200 side by side?")
    header = done.answer.splitlines()[next(i for i, line in enumerate(done.answer.splitlines()) if "Side by side" in line) + 2]
    capacities = [r["result"]["best"]["capacity_gib"] for r in done.tool_calls]
    assert "GB " not in header and "GB]" not in header  # no vendor "141GB" beside a row in GiB
    for capacity in capacities:
        assert f"({capacity:g} GiB)" in header
