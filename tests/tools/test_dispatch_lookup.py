"""The dispatcher (errors as data, ids stamped) and the catalog tools, against the catalogs directly."""

from __future__ import annotations

import json

import pytest

from shardwise.engine import hardware_catalog, model_catalog
from shardwise.tools.dispatch import dispatch
from shardwise.tools.lookup import LIST_HARDWARE, LOOKUP_MODEL

REGISTRY = {t.name: t for t in (LOOKUP_MODEL, LIST_HARDWARE)}


def call(name, arguments, rid="R1"):
    return dispatch(name, arguments if isinstance(arguments, str) else json.dumps(arguments),
                    result_id=rid, registry=REGISTRY)


def test_lookup_model_reports_the_published_parameter_count():
    out = call("lookup_model", {"name": "Meta-Llama-3.1-70B"}, rid="R7")
    assert out.ok and out.result.id == "R7"
    facts = out.result.model
    assert facts.id == "llama-3.1-70b"
    # Meta's model card: 70.6 B; the exact count from config.json is 70,553,706,496.
    assert facts.params == 70_553_706_496 and facts.params_billion == 70.55
    assert (facts.num_layers, facts.hidden_size, facts.num_kv_heads) == (80, 8192, 8)
    body = json.loads(out.content())
    assert body["id"] == "R7" and body["model"]["params_billion"] == 70.55


def test_lookup_moe_model_has_active_params():
    facts = call("lookup_model", {"name": "mixtral 8x7b"}).result.model
    # Mistral's announcement: 46.7 B total, 12.9 B active per token.
    assert facts.params_billion == pytest.approx(46.7, abs=0.05)
    assert facts.active_params_billion == pytest.approx(12.9, abs=0.05)
    assert facts.moe.startswith("8 routed experts, top-2")


def test_unknown_model_is_a_result_with_suggestions_not_an_error():
    out = call("lookup_model", {"name": "lama-3.1-7b"})
    assert out.ok and out.result.found is False
    assert "llama-3.1-8b" in out.result.suggestions or "llama-3.1-70b" in out.result.suggestions


def test_null_name_lists_the_catalog():
    out = call("lookup_model", {"name": None})
    assert [row.id for row in out.result.catalog] == model_catalog.model_ids()


def test_list_hardware_lists_and_looks_up():
    everything = call("list_hardware", {"kind": None, "name": None}).result
    assert [g.id for g in everything.gpus] == [g.id for g in hardware_catalog.list_gpus()]
    assert [n.id for n in everything.networks] == [n.id for n in hardware_catalog.list_networks()]
    h200 = call("list_hardware", {"kind": "gpus", "name": "H200"}).result.gpus[0]
    assert h200.id == "h200" and h200.memory_gib == hardware_catalog.get_gpu("h200").memory_gib
    ib = call("list_hardware", {"kind": None, "name": "ib-ndr"}).result
    assert ib.gpus == [] and ib.networks[0].id == "ib-ndr"


def test_unknown_gpu_name_goes_back_as_a_fix_list():
    out = call("list_hardware", {"kind": "gpus", "name": "H1000"})
    assert not out.ok and "unknown gpu" in out.errors[0].lower()
    body = json.loads(out.content())
    assert body["fix"] == out.errors and "not run" in body["error"]


@pytest.mark.parametrize("raw, expected", [
    ('{"name": ', "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"name": "x", "colour": "red"}', "colour: is not an argument of this tool"),
    ('{"kind": "tpus"}', "kind: Input should be 'gpus', 'networks' or 'both'"),
])
def test_malformed_arguments_become_readable_fixes(raw, expected):
    name = "list_hardware" if "kind" in raw else "lookup_model"
    out = call(name, raw)
    assert not out.ok and any(expected in e for e in out.errors), out.errors


def test_wrong_type_error_shows_the_value():
    out = call("list_hardware", {"kind": "gpus", "name": 42})
    assert out.errors == ["name: Input should be a valid string (got 42)"]


def test_unknown_tool_lists_the_tools():
    out = call("launch_missiles", {})
    assert not out.ok and "lookup_model" in out.errors[0] and "list_hardware" in out.errors[0]


def test_empty_arguments_mean_all_defaults():
    assert call("list_hardware", "").ok


def test_an_engine_crash_is_reported_not_raised():
    from shardwise.tools.base import Tool

    def boom(args):
        raise ZeroDivisionError("x")

    broken = Tool("broken", "d", LOOKUP_MODEL.args, LOOKUP_MODEL.result, boom)
    out = dispatch("broken", "{}", registry={"broken": broken})
    assert not out.ok and "internal error in broken (ZeroDivisionError)" in out.errors[0]
