"""explain_concept: a glossary entry, filled in with the user's own numbers where it applies.

The words live in prompts/explain/<concept>.md.j2 (shared with the CLI). The numbers come
from the engine (evaluate() of the user's plan, and of one-knob variants of it) or from the
textbook formula the entry explains, each named with its paper beside it here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..engine.assumptions.calibration_bounds import COMM_SCALE_BOUNDS, COMPUTE_SCALE_BOUNDS, MAX_MEASURED_MFU
from ..engine.evaluate import evaluate
from ..engine.params import total_params
from ..engine.training import CUDA_GRAPH_FRAMEWORKS, CUDA_GRAPH_MODES
from ..engine.validity.whole_mesh import require_whole_mesh
from ..prompts.render import render
from .base import Result, Tool
from .figures import plan_figures, r
from .calibration import active_profile
from .dispatcher_numbers import dispatcher_numbers
from .interval_numbers import interval_numbers
from .scenario import Args, Plan, ResolvedScenario, Scenario

GIB = 2**30
BF16_BYTES = 2
# ZeRO paper (Rajbhandari et al. 2020, §3 and Fig. 1): mixed-precision Adam keeps 2 bytes of
# fp16/bf16 weights, 2 of gradients and K = 12 of optimizer state (fp32 master, momentum,
# variance) per parameter.
ZERO_WEIGHT_BYTES, ZERO_GRAD_BYTES, ZERO_OPTIMIZER_BYTES = 2, 2, 12
# QLoRA (Dettmers et al. 2023, §3): NF4 stores 4 bits per weight; double quantisation brings the
# quantisation constants to 0.127 bits per parameter.
NF4_BITS_PER_PARAM = 4 + 0.127
# Megatron-LM (Shoeybi et al. 2019, §3, Fig. 4): a transformer layer does two all-reduces in the
# forward pass (after attention and after the MLP) and two in the backward pass.
TP_COLLECTIVES_PER_LAYER = 4
# Full recomputation replays the forward pass, and with it its two all-reduces.
TP_COLLECTIVES_REPLAYED_BY_FULL_RECOMPUTE = 2

Concept = Literal["pipeline_bubble", "virtual_pipeline", "tensor_parallel", "sequence_parallel", "context_parallel",
                  "expert_parallel", "data_parallel", "zero", "fsdp", "activation_recompute", "micro_batch",
                  "mfu", "memory_breakdown", "lora", "qlora", "post_training", "cuda_graphs", "calibration", "intervals",
                  "moe_dispatcher"]
TITLES = {
    "pipeline_bubble": "Pipeline bubble", "virtual_pipeline": "Interleaved (virtual) pipeline stages",
    "tensor_parallel": "Tensor parallelism (TP)", "sequence_parallel": "Sequence parallelism (SP)",
    "context_parallel": "Context parallelism (CP)", "expert_parallel": "Expert parallelism (EP)",
    "data_parallel": "Data parallelism (DP)", "zero": "ZeRO stages", "fsdp": "FSDP (fully sharded data parallel)",
    "activation_recompute": "Activation recomputation", "micro_batch": "Micro-batches and gradient accumulation",
    "mfu": "MFU (model FLOPs utilisation)", "memory_breakdown": "Where GPU memory goes",
    "lora": "LoRA", "qlora": "QLoRA", "post_training": "Post-training: DPO, GRPO and PPO",
    "cuda_graphs": "CUDA graphs", "calibration": "Calibrating to your cluster",
    "intervals": "What \"likely\" means: the 80 % intervals",
    "moe_dispatcher": "MoE token dispatchers (all-to-all, allgather, DeepEP)",
}
RELATED = {
    "pipeline_bubble": ["virtual_pipeline", "micro_batch"], "virtual_pipeline": ["pipeline_bubble"],
    "tensor_parallel": ["sequence_parallel", "context_parallel"], "sequence_parallel": ["tensor_parallel"],
    "context_parallel": ["tensor_parallel"], "expert_parallel": ["data_parallel"],
    "data_parallel": ["zero", "fsdp"], "zero": ["fsdp", "data_parallel"], "fsdp": ["zero"],
    "activation_recompute": ["memory_breakdown"], "micro_batch": ["pipeline_bubble"], "mfu": ["memory_breakdown"],
    "memory_breakdown": ["zero", "activation_recompute"], "lora": ["qlora"], "qlora": ["lora"],
    "post_training": ["memory_breakdown", "lora"],
    "cuda_graphs": ["activation_recompute", "expert_parallel"],  # per-layer refuses full recompute; MoE needs deepep
    "calibration": ["mfu", "intervals"],
    "intervals": ["calibration"],
    "moe_dispatcher": ["expert_parallel"],
}


class ExplainArgs(Args):
    concept: Concept
    scenario: Scenario | None = Field(None, description="for the user's numbers")
    plan: Plan | None = Field(None, description="default: recommended plan")


class ExplainResult(Result):
    concept: str
    title: str
    text: str = Field(description="the explanation in markdown, the user's numbers included")
    numbers: dict[str, float | int | str | None] = Field(description="every number the text states, by name")
    plan: str | None = Field(None, description="the plan the numbers are for")
    related: list[str]

    def summary(self) -> str:
        return f"explained {self.concept}" + (f" for {self.plan}" if self.plan else "") + f" [{self.id}]"


def _eval(s: ResolvedScenario, plan: Plan, **changes):
    return evaluate(s.model, s.cluster, s.setup, plan.model_copy(update=changes).strategy(), profile=active_profile())


def _with_mode(s: ResolvedScenario, mode: str) -> ResolvedScenario:
    return ResolvedScenario(s.model, s.cluster, s.setup.model_copy(update={"mode": mode}))


def pipeline_numbers(e) -> dict:
    p, v, m = e.strategy.pp, e.strategy.vpp, e.strategy.grad_accum
    n = {"pp": p, "vpp": v, "micro_batches": m}
    # Narayanan et al. 2021 (Megatron-LM at scale), §2.2: bubble / ideal time = (p-1)/(v·m);
    # as a share of the whole pipeline time: (p-1)/(v·m + p-1).
    n["bubble_over_ideal_percent"] = r(100 * (p - 1) / (v * m), 1)
    n["bubble_share_percent"] = r(100 * (p - 1) / (v * m + p - 1), 1)
    n["bubble_share_without_interleaving_percent"] = r(100 * (p - 1) / (m + p - 1), 1)
    if e.time is not None:
        n["engine_bubble_ms"] = r(1e3 * e.time.pp_bubble_s, 1)
        n["engine_bubble_share_of_step_percent"] = r(100 * e.time.pp_bubble_s / e.time.step_s, 1)
    return n


def tensor_parallel_numbers(s: ResolvedScenario, e) -> dict:
    st, model, setup = e.strategy, s.model, s.setup
    t = st.tp
    message = st.micro_batch * (setup.seq_len // st.cp) * model.hidden_size * BF16_BYTES  # b·s·h activations, bf16
    per_layer = TP_COLLECTIVES_PER_LAYER + (TP_COLLECTIVES_REPLAYED_BY_FULL_RECOMPUTE if st.recompute == "full" else 0)
    layers_per_stage = -(-model.num_layers // st.pp)
    ring = 2 * (t - 1) / t  # bytes a GPU sends per byte all-reduced (ring algorithm)
    n = {"tp": t, "sequence_parallel": "on" if st.sequence_parallel else "off", "message_mib": r(message / 2**20, 2),
         "collectives_per_layer_per_micro_batch": per_layer, "layers_per_stage": layers_per_stage,
         "micro_batches": st.grad_accum,
         "bytes_sent_per_gpu_per_step_gib": r(message * ring * per_layer * layers_per_stage * st.grad_accum / GIB, 2)}
    if e.time is not None:
        n["engine_tp_comm_ms"] = r(1e3 * e.time.tp_comm_s, 1)
        n["engine_tp_comm_share_of_step_percent"] = r(100 * e.time.tp_comm_s / e.time.step_s, 1)
    return n


def zero_numbers(s: ResolvedScenario, e) -> dict:
    st = e.strategy
    psi = total_params(s.model) / (st.tp * st.pp)  # parameters per model-parallel rank (ignores EP sharding)
    d = st.dp
    per_stage = {  # ZeRO paper, Fig. 1: bytes per GPU for Ψ parameters and data-parallel degree Nd
        0: (ZERO_WEIGHT_BYTES + ZERO_GRAD_BYTES + ZERO_OPTIMIZER_BYTES) * psi,
        1: (ZERO_WEIGHT_BYTES + ZERO_GRAD_BYTES) * psi + ZERO_OPTIMIZER_BYTES * psi / d,
        2: ZERO_WEIGHT_BYTES * psi + (ZERO_GRAD_BYTES + ZERO_OPTIMIZER_BYTES) * psi / d,
        3: (ZERO_WEIGHT_BYTES + ZERO_GRAD_BYTES + ZERO_OPTIMIZER_BYTES) * psi / d,
    }
    n = {"dp": d, "zero_stage": st.zero_stage, "params_per_model_parallel_rank_billion": r(psi / 1e9, 2)}
    n.update({f"textbook_stage{k}_gib": r(v / GIB, 1) for k, v in per_stage.items()})
    m = e.memory
    n["engine_weights_gib"], n["engine_gradients_gib"], n["engine_optimizer_gib"] = (
        r(m.weights_gib, 1), r(m.gradients_gib, 1), r(m.optimizer_gib, 1))
    n["engine_model_states_gib"] = r(m.weights_gib + m.gradients_gib + m.optimizer_gib, 1)
    return n


def lora_numbers(s: ResolvedScenario, plan: Plan, mode: str) -> dict:
    model, rank = s.model, s.setup.lora_rank
    h, d = model.hidden_size, model.head_size
    q_out, kv_out = model.num_attention_heads * d, model.kv_heads * d
    # LoRA (Hu et al. 2021, §4.1): a frozen d_out x d_in matrix gains B (d_out x r) and A (r x d_in),
    # r·(d_in + d_out) trainable parameters, on each targeted projection.
    shapes = {"q_proj": (h, q_out), "k_proj": (h, kv_out), "v_proj": (h, kv_out), "o_proj": (q_out, h)}
    if not model.is_moe:
        shapes.update({"gate_proj": (h, model.ffn_hidden_size), "up_proj": (h, model.ffn_hidden_size),
                       "down_proj": (model.ffn_hidden_size, h)})
    targets = [t for t in s.setup.lora_targets if t in shapes]
    if not model.gated_mlp:
        targets = [t for t in targets if t != "gate_proj"]
    trainable = model.num_layers * sum(rank * (shapes[t][0] + shapes[t][1]) for t in targets)
    total = total_params(model)
    n = {"lora_rank": rank, "targets": ", ".join(targets), "trainable_params_million": r(trainable / 1e6, 1),
         "trainable_percent_of_model": r(100 * trainable / total, 3), "model_params_billion": r(total / 1e9, 2)}
    if mode == "qlora":
        n["nf4_base_weights_gib"] = r(total * NF4_BITS_PER_PARAM / 8 / GIB, 1)
        n["bf16_base_weights_gib"] = r(total * BF16_BYTES / GIB, 1)
    for variant in ("full", mode):
        e = evaluate(s.model, s.cluster, s.setup.model_copy(update={"mode": variant}), plan.strategy(),
                     profile=active_profile())
        n[f"engine_{variant}_memory_gib"] = r(e.memory.total_gib, 1)
    return n


def post_training_numbers(s: ResolvedScenario, plan: Plan) -> dict:
    """The user's post-training mode (GRPO when they train plainly) against plain training, same plan."""
    from ..engine.post_training import post_training

    setup = s.setup
    post = setup.post_training or post_training("grpo", seq_len=setup.seq_len)
    full = evaluate(s.model, s.cluster, setup.model_copy(update={"post_training": None}), plan.strategy())
    e = evaluate(s.model, s.cluster, setup.model_copy(update={"post_training": post}), plan.strategy())
    d = e.memory.details_gib
    n = {"algorithm": post.algorithm.upper(), "memory_gib": r(e.memory.total_gib, 1),
         "full_memory_gib": r(full.memory.total_gib, 1), "peak_phase": (e.memory.peak_phase or "").replace("_", " "),
         "reference_weights_gib": r(d.get("weights.reference", 0.0), 2)}
    if e.time is not None and full.time is not None:
        n.update(step_s=r(e.time.step_s, 2), full_step_s=r(full.time.step_s, 2), reference_s=r(e.time.reference_s, 2))
    if post.generates:
        n.update(prompt_len=post.prompt_len, response_len=post.response_len, group_size=post.group_size,
                 inference_tp=post.inference_tp, kv_cache_gib=r(d.get("activations.kv_cache", 0.0), 2),
                 engine_weights_gib=r(d.get("weights.inference_engine", 0.0), 2))
        if e.time is not None:
            n["rollout_s"] = r(e.time.rollout_s, 2)
    return n


def cuda_graph_numbers(s: ResolvedScenario, plan: Plan) -> dict:
    """The plan's step time under each graph mode (engine evaluate()); a mode the plan cannot run
    says why, in the engine's words. Frameworks without graphs get no numbers to compare."""
    n: dict = {"framework": s.setup.framework, "current": s.setup.cuda_graphs}
    if s.setup.framework not in CUDA_GRAPH_FRAMEWORKS:
        return n
    for mode in CUDA_GRAPH_MODES:
        setup = s.setup.model_copy(update={"cuda_graphs": mode})
        e = evaluate(s.model, s.cluster, setup, plan.strategy(), profile=active_profile())
        key = mode.replace("-", "_")
        n[f"{key}_step_ms"] = r(1e3 * e.time.step_s, 1) if e.valid and e.time is not None else None
        if not e.valid:
            n[f"{key}_invalid"] = e.violations[0].message
    return n


def calibration_numbers(s: ResolvedScenario | None) -> dict:
    """What a calibration may change: the bounds of its two scales (engine/assumptions/calibration_bounds.py),
    the measured MFU above which a run is refused, and, with a scenario, what a profile fitted on it covers."""
    n = {"compute_scale_low": COMPUTE_SCALE_BOUNDS[0], "compute_scale_high": COMPUTE_SCALE_BOUNDS[1],
         "comm_scale_low": COMM_SCALE_BOUNDS[0], "comm_scale_high": COMM_SCALE_BOUNDS[1],
         "max_measured_mfu_percent": r(100 * MAX_MEASURED_MFU, 0)}
    if s is not None:
        n.update(gpu=s.cluster.gpu.name, precision=s.setup.precision, framework=s.setup.framework,
                 network=s.cluster.network.id, nodes=s.cluster.num_nodes)
    return n


def numbers_for(concept: str, s: ResolvedScenario, plan: Plan) -> dict:
    if concept == "calibration":
        return calibration_numbers(s)
    if concept == "intervals":
        return interval_numbers(s)
    if concept == "post_training":
        return post_training_numbers(s, plan)
    if concept == "cuda_graphs":
        return cuda_graph_numbers(s, plan)
    if concept == "moe_dispatcher":
        return dispatcher_numbers(s, plan)
    e = _eval(s, plan)
    if concept in ("pipeline_bubble", "virtual_pipeline"):
        return pipeline_numbers(e)
    if concept == "tensor_parallel":
        return tensor_parallel_numbers(s, e)
    if concept in ("zero", "fsdp", "data_parallel"):
        n = zero_numbers(s, e)
        if e.time is not None:
            n["engine_dp_comm_ms"] = r(1e3 * e.time.dp_comm_s, 1)
        return n
    if concept in ("lora", "qlora"):
        return lora_numbers(s, plan, concept)
    if concept == "activation_recompute":
        n = {"current": e.strategy.recompute}
        for mode in ("none", "selective", "full"):
            v = _eval(s, plan, recompute=mode)
            n[f"{mode}_activations_gib"] = r(v.memory.activations_gib, 1)
            n[f"{mode}_total_gib"] = r(v.memory.total_gib, 1)
            n[f"{mode}_fits"] = "yes" if v.memory.fits else "no"
            n[f"{mode}_step_ms"] = r(1e3 * v.time.step_s, 1) if v.time else None
        return n
    if concept == "sequence_parallel":
        n = {"tp": e.strategy.tp}
        for flag in (True, False):
            v = _eval(s, plan, sequence_parallel=flag)
            n[f"{'with' if flag else 'without'}_sp_activations_gib"] = r(v.memory.activations_gib, 1)
        return n
    if concept == "context_parallel":
        n = {"cp": e.strategy.cp, "seq_len": s.setup.seq_len, "tokens_per_gpu": s.setup.seq_len // e.strategy.cp}
        if e.time is not None:
            n["engine_cp_comm_ms"] = r(1e3 * e.time.cp_comm_s, 1)
        return n
    if concept == "expert_parallel":
        moe = s.model.moe
        n = {"ep": e.strategy.ep, "moe": "yes" if moe else "no"}
        if moe:
            n.update(num_experts=moe.num_experts, top_k=moe.top_k, experts_per_gpu=moe.num_experts // e.strategy.ep)
        if e.time is not None:
            n["engine_ep_comm_ms"] = r(1e3 * e.time.ep_comm_s, 1)
        return n
    if concept == "micro_batch":
        st = e.strategy
        return {"dp": st.dp, "micro_batch": st.micro_batch, "grad_accum": st.grad_accum,
                "global_batch": st.dp * st.micro_batch * st.grad_accum, "seq_len": s.setup.seq_len,
                "tokens_per_micro_batch": st.micro_batch * s.setup.seq_len}
    if concept == "mfu":
        n = {"peak_tflops_per_gpu": s.cluster.gpu.peak_tflops(s.setup.precision), "precision": s.setup.precision}
        if e.throughput is not None:
            n.update(mfu_percent=r(100 * e.throughput.mfu, 1), hfu_percent=r(100 * e.throughput.hfu, 1),
                     model_tflops_per_gpu=r(e.throughput.model_tflops_per_gpu, 1))
        return n
    f = plan_figures(e)  # memory_breakdown
    n = {t.name: t.value for t in f.memory_terms}
    n.update(total_gib=f.memory_gib, capacity_gib=f.capacity_gib, fits="yes" if f.fits else "no")
    return n


def explain_concept(args: ExplainArgs) -> ExplainResult:
    numbers, plan_text, scenario_text = {}, None, None
    if args.scenario is not None and not args.scenario.missing():
        resolved = args.scenario.resolve()
        plan = args.plan
        if plan is None:
            from .recommend import run_recommend

            best = run_recommend(args.scenario, top_k=1).best
            plan = Plan.from_strategy(best.strategy) if best else Plan()
        require_whole_mesh(resolved.model, resolved.cluster, resolved.setup, plan.strategy())
        numbers = numbers_for(args.concept, resolved, plan)
        plan_text = plan_figures(_eval(resolved, plan)).label
        scenario_text = f"{resolved.model.name} on {resolved.cluster.num_gpus} x {resolved.cluster.gpu.name}"
    if args.concept == "calibration" and not numbers:  # its bounds hold without a scenario
        numbers = calibration_numbers(None)
    if args.concept == "intervals" and not numbers:  # the bands' checks hold without a scenario
        numbers = interval_numbers(None)
    if args.concept == "moe_dispatcher" and not numbers:  # which framework offers which: the engine's rule, always
        numbers = dispatcher_numbers(None)
    text = render(f"explain/{args.concept}.md.j2", n=numbers or None, plan=plan_text, scenario=scenario_text)
    return ExplainResult(concept=args.concept, title=TITLES[args.concept], text=text, numbers=numbers,
                         plan=plan_text, related=RELATED[args.concept])


EXPLAIN_CONCEPT = Tool(
    "explain_concept", "Explain a concept, with the user's numbers given a scenario.", ExplainArgs, ExplainResult, explain_concept,
    scenario_of=lambda a: a.scenario if a.scenario is not None and not a.scenario.missing() else None)
