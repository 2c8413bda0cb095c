"""recommend's near-ties line points at --top N only when the table does not already list them (with --top 20
it said "--top 16 lists them" above a 20-row table)."""

import json

from support.cli_runner import run

SCENARIO = ["recommend", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]


def test_the_line_points_where_the_near_ties_are(capsys):
    code, out, err = run(capsys, *SCENARIO, "--top", "2", "--json")
    assert code == 0, err
    n = json.loads(out)["near_best"]
    assert n >= 2  # this scenario has many near-ties (65 when written), so --top 2 cannot show them
    code, text, err = run(capsys, *SCENARIO, "--top", "2")
    assert f"near-ties: {n:,} other plans are" in text and f"(--top {n + 1} lists them)" in text
    code, text, err = run(capsys, *SCENARIO, "--top", str(n + 1))
    assert f"(#2–#{n + 1} in the alternatives below)" in text and "lists them" not in text



def test_a_single_near_tie_is_one_row_and_one_plan():
    # It read "1 other plan(s) are predicted … (#2–#2 in the alternatives below)" (DeepSeek-V3 on 2,048 H800s, FP8,
    # --top 3). The line reads only the count, the plans listed and the resolution.
    from types import SimpleNamespace

    from shardwise.cli.recommend import _near_ties

    listed = SimpleNamespace(near_best=1, plans=[object()] * 3, ranking_resolution=0.05)
    assert _near_ties(listed)[1] == ("near-ties: 1 other plan is predicted within 5% of the best "
                                     "(#2 in the alternatives below).")
    unlisted = SimpleNamespace(near_best=1, plans=[object()], ranking_resolution=0.05)
    assert _near_ties(unlisted)[1].endswith("(--top 2 lists it).")
