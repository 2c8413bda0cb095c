"""`--cuda-graphs`: a setup flag like --moe-dispatcher — one-line errors (exit 2) naming what is allowed,
carried in the JSON `setup`, named by what-if."""

import json

import pytest

from support.cli_runner import run

DENSE = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--tp", "2"]
MOE = ["--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", "8", "--ep", "8", "--global-batch", "64"]


@pytest.mark.parametrize("framework", ["fsdp", "deepspeed", "nanotron"])
def test_graphs_with_another_framework_is_one_line_exit_2(capsys, framework):
    code, out, err = run(capsys, "evaluate", *DENSE, "--framework", framework, "--cuda-graphs", "full-iteration")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"use --framework megatron with cuda graphs, or --cuda-graphs none with {framework}" in err


def test_an_unknown_mode_is_refused_with_the_choices(capsys):
    code, out, err = run(capsys, "evaluate", *DENSE, "--cuda-graphs", "full")
    assert code == 2 and out == ""
    assert "'none', 'per-layer', 'full-iteration'" in err


def test_the_json_setup_carries_the_mode_into_the_export(tmp_path, capsys):
    """recommend --json's `setup` is what export --from-plan reads back: the graphs survive the round trip."""
    code, out, err = run(capsys, "recommend", *DENSE[:6], "--cuda-graphs", "per-layer", "--json", "--top", "1")
    assert code == 0, err
    d = json.loads(out)
    assert d["setup"]["cuda_graphs"] == "per-layer"
    assert d["plans"][0]["strategy"]["recompute"] != "full"  # refused with per-layer graphs
    path = tmp_path / "plan.json"
    path.write_text(out)
    code, out, err = run(capsys, "export", "--format", "megatron", "--from-plan", path)
    assert code == 0, err
    assert "--cuda-graph-impl transformer_engine" in out


def test_the_text_setup_line_names_the_graphs(capsys):
    code, out, err = run(capsys, "evaluate", *MOE, "--moe-dispatcher", "deepep", "--cuda-graphs", "full-iteration")
    assert code == 0, err
    assert "deepep dispatcher, full-iteration CUDA graphs" in out


def test_what_if_changes_the_graphs(capsys):
    code, out, err = run(capsys, "what-if", *MOE[:6], "--global-batch", "64", "--moe-dispatcher", "deepep",
                         "--change", "cuda_graphs=full-iteration")
    assert code == 0, err
    assert "cuda_graphs: none → full-iteration" in out
    code, out, err = run(capsys, "what-if", *MOE[:6], "--change", "cuda_graphs=always")
    assert code == 2 and err.count("\n") == 1 and "'none', 'per-layer' or 'full-iteration'" in err
