"""Catalog names as patterns, so "Llama 3.1 70B" or "RTX 4090" in an answer reads as a name and
its digits are not taken for quantities. Separators are free: "llama-3.1-70b", "Llama 3.1 70B"
and "llama3.1 70b" all match the same pattern."""

from __future__ import annotations

import importlib
import re
from functools import lru_cache


def name_pattern(name: str) -> re.Pattern | None:
    name = name.rsplit("/", 1)[-1]
    if not re.search(r"[a-zA-Z]", name):
        return None  # an all-digit alias ("4090") would hide real quantities
    parts = [p for p in re.split(r"(?<=[a-zA-Z])(?=\d)|[\s_\-]+", name) if p]
    if not any(any(c.isdigit() for c in p) for p in parts):
        return None  # no digits: nothing to protect
    body = r"[\s_\-]*".join(re.escape(p) for p in parts)
    return re.compile(rf"(?<![\w.]){body}(?![\w])", re.IGNORECASE)


def _catalog_names() -> list[str]:
    names: list[str] = []
    try:
        catalog = importlib.import_module("shardwise.engine.model_catalog")
        for entry in catalog.list_catalog():
            names += [entry.id, entry.spec.name, *entry.aliases]
    except (ImportError, AttributeError):
        pass
    try:
        hardware = importlib.import_module("shardwise.engine.hardware_catalog")
        for spec in list(hardware.list_gpus()) + list(hardware.list_networks()):
            names += [spec.id, spec.name, *spec.aliases]
    except (ImportError, AttributeError):
        pass
    return names


@lru_cache(maxsize=1)
def catalog_patterns() -> tuple[re.Pattern, ...]:
    """One pattern for every catalog name with digits in it (one regex pass is much faster than
    two hundred); longest names first, so 'Llama-3.1-405B' wins over 'Llama-3.1'."""
    unique = sorted(set(_catalog_names()), key=len, reverse=True)
    bodies = [p.pattern for p in (name_pattern(n) for n in unique) if p is not None]
    return (re.compile("|".join(f"(?:{b})" for b in bodies), re.IGNORECASE),) if bodies else ()
