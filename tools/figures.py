"""The numbers an answer quotes, derived once from engine results so the model never computes.

Units are the ones people say: GiB for memory, milliseconds for time, percent for MFU and
shares, tokens/s for throughput. Every value is rounded to what is worth quoting; the full
engine object travels beside it (hidden from the model) for the web page and `--json`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..engine.post_training.modes import mode_name
from ..engine.plan_label import plan_label
from ..engine.results import Evaluation, StrategySummary
from .scenario import ResolvedScenario, Scenario

MEMORY_TERMS = {"weights": "weights_gib", "gradients": "gradients_gib", "optimizer states": "optimizer_gib",
                "activations": "activations_gib", "other (CUDA context, NCCL, fragmentation)": "other_gib"}
TIME_TERMS = {"compute": "compute_s", "TP communication": "tp_comm_s", "CP communication": "cp_comm_s",
              "EP communication": "ep_comm_s", "pipeline bubble": "pp_bubble_s", "PP communication": "pp_comm_s",
              "DP communication": "dp_comm_s", "optimizer step": "optimizer_s",
              "optimizer phase": "optimizer_phase_s",
              # post-training passes (0 and left out for plain training)
              "rollout generation": "rollout_s", "policy log-prob forward": "old_logprob_s",
              "reference forward": "reference_s", "reward model forward": "reward_s", "critic": "critic_s"}


def r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(float(x), digits)


class Term(BaseModel):
    name: str
    value: float = Field(description="GiB for memory terms, ms for time terms")
    percent: float = Field(description="share of the total (memory) or of the step (time)")


class PlanFigures(BaseModel):
    label: str
    strategy: StrategySummary
    valid: bool
    violations: list[str] = Field(default_factory=list, description="why the plan is impossible, if it is")
    warnings: list[str] = Field(default_factory=list)
    fits: bool
    memory_gib: float = Field(description="predicted peak per GPU, most loaded rank")
    capacity_gib: float
    memory_free_gib: float = Field(description="capacity minus peak; negative = over capacity by that much")
    memory_percent_of_capacity: float
    memory_terms: list[Term] = Field(description="largest first")
    step_ms: float | None = None
    tokens_per_s: float | None = None
    tokens_per_s_per_gpu: float | None = None
    mfu_percent: float | None = None
    hfu_percent: float | None = None
    time_terms: list[Term] = Field(default_factory=list, description="exposed time per step, largest first")
    largest_overhead: Term | None = Field(None, description="the biggest exposed term that is not compute")
    tokens_per_s_per_gpu_likely: list[float] | None = Field(
        None, description="[low, high]: 80 % interval of tokens/s per GPU (say 'likely low–high')")
    step_ms_likely: list[float] | None = Field(None, description="[low, high]: 80 % interval of the step time, ms")
    memory_gib_likely: list[float] | None = Field(None, description="[low, high]: 80 % interval of the peak memory, GiB")
    likely_basis: str | None = Field(None, description="which measured runs the intervals come from")
    calibration: str | None = Field(None, description="the user's calibration profile, where it applied")
    export_formats: list[str] | None = Field(None, description="export formats that write this plan (recommend); "
                                                               "the others refuse it")


def plan_figures(e: Evaluation) -> PlanFigures:
    m = e.memory
    memory_terms = sorted(
        (Term(name=name, value=r(getattr(m, attr)), percent=r(100 * getattr(m, attr) / m.total_gib if m.total_gib else 0, 1))
         for name, attr in MEMORY_TERMS.items()), key=lambda t: -t.value)
    figures = dict(
        label=plan_label(e.strategy, "tools"), strategy=e.strategy, valid=e.valid,
        violations=[f"[{v.rule}] {v.message}" for v in e.violations],
        warnings=[f"[{w.rule}] {w.message}" for w in e.warnings],
        fits=m.fits, memory_gib=r(m.total_gib), capacity_gib=r(m.capacity_gib),
        memory_free_gib=r(m.capacity_gib - m.total_gib), memory_percent_of_capacity=r(100 * m.total_gib / m.capacity_gib, 1),
        memory_terms=memory_terms, calibration=e.calibration, export_formats=e.export_formats,
        memory_gib_likely=[r(x) for x in m.total_gib_range] if m.total_gib_range else None,
    )
    if e.time is not None and e.throughput is not None:
        t, tp = e.time, e.throughput
        terms = sorted((Term(name=name, value=r(1e3 * getattr(t, attr)), percent=r(100 * getattr(t, attr) / t.step_s, 1))
                        for name, attr in TIME_TERMS.items() if getattr(t, attr) > 0 or name == "compute"),
                       key=lambda term: -term.value)
        overheads = [term for term in terms if term.name != "compute"]
        figures.update(step_ms=r(1e3 * t.step_s), tokens_per_s=r(tp.tokens_per_s, 0),
                       tokens_per_s_per_gpu=r(tp.tokens_per_s_per_gpu, 1), mfu_percent=r(100 * tp.mfu, 1),
                       hfu_percent=r(100 * tp.hfu, 1), time_terms=terms,
                       largest_overhead=overheads[0] if overheads else None, likely_basis=tp.range_basis,
                       tokens_per_s_per_gpu_likely=([r(x, 0) for x in tp.tokens_per_s_per_gpu_range]
                                                    if tp.tokens_per_s_per_gpu_range else None),
                       step_ms_likely=[r(1e3 * x, 0) for x in t.step_s_range] if t.step_s_range else None)
    return PlanFigures(**figures)


class ScenarioFacts(BaseModel):
    """The scenario as the engine resolved it, in words and numbers the answer can repeat."""

    arguments: Scenario = Field(description="pass these back to other tools to keep the same scenario")
    description: str
    model: str
    params_billion: float
    approximate_model: bool
    gpu: str
    gpus: int
    gpus_per_node: int
    nodes: int
    network: str
    gpu_memory_gib: float
    seq_len: int
    global_batch: int = Field(description="sequences per optimizer step")
    global_batch_tokens: int
    mode: str
    lora_rank: int | None = Field(default=None, description="the adapters' rank (LoRA and QLoRA)")
    precision: str
    framework: str
    moe_dispatcher: str = Field(default="alltoall", description="MoE token dispatcher (MoE models)")
    moe_a2a_overlap: bool = False
    cuda_graphs: str = Field(default="none", description="CUDA graphs the step is replayed with")


def scenario_facts(args: Scenario, resolved: ResolvedScenario) -> ScenarioFacts:
    from ..engine.params import total_params

    model, cluster, setup = resolved.model, resolved.cluster, resolved.setup
    params_b = total_params(model) / 1e9
    mode = {"full": "full training", "lora": f"LoRA (rank {setup.lora_rank})",
            "qlora": f"QLoRA (rank {setup.lora_rank})"}[setup.mode]
    post = setup.post_training
    if post is not None:
        mode = f"{post.algorithm.upper()} post-training, policy by {mode}"
        if post.generates:
            mode += (f" (co-located: prompt {post.prompt_len:,} + response {post.response_len:,} tokens, "
                     f"{post.group_size} sample(s) per prompt, rollout TP {post.inference_tp}"
                     + (f"; not given, verl's defaults used for {', '.join(post.defaults_used)}"
                        if post.defaults_used else "") + ")")
    description = (f"{model.name} ({params_b:.2f} B params{', approximate shape' if model.approximate else ''}) on "
                   f"{cluster.num_gpus} x {cluster.gpu.name} ({cluster.gpus_per_node} per node, {cluster.network.name}), "
                   f"sequence {setup.seq_len:,} tokens, global batch {setup.global_batch:,} sequences "
                   f"({setup.global_batch_tokens:,} tokens), {mode}, {setup.precision}, {setup.framework}"
                   + (f", {setup.moe_dispatcher} dispatcher" if model.moe is not None and setup.moe_dispatcher != "alltoall"
                      else "")
                   + (", EP all-to-all overlapped" if model.moe is not None and setup.moe_a2a_overlap else "")
                   + (f", {setup.cuda_graphs} CUDA graphs" if setup.cuda_graphs != "none" else "")
                   + (f", packed documents of {setup.mean_doc_len:,} tokens on average" if setup.mean_doc_len else ""))
    return ScenarioFacts(arguments=args, description=description, model=model.name, params_billion=round(params_b, 2),
                         approximate_model=model.approximate, gpu=cluster.gpu.id, gpus=cluster.num_gpus,
                         gpus_per_node=cluster.gpus_per_node, nodes=cluster.num_nodes, network=cluster.network.id,
                         gpu_memory_gib=cluster.gpu.memory_gib, seq_len=setup.seq_len,
                         global_batch=setup.global_batch, global_batch_tokens=setup.global_batch_tokens,
                         mode=mode_name(setup), lora_rank=setup.lora_rank if setup.mode != "full" else None,
                         precision=setup.precision, framework=setup.framework,
                         moe_dispatcher=setup.moe_dispatcher, moe_a2a_overlap=setup.moe_a2a_overlap,
                         cuda_graphs=setup.cuda_graphs)


class Difference(BaseModel):
    term: str
    a: float
    b: float
    b_minus_a: float
    unit: str


def differences(a: PlanFigures, b: PlanFigures, kind: str) -> list[Difference]:
    """Term by term, largest absolute difference first."""
    terms_a = {t.name: t.value for t in (a.time_terms if kind == "time" else a.memory_terms)}
    terms_b = {t.name: t.value for t in (b.time_terms if kind == "time" else b.memory_terms)}
    names = list(TIME_TERMS if kind == "time" else MEMORY_TERMS)
    rows = [Difference(term=n, a=terms_a.get(n, 0.0), b=terms_b.get(n, 0.0),
                       b_minus_a=r(terms_b.get(n, 0.0) - terms_a.get(n, 0.0)), unit="ms" if kind == "time" else "GiB")
            for n in names if n in terms_a or n in terms_b]
    return sorted(rows, key=lambda d: -abs(d.b_minus_a))
