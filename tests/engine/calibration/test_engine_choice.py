"""benchmarks/engine_choice.py: the figures the session 10-13 protocols' engine and band decisions read."""

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from engine_choice import mean_abs_log_each_group_once  # noqa: E402


def test_each_group_counts_once():
    # Group a has two runs (|log| 0.1 and 0.3, mean 0.2), group b one run (|log| 0.5):
    # each group once = (0.2 + 0.5) / 2 = 0.35; run by run it would be (0.1 + 0.3 + 0.5) / 3 = 0.3.
    assert math.isclose(mean_abs_log_each_group_once([0.1, -0.3, 0.5], ["a", "a", "b"]), 0.35)


def test_sign_does_not_cancel():
    assert math.isclose(mean_abs_log_each_group_once([0.2, -0.2], ["a", "b"]), 0.2)


# Toy tables: v3 a zero-width band, v10 the band -9 .. +9 and v11 -4.5 .. +4.5 in log space (no residual of sets 6 or 7
# comes near 4.5, and widening only doubles a band), v12 zero-width as v3. Every run is inside v10's and v11's bands,
# so their interval score is their mean width, each group once: 18 (v10) and 9 (v11) per run, twice that where the
# product widens the band x2 (intervals.OUTSIDE_RANGE_WIDENING); v3 and v12 hold no run (a zero-width band holds none).
TOY = {"v3": {"bands": {"all": (0.0, 0.0, 1)}}, "v10": {"bands": {"all": (-9.0, 9.0, 1)}},
       "v11": {"bands": {"all": (-4.5, 4.5, 1)}}, "v12": {"bands": {"all": (0.0, 0.0, 1)}}}
WIDTH = {"v10": 18.0, "v11": 9.0}


def _toy_judge(monkeypatch, sets):
    import engine_choice

    from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
    from shardwise.engine.calibration.intervals import OUTSIDE_RANGE_WIDENING, throughput_band

    asked = []
    monkeypatch.setattr(engine_choice, "method_tables", lambda methods: asked.append(methods) or TOY)
    out = engine_choice.judge(sets)
    assert tuple(asked[0]) == engine_choice.METHODS  # only the printed methods' tables are computed
    used = {n: [r for r in JUDGED_EXTERNAL_SETS[n]() if r.used] for n in sets}
    widened = {n: [throughput_band(r.model, r.cluster, r.setup, bands=TOY["v10"]["bands"]).high / 9.0 for r in used[n]]
               for n in sets}
    assert set(w for ws in widened.values() for w in ws) <= {1.0, OUTSIDE_RANGE_WIDENING}
    return engine_choice, out, used, widened


def _mean_width_each_group_once(runs, widened, width, prefix=""):
    groups = {}
    for r, w in zip(runs, widened):
        groups.setdefault(prefix + r.group, []).append(width * w)
    return sum(sum(ws) / len(ws) for ws in groups.values()) / len(groups), len(groups)


def test_the_session_13_candidates_and_v3_for_reference_are_reported_per_source_and_regime(monkeypatch, capsys):
    # The session 13 protocol judges v10 (shipped) against v11 and v12; v3 is printed beside them, not a candidate.
    engine_choice, out, used, widened = _toy_judge(monkeypatch, [7])
    assert engine_choice.CANDIDATES == ("v10", "v11", "v12") and engine_choice.REFERENCE == ("v3",)
    used, widened = used[7], widened[7]
    for method, width in WIDTH.items():
        b = out[f"bands_{method}"]
        assert (b["coverage"]["runs"], b["coverage"]["inside"]) == (len(used), len(used))
        assert b["interval_score"] == pytest.approx(_mean_width_each_group_once(used, widened, width)[0])
        for part in ("by_source", "by_regime"):  # every run in exactly one source and one regime, all inside
            assert sum(f["coverage"]["runs"] for f in b[part].values()) == len(used)
            assert all(f["coverage"]["inside"] == f["coverage"]["runs"] for f in b[part].values())
    for method in ("v3", "v12"):
        b = out[f"bands_{method}"]
        assert b["coverage"]["inside"] == 0 and all(f["coverage"]["inside"] == 0 for f in b["by_source"].values())
    assert set(out["bands_v3"]["by_source"]) == {f"set 7 | source {r.source}" for r in used}
    monkeypatch.setattr(engine_choice, "judge", lambda sets: out)
    monkeypatch.setattr(sys, "argv", ["engine_choice.py", "--sets", "7"])
    engine_choice.main()
    printed = capsys.readouterr().out
    assert "\nv3 (reference, not a candidate): set 7: inside 0/" in printed
    assert f"\nv10: set 7: inside {len(used)}/{len(used)}" in printed and f"\nv11: set 7: inside {len(used)}/" in printed
    assert "\nper source:" in printed and "\nper regime" in printed and "v12 | v3 (reference, not a candidate)" in printed
    # set 7 is among v10's, v11's and v12's items (sets 1-8 / 1-9), never v3's: the print says so
    lines = {line.split(":")[0]: line for line in printed.splitlines() if line.startswith("v")}
    assert all("IN-SAMPLE" in lines[m] for m in ("v10", "v11", "v12"))
    assert "IN-SAMPLE" not in lines["v3 (reference, not a candidate)"]
    # the rule is read off the candidates only: v3 (0 % inside) is in no line of it; with v10 and v11 at 100 % and v12
    # at 0 % none is eligible, and v12 (|0 - 0.8| = 0.8) is farther from 80 % than v10 and v11 (0.2): v11, the lower score
    rule = printed[printed.index("session 12's rule"):]
    assert "  v3:" not in rule and "  v10: 100.0% inside, not eligible" in rule and "  v12: 0.0% inside" in rule
    size_met = len(used) >= 15 and len({r.source for r in used}) >= 3
    assert ("the rule ships v11: none eligible" in rule) == size_met


def test_pooled_over_two_sets_with_a_line_per_set_and_item_2_for_the_shipped_method(monkeypatch, capsys):
    # Session 13's item 2 is judged pooled over sets 9 and 10 for v10; here the same machinery on two seen sets, 6 and 7,
    # with the toy tables. A group is one set's ("set n | group"), so pooled each group once is the per-set scores
    # weighted by their groups: (G6 x IS6 + G7 x IS7) / (G6 + G7).
    engine_choice, out, used, widened = _toy_judge(monkeypatch, [6, 7])
    for method, width in WIDTH.items():
        b = out[f"bands_{method}"]
        per_set = {n: _mean_width_each_group_once(used[n], widened[n], width, f"set {n} | ") for n in (6, 7)}
        for n, (score, _) in per_set.items():
            f = b["by_set"][f"set {n}"]
            assert (f["coverage"]["runs"], f["coverage"]["inside"]) == (len(used[n]), len(used[n]))
            assert f["interval_score"] == pytest.approx(score)
        assert b["coverage"]["runs"] == len(used[6]) + len(used[7])
        pooled = sum(s * g for s, g in per_set.values()) / sum(g for _, g in per_set.values())
        assert b["interval_score"] == pytest.approx(pooled)
    assert out["sources_by_set"] == {f"set {n}": len({r.source for r in used[n]}) for n in (6, 7)}
    monkeypatch.setattr(engine_choice, "judge", lambda sets: out)
    monkeypatch.setattr(engine_choice, "THROUGHPUT_BAND_METHOD", "v10")
    monkeypatch.setattr(sys, "argv", ["engine_choice.py", "--sets", "6", "7"])
    engine_choice.main()
    printed = capsys.readouterr().out
    runs = len(used[6]) + len(used[7])
    assert f"\nv10: sets 6, 7 pooled: inside {runs}/{runs} (100.0%" in printed
    assert f"\n  set 6: inside {len(used[6])}/{len(used[6])}" in printed
    assert f"\n  set 7: inside {len(used[7])}/{len(used[7])}" in printed
    rule = printed[printed.index("session 12's rule"):]
    assert "\n  set 6:\n" in rule and "\n  set 7:\n" in rule  # the rule read off each set on its own
    assert "IN-SAMPLE: set 6 is among the items of v10, v11, v12: seen figures, no judge" in rule
    # item 2: v10 (the shipped method here) pooled, 100 % inside, outside the 75-85 % window
    assert f"item 2 (v10, the shipped method, sets 6, 7 pooled): {runs}/{runs} (100.0%, CI 100%-100%): NOT met" in rule


def test_session_12s_rule_coverage_first_then_the_interval_score():
    # benchmarks/band_rule.py, the protocol's rule on toy figures (share inside, mean interval score):
    from band_rule import eligible, readout, ships, size_rule

    assert eligible(0.75) and eligible(0.85) and not eligible(0.749) and not eligible(0.851)
    # two eligible methods: the lower interval score ships, even against a narrower ineligible one
    assert ships({"v3": (0.70, 0.50), "v9": (0.78, 0.80), "v10": (0.84, 0.70)})[0] == "v10"
    # none eligible: closest to 80 % (|0.86 - 0.80| = 0.06 < |0.72 - 0.80| = 0.08), whatever the score
    assert ships({"v3": (0.72, 0.40), "v9": (0.86, 0.90), "v10": (0.95, 0.60)})[0] == "v9"
    # a tie in distance to 80 % (0.70 and 0.90, 0.10 each): the interval score decides, either way round
    assert ships({"v3": (0.70, 0.90), "v9": (0.90, 0.80)})[0] == "v9"
    assert ships({"v3": (0.70, 0.80), "v9": (0.90, 0.90)})[0] == "v3"
    # the size rule: at least 15 used runs from at least 3 sources, else a weak judge and nothing ships
    assert size_rule(15, 3) and not size_rule(14, 3) and not size_rule(40, 2)
    weak = readout(14, 5, {"v3": (0.80, 0.5)})
    assert "NOT met" in weak[0] and not any(line.startswith("the rule ships") for line in weak)
    assert readout(20, 3, {"v3": (0.80, 0.5)})[-1].startswith("the rule ships v3")
    # session 13's candidates (v10, v11, v12; v3 for reference is never passed to the rule): one eligible ships whatever
    # the others' scores; of three eligible, the lowest score (v12), not the one nearest 80 % (v11)
    assert ships({"v10": (0.771, 1.02), "v11": (0.70, 0.50), "v12": (0.90, 0.40)})[0] == "v10"
    assert ships({"v10": (0.84, 0.90), "v11": (0.80, 0.95), "v12": (0.76, 0.85)})[0] == "v12"


def test_item_2_is_met_inside_the_75_to_85_window():
    from band_rule import item_2

    # 62 of 80 runs = 77.5 %: inside 75-85 %; 56 of 80 = 70.0 %: below
    line = item_2("v10", [9, 10], {"inside": 62, "runs": 80, "share": 62 / 80, "ci95": (0.66, 0.88)})
    assert line == "item 2 (v10, the shipped method, sets 9, 10 pooled): 62/80 (77.5%, CI 66%-88%): met (75-85 %)"
    line = item_2("v10", [10], {"inside": 56, "runs": 80, "share": 56 / 80, "ci95": (0.58, 0.81)})
    assert line == "item 2 (v10, the shipped method, set 10): 56/80 (70.0%, CI 58%-81%): NOT met (75-85 %)"


def test_a_set_without_used_runs_is_refused_in_one_line(monkeypatch):
    import engine_choice

    monkeypatch.setattr(engine_choice, "JUDGED_EXTERNAL_SETS", {7: engine_choice.JUDGED_EXTERNAL_SETS[7], 99: lambda: ()})
    with pytest.raises(SystemExit, match=r"set\(s\) 99 have no used runs: nothing to judge"):
        engine_choice.judge([7, 99])
