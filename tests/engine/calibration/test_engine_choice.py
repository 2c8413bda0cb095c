"""benchmarks/engine_choice.py: the figures the session 10 and 11 protocols' engine and band decisions read."""

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


def test_the_session_12_methods_are_reported_per_source_and_regime(monkeypatch, capsys):
    # The session 12 protocol judges v3 (shipped) against v9 and v10. Toy tables: v3 a zero-width band, v9 the band
    # -9 .. +9 and v10 -4.5 .. +4.5 in log space (no residual of set 7 comes near 4.5, and widening only doubles a
    # band). Every run is inside v9's and v10's bands, so their interval score is their mean width, each group once:
    # 18 (v9) and 9 (v10) per run, twice that where the product widens the band x2 (intervals.OUTSIDE_RANGE_WIDENING);
    # v3 holds no run (a zero-width band holds none).
    import engine_choice

    from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
    from shardwise.engine.calibration.intervals import OUTSIDE_RANGE_WIDENING, throughput_band

    assert engine_choice.METHODS == ("v3", "v9", "v10")
    tables = {"v3": {"bands": {"all": (0.0, 0.0, 1)}}, "v9": {"bands": {"all": (-9.0, 9.0, 1)}},
              "v10": {"bands": {"all": (-4.5, 4.5, 1)}}}
    monkeypatch.setattr(engine_choice, "method_tables", lambda: tables)
    out = engine_choice.judge([7])
    used = [r for r in JUDGED_EXTERNAL_SETS[7]() if r.used]
    widened = [throughput_band(r.model, r.cluster, r.setup, bands=tables["v9"]["bands"]).high / 9.0 for r in used]
    assert set(widened) <= {1.0, OUTSIDE_RANGE_WIDENING}
    for method, width in (("v9", 18.0), ("v10", 9.0)):
        groups = {}
        for r, w in zip(used, widened):
            groups.setdefault(r.group, []).append(width * w)
        expected = sum(sum(ws) / len(ws) for ws in groups.values()) / len(groups)
        b = out[f"bands_{method}"]
        assert (b["coverage"]["runs"], b["coverage"]["inside"]) == (len(used), len(used))
        assert b["interval_score"] == pytest.approx(expected)
        for part in ("by_source", "by_regime"):  # every run in exactly one source and one regime, all inside
            assert sum(f["coverage"]["runs"] for f in b[part].values()) == len(used)
            assert all(f["coverage"]["inside"] == f["coverage"]["runs"] for f in b[part].values())
    v3 = out["bands_v3"]
    assert v3["coverage"]["inside"] == 0 and all(f["coverage"]["inside"] == 0 for f in v3["by_source"].values())
    assert set(v3["by_source"]) == {f"set 7 | source {r.source}" for r in used}
    monkeypatch.setattr(engine_choice, "judge", lambda sets: out)
    monkeypatch.setattr(sys, "argv", ["engine_choice.py", "--sets", "7"])
    engine_choice.main()
    printed = capsys.readouterr().out
    assert "\nv3: inside 0/" in printed
    assert f"\nv9: inside {len(used)}/{len(used)}" in printed and f"\nv10: inside {len(used)}/{len(used)}" in printed
    assert "\nper source:" in printed and "\nper regime" in printed
    # set 7 is among v9's and v10's items (sets 1-8), never v3's: the print says so
    lines = {line.split(":")[0]: line for line in printed.splitlines() if line.startswith("v")}
    assert "IN-SAMPLE" in lines["v9"] and "IN-SAMPLE" in lines["v10"] and "IN-SAMPLE" not in lines["v3"]


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
