"""Dev-time check: run Megatron-LM's real parse_args + validate_args on exported arguments.

Needs a Megatron-LM checkout at the tag of the installed megatron-core (see
make_megatron_lm_flags.py); the tests use the recorded option table instead.

    python check_megatron_lm_validate_args.py Megatron-LM

validate_args reads the GPU's compute capability; it is stubbed as Hopper (9.0), the
generation the CUDA_DEVICE_MAX_CONNECTIONS rules in the exports are written for.
"""

from __future__ import annotations

import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(__file__))
import make_megatron_lm_flags  # noqa: E402  (its import stubs)

CASES = [
    ("llama-3-70b", 64, dict(seq_len=8192, global_batch=512), dict(tp=8, pp=2, vpp=5, zero_stage=1, recompute="selective")),
    ("llama-3-70b", 48, dict(global_batch=256), dict(tp=8, pp=3, zero_stage=1, recompute="full")),
    ("deepseek-v3", 256, dict(global_batch=1024, precision="fp8"), dict(tp=2, pp=8, ep=16, zero_stage=1, recompute="full")),
    ("llama-3-8b", 16, dict(seq_len=16384, global_batch=64), dict(cp=2, zero_stage=3, hsdp_replicas=2, recompute="none")),
    ("mixtral-8x7b", 64, dict(global_batch=256), dict(tp=2, ep=8, zero_stage=1, recompute="selective")),
]


def main(checkout: str) -> None:
    warnings.filterwarnings("ignore")
    sys.meta_path.insert(0, make_megatron_lm_flags._Stub())
    sys.path.insert(0, checkout)
    torch.cuda.get_device_properties = lambda *a, **k: type("Hopper", (), {"major": 9, "minor": 0})()
    torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
    from megatron.training.arguments import parse_args, validate_args

    from shardwise.engine.export.megatron import arguments
    from shardwise.engine.export.plan import ExportPlan
    from shardwise.engine.inputs import build_cluster
    from shardwise.engine.model_catalog import get_model
    from shardwise.engine.strategy import Strategy
    from shardwise.engine.training import TrainingSetup

    for name, gpus, setup, strategy in CASES:
        plan = ExportPlan(get_model(name), build_cluster("h100-sxm", gpus), TrainingSetup(**setup), Strategy(**strategy))
        os.environ.update(WORLD_SIZE=str(gpus), RANK="0", LOCAL_RANK="0")
        if strategy["zero_stage"] >= 2:
            os.environ.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
        else:
            os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
        sys.argv = ["pretrain_gpt.py", *arguments(plan)]
        try:
            args = parse_args()
            validate_args(args, {})
            print(f"OK   {name} on {gpus}: DP {args.data_parallel_size}, VPP {args.virtual_pipeline_model_parallel_size}, "
                  f"global batch {args.global_batch_size}")
        except BaseException as exc:  # report every case
            print(f"FAIL {name} on {gpus}: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main(sys.argv[1])
