"""`export --from-plan` must export the plan the file describes, with the setup it was made for."""

import json

import pytest

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]



def _save(tmp_path, capsys, name, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    path = tmp_path / name
    path.write_text(out)
    return path


def test_lora_rank_survives_recommend_json(tmp_path, capsys):
    # recommend --json had no lora_rank, so the export fell back to rank 16 (peft.dim=16).
    path = _save(tmp_path, capsys, "rec.json", "recommend", *SCENARIO, "--mode", "lora", "--lora-rank", 64,
                 "--top", 1)
    assert json.loads(path.read_text())["setup"]["lora_rank"] == 64
    code, out, err = run(capsys, "export", "--format", "megatron-bridge", "--from-plan", path)
    assert code == 0, err
    assert "peft.dim=64" in out and "peft.dim=16" not in out


@pytest.mark.parametrize("flag", [["--tp", "4"], ["--no-sp"], ["--recompute", "full"], ["--zero", "0"]])
def test_plan_flags_beside_from_plan_are_refused(tmp_path, capsys, flag):
    # They were silently ignored: the file's plan was exported.
    path = _save(tmp_path, capsys, "ev.json", "evaluate", *SCENARIO, "--tp", 2)
    code, out, err = run(capsys, "export", "--format", "megatron", "--from-plan", path, *flag)
    assert code == 2 and out == "" and err.count("\n") == 1 and flag[0] in err


def test_evaluate_json_carries_its_setup(tmp_path, capsys):
    # evaluate --json states the setup it ran under, so an 8k plan exports at 8,192 tokens as given
    path = _save(tmp_path, capsys, "ev.json", "evaluate", *SCENARIO, "--tp", 2, "--seq-len", "8k")
    code, out, err = run(capsys, "export", "--format", "megatron", "--from-plan", path)
    assert code == 0, err
    assert "--seq-length 8192" in out


def test_evaluate_json_without_setup_at_another_sequence_length_is_refused(tmp_path, capsys):
    # an evaluate object without `setup` (as printed before it carried one): the export would use the
    # default 4,096 tokens for an 8k plan, so it is refused and the flag to add is named
    import json

    path = _save(tmp_path, capsys, "ev.json", "evaluate", *SCENARIO, "--tp", 2, "--seq-len", "8k")
    plan = json.loads(path.read_text())
    del plan["setup"]
    path.write_text(json.dumps(plan))
    code, out, err = run(capsys, "export", "--format", "megatron", "--from-plan", path)
    assert code == 2 and "8,192" in err and "--seq-len 8192" in err
    code, out, err = run(capsys, "export", "--format", "megatron", "--from-plan", path, "--seq-len", "8k")
    assert code == 0, err
    assert "--seq-length 8192" in out


def test_exports_without_json_is_refused(capsys):
    # --exports only adds to the JSON output; without --json it did nothing, silently.
    code, out, err = run(capsys, "recommend", *SCENARIO, "--exports")
    assert code == 2 and out == "" and "--json" in err
