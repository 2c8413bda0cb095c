"""HSDP from the CLI: `--hsdp R` on evaluate/export, a constraint on recommend, and the plan
labels show it (an HSDP plan read like plain ZeRO-2/3)."""

import json

from shardwise.cli.main import main
from shardwise.engine.plan_label import plan_label
from shardwise.engine.plan_text import parse_plan
from shardwise.engine.results import StrategySummary
from shardwise.present import plan_text

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16"]


def run_json(capsys, *argv):
    code = main([str(a) for a in argv] + ["--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_evaluate_takes_hsdp(capsys):
    e = run_json(capsys, "evaluate", *SCENARIO, "--tp", 2, "--zero", 3, "--hsdp", 2)
    assert e["strategy"]["hsdp_replicas"] == 2 and e["valid"]
    e = run_json(capsys, "evaluate", *SCENARIO, "--tp", 2, "--zero", 1, "--hsdp", 2)
    assert [v["rule"] for v in e["violations"]] == ["hsdp_requires_sharding"]  # HSDP needs ZeRO-2/3


def test_recommend_pins_hsdp(capsys):
    r = run_json(capsys, "recommend", *SCENARIO, "--hsdp", 2, "--top", 2)
    assert r["plans"] and all(p["strategy"]["hsdp_replicas"] == 2 for p in r["plans"])
    assert all(p["strategy"]["zero_stage"] in (2, 3) for p in r["plans"])


def test_labels_and_plan_text_carry_hsdp():
    s = StrategySummary(tp=2, pp=1, vpp=1, cp=1, ep=1, etp=1, dp=8, zero_stage=3, micro_batch=1, grad_accum=8,
                        recompute="full", sequence_parallel=True, hsdp_replicas=2)
    assert "HSDP=2" in plan_label(s, "cli") and "HSDP=2" in plan_label(s, "tools")
    assert parse_plan(plan_text(s)).hsdp_replicas == 2  # explain's --a round trip
