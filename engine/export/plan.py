"""ExportPlan: one plan with every number an exporter writes, derived once.

DP = num_gpus // (TP·CP·PP) and grad_accum = global_batch // (DP·micro_batch), as in
engine/plans.py; the exported global batch is micro_batch·grad_accum·DP exactly, and the
plan must be valid for the framework family it is exported to (engine.validity), so the two
agree or the export is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..setting_text import SettingsText, settings_text
from ..strategy import Strategy
from ..training import CUDA_GRAPH_FRAMEWORKS, MEGATRON_ONLY_OPTIONS, Framework, TrainingSetup
from ..validity import violations
from .result import ExportRefused


@dataclass(frozen=True)
class ExportPlan:
    model: ModelSpec
    cluster: Cluster
    setup: TrainingSetup
    strategy: Strategy

    @property
    def s(self) -> Strategy:
        return self.strategy

    @property
    def dp(self) -> int:
        return self.strategy.dp(self.cluster.num_gpus)

    @property
    def grad_accum(self) -> int:
        return max(self.setup.global_batch // (self.dp * self.strategy.micro_batch), 1)

    @property
    def global_batch(self) -> int:
        """Sequences per optimizer step as the framework will count them: mb · GA · DP."""
        return self.strategy.micro_batch * self.grad_accum * self.dp

    @property
    def sp(self) -> bool:
        return self.strategy.sp

    @property
    def dp_shard(self) -> int:
        """Ranks one parameter is sharded over within a replica (HSDP) — all of DP without HSDP."""
        return self.dp // self.strategy.hsdp_replicas

    @property
    def nodes(self) -> int:
        return self.cluster.num_nodes

    def layers_per_stage(self) -> tuple[int, ...]:
        """Transformer layers on each pipeline rank, the first ranks taking the remainder."""
        base, extra = divmod(self.model.num_layers, self.strategy.pp)
        return tuple(base + (1 if rank < extra else 0) for rank in range(self.strategy.pp))


def checked_plan(fmt: str, family: Framework | None, model: ModelSpec, cluster: Cluster,
                 setup: TrainingSetup, strategy: Strategy) -> tuple[ExportPlan, list[str | SettingsText]]:
    """The plan, refused if the engine finds it invalid for `family`; plus the engine's warnings (naming
    settings `{like_this}`, so each surface spells them its own way).

    `family` is the framework whose capabilities the target shares (torchtitan and the FSDP
    snippet are "fsdp", Megatron-Bridge is "megatron"); None checks against the setup's own.
    """
    checked_setup = setup if family is None else setup.model_copy(update={"framework": family})
    errors, warnings = violations(model, cluster, checked_setup, strategy)
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ExportRefused(fmt, f"the plan is invalid for {checked_setup.framework}: [{first.rule}] "
                                 + first.text() + more,
                            "fix the plan (evaluate it to see what is wrong) before exporting it",
                            rule=f"invalid_for_{checked_setup.framework}:{first.rule}")
    notes: list[str | SettingsText] = [f"[{w.rule}] " + w.text() for w in warnings]
    if family is not None and setup.framework != family:
        notes.append(settings_text(
            f"the plan was evaluated for framework {setup.framework!r}; {fmt} runs on {family!r}-style "
            f"parallelism, so evaluate it again with {{framework}} {family} for its memory and time", "framework"))
    if setup.cuda_graphs != "none" and checked_setup.framework not in CUDA_GRAPH_FRAMEWORKS:
        notes.append(settings_text(
            f"the plan was priced with {setup.cuda_graphs} CUDA graphs, which {fmt} does not run (a Megatron-Core "
            f"option): its host launch time is back, so evaluate it again with {{cuda_graphs}} none and "
            f"{{framework}} {checked_setup.framework}", "cuda_graphs", "framework"))
    # the options that change memory, gradient bytes or (the EP overlap) exposed time; CUDA graphs have their
    # own note above (host time)
    megatron_only = [option.field for option in MEGATRON_ONLY_OPTIONS
                     if option.field != "cuda_graphs" and option.used(setup)]
    if megatron_only and checked_setup.framework != "megatron":
        used = ", ".join("{" + field + "}" for field in megatron_only)
        notes.append(settings_text(
            f"the plan was priced with {used} (Megatron-Core options), which {fmt} does not take: its memory, "
            f"gradient bytes or step time differ, so evaluate it again with {{framework}} {checked_setup.framework} without them",
            *megatron_only, "framework"))
    if setup.recompute_modules is not None and strategy.recompute != "selective":
        notes.append(settings_text(
            f"{{recompute_modules}} apply to selective recompute; this plan recomputes {strategy.recompute}, "
            f"so {','.join(setup.recompute_modules)} are not used", "recompute_modules"))
    return ExportPlan(model, cluster, setup, strategy), notes
