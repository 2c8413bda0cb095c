"""Memory figures as people and tools write them, read in the unit written and converted once to GiB.

The engine counts memory in GiB (2**30 bytes), as torch's allocator does when people divide its bytes by
1024**3. A figure someone writes carries its own unit, and the two families differ by 7.4 % at the giga
scale, enough to turn a peak that fits an 80 GiB GPU into one "above its memory":
- GB = 10**9 bytes and MB = 10**6 bytes (SI, IEC 80000-13), as written;
- GiB = 2**30 and MiB = 2**20 bytes (IEC binary prefixes); nvidia-smi prints MiB ("81559MiB");
- a bare "G" / "M" (torch and `du -h` shorthand, no "B") is read as the binary unit.
Framework logs are not read here: each log reader converts its framework's own label, whose arithmetic may
differ from its name (DeepSpeed prints "GB" for bytes / 1024**3, engine/training_logs/deepspeed.py).
"""

from __future__ import annotations

GIB = 2**30
BYTES_PER_UNIT: dict[str, float] = {"gib": 2**30, "gb": 1e9, "g": 2**30, "mib": 2**20, "mb": 1e6, "m": 2**20,
                                    "tib": 2**40, "tb": 1e12}
UNIT_NAMES: dict[str, str] = {"gib": "GiB", "gb": "GB", "g": "G", "mib": "MiB", "mb": "MB", "m": "M",
                              "tib": "TiB", "tb": "TB"}


def to_gib(value: float, unit: str) -> float:
    """`value` written in `unit` (case-insensitive: GB, GiB, MiB, ...) as GiB."""
    return value * BYTES_PER_UNIT[unit.lower()] / GIB


def conversion_text(value: float, unit: str) -> str | None:
    """'81.5 GB = 75.9 GiB' when the unit is not a binary giga one already (None for GiB and a bare G)."""
    unit = unit.lower()
    if unit in ("gib", "g"):
        return None
    return f"{value:,g} {UNIT_NAMES[unit]} = {to_gib(value, unit):,.1f} GiB"
