"""`shardwise validate` end to end: the table, the summary and the JSON contract."""

from __future__ import annotations

import json

from shardwise.cli.main import main


def test_validate_summary_for_one_source(capsys):
    assert main(["validate", "--source", "llm-foundry", "--summary", "--no-memory"]) == 0
    out = capsys.readouterr().out
    assert "llm-foundry" in out and "MAPE" in out and "expected error" in out


def test_validate_json_rows_carry_measured_and_predicted(capsys):
    assert main(["validate", "--source", "megatron-ptdp-2021", "--json", "--no-memory"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rows"] and {"measured_tokens_per_gpu", "predicted_tokens_per_gpu", "error"} <= set(data["rows"][0])
    row = data["rows"][0]
    assert abs(row["predicted_tokens_per_gpu"] / row["measured_tokens_per_gpu"] - 1 - row["error"]) < 1e-9


def test_validate_per_row_table_and_memory(capsys):
    assert main(["validate", "--source", "torchtitan"]) == 0
    out = capsys.readouterr().out
    assert "measured_runs.csv:" in out and "peak memory" in out


def test_unknown_source_is_a_clear_error(capsys):
    assert main(["validate", "--source", "nope"]) == 2
    assert "unknown source 'nope'" in capsys.readouterr().err


def test_validate_reports_spearman_and_top1_regret_per_group(capsys):
    assert main(["validate", "--source", "playbook-sweep", "--summary", "--no-memory"]) == 0
    out = capsys.readouterr().out
    assert "top-1 regret weighted by plans" in out
    lines = [line for line in out.splitlines()
             if line.startswith("    ") and "Ultra-Scale Playbook 8B (Llama-like) | h100-sxm x256" in line]
    assert len(lines) == 1 and "%" in lines[0] and "->" in lines[0]
    assert main(["validate", "--source", "playbook-sweep", "--json", "--no-memory"]) == 0
    data = json.loads(capsys.readouterr().out)
    # Every group's name whole (a fixed 85-character column cut "… | seq 4096 | bf16" to "… | bf1").
    assert all(f"    {g['group']} " in out for g in data["groups"])
    assert all({"spearman", "top1_regret", "top1_plan", "best_plan"} <= set(g) for g in data["groups"])
    assert 0 <= data["weighted_top1_regret"] < 1
