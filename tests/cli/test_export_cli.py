"""`shardwise export` and recommend's --export-dir / --exports, through the real entry point."""

from __future__ import annotations

import json

import pytest

from shardwise.engine.export import FORMATS
from support.cli_runner import run

SCENARIO = ["--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "16"]



def test_export_prints_the_file_and_the_json_header_on_stderr(capsys):
    # 16 GPUs, TP 2: DP 8; global batch 256, micro-batch 2 -> grad-accum 256 / (8·2) = 16.
    code, out, err = run(capsys, "export", "--format", "deepspeed", *SCENARIO, "--tp", "2", "--no-sp", "--micro-batch", "2",
                         "--global-batch", "256", "--framework", "deepspeed")
    assert code == 0
    config = json.loads(out)
    assert (config["train_batch_size"], config["gradient_accumulation_steps"]) == (256, 16)
    assert config["tensor_parallel"] == {"autotp_size": 2}
    assert err.startswith("// DeepSpeed config") and "TP=2 PP=1 VPP=1 CP=1 EP=1 ETP=1 DP=8" in err


def test_export_to_a_file(capsys, tmp_path):
    target = tmp_path / "job.toml"
    code, out, err = run(capsys, "export", "--format", "torchtitan", *SCENARIO, "--zero", "3", "--framework", "fsdp",
                         "-o", str(target))
    assert code == 0 and out == "" and f"wrote {target}" in err
    assert "data_parallel_shard_degree = 16" in target.read_text()


def test_a_refusal_is_one_line_and_exit_2(capsys):
    code, out, err = run(capsys, "export", "--format", "nanotron", *SCENARIO, "--zero", "3")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("shardwise: error: cannot export this plan to nanotron:")


def test_export_needs_a_cluster_or_a_plan(capsys):
    code, _, err = run(capsys, "export", "--format", "launch", "--model", "llama-3-8b")
    assert code == 2 and "--gpu and --gpus (or --from-plan FILE)" in err


def test_from_plan_reads_recommend_output(capsys, tmp_path):
    code, out, _ = run(capsys, "recommend", *SCENARIO, "--top", "2", "--json")
    assert code == 0
    saved = tmp_path / "rec.json"
    saved.write_text(out)
    plans = json.loads(out)["plans"]
    for index, plan in enumerate(plans):
        s = plan["strategy"]
        code, script, _ = run(capsys, "export", "--format", "megatron", "--from-plan", str(saved),
                              "--plan-index", str(index))
        assert code == 0
        assert f"--tensor-model-parallel-size {s['tp']}" in script and f"--context-parallel-size {s['cp']}" in script
        assert f"DP={s['dp']}" in script and f"grad-accum {s['grad_accum']}" in script
    # one plan object on its own (cluster and model come with it; the setup from the flags)
    single = tmp_path / "plan.json"
    single.write_text(json.dumps(plans[0]))
    setup = json.loads(out)["setup"]
    code, script, _ = run(capsys, "export", "--format", "launch", "--from-plan", str(single),
                          "--global-batch", str(setup["global_batch"]), "--seq-len", str(setup["seq_len"]))
    assert code == 0 and "NNODES=2" in script


def test_plan_index_counts_from_0_and_says_which_plan_of_the_table(capsys, tmp_path):
    """recommend's table numbers plans from #1 and --plan-index counts from 0: `--plan-index 1` is #2, and the
    note names it with the table's own label so a user who meant "#1" sees the mismatch at once."""
    code, out, _ = run(capsys, "recommend", *SCENARIO, "--top", "2", "--json")
    saved = tmp_path / "rec.json"
    saved.write_text(out)
    second = json.loads(out)["plans"][1]["strategy"]
    code, script, err = run(capsys, "export", "--format", "megatron", "--from-plan", str(saved), "--plan-index", "1")
    assert code == 0 and f"--context-parallel-size {second['cp']}" in script
    assert "note: exported plan #2 of 2 in the file (" in err and f"DP={second['dp']}" in err
    assert "--plan-index 1 (counted from 0)" in err
    code, _, err = run(capsys, "export", "--format", "megatron", "--from-plan", str(saved), "--plan-index", "2")
    assert code == 2 and "the file has 2 plans, --plan-index 0..1 (counted from 0: 0 is #1" in err


@pytest.mark.parametrize("content,words", [
    ("not json", "is not JSON"), ("[1, 2]", "holds no plan"), ('{"plans": []}', "has no plans"),
    ('{"x": 1}', "neither 'plans'"),
])
def test_bad_plan_files(capsys, tmp_path, content, words):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, _, err = run(capsys, "export", "--format", "launch", "--from-plan", str(bad))
    assert code == 2 and words in err and "Traceback" not in err


def test_recommend_writes_every_format_for_the_top_plan(capsys, tmp_path):
    target = tmp_path / "exports"
    code, out, err = run(capsys, "recommend", *SCENARIO, "--top", "1", "--export-dir", str(target))
    assert code == 0 and "wrote" in err
    readme = (target / "README.txt").read_text()
    for fmt in FORMATS:
        assert f"{fmt}: " in readme
    written = {p.name for p in target.iterdir()}
    assert "launch.sh" in written and "megatron_lm.sh" in written


def test_recommend_json_carries_exports_when_asked(capsys):
    code, out, _ = run(capsys, "recommend", *SCENARIO, "--top", "2", "--json", "--exports")
    payload = json.loads(out)
    assert code == 0
    for plan in payload["plans"]:
        assert set(plan["exports"]) == set(FORMATS)
        for fmt, entry in plan["exports"].items():
            assert ("refused" in entry) != ("text" in entry)
    code, out, _ = run(capsys, "recommend", *SCENARIO, "--top", "1", "--json")
    assert "exports" not in json.loads(out)["plans"][0]


def test_from_plan_takes_a_what_if_files_after_side(capsys, tmp_path):
    """`what-if --json > wi.json` then `export --from-plan wi.json` was "has neither 'plans' nor 'strategy'": the
    recommendation after the change is the one a user goes on to run, so it is exported, and the note says so."""
    code, out, _ = run(capsys, "what-if", *SCENARIO, "--change", "gpu=h200", "--json")
    saved = tmp_path / "wi.json"
    saved.write_text(out)
    after = json.loads(out)["after"]["plans"][0]["strategy"]
    code, script, err = run(capsys, "export", "--format", "megatron", "--from-plan", str(saved))
    assert code == 0, err
    assert "# cluster: 16 x h200" in script and f"DP={after['dp']}" in script
    assert "note: exported plan #1 of 3 in the what-if's 'after' recommendation (" in err
