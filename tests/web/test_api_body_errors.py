"""Bodies the API cannot read get one precise error with the documented status (docs/web.md "Errors"), not
the framework's generic words: not JSON by content type -> 415 (RFC 9110 §15.5.16); bytes that are not
UTF-8 or JSON nested past the parser's limit -> 400 saying what to send; a streamed body cut at the limit
-> 413 naming the limit (it used to read "request body is more than that")."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000,
                                          max_body_bytes=1 << 20), chat_service=object()),
                      raise_server_exceptions=False)


@pytest.mark.parametrize("path", ["/api/evaluate", "/api/recommend", "/api/export", "/api/calibrate", "/api/chat"])
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_body_sent_as_another_content_type_is_415(client, path, content_type):
    r = client.post(path, content=json.dumps(SCENARIO), headers={"content-type": content_type})
    assert r.status_code == 415
    assert r.json()["message"] == ("the request body must be JSON sent with Content-Type: application/json "
                                   f"(got {content_type})")


@pytest.mark.parametrize("body", [b'{"model": "\xff\xfe", "gpu": "h100", "gpus": 8}',  # 0xff never occurs in UTF-8
                                  b'{"profile": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"])
def test_a_body_that_cannot_be_decoded_says_what_to_send(client, body):
    r = client.post("/api/evaluate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and "send one JSON object as UTF-8 text" in r.json()["message"]


def test_a_streamed_body_over_the_limit_names_the_limit():
    client = TestClient(create_app(Settings(max_body_bytes=1024), chat_service=object()))

    def chunks():  # no Content-Length: the limit is found while the body streams
        for _ in range(10):
            yield b" " * 500

    r = client.post("/api/evaluate", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["message"].startswith("request body is over the limit of 1 KiB (")


def test_a_field_spelled_as_the_response_spells_it_names_the_request_field(client):
    # The response says cluster.num_gpus and strategy.zero_stage (README "Output contract"); the request takes
    # gpus and zero. A body copied from a response got "unknown field" with nothing to go on.
    body = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "num_gpus": 8, "zero_stage": 3}
    r = client.post("/api/evaluate", json=body)
    assert r.status_code == 422
    said = {e["field"]: e["message"] for e in r.json()["errors"]}
    assert said["num_gpus"].startswith("unknown field: a request names it 'gpus'")
    assert said["zero_stage"].startswith("unknown field: a request names it 'zero'")
    r = client.post("/api/evaluate", json={**SCENARIO, "tensor_parallel": 4})  # no such setting anywhere
    assert {e["field"]: e["message"] for e in r.json()["errors"]}["tensor_parallel"] == (
        "unknown field (see /docs for the allowed names)")
