"""Memory units as written (engine/memory_units.py): GB = 1e9 bytes, GiB = 2**30, MiB = 2**20, MB = 1e6
(IEC 80000-13). Each expected figure is the byte count divided by 2**30 by hand."""

from __future__ import annotations

import pytest

from shardwise.engine.memory_units import conversion_text, to_gib


@pytest.mark.parametrize("value, unit, gib", [
    (81.5, "GB", 75.903),      # 81.5e9 / 1,073,741,824 = 75.9028
    (80, "GiB", 80.0),
    (81559, "MiB", 79.647),    # nvidia-smi's H100 80GB total: 81,559 x 1,048,576 / 1,073,741,824 = 79.6475
    (81559, "MB", 75.958),     # 81,559e6 / 1,073,741,824 = 75.9577
    (72, "G", 72.0),           # bare G: torch / du -h shorthand, binary
])
def test_a_figure_is_read_in_the_unit_written(value, unit, gib):
    assert to_gib(value, unit) == pytest.approx(gib, abs=5e-4)


def test_the_conversion_is_said_only_when_the_unit_is_not_gib():
    assert conversion_text(81.5, "GB") == "81.5 GB = 75.9 GiB"
    assert conversion_text(81559, "MiB") == "81,559 MiB = 79.6 GiB"
    assert conversion_text(70.2, "GiB") is None and conversion_text(72, "G") is None
