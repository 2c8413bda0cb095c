"""Accuracy on the shipped, published measured runs: the measurements are the expectation.

Targets (issue 3): throughput MAPE <= 15 % and plan rankings within each model/cluster group
in the measured order (Spearman aimed at >= 0.8). Reached today (docs/performance.md): 9.4 %
on all 820 scored runs, 9.0 % on the held-out groups the fit never saw, 6.3 % on the published
tables; Spearman 0.87 weighted by plans (0.83 unweighted: the 256-GPU 8B Playbook group, the
single-node 8B group and a 4-plan Bridge group sit near 0.4-0.5). Megatron-Bridge (release-to-release
spread) is at 16.8 %, its
52 MoE rows at 20.0 % (issue 13: 33.1 % before the perf-recipe mapping and the MoE host time).
Each bound below is the target or, where the target is not met, the current level plus a
margin, so regressions fail."""

from __future__ import annotations

import pytest

from shardwise.engine.calibration.report import build_report
from shardwise.engine.calibration.runs import load_runs


@pytest.fixture(scope="module")
def report():
    return build_report(with_memory=False)


def test_every_row_is_scored_or_excluded_with_a_reason():
    runs = load_runs()
    assert len(runs) == 585 + 1641
    for r in runs:
        assert r.used or r.status.startswith("excluded: ")
    assert sum(r.used for r in runs) > 800


def test_throughput_mape_target(report):
    assert report.mape_holdout <= 0.15  # the 15 % target, on groups the fit never saw
    assert report.mape <= 0.12  # all scored runs (target 15 %)
    assert report.median_abs_error <= 0.08


def test_published_tables_meet_the_target(report):
    published = [r for r in report.rows if r.source not in ("playbook-sweep", "megatron-bridge")]
    assert len(published) > 250
    assert sum(abs(r.error) for r in published) / len(published) <= 0.08


def test_sources_with_clean_published_tables_are_tight(report):
    by = {s.source: s for s in report.sources}
    assert by["llm-foundry"].mape <= 0.10
    assert by["megatron-ptdp-2021"].mape <= 0.10
    assert by["korthikanti-2022"].mape <= 0.10
    assert by["megatron-lm-readme"].mape <= 0.15
    # Broader sources: many software releases (Bridge) or one framework's quirks (Playbook sweep).
    # Bridge: gpt-oss-120b is over-predicted on every row, more since its sliding-window layers are
    # priced at their window (a physics fix that moved its rows ~5 % further from the measurements).
    assert by["megatron-bridge"].mape <= 0.19
    assert by["playbook-sweep"].mape <= 0.13
    assert by["torchtitan"].mape <= 0.12


def test_moe_rows(report):
    """Issue 13: the MoE rows (Megatron-Bridge DGX B200/B300, GB200/GB300, H100, gpt-oss; Megatron-LM
    Mixtral) improve in MAPE: 33.1 % before, 19.7 % in issue 13, 21.2 % with E10's constants (held-out MoE groups
    22.1 %); without gpt-oss (over-predicted on every system, cause not identified) 14.3 %."""
    moe_keys = {r.key: r.model.name for r in load_runs() if r.used and r.model.is_moe}
    rows = [r for r in report.rows if r.key in moe_keys]
    assert len(rows) == 52

    def mape(rs):
        return sum(abs(r.error) for r in rs) / len(rs)

    assert mape(rows) <= 0.215
    held = [r for r in rows if r.holdout]
    assert len(held) >= 15 and mape(held) <= 0.225
    assert mape([r for r in rows if moe_keys[r.key] != "gpt-oss-120b"]) <= 0.155


def test_plan_ranking_agreement(report):
    assert report.weighted_spearman >= 0.8  # the aim, weighted by plans per group
    assert report.mean_spearman >= 0.75
    big = [g for g in report.groups if g.plans >= 30]
    assert big and sum(g.spearman for g in big) / len(big) >= 0.8


def test_ranking_resolution_is_what_the_measurements_say(report):
    """RANKING_RESOLUTION (5 %) claims the model cannot order plans predicted closer than that, and
    can order plans far apart: the measured runs must bear both halves out."""
    from shardwise.engine.calibration.coverage import RANKING_RESOLUTION

    by_gap = {g.gap_from: g for g in report.order_by_gap}
    below = by_gap[0.0]
    assert below.gap_to == RANKING_RESOLUTION and below.pairs > 500
    assert below.ordered_as_measured < 0.65  # close to a coin toss
    far = [g for g in report.order_by_gap if g.gap_from >= 2 * RANKING_RESOLUTION]
    assert far and all(g.ordered_as_measured > 0.8 for g in far)
    shares = [g.ordered_as_measured for g in report.order_by_gap]
    assert shares == sorted(shares)  # the wider the predicted gap, the more often it is right


def test_the_cross_node_ep_claim_holds_on_the_measured_runs(report):
    """The expert_all_to_all_pricing warning says: of the four H100 runs with EP across nodes
    (EP·ETP > 8 GPUs per node), the two priced as alltoall without overlap measured 18-29 % more
    throughput than predicted; the one that ran HybridEP (priced as DeepEP) 9 % less and the one
    with EP-A2A overlap 22 % less (data/bridge_moe_recipes.csv says which ran what)."""
    from shardwise.engine.calibration.runs import used_runs

    cross = {r.key: r for r in used_runs("megatron-bridge")
             if r.model.is_moe and r.cluster.gpu.id == "h100-sxm"
             and r.strategy.ep * r.strategy.etp > r.cluster.gpus_per_node}
    assert len(cross) == 4
    gap = {}  # measured / predicted − 1, by how the run is priced
    for row in report.rows:
        if row.key in cross:
            setup = cross[row.key].setup
            kind = "overlap" if setup.moe_a2a_overlap else setup.moe_dispatcher
            gap.setdefault(kind, []).append(1 / (1 + row.error) - 1)  # error = predicted / measured − 1
    assert sorted(gap) == ["alltoall", "deepep", "overlap"]
    assert len(gap["alltoall"]) == 2 and all(0.175 <= x <= 0.29 for x in gap["alltoall"])
    assert -0.095 <= gap["deepep"][0] <= -0.085
    assert -0.23 <= gap["overlap"][0] <= -0.22


def test_nanotron_ranks_the_playbook_groups():
    """Issue 13: `--framework nanotron` ranks the Ultra-Scale Playbook sweep groups at Spearman
    >= 0.8 weighted by plans (0.87 today) with a top-1 regret <= 5 % weighted (2.9 % today, since
    nanotron's ZeRO-0 pays its per-tensor ring steps; 8.9 % before; docs/performance.md). Both are
    the issue's targets, measured on the Playbook's own runs (the fit saw all but one group)."""
    r = build_report("playbook-sweep", with_memory=False)
    assert all(row.model.startswith("Ultra-Scale Playbook") for row in r.rows)
    assert r.weighted_spearman >= 0.8
    assert r.weighted_top1_regret is not None and r.weighted_top1_regret <= 0.05
