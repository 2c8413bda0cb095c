"""`shardwise gpus ID --json` prints a record that `--gpu FILE` reads back: the way to define a GPU is to dump a
catalog one and edit it. Before, its `intra_node_bandwidth_gbs` (printed beside the link's id) was refused as
an extra field, so no dumped record loaded."""

import json

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.hardware_catalog import get_gpu
from support.cli_runner import run


def dumped(capsys, gpu: str) -> dict:
    code, out, err = run(capsys, "gpus", gpu, "--json")
    assert code == 0, err
    return json.loads(out)


def evaluate(capsys, gpu: str) -> dict:
    code, out, err = run(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", gpu, "--gpus", "8", "--tp", "8",
                         "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_dumped_record_evaluates_as_the_catalog_gpu(capsys, tmp_path):
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(dumped(capsys, "h100")))
    # Invariant: the same fields, the same prediction.
    assert evaluate(capsys, str(path))["time"] == evaluate(capsys, "h100-sxm")["time"]


def test_an_edited_link_bandwidth_is_the_links_bandwidth(capsys, tmp_path):
    record = dumped(capsys, "h100")
    assert record["intra_node_bandwidth_gbs"] == 450  # NVLink 4: 900 GB/s bidirectional = 450 one way
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({**record, "intra_node_bandwidth_gbs": 225}))
    gpu = get_gpu(str(path))
    assert (gpu.intra_node.id, gpu.intra_node.bandwidth_gbs) == ("nvlink4", 225)
    # TP=8 inside one node: half the link bandwidth, more exposed TP communication.
    assert evaluate(capsys, str(path))["time"]["tp_comm_s"] > evaluate(capsys, "h100-sxm")["time"]["tp_comm_s"]


def test_a_bad_link_bandwidth_is_named(capsys):
    record = {**dumped(capsys, "h100"), "intra_node_bandwidth_gbs": 0}
    with pytest.raises(ShardwiseInputError, match="intra_node_bandwidth_gbs"):
        get_gpu(json.dumps(record))
