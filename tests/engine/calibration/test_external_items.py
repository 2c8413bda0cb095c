"""Band method v5 (engine/calibration/external_items.py): the seen external runs as items of v4's statistic,
on cases small enough to work out by hand with the midpoint weighted quantile (band_statistics.weighted_quantile:
each value stands at the middle of its share of the weight, q interpolated linearly, clamped at the ends)."""

import math
from dataclasses import replace

import pytest

from shardwise.engine.calibration import external_items as ei
from shardwise.engine.calibration.band_statistics import regime_of
from shardwise.engine.calibration.cross_fit import cross_fitted_coverage
from shardwise.engine.calibration.external import load_external_runs, load_external_runs_2
from shardwise.engine.calibration.new_cluster import new_cluster_bands_by_level, source_unit
from shardwise.engine.calibration.predict import Prediction, predict
from shardwise.engine.calibration.runs import used_runs


def _nemo_h100_run(measured: float, group: str, source: str = "NeMo performance summary 24.07"):
    """A used run on an H100 (any calibration run's model and plan), restated as another source's."""
    base = next(r for r in used_runs() if r.cluster.gpu.id == "h100-sxm")
    return replace(base, source=source, group=group, measured_tokens_per_gpu=measured)


def test_an_items_residual_is_log_measured_over_predicted(monkeypatch):
    # The engine predicts 1,000 tokens/s/GPU for each run here (a stand-in for calibration.predict);
    # measured 1,100 and 800 give log(1.1) = +0.0953 and log(0.8) = -0.2231. An unused run gives no item.
    monkeypatch.setattr(ei, "predict", lambda runs: [Prediction(run=r, tokens_per_gpu=1000.0, step_s=1.0, mfu=0.4)
                                                     for r in runs])
    a, b = _nemo_h100_run(1100.0, "g-a"), _nemo_h100_run(800.0, "g-b")
    unused = replace(a, status="excluded: same configuration measured with a newer release")
    items = ei.external_items([a, unused, b])
    assert [v for _, v, _, _ in items] == [pytest.approx(math.log(1.1)), pytest.approx(math.log(0.8))]
    assert math.log(1.1) == pytest.approx(0.0953, abs=5e-5) and math.log(0.8) == pytest.approx(-0.2231, abs=5e-5)
    keys, _, group, unit = items[0]
    assert keys == regime_of(a) and group == "external | g-a" and unit == "nemo-perf-summary@h100-sxm"


def test_groups_never_equal_a_calibration_group_and_units_are_shared():
    runs = [r for r in load_external_runs() + load_external_runs_2() if r.used]
    items = ei.external_items(runs)
    calibration_groups = {r.group for r in used_runs()}
    assert len(items) == len(runs) and all(g.startswith(ei.EXTERNAL_GROUP) for _, _, g, _ in items)
    assert not {g for _, _, g, _ in items} & calibration_groups
    # a source unit is publication x GPU: NeMo's performance summary on H100 is one unit whether the row is in
    # set 1 or set 2, and a calibration run of the same publication on the same GPU would share it
    units_1 = {u for r, (_, _, _, u) in zip(runs, items) if r in load_external_runs()}
    units_2 = {u for r, (_, _, _, u) in zip(runs, items) if r in load_external_runs_2()}
    assert "nemo-perf-summary@h100-sxm" in units_1 & units_2
    same = _nemo_h100_run(1.0, "x")
    assert source_unit(same) == "nemo-perf-summary@h100-sxm"
    # the residual is the shipped engine's, uncalibrated: the same run predicted on its own gives the same value
    for r, (_, v, _, _) in list(zip(runs, items))[::60]:
        assert v == pytest.approx(math.log(r.measured_tokens_per_gpu / predict([r])[0].tokens_per_gpu), rel=1e-9)


# Two units in regime "r": calibration unit A (out-of-fold, fold 1): 0.1 (group g1), 0.3 (group g2);
# external unit B: -0.1 (group "external | h1").
OOF = [(["r"], 0.1, "g1", "A", 1), (["r"], 0.3, "g2", "A", 1)]
EXT = [(["r"], -0.1, "external | h1", "B")]


def test_v5_is_v4s_statistic_on_the_union_worked_by_hand():
    # Offsets (each unit's median, groups once): A = median{0.1, 0.3} = 0.2 (positions 0.25, 0.75); B = -0.1.
    # Deviations: g1 -0.1, g2 +0.1, h1 0.0, each group 1/3. Shifts: 0.2 and -0.1, each 1/2. Sums, 1/6 each:
    #   g1: 0.1, -0.2   g2: 0.3, 0.0   h1: 0.2, -0.1
    # sorted -0.2, -0.1, 0.0, 0.1, 0.2, 0.3 at positions 1/12, 3/12, ..., 11/12.
    # 10th pct: between -0.2 (0.0833) and -0.1 (0.25): -0.2 + 0.1 x (0.1 - 1/12) / (1/6) = -0.19.
    # 90th pct: between 0.2 (0.75) and 0.3 (0.9167): 0.2 + 0.1 x (0.9 - 0.75) / (1/6) = 0.29.
    bands = ei.bands_with_external(OOF, EXT, min_runs=3)
    assert bands == {"r": (pytest.approx(-0.19), pytest.approx(0.29), 3)}
    assert bands == new_cluster_bands_by_level([(k, v, c, u) for k, v, c, u, _ in OOF] + EXT, min_runs=3)
    # v4 on A alone: one unit, so the band is v2's on {0.1, 0.3} (positions 0.25, 0.75: clamped ends).
    assert ei.bands_with_external(OOF, [], min_runs=2) == {"r": (pytest.approx(0.1), pytest.approx(0.3), 2)}
    # below the run minimum, the union gives no band either
    assert ei.bands_with_external(OOF, EXT, min_runs=4) == {}


def test_the_cross_fit_never_checks_an_external_item_and_always_includes_all():
    oof = [(["r"], 0.01 * i, f"g{i}", "A" if i < 6 else "B", i % 3) for i in range(12)]
    ext = [(["r"], 0.5, "external | far", "C"), (["r"], -0.4, "external | far2", "D")]
    cv = cross_fitted_coverage([(k, v, c, f) for k, v, c, _, f in oof], min_runs=3,
                               bands_for_fold=lambda fold: ei.fold_bands_with_external(oof, ext, fold, min_runs=3))
    # every calibration item checked exactly once, no external one (12 runs, 4 per fold)
    assert cv.by_fold == {f: (4, cv.by_fold[f][1]) for f in (0, 1, 2)}
    assert sum(n for n, _ in cv.counts.values()) == 12
    for fold in (0, 1, 2):
        others = [(k, v, c, u) for k, v, c, u, f in oof if f != fold]
        # fold k's bands: the other folds' items and BOTH external items, whatever fold is checked
        assert cv.bands_by_fold[fold] == new_cluster_bands_by_level(others + ext, min_runs=3)
        assert cv.bands_by_fold[fold] != new_cluster_bands_by_level(others, min_runs=3)


def test_only_v5_counts_sets_1_and_2_as_in_sample():
    from shardwise.engine.calibration.band_methods import DESCRIPTIONS, band_runs, in_sample

    assert in_sample("v5", 1) and in_sample("v5", 2) and not in_sample("v5", 3)
    assert not any(in_sample(m, n) for m in ("v2", "v3", "v4") for n in (1, 2))
    assert band_runs("v4") == "calibration runs" and band_runs("v5") == "calibration and external runs"
    assert {"v2", "v4", "v5"} <= DESCRIPTIONS.keys()


def test_each_band_method_holds_only_judged_sets_and_v6_v7_extend_v5():
    # docs/performance.md, "Protocol for session 8, second judge": v6 = v5 with external set 3 as items;
    # "Protocol for session 9": v7 = v5 with external sets 3 and 4 as items
    from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS
    from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS

    assert set(EXTERNAL_SETS_IN_BANDS["v6"]) == set(EXTERNAL_SETS_IN_BANDS["v5"]) | {3}
    assert set(EXTERNAL_SETS_IN_BANDS["v7"]) == set(EXTERNAL_SETS_IN_BANDS["v5"]) | {3, 4}
    assert all(set(sets) <= set(JUDGED_EXTERNAL_SETS) for sets in EXTERNAL_SETS_IN_BANDS.values())
