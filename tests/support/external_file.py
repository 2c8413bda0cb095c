"""One external set's CSV as its tests read it: the rows as written, the key ("file:line") of one row, and the
run the loader parsed from it — so each set's tests quote a source line and check the run behind it."""

from __future__ import annotations

import csv
from collections.abc import Callable

from shardwise.engine.calibration.runs import DATA


class ExternalFile:
    def __init__(self, name: str, load: Callable[[], tuple]):
        self.name, self.load = name, load

    def rows(self) -> list[dict]:
        with open(DATA / self.name, newline="") as f:
            return list(csv.DictReader(f))

    def key(self, locator_part: str, **cells) -> str:
        """The key of the one row whose locator contains `locator_part` and whose cells are `cells`."""
        hits = [i for i, r in enumerate(self.rows(), start=2) if locator_part in r["source_locator"]
                and all(r[k] == str(v) for k, v in cells.items())]
        assert len(hits) == 1, hits
        return f"{self.name}:{hits[0]}"

    def run(self, key: str):
        return next(r for r in self.load() if r.key == key)

    def row(self, key: str) -> dict:
        return self.rows()[int(key.split(":")[1]) - 2]

    def assert_used_or_excluded(self, reasons: tuple[str, ...], at_least: int) -> None:
        """Every row is a used run or excluded for one of the set's stated `reasons`; at least `at_least` are used."""
        runs = self.load()
        for r in runs:
            assert r.used or any(reason in r.status for reason in reasons), (r.key, r.status)
        assert sum(r.used for r in runs) >= at_least


def assert_judged_and_in_no_band_method_but(n: int, later: tuple[str, ...] = ()) -> None:
    """Set `n` has had its first run (in the judged-set tables), no band method is estimated on it but `later` (the
    methods written after that first run), and no engine module but the loader (engine/calibration/external.py)
    names its file or loader."""
    from pathlib import Path

    from shardwise.engine.calibration import external
    from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS

    assert n in external.JUDGED_EXTERNAL_SETS and external.EXTERNAL_FILES[n] == getattr(external, f"EXTERNAL_FILE_{n}")
    assert [m for m, sets in EXTERNAL_SETS_IN_BANDS.items() if n in sets] == list(later)
    names = (f"external_runs_{n}", f"EXTERNAL_FILE_{n}", f"load_external_runs_{n}")
    for path in (Path(external.__file__).resolve().parents[1]).rglob("*.py"):
        if path.name != "external.py":
            text = path.read_text(encoding="utf-8", errors="ignore")
            assert not any(name in text for name in names), path


def run_layout(r) -> tuple:
    """What makes two runs one configuration for the 'no repeated layout' checks (with the mode: a LoRA run of a plan
    is not the pre-training run of that plan)."""
    return (r.model.name, r.cluster.gpu.id, r.cluster.num_gpus, r.setup.seq_len, r.setup.precision,
            r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.vpp, r.strategy.ep, r.setup.mode)


def assert_no_used_run_repeats_an_earlier_layout(runs, earlier) -> None:
    """No used run of a set has the layout of a parsed run of the earlier files (calibration data, earlier sets)."""
    seen = {run_layout(r) for r in earlier if r.model and r.cluster and r.setup and r.strategy}
    for r in runs:
        assert not r.used or run_layout(r) not in seen, r.key


def assert_every_row_used_or_excluded_with_a_reason(runs) -> None:
    """A used run is complete (model, cluster, setup, plan, a positive measured throughput); any other row says why."""
    for r in runs:
        if r.used:
            assert r.model and r.cluster and r.setup and r.strategy, r.key
            assert r.measured_tokens_per_gpu and r.measured_tokens_per_gpu > 0, r.key
        else:
            assert r.status.startswith("excluded: ") and len(r.status) > len("excluded: ") + 5, (r.key, r.status)


def assert_in_its_own_files_only(files: tuple[str, ...], load: Callable[[], tuple]) -> None:
    """A set's rows never reach the fit or the bands' calibration runs, it reads only its own files, and every judged
    set reads only its own (so no set's rows leak into another's first run)."""
    from shardwise.engine.calibration import external
    from shardwise.engine.calibration.runs import load_runs, used_runs

    for file in files:
        assert not any(r.key.startswith(file + ":") for r in load_runs())
        assert not any(r.key.startswith(file + ":") for r in used_runs())
    assert all(r.key.split(":")[0] in files for r in load())
    for n, judged in external.JUDGED_EXTERNAL_SETS.items():
        own = external.EXTERNAL_PART_FILES.get(n, (external.EXTERNAL_FILES[n],))
        assert all(r.key.split(":")[0] in own for r in judged()), n
