"""A body written from the CLI's help (README: "request bodies use the CLI's names in snake_case") is read or
answered with the name to use: the CLI's flags that REST spells otherwise (`--top` is `top_k`, a search's `--tp 8`
pin goes in `constraints`), typos and other tools' names get "did you mean"; `reference_dtype` (the CLI's
--reference-dtype) is a field; a constraint of the wrong shape is one sentence, not four pydantic branches."""

from __future__ import annotations

import pytest


SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}


@pytest.fixture(scope="module")
def client(api_client):
    return api_client


@pytest.mark.parametrize("path,field,hint", [
    ("/api/recommend", "top", "did you mean top_k (the CLI's --top)?"),
    ("/api/what-if", "top", "did you mean top_k (the CLI's --top)?"),
    ("/api/recommend", "export", "did you mean export_format (the CLI's --export)?"),
    ("/api/recommend", "tp", "did you mean constraints, e.g. {\"tp\": …} (a search takes the CLI's --tp pin there)?"),
    ("/api/recommend", "tensor_model_parallel_size", "did you mean constraints, e.g. {\"tp\": …}"),
    ("/api/recommend", "max", "did you mean constraints, e.g. {\"max_pp\": 4} (the CLI's --max pp=4)?"),
    ("/api/evaluate", "no_sp", "did you mean sequence_parallel: false (the CLI's --no-sp)?"),
    ("/api/evaluate", "grad_reduce_in_bf16", "did you mean grad_reduce_dtype: \"bf16\""),
    ("/api/evaluate", "seqlen", "did you mean seq_len?"),
    ("/api/evaluate", "gpu_count", "did you mean gpus?"),
    ("/api/evaluate", "tensor_model_parallel_size", "did you mean tp?"),
])
def test_an_unknown_field_names_the_one_meant(client, path, field, hint):
    body = {**SCENARIO, field: 8, **({"change": {"gpus": 16}} if path == "/api/what-if" else {})}
    r = client.post(path, json=body)
    assert r.status_code == 422
    message = r.json()["message"]
    assert message.startswith(f"{field}: unknown field; ") and hint in message
    assert message.endswith("(see /docs for the allowed names)") and r.json()["errors"][0]["field"] == field


def test_no_guess_for_a_name_with_nothing_near(client):
    """`top` on /api/evaluate is not top_k (evaluate has none): the nearest field there is tp, a real guess;
    a name near nothing keeps the plain refusal rather than a wild suggestion."""
    r = client.post("/api/evaluate", json={**SCENARIO, "colour": "blue"})
    assert r.status_code == 422 and r.json()["message"] == "colour: unknown field (see /docs for the allowed names)"
    r = client.post("/api/evaluate", json={**SCENARIO, "top": 3})
    assert "did you mean tp?" in r.json()["message"] and "top_k" not in r.json()["message"]


def test_a_constraint_of_the_wrong_shape_is_one_sentence(client):
    r = client.post("/api/recommend", json={**SCENARIO, "constraints": {"max": {"pp": 4}}})
    assert r.status_code == 422
    entries = r.json()["errors"]
    assert [e["field"] for e in entries] == ["constraints.max"]
    assert entries[0]["message"].startswith("a constraint's value is a number, a string, true/false or a list")
    assert "{\"max_pp\": 4}" in entries[0]["message"] and "list[" not in r.json()["message"]


def test_reference_dtype_is_read_as_the_cli_reads_it(client):
    """DPO's frozen reference in fp32 holds 4 bytes per parameter instead of 2. Hand check: Llama-3.1-8B has
    8,030,261,248 parameters; with TP=8 each GPU holds 1/8 of the sharded weights plus the full norm weights
    (32 layers x 2 x 4096 + 4096 = 266,240, replicated by TP): (8,030,261,248 - 266,240) / 8 + 266,240 =
    1,004,015,616 parameters x 4 bytes = 3.7402 GiB in fp32, exactly twice the bf16 figure."""
    got = {}
    for dtype in ("bf16", "fp32"):
        r = client.post("/api/evaluate", json={**SCENARIO, "mode": "dpo", "tp": 8, "reference_dtype": dtype})
        assert r.status_code == 200, r.text
        got[dtype] = r.json()["memory"]["details_gib"]["weights.reference"]
        assert f"in {dtype}" in r.json()["post_training"]["reference"]
    assert got["fp32"] == pytest.approx(1_004_015_616 * 4 / 2**30, rel=1e-4)
    assert got["fp32"] == pytest.approx(2 * got["bf16"], rel=1e-9)


def test_reference_dtype_outside_post_training_is_refused(client):
    r = client.post("/api/evaluate", json={**SCENARIO, "reference_dtype": "fp32"})
    assert r.status_code == 400 and r.json()["message"] == "a reference dtype applies to mode dpo, grpo or ppo, not full"


def test_recommend_takes_the_cli_cost_flags(client):
    """`recommend --train-tokens 1T --price-per-gpu-hour 2.5` had no REST body (train_tokens was an unknown field
    there). Each plan's cost by engine/cost.py's formulas, written out: time = tokens / (tokens/s); GPU-hours =
    time x GPUs / 3600; cost = GPU-hours x price."""
    r = client.post("/api/recommend", json={**SCENARIO, "top_k": 2, "train_tokens": "1T", "price_per_gpu_hour": 2.5})
    assert r.status_code == 200, r.text
    for plan in r.json()["plans"]:
        cost, tokens_per_s = plan["cost"], plan["throughput"]["tokens_per_s"]
        seconds = 1e12 / tokens_per_s
        assert cost["time_to_train_s"] == pytest.approx(seconds, rel=1e-9)
        assert cost["gpu_hours"] == pytest.approx(seconds * 8 / 3600, rel=1e-9)
        assert cost["total_cost"] == pytest.approx(seconds * 8 / 3600 * 2.5, rel=1e-9)
        assert cost["price_source"] == "user-supplied"
    listed = client.post("/api/recommend", json={**SCENARIO, "top_k": 1}).json()["plans"][0]["cost"]
    assert listed["train_tokens"] is None and listed["price_source"] != "user-supplied"  # the catalog's price


@pytest.mark.parametrize("path", ["/api/recommend", "/api/evaluate"])
def test_a_budget_below_one_step_is_refused(client, path):
    """As the CLI: one step of the default setup is 4,096 x 1,024 = 4,194,304 tokens; "15" was priced as 15 tokens."""
    r = client.post(path, json={**SCENARIO, "train_tokens": "15"})
    assert r.status_code == 400
    assert r.json()["message"].startswith("train_tokens '15' is 15 tokens, less than one optimizer step of this setup "
                                          "(4,194,304 tokens)")


def test_a_derived_field_copied_from_a_response_says_so(client):
    """A response's strategy has dp and grad_accum; a body copied from it was refused as bare "unknown field"."""
    r = client.post("/api/evaluate", json={**SCENARIO, "tp": 2, "dp": 4, "grad_accum": 16})
    assert r.status_code == 422
    by_field = {e["field"]: e["message"] for e in r.json()["errors"]}
    assert by_field["dp"] == "unknown field: not set but derived (DP follows from the GPUs: gpus / (tp · cp · pp)); drop it"
    assert by_field["grad_accum"].startswith("unknown field: not set but derived (gradient accumulation follows")
    r = client.post("/api/explain", json={**SCENARIO, "a": {"tp": 2, "dp": 4}})
    assert r.json()["errors"][0]["field"] == "a.dp" and "not set but derived" in r.json()["errors"][0]["message"]
