"""Messages read as English at the edge cases (one sequence, one micro-batch)."""

import json

from shardwise.cli.main import main


def evaluate(capsys, *argv) -> dict:
    assert main(["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_one_sequence_and_one_micro_batch_are_singular(capsys):
    e = evaluate(capsys, "--global-batch", 1, "--pp", 2)  # DP = 8 / 2 = 4 > 1 sequence
    (batch,) = [v["message"] for v in e["violations"] if v["rule"] == "dp_microbatch_divides_global_batch"]
    assert batch.startswith("global batch 1 sequence is not divisible by DP·micro-batch = 4·1 = 4")
    e = evaluate(capsys, "--global-batch", 2, "--pp", 2, "--tp", 2)  # DP 2, one micro-batch of 1 each
    (few,) = [w["message"] for w in e["warnings"] if w["rule"] == "fewer_microbatches_than_stages"]
    assert few.startswith("only 1 micro-batch per step for PP=2 stages")


def test_partial_node_counts_read_as_english(capsys):
    e = evaluate(capsys, "--gpus-per-node", 7)  # 8 GPUs = 1 full node of 7 plus 1 GPU
    (msg,) = [w["message"] for w in e["warnings"] if w["rule"] == "gpus_not_multiple_of_node"]
    assert msg.startswith("8 GPUs are 1 full node of 7 plus 1 GPU: allowed")
