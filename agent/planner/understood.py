"""The one line every offline answer opens with: the scenario it used, and which values were defaults.

Built from the scenario the first tool resolved (its ScenarioFacts) and the arguments the planner
passed: a field left null was filled by a default, and the line says so. A fine-tune's default batch
names its source (tools/scenario.py)."""

from __future__ import annotations

from ...engine import hardware_catalog
from ...engine.inputs import resolve_model
from ...engine.training import TrainingSetup
from ...tools.figures import ScenarioFacts
from .setup_words import UNSCOPED_CUDA_GRAPHS, UNSCOPED_CUDA_GRAPHS_SOURCE

DEFAULT_RANK = TrainingSetup.model_fields["lora_rank"].default
MODE_WORDS = {"full": "full training", "lora": "LoRA", "qlora": "QLoRA"}


def mode_words(mode: str) -> str:
    """'full' -> 'full training'; post-training modes by their algorithm: 'dpo' -> 'DPO', 'grpo-lora' -> 'GRPO with LoRA'."""
    if mode in MODE_WORDS:
        return MODE_WORDS[mode]
    algorithm, _, weights = mode.partition("-")
    return algorithm.upper() + (f" with {MODE_WORDS[weights]}" if weights in MODE_WORDS else "")


def scenario_facts(outcomes) -> ScenarioFacts | None:
    for outcome in outcomes:
        if not outcome.ok:
            continue
        # A what-if's answer is the scenario after its change ("and with LoRA?" is priced with LoRA, and the
        # conversation continues with it); its "before" is the comparison, said in the answer's table.
        facts = getattr(outcome.result, "scenario", None) or getattr(outcome.result, "after", None)
        if isinstance(facts, ScenarioFacts):
            return facts
    return None


def understood_parts(f: ScenarioFacts) -> tuple[list[str], list[str]]:
    """(values the conversation gave, values that are defaults), in words."""
    a = f.arguments
    gpu = hardware_catalog.get_gpu(f.gpu).name
    network = hardware_catalog.get_network(f.network).name
    given = [f"{f.model} on {f.gpus} x {gpu}"]
    defaults: list[str] = []
    (defaults if a.gpus_per_node is None else given).append(f"{f.gpus_per_node} GPUs per node")
    (defaults if a.network is None else given).append(network)
    (defaults if a.seq_len is None else given).append(f"sequence {f.seq_len:,} tokens")
    batch = f"global batch {f.global_batch:,} sequences"
    if a.global_batch is not None or a.global_batch_tokens:
        given.append(batch)
    elif f.mode in ("lora", "qlora"):
        defaults.append(batch + " (a fine-tune's default, as in alpaca-lora's and Stanford Alpaca's recipes)")
    else:
        defaults.append(batch)
    mode = mode_words(f.mode)
    (defaults if a.mode is None else given).append(mode)
    if f.mode in ("lora", "qlora") and a.lora_rank is None:
        defaults.append(f"LoRA rank {DEFAULT_RANK}")
    (defaults if a.precision is None else given).append(f.precision)
    (defaults if a.framework is None else given).append(f.framework)
    given += setup_given(f)
    return given, defaults


def setup_given(f: ScenarioFacts) -> list[str]:
    """The setup options the conversation gave (dispatcher, EP overlap, CUDA graphs, packed documents); those
    not given stay unsaid, as the figures header leaves them out."""
    a, out = f.arguments, []
    dense = a.moe_dispatcher is not None or a.moe_a2a_overlap is not None
    dense = dense and resolve_model(a.model, a.params).moe is None
    if a.moe_dispatcher is not None:
        out.append(f"{f.moe_dispatcher} dispatcher" + (" (no effect: the model has no experts)" if dense else ""))
    if a.moe_a2a_overlap is not None:
        out.append(("EP all-to-all overlapped" if f.moe_a2a_overlap else "EP all-to-all not overlapped")
                   + (" (no effect: the model has no experts)" if dense else ""))
    if a.cuda_graphs is not None:
        out.append("no CUDA graphs" if f.cuda_graphs == "none" else f"{f.cuda_graphs} CUDA graphs")
    if a.mean_doc_len is not None:
        out.append(f"packed documents of {a.mean_doc_len:,} tokens on average (attention by document)")
    # Megatron-Core options (the page's form sets them; the chat reads "grad reduce in bf16", "fp8 param gather")
    if getattr(a, "grad_reduce_dtype", None) is not None:
        out.append(f"gradients reduced in {a.grad_reduce_dtype}")
    if getattr(a, "fp8_param_gather", None) is not None:
        out.append("FP8 parameter gather" if a.fp8_param_gather else "no FP8 parameter gather")
    if getattr(a, "recompute_modules", None) is not None:
        out.append("recompute modules " + (", ".join(a.recompute_modules) or "none"))
    return out


def understood_line(outcomes, graphs_scope_assumed: bool = False) -> str | None:
    """`graphs_scope_assumed`: the message said "cuda graphs" with no scope, read as UNSCOPED_CUDA_GRAPHS."""
    f = scenario_facts(outcomes)
    if f is None:
        return None
    given, defaults = understood_parts(f)
    if graphs_scope_assumed:
        given = [g for g in given if g != f"{UNSCOPED_CUDA_GRAPHS} CUDA graphs"]
        defaults.append(f"\"cuda graphs\" read as {UNSCOPED_CUDA_GRAPHS} CUDA graphs ({UNSCOPED_CUDA_GRAPHS_SOURCE})")
    line = "_Understood:_ " + ", ".join(given)
    if defaults:
        line += "; _defaults:_ " + ", ".join(defaults)
    return line + "."
