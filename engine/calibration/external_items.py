"""Band methods v5-v12's extra residuals: judged external runs as items of band method v4's (v5-v7, v10, v11) or v3's
(v8, v9, v12) statistic.

v4 (new_cluster.py) reads a band for a new cluster as the regime's scatter around its sources plus the
spread of source levels, both from the calibration runs' out-of-fold residuals — 16 source units, all of
them sources the constants were fitted on. External sets 1 and 2 (external.py) are published runs no
constant was fitted on, from other teams, clusters and releases: more draws of exactly what a new
cluster's level is one more of. v5 is v4's statistic (`new_cluster_bands_by_level`, unchanged) on the
union of the out-of-fold items and these (docs/performance.md, "Protocol for session 8"); v6 adds set 3 the
same way ("Protocol for session 8, second judge"), v7 sets 3 and 4 ("Protocol for session 9");
band_methods.EXTERNAL_SETS_IN_BANDS says which sets. v8 ("Protocol for session 11") puts the same items, sets 1-7,
into v3's statistic instead (band_statistics.bands_by_level at finite-cluster conformal levels: each group once,
no source units), with the same groups and the same cross-fit. Session 12's challengers take sets 1-8 as items: v9
under v3's statistic (v8's recipe with set 8 added), v10 under v4's (v5-v7's recipe with sets 3-8 added). Session 13's
take sets 1-9: v11 under v4's statistic (v10's recipe with set 9 added), v12 under v3's (v9's with set 9 added).

An external run's item is (regime keys, log(measured / predicted) by the shipped engine, uncalibrated,
its group prefixed with EXTERNAL_GROUP so it never equals a calibration group, its source unit — a
publication × GPU type that also appears in the calibration data is the same unit). The cross-fit puts
every external item into every fold's bands and never checks one (new_cluster.fold_new_cluster_bands,
`always`). Pure: the caller passes the runs (external.load_external_runs, load_external_runs_2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from .band_statistics import MIN_RUNS, bands_by_level, regime_of
from .new_cluster import UnitItem, fold_new_cluster_bands, new_cluster_bands_by_level, source_unit
from .predict import predict
from .runs import CalibrationRun

# Calibration groups are "source | model | gpu xN | seq | precision"; an external group gets this prefix, so a
# configuration measured both in the calibration data and in an external set is two groups (two clusters'
# errors), never one. Sets 1 and 2 share the prefix: a configuration both measured (another release of the
# same source's page) is one group, as two releases of one configuration are in the calibration data.
EXTERNAL_GROUP = "external | "
FoldUnitItem = tuple[list[str], float, str, str, int]  # (keys, residual, group, unit, fold): out-of-fold items
Bands = dict[str, tuple[float, float, int]]


def external_items(runs: Iterable[CalibrationRun]) -> list[UnitItem]:
    """The used runs' v4 items, residuals from the shipped engine (calibration.predict)."""
    used = [r for r in runs if r.used]
    return [(regime_of(r), math.log(r.measured_tokens_per_gpu / p.tokens_per_gpu), EXTERNAL_GROUP + r.group,
             source_unit(r)) for r, p in zip(used, predict(used))]


def bands_with_external(out_of_fold: Sequence[FoldUnitItem], external: Sequence[UnitItem], min_runs: int = MIN_RUNS) -> Bands:
    """Band methods v5-v7: v4's statistic on the union of the out-of-fold items (keys, residual, group, unit,
    fold) and the external ones."""
    return new_cluster_bands_by_level([(k, v, c, u) for k, v, c, u, _ in out_of_fold] + list(external), min_runs)


def fold_bands_with_external(out_of_fold: Sequence[FoldUnitItem], external: Sequence[UnitItem], fold: int,
                  min_runs: int = MIN_RUNS) -> Bands:
    """The v5-v7 bands fold `fold` is checked against: the other folds' out-of-fold items and EVERY external item
    (which no fold holds, so none is ever checked)."""
    return fold_new_cluster_bands(list(out_of_fold), fold, min_runs, always=external)


def conformal_bands_with_external(out_of_fold: Sequence[FoldUnitItem], external: Sequence[UnitItem],
                                  min_runs: int = MIN_RUNS) -> Bands:
    """Band method v8: v3's statistic (each group once, finite-cluster conformal levels) on the union of the
    out-of-fold items and the external ones; the source unit plays no part in it."""
    return bands_by_level([(k, v, c) for k, v, c, _, _ in out_of_fold] + [(k, v, c) for k, v, c, _ in external],
                          min_runs, finite_cluster_correction=True)


def fold_conformal_bands_with_external(out_of_fold: Sequence[FoldUnitItem], external: Sequence[UnitItem], fold: int,
                                       min_runs: int = MIN_RUNS) -> Bands:
    """The v8 bands fold `fold` is checked against: the other folds' out-of-fold items and EVERY external item."""
    return conformal_bands_with_external([x for x in out_of_fold if x[4] != fold], external, min_runs)
