"""Accuracy on the shipped, published measured runs: the measurements are the expectation.

Targets (issue 3): throughput MAPE <= 15 % and plan rankings within each model/cluster group
in the measured order (Spearman aimed at >= 0.8). Reached today (docs/performance.md): 14.4 %
on the held-out groups the fit never saw, 6.9 % on the published tables, 16.8 % on all 820 scored
runs (the Playbook sweep's nanotron quirks and Megatron-Bridge's release-to-release spread
dominate); Spearman 0.72 weighted by plans. We assert the target where it is met and the
current level elsewhere as a floor, so regressions fail."""

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
    assert report.mape <= 0.17  # all scored runs (target 15 %: not yet met, see docstring)
    assert report.median_abs_error <= 0.10


def test_published_tables_meet_the_target(report):
    published = [r for r in report.rows if r.source not in ("playbook-sweep", "megatron-bridge")]
    assert len(published) > 250
    assert sum(abs(r.error) for r in published) / len(published) <= 0.10


def test_sources_with_clean_published_tables_are_tight(report):
    by = {s.source: s for s in report.sources}
    assert by["llm-foundry"].mape <= 0.10
    assert by["megatron-ptdp-2021"].mape <= 0.10
    assert by["korthikanti-2022"].mape <= 0.10
    assert by["megatron-lm-readme"].mape <= 0.15
    # Broader sources: many software releases (Bridge) or one framework's quirks (Playbook sweep).
    assert by["megatron-bridge"].mape <= 0.25
    assert by["playbook-sweep"].mape <= 0.22
    assert by["torchtitan"].mape <= 0.12


def test_plan_ranking_agreement(report):
    assert report.weighted_spearman >= 0.65
    big = [g for g in report.groups if g.plans >= 30]
    assert big and sum(g.spearman for g in big) / len(big) >= 0.6
