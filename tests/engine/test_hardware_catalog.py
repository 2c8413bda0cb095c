"""The GPU and network catalog: ids, aliases, datasheet numbers, user-defined hardware and clear errors."""

import json

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.hardware_catalog import get_gpu, get_network, list_gpus, list_networks

REQUIRED_GPUS = ["a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h800", "h200", "b200", "gb200", "mi250x",
                 "mi300x", "mi325x", "l40s", "a10g", "rtx-4090"]
REQUIRED_NETWORKS = ["nvlink3", "nvlink4", "nvlink5", "ib-hdr", "ib-ndr", "ib-xdr", "roce-200g", "roce-400g",
                     "eth-100g", "eth-25g", "pcie4", "pcie5"]


def test_required_ids_and_sources():
    assert set(REQUIRED_GPUS) <= {g.id for g in list_gpus()}
    assert set(REQUIRED_NETWORKS) <= {n.id for n in list_networks()}
    for spec in [*list_gpus(), *list_networks()]:
        assert spec.source and spec.id == spec.id.lower()


@pytest.mark.parametrize("alias, gpu_id", [("H100", "h100-sxm"), ("H100 80GB", "h100-sxm"), ("h100-sxm5", "h100-sxm"),
                                           ("nvidia h100", "h100-sxm"), ("A100", "a100-80gb"),
                                           ("A100 40GB", "a100-40gb"), ("H100 PCIe", "h100-pcie"),
                                           ("GB200 NVL72", "gb200"), ("AMD MI300X", "mi300x"), ("RTX 4090", "rtx-4090")])
def test_aliases(alias, gpu_id):
    assert get_gpu(alias).id == gpu_id


def test_datasheet_numbers():
    # NVIDIA H100 datasheet (SXM): BF16 1,979 TFLOPS *with sparsity* -> 989 dense; FP8 3,958 sparse -> 1,979;
    # HBM3 3.35 TB/s; NVLink 900 GB/s total -> 450 GB/s each way.
    h100 = get_gpu("h100-sxm")
    assert (h100.bf16_tflops, h100.fp8_tflops, h100.hbm_bandwidth_gbs) == (989, 1979, 3350)
    assert h100.intra_node.bandwidth_gbs == 900 / 2 and h100.gpus_per_node == 8
    # NVIDIA A100 datasheet: BF16 312 TFLOPS dense, no FP8 -> FP8 runs at the BF16 rate.
    a100 = get_gpu("a100-80gb")
    assert a100.fp8_tflops is None and a100.peak_tflops("fp8") == 312
    # GB200 NVL72: 72 GPUs share one NVLink domain.
    assert get_gpu("gb200").gpus_per_node == 72
    # AMD MI300X datasheet: 1,307.4 TFLOPS BF16 dense, 192 GB HBM3.
    mi300x = get_gpu("mi300x")
    assert (mi300x.bf16_tflops, mi300x.memory_gib) == (1307.4, 192)
    # InfiniBand NDR: 400 Gb/s = 50 GB/s one way.
    assert get_network("ib-ndr").bandwidth_gbs == 400 / 8


def test_every_default_network_exists_and_dense_below_sparse_marketing():
    for gpu in list_gpus():
        assert get_network(gpu.default_network).id == gpu.default_network
        if gpu.fp8_tflops:
            assert gpu.fp8_tflops == pytest.approx(2 * gpu.bf16_tflops, rel=0.03)  # FP8 doubles BF16 on every part


def test_unknown_names_suggest_the_closest():
    with pytest.raises(ShardwiseInputError) as err:
        get_gpu("h1000")
    assert "unknown gpu 'h1000'" in str(err.value) and "h100-sxm" in str(err.value)
    with pytest.raises(ShardwiseInputError) as err:
        get_network("infiniband-ndx")
    assert "unknown network" in str(err.value) and "Did you mean" in str(err.value)


CUSTOM_GPU = {"id": "my-gpu", "name": "My accelerator", "memory_gib": 96, "bf16_tflops": 800, "fp8_tflops": 1600,
              "hbm_bandwidth_gbs": 4000, "intra_node": "nvlink4", "gpus_per_node": 4}


def test_user_defined_gpu_from_text_and_file(tmp_path):
    gpu = get_gpu(json.dumps(CUSTOM_GPU))
    assert (gpu.id, gpu.memory_gib, gpu.intra_node.id, gpu.gpus_per_node) == ("my-gpu", 96, "nvlink4", 4)
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({**CUSTOM_GPU, "intra_node": {"id": "my-link", "name": "x", "bandwidth_gbs": 200,
                                                             "latency_us": 2}}))
    assert get_gpu(str(path)).intra_node.bandwidth_gbs == 200


def test_user_defined_network():
    net = get_network('{"id": "my-net", "name": "Custom 800G", "bandwidth_gbs": 100, "latency_us": 5}')
    assert (net.id, net.bandwidth_gbs) == ("my-net", 100)


@pytest.mark.parametrize("update, field", [({"memory_gib": -1}, "memory_gib"), ({"bf16_tflops": "fast"}, "bf16_tflops"),
                                           ({"colour": "green"}, "colour")])
def test_user_defined_gpu_errors_list_the_bad_fields(update, field):
    with pytest.raises(ShardwiseInputError) as err:
        get_gpu(json.dumps({**CUSTOM_GPU, **update}))
    assert field in str(err.value) and "custom gpu is invalid" in str(err.value)


def test_user_defined_hardware_format_errors():
    for text, words in [('{"name": "x",', "not valid JSON"), ("missing.json", "does not exist"),
                        ('{"name": "x", "memory_gib": 8, "bf16_tflops": 1, "hbm_bandwidth_gbs": 1}', "intra_node")]:
        with pytest.raises(ShardwiseInputError) as err:
            get_gpu(text)
        assert words in str(err.value)
    with pytest.raises(ShardwiseInputError) as err:
        get_network('{"id": "n", "name": "n", "bandwidth_gbs": 0, "latency_us": 1}')
    assert "bandwidth_gbs" in str(err.value)
