"""`--mode dpo|grpo|ppo[-lora|-qlora]` through the CLI: JSON keys, text, what-if, exports, bad input.
Expectations are the contract's (README, docs/post_training.md) and the issue's acceptance list."""

from __future__ import annotations

import json

import pytest

from shardwise.cli.main import main

BASE = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]
PLAN = ["--tp", "2", "--zero", "1", "--micro-batch", "2"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def evaluate_json(capsys, *extra):
    code, out, err = run(capsys, "evaluate", *BASE, *PLAN, "--seq-len", "4096", "--global-batch", "256", *extra, "--json")
    assert code == 0, err
    return json.loads(out)


def test_acceptance_dpo_and_grpo_against_full_on_one_plan(capsys):
    full = evaluate_json(capsys, "--mode", "full")
    dpo = evaluate_json(capsys, "--mode", "dpo")
    assert any(k.startswith("weights.reference") for k in dpo["memory"]["details_gib"])
    assert dpo["time"]["step_s"] > full["time"]["step_s"]
    grpo = evaluate_json(capsys, "--mode", "grpo")  # seq 4096 = 512 (default prompt) + 3,584 response
    assert grpo["time"]["rollout_s"] > 0 and grpo["time"]["reference_s"] > 0
    assert grpo["time"]["step_s"] > full["time"]["step_s"]
    assert grpo["memory"]["peak_phase"] in ("policy_training", "rollout", "reference_forward")
    assert grpo["post_training"]["response_len"] == 3584
    assert set(grpo["post_training"]["defaults_used"]) == {"prompt_len", "group_size", "inference_tp"}
    assert full["post_training"] is None and full["time"]["rollout_s"] == 0


def test_text_output_names_terms_phase_and_defaults(capsys):
    code, out, err = run(capsys, "evaluate", *BASE, *PLAN, "--global-batch", "256", "--mode", "grpo",
                         "--response-len", "1k")
    assert code == 0, err
    assert "rollout generation" in out and "reference forward" in out
    assert "of which reference model weights" in out and "of which rollout KV cache" in out
    assert "peak during" in out and "defaults prompt length, group size, inference TP" in out


def test_rollout_inputs_without_a_generating_mode_are_one_clear_line(capsys):
    code, out, err = run(capsys, "evaluate", *BASE, "--mode", "dpo", "--response-len", "1024")
    assert code == 2 and err.count("\n") == 1 and "grpo or ppo" in err


def test_inconsistent_lengths_and_bad_inference_tp_are_clear(capsys):
    code, _, err = run(capsys, "evaluate", *BASE, "--mode", "grpo", "--seq-len", "1024", "--prompt-len", "512",
                       "--response-len", "1024")
    assert code == 2 and "prompt + response" in err
    code, _, err = run(capsys, "evaluate", *BASE, "--mode", "ppo", "--inference-tp", "3")
    assert code == 2 and "inference TP 3" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_:  # argparse's own choice check
        run(capsys, "evaluate", *BASE, "--mode", "rlhf")
    assert exit_.value.code == 2 and "dpo-lora" in capsys.readouterr().err


def test_what_if_switches_to_grpo(capsys):
    code, out, err = run(capsys, "what-if", *BASE, "--seq-len", "1024", "--global-batch", "512", "--change", "mode=grpo",
                         "--json")
    assert code == 0, err
    w = json.loads(out)
    assert {"input": "mode", "before": "full", "after": "grpo"} in w["changes"]
    assert w["after"]["plans"][0]["time"]["rollout_s"] > 0
    assert w["tokens_per_s_after"] < w["tokens_per_s_before"]


def test_exports_say_where_there_is_no_post_training_mode(capsys):
    common = [*BASE, "--mode", "grpo", "--global-batch", "640", "--zero", "3", "--micro-batch", "2",
              "--framework", "fsdp"]
    code, _, err = run(capsys, "export", "--format", "torchtitan", *common)
    assert code == 2 and "no GRPO mode" in err
    code, out, err = run(capsys, "export", "--format", "fsdp", *common)
    assert code == 0, err
    assert "actor_rollout_ref.rollout.n=5" in out + err and "data.train_batch_size=128" in out + err
    code, out, err = run(capsys, "export", "--format", "deepspeed", *BASE, "--mode", "dpo", "--global-batch", "512",
                         "--zero", "3", "--micro-batch", "2", "--framework", "deepspeed")
    assert code == 0, err
    assert "per_device_train_batch_size=1 (pairs)" in out + err


def test_export_from_a_recommend_json_keeps_the_rollout_shape(capsys, tmp_path):
    code, out, err = run(capsys, "recommend", *BASE, "--global-batch", "640", "--mode", "grpo", "--response-len", "1k",
                         "--group-size", "8", "--framework", "fsdp", "--top", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["setup"]["post_training"]["response_len"] == 1024
    path = tmp_path / "rec.json"
    path.write_text(out)
    code, out, err = run(capsys, "export", "--format", "fsdp", "--from-plan", path)
    assert code == 0, err
    assert "data.max_response_length=1024" in out + err and "actor_rollout_ref.rollout.n=8" in out + err


def test_reference_in_fp32_holds_four_bytes_per_parameter(capsys):
    # Llama-3.1-8B, TP 2, ZeRO-1: Ψ = 8,030,261,248 parameters, 4 bytes each, split over 2 GPUs.
    fp32 = evaluate_json(capsys, "--mode", "dpo", "--reference-dtype", "fp32")
    assert abs(fp32["memory"]["details_gib"]["weights.reference"] - 4 * 8_030_261_248 / 2 / 2**30) < 1e-3 * 15
    code, _, err = run(capsys, "evaluate", *BASE, "--reference-dtype", "fp32")
    assert code == 2 and "dpo, grpo or ppo" in err


def test_the_rollout_lines_count_in_words(capsys):
    from support.cli_runner import run as cli

    # 640 sequences / group size 5 (verl's GRPO example n=5) = 128 whole prompts; printed "128.0 prompts", "1 wave(s)".
    code, out, err = cli(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                         "--global-batch", "640", "--mode", "grpo", "--framework", "fsdp", "--zero", "3")
    assert code == 0, err
    assert "GRPO co-located: 128 prompts x 5 samples," in out and "wave(s)" not in out
    # 1,024 sequences / 5 = 204.8 prompts: the whole-prompt batches beside it are 204 x 5 = 1,020 and 205 x 5 = 1,025.
    code, out, err = cli(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                         "--global-batch", "1024", "--mode", "grpo", "--framework", "fsdp", "--zero", "3")
    assert "204.8 prompts per step; whole prompts: --global-batch 1,020 or 1,025" in out
    # PPO samples once per prompt (verl rollout.n: 1)
    code, out, err = cli(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                         "--global-batch", "256", "--mode", "ppo", "--framework", "fsdp", "--zero", "3")
    assert "256 prompts x 1 sample," in out
