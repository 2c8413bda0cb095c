"""A model as `shardwise models ID --json` (or GET /api/models) prints it is read back by --model FILE / a REST
`model` object: dump a catalog model, edit a field, plan the variant. Before, the record was refused
("config.json has no 'model_type'"), as --model takes Hugging Face configs."""

import json

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.hf_config import model_from_hf_config
from shardwise.engine.model_catalog import list_catalog
from shardwise.present import model_record

CATALOG = list_catalog()


@pytest.mark.parametrize("entry", CATALOG, ids=[e.id for e in CATALOG])
def test_every_catalog_record_reads_back_as_the_same_model(entry):
    record = json.loads(json.dumps(model_record(entry.spec, entry.id, entry.aliases)))  # as printed
    assert model_from_hf_config(record) == entry.spec


def test_an_edited_record_is_the_variant_and_its_params_are_recomputed():
    entry = next(e for e in CATALOG if e.id == "llama-3.1-8b")
    record = model_record(entry.spec, entry.id, entry.aliases)
    variant = model_from_hf_config({**record, "num_layers": 16, "params": 1})  # a stale params is ignored
    assert variant.num_layers == 16 and variant.hidden_size == entry.spec.hidden_size


def test_a_bad_record_is_one_message():
    entry = next(e for e in CATALOG if e.id == "llama-3.1-8b")
    with pytest.raises(ShardwiseInputError, match="model record .* is invalid: num_layers"):
        model_from_hf_config({**model_record(entry.spec, entry.id, entry.aliases), "num_layers": 0})


def test_a_hugging_face_config_without_model_type_is_still_refused():
    with pytest.raises(ShardwiseInputError, match="no 'model_type'"):
        model_from_hf_config({"hidden_size": 4096, "num_hidden_layers": 32})
