"""Names engineers write in chat and issues, resolved by the catalogs (so the CLI accepts them too).
Each expected id is what the name says: "A100-40G" is the 40 GB A100, "DSv3" is DeepSeek-V3."""

import pytest

from shardwise.engine.hardware_catalog import get_gpu
from shardwise.engine.model_catalog import get_model


@pytest.mark.parametrize("written, gpu_id", [
    ("A100-40G", "a100-40gb"), ("A100 40GB", "a100-40gb"), ("a100-80g", "a100-80gb"), ("A100 80G", "a100-80gb"),
    ("H100 80G", "h100-sxm"), ("H100 80GB HBM3", "h100-sxm"), ("MI300", "mi300x"),
])
def test_gpu_spellings(written, gpu_id):
    assert get_gpu(written).id == gpu_id


@pytest.mark.parametrize("written, name", [
    ("DSv3", "DeepSeek-V3"), ("ds-v3", "DeepSeek-V3"), ("DeepSeek V3", "DeepSeek-V3"),
    ("llama3 70b", "Llama-3-70B"), ("L3-8B", "Llama-3-8B"), ("L3.1-405B", "Llama-3.1-405B"),
    ("l3.1-70b", "Llama-3.1-70B"), ("L3.3-70B", "Llama-3.3-70B"),
    ("mixtral 8x22", "Mixtral-8x22B"), ("Mixtral 8x7", "Mixtral-8x7B"),
])
def test_model_nicknames(written, name):
    assert get_model(written).name == name
