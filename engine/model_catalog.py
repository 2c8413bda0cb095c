"""The bundled model catalog: popular decoder-only architectures as data (data/models.json).

Each entry is a ModelSpec plus a stable lower-case `id` (what `--model` accepts), a few
aliases, and the source of its numbers (the Hugging Face config.json, the paper or the
framework config it was read from). Lookup is forgiving: case, separators, a Hub org
prefix ("meta-llama/"), "-instruct"/"-hf" suffixes and word order do not matter.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .catalog_listing import catalog_hint
from .errors import ShardwiseInputError, unknown_name_error
from .model_spec import ModelSpec

DATA_FILE = Path(__file__).parent / "data" / "models.json"

# Words that name a fine-tuned or repackaged variant with the same architecture.
VARIANT_WORDS = {"instruct", "chat", "it", "hf", "base", "pt"}


@dataclass(frozen=True)
class CatalogModel:
    id: str
    aliases: tuple[str, ...]
    spec: ModelSpec


def _tokens(name: str) -> tuple[str, ...]:
    """'meta-llama/Llama3.1-70B-Instruct' -> ('70b', '3.1', 'llama'): the words, order-free."""
    name = name.strip().lower().rsplit("/", 1)[-1]
    name = re.sub(r"(?<=[a-z])(?=\d)", " ", name)  # 'llama3.1' -> 'llama 3.1' (but '70b' stays)
    words = [w for w in re.split(r"[\s_\-]+", name) if w and w not in VARIANT_WORDS]
    return tuple(sorted(words))


def _key(name: str) -> str:
    return " ".join(_tokens(name))


@lru_cache(maxsize=1)
def _catalog() -> tuple[tuple[CatalogModel, ...], dict[str, CatalogModel]]:
    entries = []
    for raw in json.loads(DATA_FILE.read_text()):
        raw = dict(raw)
        model_id, aliases = raw.pop("id"), tuple(raw.pop("aliases", ()))
        entries.append(CatalogModel(id=model_id, aliases=aliases, spec=ModelSpec(**raw)))
    index: dict[str, CatalogModel] = {}
    for entry in entries:
        for name in (entry.id, entry.spec.name, *entry.aliases):
            other = index.setdefault(_key(name), entry)
            if other is not entry:
                raise AssertionError(f"catalog name {name!r} is ambiguous: {other.id} and {entry.id}")
    return tuple(entries), index


def list_catalog() -> list[CatalogModel]:
    return list(_catalog()[0])


def list_models() -> list[ModelSpec]:
    return [entry.spec for entry in _catalog()[0]]


def model_ids() -> list[str]:
    return [entry.id for entry in _catalog()[0]]


def find_model(name: str) -> CatalogModel:
    if not isinstance(name, str) or not name.strip():
        raise ShardwiseInputError(f"empty model name: give {catalog_hint('model', len(model_ids()))}")
    entry = _catalog()[1].get(_key(name))
    if entry is None:
        raise unknown_name_error("model", name, model_ids())
    return entry


def get_model(name: str) -> ModelSpec:
    """A catalog model by id or alias; unknown names raise with the closest ids."""
    return find_model(name).spec
