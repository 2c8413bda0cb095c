"""PlanGrid: many strategies as parallel numpy arrays, so memory, time and validity
are computed for a whole search space at once. A single plan is a grid of one.

The formulas in memory/, performance/ and validity take a PlanGrid and return arrays;
they branch on the plan with numpy (`np.where`), and on the model with plain `if`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .strategy import RECOMPUTE_MODES, Strategy

RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL = 0, 1, 2


@dataclass(frozen=True)
class PlanGrid:
    tp: np.ndarray
    pp: np.ndarray
    vpp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    etp: np.ndarray
    zero_stage: np.ndarray
    hsdp_replicas: np.ndarray
    sp: np.ndarray  # bool: sequence parallel in effect (requested and tp > 1)
    micro_batch: np.ndarray
    recompute: np.ndarray  # RECOMPUTE_NONE / _SELECTIVE / _FULL
    dp: np.ndarray  # derived: num_gpus // (tp·cp·pp)
    grad_accum: np.ndarray  # derived: global_batch // (dp·micro_batch), at least 1

    def __len__(self) -> int:
        return int(self.tp.shape[0])

    @property
    def expert_dp(self) -> np.ndarray:
        """Data-parallel degree of expert weights: the experts' share of the same GPUs."""
        return np.maximum(self.tp * self.cp * self.dp // np.maximum(self.ep * self.etp, 1), 1)

    @property
    def num_microbatches(self) -> np.ndarray:
        return self.grad_accum

    @classmethod
    def build(cls, num_gpus: int, global_batch: int, **columns: np.ndarray | list | int) -> "PlanGrid":
        """From chosen columns (tp, pp, …); anything omitted takes the Strategy default."""
        defaults = Strategy()
        names = ["tp", "pp", "vpp", "cp", "ep", "etp", "zero_stage", "hsdp_replicas", "micro_batch"]
        n = max((np.size(v) for v in columns.values()), default=1)
        arrays = {}
        for name in names:
            value = columns.get(name, getattr(defaults, name))
            arrays[name] = np.broadcast_to(np.asarray(value, dtype=np.int64), (n,)).copy()
        requested_sp = np.broadcast_to(np.asarray(columns.get("sequence_parallel", True), dtype=bool), (n,))
        arrays["sp"] = requested_sp & (arrays["tp"] > 1)
        recompute = columns.get("recompute", RECOMPUTE_MODES.index(defaults.recompute))
        arrays["recompute"] = np.broadcast_to(np.asarray(recompute, dtype=np.int64), (n,)).copy()
        mp = arrays["tp"] * arrays["cp"] * arrays["pp"]
        arrays["dp"] = np.maximum(num_gpus // mp, 1)
        arrays["grad_accum"] = np.maximum(global_batch // (arrays["dp"] * arrays["micro_batch"]), 1)
        return cls(**arrays)

    @classmethod
    def from_strategy(cls, strategy: Strategy, num_gpus: int, global_batch: int) -> "PlanGrid":
        return cls.build(
            num_gpus, global_batch,
            tp=strategy.tp, pp=strategy.pp, vpp=strategy.vpp, cp=strategy.cp, ep=strategy.ep,
            etp=strategy.etp, zero_stage=strategy.zero_stage, hsdp_replicas=strategy.hsdp_replicas,
            micro_batch=strategy.micro_batch, sequence_parallel=strategy.sequence_parallel,
            recompute=RECOMPUTE_MODES.index(strategy.recompute),
        )

    def take(self, index: np.ndarray) -> "PlanGrid":
        return PlanGrid(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def strategy(self, i: int) -> Strategy:
        return Strategy(
            tp=int(self.tp[i]), pp=int(self.pp[i]), vpp=int(self.vpp[i]), cp=int(self.cp[i]),
            ep=int(self.ep[i]), etp=int(self.etp[i]), zero_stage=int(self.zero_stage[i]),
            hsdp_replicas=int(self.hsdp_replicas[i]), sequence_parallel=bool(self.sp[i]),
            micro_batch=int(self.micro_batch[i]), recompute=RECOMPUTE_MODES[int(self.recompute[i])],
        )
