"""The FSDP2 export is a script that runs: two CPU processes under torchrun (gloo) train one
step of a tiny stand-in model with the plan's mesh, ZeRO stage, mixed precision, recompute and
gradient accumulation; its constants are the plan's numbers."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from shardwise.engine.export import ExportRefused

RUNNER = Path(__file__).with_name("fsdp_runner.py")


def constants(text: str) -> dict:
    tree = ast.parse(text)
    return {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.isupper() and isinstance(node.value, ast.Constant)}


@pytest.mark.slow  # torchrun with two processes: ~8 s each
@pytest.mark.parametrize("zero,recompute,replicas,want_mesh,want_wrapper", [
    (3, "full", 1, [2], "FSDPTinyCausalLM"),        # fully_shard over 2 ranks, blocks checkpointed
    (2, "none", 2, [2, 1], "FSDPTinyCausalLM"),     # HSDP: 2 replicas x 1 shard
    (0, "selective", 1, None, "DistributedDataParallel"),
])
def test_fsdp_script_runs_on_two_cpu_processes(scenario, tmp_path, zero, recompute, replicas, want_mesh, want_wrapper):
    # 2 GPUs, global batch 8, micro-batch 2: DP 2, grad-accum 8 / (2·2) = 2.
    sc = scenario("llama-3-8b", 2, global_batch=8, micro_batch=2, zero_stage=zero, recompute=recompute,
                  hsdp_replicas=replicas, framework="fsdp")
    exported = sc.export("fsdp")
    consts = constants(exported.text)
    assert (consts["DATA_PARALLEL"], consts["MICRO_BATCH"], consts["GRAD_ACCUM"]) == (2, 2, 2)
    assert (consts["ZERO_STAGE"], consts["HSDP_REPLICAS"], consts["RECOMPUTE"]) == (zero, replicas, recompute)
    assert consts["SEQ_LEN"] == sc.setup.seq_len and consts["MODEL"] == "meta-llama/Meta-Llama-3-8B"

    script = tmp_path / exported.filename
    script.write_text(exported.text)
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           str(RUNNER), str(script)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "step 0 loss" in done.stdout
    seen = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RUNNER"))[len("RUNNER"):])
    assert seen["wrapper"] == want_wrapper
    if want_mesh:
        assert seen["mesh_shape"] == want_mesh
    assert seen["checkpointed"] == (recompute == "full")


def test_zero1_runs_as_zero2(scenario):
    consts = constants(scenario("llama-3-8b", 8, zero_stage=1, framework="fsdp").export("fsdp").text)
    assert consts["ZERO_STAGE"] == 2


@pytest.mark.parametrize("kwargs,reason", [
    (dict(tp=2, zero_stage=3), "TP=2"), (dict(pp=2, zero_stage=3), "PP=2"),
    (dict(zero_stage=3, precision="fp8"), "FP8"),
])
def test_fsdp_script_refusals(scenario, kwargs, reason):
    with pytest.raises(ExportRefused, match=reason):
        scenario("llama-3-8b", 8, framework="fsdp", **kwargs).export("fsdp")
