"""`shardwise models`, `shardwise gpus`, `shardwise networks` through the real entry point."""

import json

import pytest

from support.cli_runner import run



def test_models_table_lists_the_catalog(capsys):
    code, out, _ = run(capsys, "models")
    assert code == 0
    assert "llama-3.1-70b" in out and "deepseek-v3" in out and "70.55B" in out


def test_models_json_contract(capsys):
    code, out, _ = run(capsys, "models", "--json")
    records = json.loads(out)
    assert code == 0 and len(records) >= 30
    by_id = {r["id"]: r for r in records}
    # Published: Llama-3.1-8B 8,030,261,248 (HF safetensors metadata); Mixtral 46.7B total / 12.9B active.
    assert by_id["llama-3.1-8b"]["params"] == 8_030_261_248
    assert by_id["mixtral-8x7b"]["params"] == pytest.approx(46.7e9, rel=0.005)
    assert by_id["mixtral-8x7b"]["active_params"] == pytest.approx(12.9e9, rel=0.005)


def test_one_model_by_alias(capsys):
    code, out, _ = run(capsys, "models", "meta-llama/Llama-3.1-70B", "--json")
    record = json.loads(out)
    assert code == 0 and record["id"] == "llama-3.1-70b" and record["num_layers"] == 80
    code, out, _ = run(capsys, "models", "qwen3-30b-a3b")
    assert code == 0 and "num_layers" in out and "48" in out and "source" in out


def test_gpus_table_and_json(capsys):
    code, out, _ = run(capsys, "gpus")
    assert code == 0 and "h100-sxm" in out and "mi300x" in out
    code, out, _ = run(capsys, "gpus", "--json")
    records = {r["id"]: r for r in json.loads(out)}
    assert {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h800", "h200", "b200", "gb200", "mi300x"} <= set(records)
    assert records["h100-sxm"]["memory_gib"] == 80 and records["h100-sxm"]["intra_node"] == "nvlink4"


def test_one_gpu_and_networks(capsys):
    code, out, _ = run(capsys, "gpus", "H100", "--json")
    assert code == 0 and json.loads(out)["id"] == "h100-sxm"
    code, out, _ = run(capsys, "networks", "--json")
    assert code == 0 and "ib-ndr" in {r["id"] for r in json.loads(out)}
    code, out, _ = run(capsys, "networks", "ib-ndr")
    assert code == 0 and "bandwidth_gbs" in out


@pytest.mark.parametrize("argv, words", [(["models", "llama-9"], "unknown model 'llama-9'"),
                                         (["gpus", "h1000"], "unknown gpu 'h1000'"),
                                         (["networks", "ndx"], "unknown network 'ndx'"),
                                         (["gpus", '{"name": "x"'], "not valid JSON")])
def test_bad_names_exit_2_with_one_line(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_count_just_under_a_billion_reads_in_billions():
    # Gemma-3-1B has 999.9 M parameters (its catalog row) and the table printed "1,000M": the unit is chosen on
    # the rounded figure, so 999,900,000 -> "1.00B" and 494,032,768 (Qwen2.5-0.5B) stays "494M".
    from shardwise.cli.catalog import _billions

    assert _billions(999_900_000) == "1.00B"
    assert _billions(494_032_768) == "494M"
    assert _billions(999_400_000) == "999M"


def test_a_models_record_reads_as_text(capsys):
    # Llama-3.1-70B: 70,553,706,496 parameters (the safetensors index of meta-llama/Llama-3.1-70B), RMSNorm.
    from support.cli_runner import run

    code, out, err = run(capsys, "models", "llama-3.1-70b")
    assert code == 0, err
    lines = {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines() if line.strip()}
    assert lines["params"] == "70,553,706,496" and lines["norm"] == "rmsnorm"
    assert "norm_bias" not in lines  # RMSNorm has no bias; the field read True
    assert lines["aliases"].startswith("meta-llama/") and "[" not in lines["aliases"]
    code, out, err = run(capsys, "models", "llama-3.1-70b", "--json")
    assert json.loads(out)["params"] == 70_553_706_496 and "norm_bias" in json.loads(out)  # the record is whole


def test_gpu_and_network_records_read_as_text(capsys):
    # H100 SXM: 989 / 1,979 dense BF16 / FP8 TFLOP/s and 3,350 GB/s HBM3 (NVIDIA datasheet); NDR: 50 GB/s per GPU.
    from support.cli_runner import run

    code, out, err = run(capsys, "gpus", "h100")
    lines = {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines() if line.strip()}
    assert (lines["bf16_tflops"], lines["fp8_tflops"], lines["hbm_bandwidth_gbs"]) == ("989", "1,979", "3,350")
    assert "[" not in lines["aliases"]
    code, out, err = run(capsys, "networks", "ib-ndr")
    assert "bandwidth_gbs   50\n" in out


def test_a_partial_name_lists_the_family(capsys):
    """`shardwise models llama-3.1` said "unknown model"; it lists the catalog ids containing it (the catalog has
    Llama 3.1 at 8B, 70B and 405B: `shardwise models`), and a word matching nothing is still the one-line error."""
    code, out, err = run(capsys, "models", "llama-3.1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "models whose id or alias contains 'llama-3.1' (`shardwise models ID` shows one in full):"
    assert [line.split()[0] for line in lines[3:]] == ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"]
    code, out, err = run(capsys, "models", "llama-3.1", "--json")
    assert code == 0 and [m["id"] for m in json.loads(out)] == ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"]
    code, out, err = run(capsys, "models", "zzz")
    assert code == 2 and err.startswith("shardwise: error: unknown model 'zzz'")
