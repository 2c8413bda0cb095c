"""The launch script: torchrun's own parser reads its node and process counts, and the script
runs (with torchrun, srun and scontrol replaced by stand-ins that print their arguments) both
under Slurm and by hand."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import pytest

from shardwise.engine.export import ExportRefused

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")


def run(script: str, tmp_path, env: dict) -> list[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in {"torchrun": 'echo "TORCHRUN $*"', "srun": 'echo "SRUN $*"; shift 3; "$@"',
                       "scontrol": "printf 'node-a\\nnode-b\\n'"}.items():
        (bin_dir / tool).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    path = tmp_path / "launch.sh"
    path.write_text(script)
    done = subprocess.run(["bash", str(path), "train.py", "--flag"], capture_output=True, text=True, timeout=30,
                          env={"PATH": f"{bin_dir}:{os.environ['PATH']}", **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def torchrun_args(line: str):
    from torch.distributed.run import get_args_parser

    return get_args_parser().parse_args(shlex.split(line.removeprefix("TORCHRUN ")))


@pytest.mark.parametrize("gpus,per_node,hosts,per_host", [
    (64, 8, 8, 8),     # 64 GPUs on 8-GPU hosts: 8 hosts x 8
    (4, None, 1, 4),   # 4 GPUs of one host (build_cluster caps the node at the GPU count)
    (144, 72, 36, 4),  # NVL72 domains: hosts hold 4 GPUs, so 144 / 4 = 36 hosts
])
def test_launch_counts_parse_with_torchrun(scenario, tmp_path, gpus, per_node, hosts, per_host):
    sc = scenario("llama-3-8b", gpus, gpus_per_node=per_node, global_batch=gpus * 4, zero_stage=1)
    exported = sc.export("launch")
    assert subprocess.run(["bash", "-n"], input=exported.text, text=True).returncode == 0

    by_hand = run(exported.text, tmp_path, {"MASTER_ADDR": "10.0.0.1"})
    args = torchrun_args(by_hand[-1])
    assert (args.nnodes, args.nproc_per_node) == (str(hosts), str(per_host))
    assert args.rdzv_endpoint == "10.0.0.1:29500" and args.training_script == "train.py"
    assert args.training_script_args == ["--flag"]
    assert hosts * per_host == gpus

    (tmp_path / "slurm").mkdir()
    slurm = run(exported.text, tmp_path / "slurm", {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "node-[a-b]"})
    assert slurm[0] == f"SRUN --nodes={hosts} --ntasks-per-node=1 --gpus-per-node={per_host} torchrun " + \
        slurm[1].removeprefix("TORCHRUN ")
    args = torchrun_args(slurm[1])
    assert args.rdzv_endpoint == "node-a:29500" and args.rdzv_id == "42"
    if per_node and per_node > 8:
        assert any("4 GPUs per host" in w for w in exported.warnings)


def test_gpus_that_are_not_whole_hosts_are_refused(scenario):
    with pytest.raises(ExportRefused, match="whole number"):
        scenario("llama-3-8b", 12, gpus_per_node=8, global_batch=48, zero_stage=1).export("launch")


@pytest.mark.parametrize("fmt", ["megatron", "megatron-bridge", "accelerate", "launch"])
def test_the_host_refusal_names_the_format_asked_for(scenario, fmt):
    # 12 GPUs on 8-GPU hosts: 12 / 8 = 1.5 hosts. The formats that write host counts share launch's rule; the
    # refusal said "cannot export this plan to launch" for all of them.
    with pytest.raises(ExportRefused, match="whole number") as refused:
        scenario("llama-3-8b", 12, gpus_per_node=8, global_batch=48, zero_stage=1).export(fmt)
    assert refused.value.format == fmt
    assert str(refused.value).startswith(f"cannot export this plan to {fmt}:")
