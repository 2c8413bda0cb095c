"""The header every export carries: plan, model, cluster and shardwise version.

One fact per line, so it reads the same as comments in TOML/YAML/shell/Python and as the
separate header of a JSON export.
"""

from __future__ import annotations

from ... import __version__
from ..params import active_params, total_params
from .plan import ExportPlan


def header_lines(plan: ExportPlan, target: str) -> list[str]:
    m, c, u, s = plan.model, plan.cluster, plan.setup, plan.strategy
    params = total_params(m)
    active = active_params(m)
    size = f"{params / 1e9:.2f} B params" + (f" ({active / 1e9:.2f} B active)" if active != params else "")
    degrees = (f"TP={s.tp} PP={s.pp} VPP={s.vpp} CP={s.cp} EP={s.ep} ETP={s.etp} DP={plan.dp}"
               + (f" (HSDP {s.hsdp_replicas} replicas x {plan.dp_shard} shards)" if s.hsdp_replicas > 1 else ""))
    return [
        f"{target} — exported by shardwise {__version__}",
        f"model:   {m.name}, {size}" + (" [approximate shape]" if m.approximate else ""),
        f"cluster: {c.num_gpus} x {c.gpu.id} ({c.gpu.memory_gib:g} GiB), {c.gpus_per_node} per node, "
        f"{plan.nodes} node{'s' if plan.nodes != 1 else ''}, {c.network.id}",
        f"setup:   {_training(u)}, {u.precision}, seq_len {u.seq_len}, global batch {plan.global_batch} sequences "
        f"({plan.global_batch * u.seq_len:,} tokens), evaluated for {u.framework}",
        f"plan:    {degrees}",
        f"         ZeRO-{s.zero_stage}, micro-batch {s.micro_batch}, grad-accum {plan.grad_accum}, "
        f"recompute {s.recompute}, sequence parallel {'on' if plan.sp else 'off'}",
    ]


def _training(setup) -> str:
    """'full training', 'lora training', or for post-training 'dpo (policy: full)' — a DPO/GRPO/PPO export said
    only 'full training', the policy's weights mode."""
    from ..post_training.modes import mode_name

    if setup.post_training is None:
        return f"{setup.mode} training"
    adapters = {"lora": "LoRA", "qlora": "QLoRA"}
    policy = "fully" if setup.mode == "full" else f"through {adapters.get(setup.mode, setup.mode)} adapters"
    return f"{mode_name(setup)} post-training (policy trained {policy})"


def comment_block(lines: list[str], marker: str = "#") -> str:
    return "".join(f"{marker} {line}".rstrip() + "\n" for line in lines)
