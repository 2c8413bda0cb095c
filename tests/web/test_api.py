"""REST contract: the CLI's names in, the CLI's `--json` objects out, precise errors for bad input."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.cli.main import main as cli
from shardwise.web.app import create_app
from shardwise.web.settings import Settings

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16, "seq_len": 4096, "global_batch": 256}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def cli_json(capsys, *argv: str):
    assert cli(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_evaluate_answers_what_the_cli_prints(client, capsys):
    body = {**SCENARIO, "tp": 2, "pp": 2, "zero": 2, "micro_batch": 2, "recompute": "full", "sequence_parallel": False}
    r = client.post("/api/evaluate", json=body)
    assert r.status_code == 200, r.text
    expected = cli_json(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "16",
                        "--seq-len", "4096", "--global-batch", "256", "--tp", "2", "--pp", "2", "--zero", "2",
                        "--micro-batch", "2", "--recompute", "full", "--no-sp", "--json")
    assert r.json() == expected
    s = r.json()["strategy"]  # the names mapped to the right knobs
    assert (s["tp"], s["pp"], s["zero_stage"], s["micro_batch"], s["recompute"], s["sequence_parallel"]) == (
        2, 2, 2, 2, "full", False)


def test_recommend_answers_what_the_cli_prints(client, capsys):
    r = client.post("/api/recommend", json={**SCENARIO, "top_k": 3, "constraints": {"max_pp": 2}})
    assert r.status_code == 200, r.text
    expected = cli_json(capsys, "recommend", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "16",
                        "--seq-len", "4096", "--global-batch", "256", "--top", "3", "--max", "pp=2", "--json")
    got = r.json()
    for key in ("plans", "searched", "valid", "fitting", "excluded", "constraints", "nothing_fits"):
        assert got[key] == expected[key], key
    assert all(p["strategy"]["pp"] <= 2 for p in got["plans"])


def test_global_batch_tokens_reads_4M_as_recipes_do(client):
    # "4M tokens" = 4·2^20 = 4,194,304 tokens = 512 sequences of 8192 (as --global-batch-tokens reads it)
    r = client.post("/api/evaluate", json={**SCENARIO, "seq_len": 8192, "global_batch": None, "global_batch_tokens": "4M",
                                           "tp": 8, "gpus": 16})
    assert r.status_code == 200, r.text
    s = r.json()["strategy"]
    assert s["dp"] * s["micro_batch"] * s["grad_accum"] == 512


def test_catalogs_are_the_cli_lists(client, capsys):
    assert client.get("/api/models").json() == cli_json(capsys, "models", "--json")
    gpus = client.get("/api/gpus").json()
    assert [g["id"] for g in gpus] == [g["id"] for g in cli_json(capsys, "gpus", "--json")]
    assert [n["id"] for n in client.get("/api/networks").json()] == [n["id"] for n in cli_json(capsys, "networks", "--json")]


def test_openapi_documents_the_cli_names_and_the_engine_models(client):
    spec = client.get("/openapi.json").json()
    body = spec["components"]["schemas"]["EvaluateRequest"]["properties"]
    for name in ("model", "gpu", "gpus", "gpus_per_node", "seq_len", "global_batch", "mode", "precision",
                 "tp", "pp", "vpp", "cp", "ep", "zero", "micro_batch", "recompute"):
        assert name in body, name
    ok = spec["paths"]["/api/evaluate"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok["$ref"].endswith("/Evaluation")
    rec = spec["paths"]["/api/recommend"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert rec["$ref"].endswith("/Recommendation")
    assert "text/event-stream" in spec["paths"]["/api/chat"]["post"]["responses"]["200"]["content"]


def test_config_json_object_is_accepted_inline(client):
    config = {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
              "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": True,
              "max_position_embeddings": 131072}
    r = client.post("/api/evaluate", json={**SCENARIO, "model": config, "gpus": 8})
    assert r.status_code == 200, r.text
    # Llama-3.2-1B's shape: 1.24 B parameters (Meta's model card: 1.23 B; HF reports 1,235,814,400)
    assert r.json()["model"]["params"] == 1_235_814_400
    text = client.post("/api/evaluate", json={**SCENARIO, "model": json.dumps(config), "gpus": 8})
    assert text.json()["model"]["params"] == 1_235_814_400


def test_an_invalid_plan_is_a_result_not_an_error(client):
    # 32 heads are not divisible by TP=3; 24 / 3 = 8 is a whole DP, so the plan is priced and marked invalid
    r = client.post("/api/evaluate", json={**SCENARIO, "gpus": 24, "tp": 3})
    assert r.status_code == 200
    assert r.json()["valid"] is False and r.json()["violations"]


BAD = [
    # (body or raw bytes, status, words the message must contain)
    (b'{"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8,}', 400, "malformed JSON"),
    (b"not json at all", 400, "malformed JSON"),
    (b"[1, 2]", 422, "must be a JSON object"),
    (b"", 422, "body is empty"),
    ({**SCENARIO, "gpu_count": 8}, 422, "gpu_count: unknown field"),
    ({**SCENARIO, "gpus": 10**9}, 422, "gpus: Input should be less than or equal to 1048576"),
    ({**SCENARIO, "gpus": 0}, 422, "gpus: Input should be greater than or equal to 1"),
    ({**SCENARIO, "gpus": "eight"}, 422, "gpus"),
    ({**SCENARIO, "seq_len": -5}, 422, "seq_len"),
    ({**SCENARIO, "seq_len": 1e300}, 422, "seq_len"),
    ({**SCENARIO, "zero": 7}, 422, "zero: Input should be 0, 1, 2 or 3"),
    ({**SCENARIO, "tp": 0}, 422, "tp"),
    ({**SCENARIO, "recompute": "sometimes"}, 422, "recompute"),
    ({**SCENARIO, "model": "llama-3.1-8"}, 400, "unknown model"),
    ({**SCENARIO, "gpu": "h1000"}, 400, "unknown gpu"),
    ({**SCENARIO, "model": "/etc/passwd"}, 400, "unknown model"),
    ({**SCENARIO, "model": "config.json"}, 400, "unknown model"),
    ({**SCENARIO, "model": '{"model_type": "llama", "hidden_size": '}, 400, "not valid JSON"),
    ({**SCENARIO, "model": {"model_type": "llama"}}, 400, "missing required field"),
    ({**SCENARIO, "model": {"model_type": "gpt9"}}, 400, "unsupported model_type"),
    ({**SCENARIO, "params": "70B"}, 400, "not both"),
    ({**SCENARIO, "model": None}, 400, "no model given"),
    ({**SCENARIO, "global_batch_tokens": "4M"}, 400, "not both"),
    ({**SCENARIO, "global_batch": None, "global_batch_tokens": "lots"}, 400, "global_batch_tokens"),
]


@pytest.mark.parametrize("body,status,words", BAD, ids=[str(b)[:60] for b, _, _ in BAD])
def test_bad_input_gets_a_precise_error_and_the_service_keeps_serving(client, body, status, words):
    if isinstance(body, bytes):
        r = client.post("/api/evaluate", content=body, headers={"content-type": "application/json"})
    else:
        r = client.post("/api/evaluate", json=body)
    assert r.status_code == status, r.text
    payload = r.json()
    assert set(payload) == {"message", "errors"}
    assert words in payload["message"]
    assert "Traceback" not in r.text
    assert client.post("/api/evaluate", json=SCENARIO).status_code == 200


def test_a_10_MB_config_json_is_refused_before_it_is_read(client):
    config = {"model_type": "llama", "padding": "x" * (10 * 1024 * 1024)}
    r = client.post("/api/evaluate", json={**SCENARIO, "model": config})
    assert r.status_code == 413
    assert "10.5 MB" in r.json()["message"] and "limit is 1 MiB" in r.json()["message"]
    assert client.get("/api/health").status_code == 200


def test_unknown_endpoint_and_method_are_json(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and "no such endpoint" in r.json()["message"]
    r = client.get("/api/evaluate")
    assert r.status_code == 405 and "GET is not allowed" in r.json()["message"]


def test_cors_allows_only_the_configured_origins(scripted_chat):
    app = create_app(Settings(cors_origins=("https://docs.example.com",)), chat_service=scripted_chat)
    c = TestClient(app)
    pre = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}
    ok = c.options("/api/chat", headers={"origin": "https://docs.example.com", **pre})
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://docs.example.com"
    bad = c.options("/api/chat", headers={"origin": "https://evil.example", **pre})
    assert "access-control-allow-origin" not in bad.headers
    r = c.post("/api/chat", json={"message": "hi"}, headers={"origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers  # the browser will not let that page read the answer


def test_nanotron_and_packed_documents_answer_what_the_cli_prints(client, capsys):
    body = {**SCENARIO, "framework": "nanotron", "mean_doc_len": 512, "tp": 2, "zero": 1}
    r = client.post("/api/evaluate", json=body)
    assert r.status_code == 200, r.text
    expected = cli_json(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "16",
                        "--seq-len", "4096", "--global-batch", "256", "--tp", "2", "--zero", "1",
                        "--framework", "nanotron", "--mean-doc-len", "512", "--json")
    assert r.json() == expected
    r = client.post("/api/evaluate", json={**SCENARIO, "mean_doc_len": 8192})  # longer than seq_len 4096
    assert r.status_code in (400, 422) and "mean document length" in r.text


def test_moe_dispatcher_in_the_body_is_the_cli_flag(client, capsys):
    body = {"model": "mixtral-8x7b", "gpu": "h100-sxm", "gpus": 16, "seq_len": 4096, "global_batch": 256,
            "tp": 2, "ep": 8, "moe_dispatcher": "deepep", "moe_a2a_overlap": True}
    r = client.post("/api/evaluate", json=body)
    assert r.status_code == 200, r.text
    expected = cli_json(capsys, "evaluate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "16",
                        "--seq-len", "4096", "--global-batch", "256", "--tp", "2", "--ep", "8",
                        "--moe-dispatcher", "deepep", "--moe-a2a-overlap", "--json")
    assert r.json() == expected
    assert client.post("/api/evaluate", json={**body, "moe_dispatcher": "nccl"}).status_code == 422


def test_recommend_with_an_export_format_answers_what_the_cli_prints(client, capsys):
    scenario = {"model": "llama-3-70b", "gpu": "h100-sxm", "gpus": 64, "seq_len": 16384, "global_batch": 256,
                "framework": "deepspeed"}
    r = client.post("/api/recommend", json={**scenario, "top_k": 2, "export_format": "deepspeed"})
    assert r.status_code == 200, r.text
    expected = cli_json(capsys, "recommend", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--gpus", "64",
                        "--seq-len", "16384", "--global-batch", "256", "--framework", "deepspeed", "--top", "2",
                        "--export", "deepspeed", "--json")
    got = r.json()
    for key in ("plans", "export_format", "set_aside", "export_checked", "near_best"):
        assert got[key] == expected[key], key
    assert all("deepspeed" in p["export_formats"] for p in got["plans"])
    assert client.post("/api/recommend", json={**scenario, "export_format": "jax"}).status_code == 422


def test_a_pasted_profile_that_is_not_an_object_names_both_places_a_profile_comes_from():
    # a page user may have no CLI: the message names the CLI's file and the REST answer alike
    from shardwise.engine.errors import ShardwiseInputError
    from shardwise.web.pages import profile_json

    for text in ("[1, 2]", "{not json"):
        with pytest.raises(ShardwiseInputError) as exc:
            profile_json(text)
        assert "shardwise calibrate" in str(exc.value) and "POST /api/calibrate" in str(exc.value)
