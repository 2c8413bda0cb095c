"""POST /api/explain and /api/what-if: the very objects `shardwise explain --json` / `what-if --json` print for
the same input (profile included), and bad input refused with a 4xx that names the field."""

from __future__ import annotations

import json

import pytest

from shardwise.cli.main import main as cli
from support.api_profile import FLAGS, SCENARIO, api_client, fitted_profile

@pytest.fixture(scope="module")
def client():
    return api_client()


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory):
    return fitted_profile(tmp_path_factory.mktemp("p"))


def cli_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert cli([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_explain_without_plans_is_the_clis_winner_against_its_runner_up(client, capsys):
    r = client.post("/api/explain", json=SCENARIO)
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, "explain", *FLAGS)
    assert r.json()["comparison"] is not None


def test_explain_two_plans_with_a_profile_that_applies(client, capsys, profile_file):
    # a as the text --a takes, b as an object with /api/evaluate's plan fields: both are the CLI's plans
    body = {**SCENARIO, "a": "tp=2,pp=1,zero=1", "b": {"tp": 4, "pp": 2, "zero": 1},
            "profile": json.loads(profile_file.read_text())}
    r = client.post("/api/explain", json=body)
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, "explain", *FLAGS, "--a", "tp=2,pp=1,zero=1", "--b", "tp=4,pp=2,zero=1",
                                "--profile", str(profile_file))
    comparison = r.json()["comparison"]
    assert comparison["a"]["calibration"].startswith("calibrated")
    assert comparison["a"]["strategy"]["tp"] == 2 and comparison["b"]["strategy"]["pp"] == 2


def test_what_if_with_a_profile_that_applies_on_one_side_only(client, capsys, profile_file):
    # The profile was measured on H100s: after gpu=h200 its compute scale no longer applies; each side says so.
    body = {**SCENARIO, "change": {"gpu": "h200"}, "profile": json.loads(profile_file.read_text())}
    r = client.post("/api/what-if", json=body)
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, "what-if", *FLAGS, "--change", "gpu=h200", "--profile", str(profile_file))
    before, after = r.json()["before"]["plans"][0], r.json()["after"]["plans"][0]
    assert before["calibration"].startswith("calibrated: compute ×")
    assert "compute scale not applied" in after["calibration"] and "h200" in after["calibration"]
    assert [c["input"] for c in r.json()["changes"]] == ["gpu"]


def test_what_if_change_as_text_with_constraints_and_top_k(client, capsys):
    body = {**SCENARIO, "change": "gpus=32,seq_len=8k", "top_k": 2, "constraints": {"max_pp": 1}}
    r = client.post("/api/what-if", json=body)
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, "what-if", *FLAGS, "--change", "gpus=32", "--change", "seq_len=8k",
                                "--top", "2", "--max-pp", "1")
    assert all(p["strategy"]["pp"] == 1 for p in r.json()["after"]["plans"])


@pytest.mark.parametrize("path, extra, status, field, words", [
    ("/api/explain", {"b": "tp=2"}, 422, "b", "needs a"),
    ("/api/explain", {"a": "tp=x"}, 422, "a", "tp='x'"),
    ("/api/explain", {"a": "warp=9"}, 422, "a", "unknown plan knob 'warp'"),
    ("/api/explain", {"a": {"tp": 0}}, 422, "a.tp", "greater than or equal to 1"),
    ("/api/explain", {"a": {"tq": 2}}, 422, "a.tq", "unknown field"),
    ("/api/explain", {"headroom": 1.5}, 422, "headroom", "less than 1"),
    ("/api/what-if", {}, 422, "change", "required"),
    ("/api/what-if", {"change": {"gpux": "h200"}}, 422, "change", "cannot change 'gpux'"),
    ("/api/what-if", {"change": ""}, 422, "change", "needs a change"),
    ("/api/what-if", {"change": "gpu=h200,gpu=b200"}, 422, "change", "changes gpu twice"),
    ("/api/what-if", {"change": {"gpu": "h200"}, "top_k": 0}, 422, "top_k", "greater than or equal to 1"),
])
def test_bad_input_is_a_4xx_naming_the_field(client, path, extra, status, field, words):
    r = client.post(path, json={**SCENARIO, **extra})
    assert r.status_code == status, r.text
    body = r.json()
    assert body["message"].startswith(f"{field}: ") and words in body["message"], body
    assert [e["field"] for e in body["errors"]] == [field]


@pytest.mark.parametrize("path, extra, words", [
    ("/api/what-if", {"change": {"gpu": "h999"}}, "unknown gpu 'h999'"),  # a value only the catalog can refuse
    ("/api/what-if", {"change": {"gpus": 16}}, "changes nothing"),
    ("/api/explain", {"model": "llama-3.1-405b", "gpus": 8}, "nothing to compare"),  # 405B in 8x80 GiB: nothing fits
])
def test_input_the_engine_refuses_is_a_400_with_its_reason(client, path, extra, words):
    r = client.post(path, json={**SCENARIO, **extra})
    assert r.status_code == 400 and words in r.json()["message"], r.text
