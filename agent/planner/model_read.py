"""A model named by family and size without a version ("llama 70b", "gemma 27b"): the catalog's newest of that
size is used (names.find_model), and the answer says which, and whether the other versions have its shape (then
the plan and its figures are theirs too) or not (named, so the user can ask for theirs)."""

from __future__ import annotations

import re


from ...engine.model_catalog import get_model
from ...prompts.render import render
from .names import unversioned_model

# Fields that name or document a model without changing its memory or time at a given sequence length.
NOT_SHAPE = {"name", "source", "max_position_embeddings"}


def _shape(model_id: str) -> dict:
    return get_model(model_id).model_dump(exclude=NOT_SHAPE)


def model_read_note(text: str, used_model: str | None) -> str | None:
    """The line saying which model unversioned words were read as, when a tool used that model."""
    read = unversioned_model(text)
    if read is None or used_model != read[1]:
        return None
    written, model_id, others = read
    shape = _shape(model_id)
    same = [get_model(o).name for o in others if _shape(o) == shape]
    different = [get_model(o).name for o in others if _shape(o) != shape]
    newest = max([model_id, *others], key=_version) == model_id
    return render("offline/model_read.md.j2", written=written, used=get_model(model_id).name, same=same,
                  different=different, newest=newest).strip()


def _version(model_id: str) -> tuple[int, ...]:
    """"llama-3.3-70b" -> (3, 3): the version written between the family and the size."""
    m = re.match(r"[a-z]+-?(\d+(?:\.\d+)*)", model_id)
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()
