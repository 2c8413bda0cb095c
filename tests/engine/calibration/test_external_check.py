"""The bookkeeping of engine/calibration/external_check.py on examples small enough to work by hand."""

import pytest

from shardwise.engine.calibration.external_check import mape_each_group_once, share


def test_each_group_counts_once_in_the_mape():
    # Group a: errors 0.1 and 0.3 (mean 0.2); group b: -0.4. Each group once: (0.2 + 0.4) / 2 = 0.3
    # (pooled over runs it would be 0.8 / 3).
    assert mape_each_group_once([0.1, 0.3, -0.4], ["a", "a", "b"]) == pytest.approx(0.3)


def test_share_counts_runs_inside_and_resamples_groups():
    s = share([True, True, False], ["a", "a", "b"])
    assert (s["runs"], s["inside"]) == (3, 2) and s["share"] == pytest.approx(2 / 3)
    # Resampling groups a (2/2) and b (0/1): replicates aa = 1, ab/ba = 2/3, bb = 0, each end a quarter.
    assert s["ci95"] == [0.0, 1.0]
    assert share([], []) == {"runs": 0}


def test_docs_quote_the_stored_first_run():
    # The first run's output (benchmarks/external_check.py --json, stored once) and the figures the
    # docs and README state from it (the docs write "65.7 %").
    import json
    from pathlib import Path

    def pct(x: float) -> str:
        return f"{100 * x:.1f} %"

    root = Path(__file__).resolve().parents[3]
    first = json.loads((root / "benchmarks/results/external_check_first_run.json").read_text())
    docs = (root / "docs/performance.md").read_text()
    readme = (root / "README.md").read_text()
    u, c = first["uncalibrated"], first["calibrated"]
    v2, v3 = u["coverage_v2"], u["coverage_v3"]
    assert f"{v2['inside']}/{v2['runs']} ({pct(v2['share'])}" in docs
    assert f"{v3['inside']}/{v3['runs']} ({pct(v3['share'])}" in docs
    assert f"**{pct(u['mape'])}** (each group once {pct(u['mape_each_group_once'])})" in docs
    assert f"({c['ratio']:.2f}×)" in docs and f"({c['families_equally_ratio']:.2f}×)" in docs
    assert f"MAPE {pct(u['mape'])}" in readme and f"{v2['inside']} ({pct(v2['share'])}" in readme


def test_docs_quote_set_2s_first_run_and_the_shipped_coverage():
    # External set 2's first run (stored once) and the shipped cross-fitted coverage
    # (error_bands.py, regenerated from the out-of-fold residuals) as docs and README state them.
    import json
    from pathlib import Path

    from shardwise.engine.assumptions import error_bands as eb

    def pct(x: float) -> str:
        return f"{100 * x:.1f} %"

    root = Path(__file__).resolve().parents[3]
    first = json.loads((root / "benchmarks/results/external_set2_first_run.json").read_text())
    docs = (root / "docs/performance.md").read_text()
    readme = (root / "README.md").read_text()
    u = first["uncalibrated"]
    assert first["external_set"] == 2
    for method in ("v2", "v4"):
        c = u[f"coverage_{method}"]
        assert f"{c['inside']}/{c['runs']} ({pct(c['share'])}" in docs
    v4 = u["coverage_v4"]
    assert f"{v4['inside']} of {v4['runs']} ({pct(v4['share'])}" in readme and f"MAPE {pct(u['mape'])}" in readme
    runs = sum(n for n, _ in eb.THROUGHPUT_COVERAGE.values())
    inside = sum(c for _, c in eb.THROUGHPUT_COVERAGE.values())
    assert eb.THROUGHPUT_BAND_METHOD in readme  # the README names the shipped band method
    assert f"{inside}/{runs} ({pct(inside / runs)}" in docs and f"{inside} of {runs} runs\n({pct(inside / runs)}" in readme


def test_stored_external_coverage_is_todays():
    # error_bands.py's EXTERNAL_COVERAGE (written by fit_error_bands.py with the bands) is what the external
    # check gives with the shipped bands today: a band or engine change not followed by --write fails here.
    from shardwise.engine.assumptions import error_bands as eb
    from shardwise.engine.calibration.external_check import SHIPPED, external_check

    for n, (runs, inside) in eb.EXTERNAL_COVERAGE.items():
        c = external_check(external_set=n)["uncalibrated"][f"coverage_{SHIPPED}"]
        assert (c["runs"], c["inside"]) == (runs, inside), f"run benchmarks/fit_error_bands.py --{SHIPPED} --write"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


@pytest.mark.parametrize("n, used, methods, shipped", [(3, 17, ("v2", "v4", "v5"), "v5"),  # judge of v4 vs v5
                                                        (4, 33, ("v2", "v4", "v5", "v6"), "v5"),  # v5 vs v6
                                                        (5, 71, ("v2", "v4", "v5", "v6", "v7"), "v5")])  # v5 vs v7
def test_docs_quote_the_first_runs_as_stored(n, used, methods, shipped):
    # each first run of sessions 8 and 9 as stored once, quoted by docs/performance.md (every method's coverage) and the
    # README (the shipped method's coverage and the MAPE)
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    first = json.loads((root / f"benchmarks/results/external_set{n}_first_run.json").read_text())
    docs = (root / "docs/performance.md").read_text()
    readme = (root / "README.md").read_text()
    u = first["uncalibrated"]
    assert first["external_set"] == n and first["used"] == used
    for method in methods:
        c = u[f"coverage_{method}"]
        assert f"{c['inside']}/{c['runs']} ({_pct(c['share'])}" in docs
    c = u[f"coverage_{shipped}"]
    assert f"{c['inside']} of {c['runs']} ({_pct(c['share'])}" in readme and f"MAPE {_pct(u['mape'])}" in readme
    assert f"**{_pct(u['mape'])}**" in docs
    cal = first["calibrated"]
    assert f"{_pct(cal['mape_before'])} → {_pct(cal['mape_after'])} (" in readme


def test_exclusions_are_shown_by_kind_and_add_up():
    # the printed summary folds one reason's details (which repeat, which system, which revision) into its kind;
    # the counts are the file's: every excluded row once
    from shardwise.engine.calibration.external_check import excluded_kinds

    excluded = {"excluded: repeat run 2 of 10 of a system and configuration whose first run is used": 3,
                "excluded: repeat run 10 of 10 of a system and configuration whose first run is used": 4,
                "excluded: printed layout inconsistent: TP x PP x CP x DP = 8, #GPUs printed 16": 2,
                "excluded: superseded by a later revision of the same release's page (8e3d65dcfe)": 1,
                "excluded: recompute: block-level activation checkpointing of an unstated fraction of the blocks": 5,
                "excluded: unknown GPU 'NVIDIA L40S (46068 MiB)'": 6}
    assert excluded_kinds(excluded) == {
        "repeat run of a system and configuration whose first run is used": 7, "printed layout inconsistent": 2,
        "superseded by a later revision of the same release's page": 1,
        "recompute: block-level activation checkpointing of an unstated fraction of the blocks": 5,
        "unknown GPU 'NVIDIA L40S (46068 MiB)'": 6}


def test_docs_quote_session_10s_judge_as_stored():
    # sets 6 and 7's first runs and the pooled judge (benchmarks/engine_choice.py), stored once, as docs/performance.md
    # and the README quote them: each set's MAPE and the two judged methods' coverage; the pooled coverage and
    # interval scores that decided v3 against v5
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    docs = (root / "docs/performance.md").read_text()
    readme = (root / "README.md").read_text()
    for n, used in ((6, 37), (7, 5)):
        first = json.loads((root / f"benchmarks/results/external_set{n}_first_run.json").read_text())
        u = first["uncalibrated"]
        assert first["external_set"] == n and first["used"] == used
        assert f"**{_pct(u['mape'])}**" in docs and _pct(u["mape"]) in readme
        for method in ("v3", "v5"):
            c = u[f"coverage_{method}"]
            assert f"{c['inside']}/{c['runs']}" in docs
    judge = json.loads((root / "benchmarks/results/engine_choice_session10.json").read_text())
    assert judge["sets"] == [6, 7] and judge["runs"] == 42
    v3, v5 = judge["bands_v3"], judge["bands_v5"]
    assert v3["interval_score"] < v5["interval_score"]  # the rule that shipped v3
    assert f"v3 {v3['interval_score']:.3f} against v5 {v5['interval_score']:.3f}" in docs
    c = v3["coverage"]
    assert f"{c['inside']} of {c['runs']} ({_pct(c['share'])}" in readme
    assert f"{c['inside']}/{c['runs']}, {_pct(c['share'])}" in docs
    assert f"{v5['coverage']['inside']} of {v5['coverage']['runs']}" in readme
