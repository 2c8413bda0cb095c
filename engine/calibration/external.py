"""External held-out runs (data/external_runs.csv): published, measured runs collected after the fit and the
error bands were built, so nothing in shardwise was tuned on them. They are parsed by runs.py's row parser,
exactly like the calibration rows, but they never enter load_runs()/used_runs() (fit, bands, folds): a
first-run check evaluates the engine on them once.

Beyond the row parser, two rules of their own, both on how the sources print their tables (not on values):
- a page revised within one release (NeMo 24.07's summary was re-measured twice; a B200 long-sequence table
  was re-laid-out) keeps its latest revision; the rows of earlier revisions are marked superseded;
- a row whose printed layout does not multiply out (TP x PP x CP x DP != #GPUs, DP as printed) is excluded.
Then the newest-release rule of the Megatron-Bridge rows: one configuration measured in several releases
keeps the newest release's row.
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from functools import lru_cache

from .runs import DATA, CalibrationRun, _int, _release, _run

EXTERNAL_FILE = "external_runs.csv"


def _superseded(row: dict) -> str:
    m = re.search(r"superseded by revision (\w+)", row["notes"])
    return f"superseded by a later revision of the same release's page ({m.group(1)})" if m else ""


def _layout_mismatch(row: dict) -> str:
    """TP x PP x CP x DP against #GPUs, when the source prints DP (rows whose DP we derived agree by construction)."""
    if "dp derived" in row["notes"].lower() or not row["dp"].strip():
        return ""
    tp, pp, cp, dp, gpus = (_int(row[k]) for k in ("tp", "pp", "cp", "dp", "num_gpus"))
    if None in (tp, pp, dp, gpus):
        return ""
    product = tp * pp * (cp or 1) * dp
    if product != gpus:
        return f"printed layout inconsistent: TP x PP x CP x DP = {product}, #GPUs printed {gpus}"
    return ""


def _dedupe_releases(runs: list[CalibrationRun]) -> list[CalibrationRun]:
    """A configuration (same group and plan) measured in several releases keeps the newest release's row."""
    newest: dict[tuple[str, str], CalibrationRun] = {}
    for r in runs:
        if r.used:
            k = (r.group, r.config)
            if k not in newest or _release(r) > _release(newest[k]):
                newest[k] = r
    keep = {id(r) for r in newest.values()}
    return [r if not r.used or id(r) in keep
            else replace(r, status="excluded: same configuration measured with a newer release")
            for r in runs]


@lru_cache(maxsize=1)
def load_external_runs() -> tuple[CalibrationRun, ...]:
    runs = []
    with open(DATA / EXTERNAL_FILE, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            run = _run(EXTERNAL_FILE, line, row)
            why = _superseded(row) or _layout_mismatch(row)
            if why and run.used:
                run = replace(run, status=f"excluded: {why}")
            runs.append(run)
    return tuple(_dedupe_releases(runs))
