"""Load one exported DeepSpeed config the way deepspeed.initialize would, in a fresh process.

Run by test_deepspeed.py as `python deepspeed_probe.py` with a JSON request on stdin:
{"config": {...}, "world_size": N, "tp": .., "pp": .., "cp": ..}. torch.distributed runs on
its "fake" backend with the plan's world size (CPU, one process), and the model-parallel
unit is the one the run would pass: DeepSpeed's own AutoTP groups, its pipeline grid, or its
Ulysses groups. Prints what DeepSpeedConfig made of the file, and every key it looked up.
"""

from __future__ import annotations

import json
import sys
import warnings


class Recording(dict):
    """A dict that notes which keys are looked up (DeepSpeed ignores the ones it never asks for)."""

    def __init__(self, data, seen, prefix=""):
        super().__init__(data)
        self.seen, self.prefix = seen, prefix

    def _note(self, key):
        self.seen.add(self.prefix + str(key))

    def __getitem__(self, key):
        self._note(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._note(key)
        return super().get(key, default)

    def __contains__(self, key):
        self._note(key)
        return super().__contains__(key)

    def keys(self):
        return _Keys(self)


class _Keys:
    def __init__(self, owner):
        self.owner = owner

    def __contains__(self, key):
        return key in self.owner

    def __iter__(self):
        return iter(dict.keys(self.owner))

    def __len__(self):
        return len(self.owner)


# Sections DeepSpeed reads key by key with .get / [] (not pydantic models, which reject
# unknown keys themselves): activation checkpointing, AutoEP.
RECORDED_SECTIONS = ("activation_checkpointing", "expert_parallel")


def main() -> None:
    warnings.filterwarnings("ignore")
    request = json.load(sys.stdin)
    import torch.distributed as tdist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    tdist.init_process_group("fake", store=FakeStore(), rank=0, world_size=request["world_size"])
    import importlib

    import deepspeed.comm as dist
    from deepspeed.runtime.config import DeepSpeedConfig

    deepspeed_torch_backend = importlib.import_module("deepspeed.comm.torch")  # the package's `torch` is torch

    # DeepSpeed's CPU backend JIT-compiles a shared-memory all-reduce kernel when it starts
    # (a minute, and a compiler); nothing here communicates, so it is not built.
    deepspeed_torch_backend.build_shm_op = lambda: None
    dist.init_distributed(dist_backend="gloo", auto_mpi_discovery=False, verbose=False)
    mpu = None
    if request["pp"] > 1:
        from deepspeed.runtime.pipe.topology import PipeModelDataParallelTopology, PipelineParallelGrid

        world = request["world_size"]
        mpu = PipelineParallelGrid(topology=PipeModelDataParallelTopology(
            num_pp=request["pp"], num_mp=1, num_dp=world // request["pp"]))
    elif request["tp"] > 1:
        from deepspeed.utils import groups

        groups._init_tp_mesh_device(tensor_model_parallel_size=request["tp"])
        mpu = groups

    seen: set[str] = set()
    config = Recording({k: Recording(v, seen, k + ".") if k in RECORDED_SECTIONS else v
                        for k, v in request["config"].items()}, seen)
    # Ulysses (CP) is read from the config's sequence_parallel_size when no mpu is given
    # (the Hugging Face path); with its own groups as mpu it must come out the same.
    ds = DeepSpeedConfig(config, mpu=mpu)
    ulysses_world_size = None
    if request["cp"] > 1:
        import deepspeed.runtime.sequence_parallel.parallel_state_sp as ulysses

        ulysses.initialize_sequence_parallel(sequence_parallel_size=request["cp"])
        ulysses_world_size = DeepSpeedConfig(dict(request["config"]), mpu=ulysses).world_size
    out = {
        "world_size": ds.world_size,
        "ulysses_world_size": ulysses_world_size,
        "train_batch_size": ds.train_batch_size,
        "train_micro_batch_size_per_gpu": ds.train_micro_batch_size_per_gpu,
        "gradient_accumulation_steps": ds.gradient_accumulation_steps,
        "zero_stage": int(ds.zero_optimization_stage),
        "bf16": ds.bfloat16_config.enabled,
        "fp16": ds.float16_config.enabled,
        "autotp_size": ds.tensor_parallel_config.autotp_size,
        "autoep_enabled": bool(ds.expert_parallel_config.enabled),
        "autoep_size": ds.expert_parallel_config.autoep_size,
        "overlap_comm": ds.zero_config.overlap_comm,
        "reduce_bucket_size": ds.zero_config.reduce_bucket_size,
        "pipeline": ds.pipeline,
        "seen": sorted(seen),
    }
    print("PROBE" + json.dumps(out))


if __name__ == "__main__":
    main()
