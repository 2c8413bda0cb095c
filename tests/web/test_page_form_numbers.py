"""The page's form reads numbers as the CLI does, and every bad value is a message, never 'internal error'.

Before: a sequence length 'infk' raised OverflowError (the page said "internal error ... logged"), '3.7k' was
truncated to 3,788 tokens (the CLI refuses it: 3.7 x 1024 = 3,788.8 is no whole number of tokens), '8.0' GPUs
and '1e3' were refused (the CLI takes them), a pasted config '[]' was looked up as a catalog name, and an engine
check across inputs was prefixed 'body: '.
"""

import pytest

from shardwise.web.errors import describe_validation
from shardwise.web.pages import DEFAULT_FORM, compute_results, form_to_request

FORM = {**DEFAULT_FORM, "model": "llama-3.1-8b", "gpus": "8"}


@pytest.mark.parametrize("field,value", [("seq_len", "infk"), ("seq_len", "nank"), ("seq_len", "3.7k"),
                                         ("gpus", "8.5"), ("gpus", "1e999"), ("mean_doc_len", "inf")])
def test_bad_numbers_are_messages(field, value):
    r = compute_results({**FORM, field: value})
    assert r["view"] is None and r["error"] and "internal error" not in r["error"]
    assert repr(value) in r["error"]


def test_grpo_response_length_is_read_alike():
    r = compute_results({**FORM, "mode": "grpo", "response_len": "infk"})
    assert r["error"] and "internal error" not in r["error"]


@pytest.mark.parametrize("field,value,want", [
    ("seq_len", "0.5k", ("seq_len", 512)),   # 0.5 x 1024 = 512 tokens, whole
    ("seq_len", "1e3", ("seq_len", 1000)),
    ("gpus", "8.0", ("gpus", 8)),
    ("gpus", "1,024", ("gpus", 1024)),
    ("mean_doc_len", "1e3", ("mean_doc_len", 1000)),
])
def test_numbers_the_cli_takes_are_taken(field, value, want):
    req = form_to_request({**FORM, field: value})
    assert getattr(req, want[0]) == want[1]


def test_a_pasted_config_that_is_not_an_object_says_so():
    r = compute_results({**FORM, "model": "__config__", "config_json": "[]"})
    assert "must be a JSON object" in r["error"] and "unknown model" not in r["error"]


def test_a_check_across_inputs_is_not_prefixed_body(api_client):
    r = compute_results({**FORM, "recompute_modules": "foo"})
    assert r["error"].startswith("recompute module(s) foo are not modelled")
    # the REST body keeps the field entry "body" (no single field), without the prefix in the message
    resp = api_client.post("/api/evaluate", json={"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8,
                                              "recompute_modules": ["foo"]})
    assert resp.status_code == 400
    body = resp.json()
    assert body["message"].startswith("recompute module(s) foo") and body["errors"][0]["field"] == "body"


def test_field_errors_keep_their_field_prefix():
    status, message, entries = describe_validation([{"type": "greater_than_equal", "loc": ("body", "gpus"),
                                                     "msg": "Input should be greater than or equal to 1", "input": 0}])
    assert message == "gpus: Input should be greater than or equal to 1" and entries[0]["field"] == "gpus"
