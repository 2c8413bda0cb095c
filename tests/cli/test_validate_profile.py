"""`shardwise validate --profile`: the transfer check (calibrate on the smallest run of each family,
predict the rest) and the interval coverage, as printed; the MAPEs are recomputed here from the
rows as mean(|predicted / measured − 1|)."""

import re

from shardwise.engine.assumptions import error_bands as eb
from shardwise.engine.calibration.band_statistics import TOTAL
from shardwise.engine.calibration.transfer import transfer_all, transfer_older_releases
from support.cli_runner import run


def mape(pairs):
    return sum(abs(p / m - 1) for m, p in pairs) / len(pairs)


def test_validate_profile_prints_the_transfer_check_and_coverage(capsys):
    code, out, err = run(capsys, "validate", "--profile", "--summary")
    assert code == 0, err
    rows = [r for f in transfer_all() for r in f.rows]
    before = mape([(r.measured, r.uncalibrated) for r in rows])
    after = mape([(r.measured, r.calibrated) for r in rows])
    line = next(x for x in out.splitlines() if x.startswith("shipped calibration families"))
    assert f"{len(rows)} runs" in line and f"MAPE {before:.1%} -> {after:.1%}" in line
    older = [r for f in transfer_older_releases() for r in f.rows]
    assert f"MAPE {mape([(r.measured, r.uncalibrated) for r in older]):.1%} -> " \
           f"{mape([(r.measured, r.calibrated) for r in older]):.1%}" in out
    runs = sum(n for n, _ in eb.THROUGHPUT_COVERAGE.values())
    inside = sum(c for _, c in eb.THROUGHPUT_COVERAGE.values())
    lo, hi = eb.THROUGHPUT_COVERAGE_CI[TOTAL]
    assert f"throughput: {inside}/{runs} held-out runs inside ({inside / runs:.0%}, 95 % CI {lo:.0%}-{hi:.0%})" in out
    older, older_inside = (sum(v[i] for v in eb.OLDER_RELEASE_COVERAGE.values()) for i in (0, 1))
    assert re.search(rf"older Megatron-Bridge releases \(never fitted\), throughput: {older_inside}/{older} ", out)


def test_each_family_is_calibrated_on_its_fewest_gpu_run():
    for f in transfer_all():
        assert all(r.num_gpus >= f.anchor_gpus for r in f.rows)
        assert f.anchor not in {r.key for r in f.rows}


def test_validate_profile_prints_the_leave_family_out_check_from_its_generated_file(capsys):
    # Recomputed here from data/leave_family_out.csv (benchmarks/leave_family_out.py --write):
    # pooled over runs = Σ runs·MAPE / Σ runs; families weighted equally = mean of the MAPEs.
    from shardwise.engine.calibration.leave_family_out import load_results

    res = load_results()
    assert {r.family for r in res} == {f.family for f in transfer_all()}
    n = sum(r.runs for r in res)
    pooled = [sum(getattr(r, a) * r.runs for r in res) / n for a in ("mape_before", "mape_after")]
    equal = [sum(getattr(r, a) for r in res) / len(res) for a in ("mape_before", "mape_after")]
    code, out, err = run(capsys, "validate", "--profile", "--summary")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("leave-family-out"))
    assert f"{len(res)} families, {n} runs" in line
    assert f"pooled over runs {pooled[0]:.1%} -> {pooled[1]:.1%} (x{pooled[1] / pooled[0]:.2f})" in line
    assert f"families weighted equally {equal[0]:.1%} -> {equal[1]:.1%}" in line


def test_validate_profile_prints_the_external_held_out_runs(capsys):
    # Recomputed here from the predictions: MAPE = mean(|predicted / measured - 1|) over the used
    # external runs; after calibrating, over every family's non-anchor runs.
    from shardwise.engine.calibration.external import load_external_runs
    from shardwise.engine.calibration.predict import predict
    from shardwise.engine.calibration.transfer import families, transfer_family

    runs = [r for r in load_external_runs() if r.used]
    uncal = mape([(p.run.measured_tokens_per_gpu, p.tokens_per_gpu) for p in predict(runs)])
    rows = [x for k, v in families(runs).items() for x in transfer_family(k, v).rows]
    code, out, err = run(capsys, "validate", "--profile", "--summary")
    assert code == 0, err
    section = out[out.index("external held-out runs"):]
    assert f"used {len(runs)};" in section and f"uncalibrated: MAPE {uncal:.1%}" in section
    assert (f"{len(rows)} runs predicted; MAPE {mape([(x.measured, x.uncalibrated) for x in rows]):.1%} -> "
            f"{mape([(x.measured, x.calibrated) for x in rows]):.1%}") in section


def test_validate_profile_prints_every_judged_external_set_and_says_which_are_in_sample(capsys):
    # every external set after its first run, each with its used-run count; a set the shipped band method was
    # estimated on is marked in-sample, the others are not (band_methods.EXTERNAL_SETS_IN_BANDS)
    from shardwise.engine.assumptions import error_bands as eb
    from shardwise.engine.calibration.band_methods import in_sample
    from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS

    code, out, err = run(capsys, "validate", "--profile", "--summary")
    assert code == 0, err
    for n, load in JUDGED_EXTERNAL_SETS.items():
        head = out[out.index(f"external held-out runs, set {n} "):]
        head = head[:head.index("\n")]
        assert ("IN-SAMPLE" in head) == in_sample(eb.THROUGHPUT_BAND_METHOD, n)
        body = out[out.index(f"external held-out runs, set {n} "):]
        assert f"used {sum(r.used for r in load())};" in body[:body.index("uncalibrated")]
