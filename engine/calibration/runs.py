"""Published, measured training runs (data/*.csv, verbatim copies of the project's calibration
folder with their sources) turned into specs the engine can predict.

Each CSV row becomes a CalibrationRun: the model (from the catalog, or built from the row's
own dimensions), the cluster, the training setup, the plan, and the measured tokens/s per GPU
(as reported, or derived from the source's model TFLOP/s or MFU under that source's FLOP
formula). Rows the engine cannot represent are kept with the reason they are excluded.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..cluster import Cluster
from ..flops import matmul_params, megatron_flops_per_token
from ..hardware import GPUSpec, NetworkSpec
from ..hardware_catalog import get_gpu, get_network
from ..model_catalog import get_model
from ..model_spec import ModelSpec, MoESpec
from ..strategy import Strategy
from ..training import RECOMPUTE_MODULE_NAMES, TrainingSetup
from .folds import HOLDOUT_FOLD, fold_of
from .stacks import framework_for_stack

DATA = Path(__file__).parent / "data"
RUN_FILES = ("measured_runs.csv", "ultrascale_playbook_sweep_1b_8b.csv")
# What NVIDIA's perf recipes ran for some Megatron-Bridge MoE rows (CUDA graphs, dispatcher,
# EP-A2A overlap), each with the recipe's path at the data's commit (SOURCES.md).
RECIPE_FILE = "bridge_moe_recipes.csv"

# The HF cluster of the Ultra-Scale Playbook: AWS p5 instances (8×H100, EFA v2, 3,200 Gb/s per
# node = 400 Gb/s = 50 GB/s per GPU; AWS p5 documentation). EFA's one-way latency is higher
# than InfiniBand's (~15 µs vs ~2-5 µs reported by AWS for SRD).
AWS_EFA = NetworkSpec(id="efa-p5", name="AWS EFA v2 (p5)", bandwidth_gbs=50.0, latency_us=15.0,
                      source="AWS p5 instance documentation: 3200 Gbps EFA per 8 GPUs")

# Row model name -> catalog name (None: built from the row's dimensions).
CATALOG_NAMES = {
    "LLAMA3_8B": "Llama-3-8B", "LLAMA3_70B": "Llama-3-70B", "LLAMA3.1_405B": "Llama-3.1-405B",
    "Llama 3 8B": "Llama-3-8B", "Llama 3 70B": "Llama-3-70B", "Llama 3 405B": "Llama-3.1-405B",
    "Llama 3.1 8B": "Llama-3.1-8B", "Llama 3.1 70B": "Llama-3.1-70B", "Llama 3.1 405B": "Llama-3.1-405B",
    "Qwen3_30B_a3B": "Qwen3-30B-A3B", "Qwen3_235B_a22B": "Qwen3-235B-A22B", "Kimi_K2": "Kimi-K2",
    "Mixtral 8x7B": "Mixtral-8x7B",
    "Llama-like 1B (playbook)": "Ultra-Scale Playbook 1B (Llama-like)",
    "Llama-like 8B (playbook)": "Ultra-Scale Playbook 8B (Llama-like)",
    # NVIDIA NeMo performance pages (external_runs.csv): the model names as those tables print them
    "GPT3-175B": "GPT-3-175B", "LLAMA2-7B": "Llama-2-7B", "LLAMA2-13B": "Llama-2-13B", "LLAMA2-70B": "Llama-2-70B",
    "LLAMA3-8B": "Llama-3-8B", "LLAMA3-70B": "Llama-3-70B", "Nemotron-340B": "Nemotron-4-340B",
    # NVIDIA DGX Cloud benchmarking READMEs (external_runs.csv)
    "Llama 2 70B": "Llama-2-70B", "Nemotron-4 15B": "Nemotron-4-15B", "Nemotron-4 340B": "Nemotron-4-340B",
    # NeMo 25.02-25.07 performance summaries (external_runs_2.csv): "Nemotron-15B"/"-340B" are Nemotron-4
    # (NVIDIA/NeMo@8cfedd7203 scripts/performance/llm/pretrain_nemotron4_{15b,340b}.py)
    "LLAMA3-405B": "Llama-3.1-405B", "LLAMA3.1-405B": "Llama-3.1-405B", "Nemotron-15B": "Nemotron-4-15B",
    "Mixtral-8x7B": "Mixtral-8x7B", "Mixtral-8x22B": "Mixtral-8x22B",
    # NeMo AutoModel performance summary (external_runs_2.csv); the 70B/8B rows run the page's linked recipes
    # custom_llama3_1_70b_pretrain / custom_llama3_3_70b_instruct_peft / llama3_1_8b_peft (Llama 3.x dims alike)
    "DeepSeek V3 671B": "DeepSeek-V3", "Kimi K2": "Kimi-K2", "Qwen3 MoE 30B": "Qwen3-30B-A3B",
    "GPT-OSS 20B": "gpt-oss-20b", "GPT-OSS 120B": "gpt-oss-120b", "Llama3 70B": "Llama-3.1-70B",
    "Llama3 70B 2-node": "Llama-3.1-70B", "Llama3 8B": "Llama-3.1-8B", "Qwen2.5 7B": "qwen2.5-7b",
    "Qwen2.5 32B": "qwen2.5-32b", "Qwen2.5 32B 2-node": "qwen2.5-32b",
    # OLMo-core's README (set 8, part B): its 7B/13B rows are OLMo-2 1124 7B/13B (TransformerConfig.olmo_7B /
    # olmo_13B at the revision printing them), the catalog's models of those names
    "OLMo-2-7B": "OLMo-2-7B", "OLMo-2-13B": "OLMo-2-13B",
    # The DistFlashAttn paper (set 9): 'LLaMA-7B' (Touvron et al., 2023: L32 d4096 h32 ffn11008 vocab 32,000) has the
    # dims of the catalog's Llama-2-7B
    "LLaMA-7B": "Llama-2-7B",
    # GitHub threads of set 9's part C (torchtitan#1690, awsome-distributed-ai#1138): the Qwen3 dense models as their
    # configs name them (the threads' dims are the catalog's qwen3-32b / qwen3-8b; the lead, before any prediction)
    "Qwen3-32B": "qwen3-32b", "Qwen3-8B": "qwen3-8b",
    # Together AI's GB200 report (set 10, part B) names Qwen2.5 72B (the catalog's, from its own config.json; the lead,
    # before any prediction; no earlier file names it)
    "Qwen2.5 72B": "qwen2.5-72b",
}
UNSUPPORTED_MODELS = {
    "Nemotron_3_Nano": "hybrid Mamba-Transformer: no Mamba layers in ModelSpec",
    "Nemotron_3_Super": "hybrid Mamba-Transformer: no Mamba layers in ModelSpec",
    "Nemotron_3_Ultra": "hybrid Mamba-Transformer: no Mamba layers in ModelSpec",
    "Nemotron_3_5_Lightning": "architecture not given by the source",
    "DeepSeekV4 Flash": "architecture not given by the source",
    "Nemotron-H 56B": "hybrid Mamba-Transformer: no Mamba layers in ModelSpec",
    "Grok-1 314B": "architecture not given by the stored sources (only its 64 layers are; models.csv)",
    "Nemotron V3 Nano 30B (26.02)": "hybrid Mamba-Transformer: no Mamba layers in ModelSpec",
    "Nemotron V3 Super 120B (26.02)": "hybrid Mamba-Transformer: no Mamba layers in ModelSpec",
    "Nemotron V3 Ultra 550B (26.04)": "hybrid Mamba-Transformer: no Mamba layers in ModelSpec",
}


@dataclass(frozen=True)
class CalibrationRun:
    key: str  # file:line
    source: str
    model_label: str  # as the row names it
    model: ModelSpec | None
    cluster: Cluster | None
    setup: TrainingSetup | None
    strategy: Strategy | None
    tp_comm_overlap: bool  # False where the framework/paper did not overlap TP communication
    fp8_rowwise: bool  # torchao's rowwise-scaled FP8 recipe (slower GEMMs than tensorwise)
    host_framework: str  # whose host-dispatch overhead applies ("nanotron" for the Playbook)
    cuda_graphs: str  # the recipe's graphs as its notes spell them: "full_iteration", "partial" (per layer) or "none"
    measured_tokens_per_gpu: float | None
    throughput_basis: str  # "reported" or how it was derived
    measured_memory_gib: float | None
    group: str  # model/cluster/problem: plans in one group are ranked against each other
    config: str  # the plan and precision: rows with equal config repeat one configuration
    release: str  # framework container/version, to keep the newest of repeated configurations
    status: str  # "used" or why not

    @property
    def used(self) -> bool:
        return self.status == "used"

    @property
    def holdout(self) -> bool:
        """Deterministic hold-out: a third of the model/cluster groups, never seen by the fit."""
        return fold_of(self.group) == HOLDOUT_FOLD


def _num(text: str) -> float | None:
    m = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)", text or "")
    return float(m.group(1)) if m else None


def _int(text: str, default: int | None = None) -> int | None:
    v = _num(text)
    return int(v) if v is not None else default


def short_source(source: str) -> str:
    s = source.lower()
    for key, name in [("bridge", "megatron-bridge"), ("llm-foundry", "llm-foundry"), ("torchtitan", "torchtitan"),
                      ("sweep", "playbook-sweep"), ("playbook", "playbook-sweep"), ("narayanan", "megatron-ptdp-2021"),
                      ("korthikanti", "korthikanti-2022"), ("examples/llama", "megatron-lm-examples"),
                      ("moe readme", "megatron-lm-moe"), ("megatron-lm readme", "megatron-lm-readme"),
                      ("automodel", "nemo-automodel"), ("nemo performance summary", "nemo-perf-summary"), ("nemo long-sequence", "nemo-long-sequence"),
                      ("dgxc", "dgxc-benchmarking"),
                      # held-out set 3 (external_runs_3.csv)
                      ("flash-attention", "flash-attn-training"), ("mt-nlg", "mt-nlg-2022"),
                      ("llama 3 herd", "llama3-herd-2024"), ("megascale", "megascale-2024"), ("flagperf", "flagperf")]:
        if key in s:
            return name
    return s[:30]


# --- Models ------------------------------------------------------------------------------------
def _gpt_from_notes(name: str, notes: str) -> ModelSpec:
    """Megatron GPT rows: 'GPT: L24 d2048 h16 (MHA) ffn4x vocab131072' (LayerNorm, GeLU, biases)."""
    L = int(re.search(r"L(\d+)", notes).group(1))
    d = int(re.search(r"d(\d+)", notes).group(1))
    h = int(re.search(r"h(\d+)", notes).group(1))
    vocab = int(re.search(r"vocab(\d+)", notes).group(1))
    return ModelSpec(name=name, num_layers=L, hidden_size=d, num_attention_heads=h, ffn_hidden_size=4 * d,
                     gated_mlp=False, activation="gelu", vocab_size=vocab, tied_embeddings=True, norm="layernorm",
                     qkv_bias=True, mlp_bias=True, attention_out_bias=True, source=f"calibration row: {notes}")


GPT_OSS_120B = ModelSpec(
    name="gpt-oss-120b", num_layers=36, hidden_size=2880, num_attention_heads=64, num_kv_heads=8, head_dim=64,
    ffn_hidden_size=2880, vocab_size=201088, qkv_bias=True, sliding_window=128, sliding_window_layer_fraction=0.5,
    moe=MoESpec(num_experts=128, top_k=4, expert_ffn_hidden_size=2880),
    source="calibration models.csv: NVIDIA/NeMo gpt_oss.py GPTOSSConfig120B (36 layers, d2880, 64 heads, kv 8, "
           "128 experts top-4, ffn 2880, vocab 201088, alternating 128-token sliding window); head_dim 64 from the HF config")


def _nemotron3(name: str, layers: int, hidden: int, heads: int, ffn: int) -> ModelSpec:
    """Nemotron-3 (NeMo's 'Nemotron-8B'/'Nemotron-22B' performance rows): multi-head attention, squared-ReLU
    MLP, LayerNorm, no biases, untied embeddings (NVIDIA/NeMo@8cfedd7203:nemo/collections/llm/gpt/model/
    nemotron.py NemotronConfig, Nemotron3Config8B/22B: num_query_groups None); vocab 256,000 as NeMo's
    performance scripts set it (scripts/performance/llm/pretrain_nemotron3_{8b,22b}.py NullTokenizer)."""
    return ModelSpec(name=name, num_layers=layers, hidden_size=hidden, num_attention_heads=heads, ffn_hidden_size=ffn,
                     gated_mlp=False, activation="relu2", vocab_size=256000, norm="layernorm", max_position_embeddings=4096,
                     source=f"NVIDIA/NeMo@8cfedd7203:nemo/collections/llm/gpt/model/nemotron.py {name.replace('-', '')}; "
                            "vocab from scripts/performance/llm/pretrain_nemotron3_*.py")


NEMOTRON3_MODELS = {"Nemotron-8B": _nemotron3("Nemotron-3-8B", 32, 4096, 32, 16384),
                    "Nemotron-22B": _nemotron3("Nemotron-3-22B", 40, 6144, 48, 24576)}


def model_for_row(row: dict) -> tuple[ModelSpec | None, str]:
    label = row["model"]
    if label in UNSUPPORTED_MODELS:
        return None, UNSUPPORTED_MODELS[label]
    if label.startswith("DeepSeekV3"):
        return get_model("DeepSeek-V3"), ""
    if label.startswith("Qwen3_30B"):
        return get_model("Qwen3-30B-A3B"), ""
    if label.startswith("Qwen3_235B"):
        return get_model("Qwen3-235B-A22B"), ""
    if label.startswith("GPT OSS"):
        return GPT_OSS_120B, ""
    if label.startswith("MPT-"):
        return get_model(label), ""
    if label in CATALOG_NAMES:
        return get_model(CATALOG_NAMES[label]), ""
    proxy = re.fullmatch(r"(.+) proxy \(L(\d+)\)", label)
    if proxy and proxy.group(1) in CATALOG_NAMES:
        # NVIDIA's reduced-layer "proxy" runs (DGX Cloud benchmarking): the model with fewer layers, as printed
        base = get_model(CATALOG_NAMES[proxy.group(1)])
        return base.model_copy(update={"name": label, "num_layers": int(proxy.group(2)),
                                       "source": f"{base.source}; layers as the benchmark's table prints them"}), ""
    if label in NEMOTRON3_MODELS:
        return NEMOTRON3_MODELS[label], ""
    if row["arch_notes"].startswith("GPT:"):
        return _gpt_from_notes(label, row["arch_notes"]), ""
    return None, f"no architecture for {label!r}"


# --- Hardware ----------------------------------------------------------------------------------
# GPUs the row parser builds as a variant of a catalog GPU (a measured source's part the catalog lacks), by the
# catalog GPU each copies: what a user of that hardware would choose, and so what a profile they save names.
GPU_VARIANT_BASE = {"h100-sxm-96gb": "h100-sxm"}


def catalog_gpu_id(gpu: GPUSpec) -> str:
    """The catalog id of a run's GPU: its own, or for a parser-built variant the catalog GPU it copies."""
    return GPU_VARIANT_BASE.get(gpu.id, gpu.id)


def gpu_for_row(row: dict) -> tuple[GPUSpec | None, int, str]:
    """(GPU, GPUs sharing the fast link, reason if unsupported)."""
    g = row["gpu"].lower()
    if "gb300" in g:
        return get_gpu("gb300"), 72, ""
    if "gb200" in g:
        return get_gpu("gb200"), 72, ""
    if "b300" in g:
        return get_gpu("b300"), 8, ""
    if "b200" in g:
        return get_gpu("b200"), 8, ""
    if "gh200" in g:
        # Grace Hopper (an H100-class GPU with 96/144 GB and an NVLink-C2C host link) is not the H200 the name holds
        return None, 0, f"unknown GPU {row['gpu']!r} (GH200 Grace Hopper: not in the catalog, not an H200)"
    if "h200" in g:
        return get_gpu("h200"), 8, ""
    if "96gb" in g:
        # torchtitan's Grand Teton H100: 96 GB HBM2e, power-capped at 500 W. Same SM count and
        # datasheet peak as the SXM part; the cap costs sustained clock (a known error source).
        base = get_gpu(GPU_VARIANT_BASE["h100-sxm-96gb"])
        return base.model_copy(update={"id": "h100-sxm-96gb", "name": "H100 96GB HBM2e (500 W)",
                                       "memory_gib": 89.4}), 8, ""
    if "h100" in g:
        return get_gpu("h100-sxm"), 8, ""
    if "a100-40" in g:
        return get_gpu("a100-40gb"), 8, ""
    if "a100" in g:
        return get_gpu("a100-80gb"), 8, ""
    return None, 0, f"unknown GPU {row['gpu']!r}"


# GPUs whose NVLink domain spans a rack of compute trays (GB200/GB300 NVL72: 72 GPUs, gpu_for_row). Their rows state
# 4 GPUs per node (one tray), which is not a boundary of the fast link, so the stated figure is not read for them.
RACK_SCALE_NVLINK_GPUS = frozenset({"gb200", "gb300"})


def gpus_per_node_for_row(row: dict, gpu: GPUSpec, fast_domain: int, num_gpus: int) -> int:
    """GPUs sharing the fast link in this run (Cluster.gpus_per_node): the GPU's NVLink domain, or the row's stated GPUs
    per node when that is smaller (a node holding fewer GPUs than the board's domain: KempnerForge's 4-GPU H200 nodes,
    4-GPU H100 servers in MLPerf), at most the run's GPUs. Rack-scale NVLink GPUs keep their domain (see above)."""
    if stated_gpus_per_node_read(row):
        fast_domain = _int(row["gpus_per_node"])
    return min(fast_domain, num_gpus)


# The 'NOT REPRESENTED: GPUS PER NODE ...' notes (set 8 part B) were written while the parser did not read a row's
# gpus_per_node; where gpus_per_node_for_row now reads the stated figure, the reason no longer holds.
GPUS_PER_NODE_NOT_READ = "GPUS PER NODE"


def stated_gpus_per_node_read(row: dict) -> bool:
    """Whether gpus_per_node_for_row takes the row's stated GPUs per node (smaller than the GPU's fast domain)."""
    gpu, fast_domain, _ = gpu_for_row(row)
    stated = _int(row.get("gpus_per_node") or "")
    return bool(gpu and stated and stated < fast_domain and gpu.id not in RACK_SCALE_NVLINK_GPUS)


def network_for_row(row: dict, gpu: GPUSpec) -> NetworkSpec:
    text = (row["interconnect"] + " " + row["source"]).lower()
    if "playbook" in text or "hf cluster" in text:
        return AWS_EFA
    if "roce" in text and "1600" in text:
        return get_network("roce-200g")  # MosaicML: 1,600 Gb/s per 8-GPU node
    if "hdr" in text:
        return get_network("ib-hdr")
    if "400 gb/s per gpu rdma" in text or "400gb/s per gpu rdma" in text:
        return get_network("roce-400g")  # Meta Grand Teton / WhiteFiber: 400 Gb/s per GPU
    return get_network(gpu.default_network)


# --- Setup and plan ----------------------------------------------------------------------------
def precision_for_row(row: dict) -> tuple[str | None, str]:
    p = row["precision"].lower()
    if "fp4" in p:
        return None, "NVFP4 precision is not modelled (BF16/FP8 only)"
    return ("fp8" if "fp8" in p else "bf16"), ""


def framework_for_row(row: dict) -> str | None:
    """The engine framework the row's stack runs as (stacks.STACK_FRAMEWORKS); None if unmodelled or unknown."""
    return framework_for_stack(row["framework"])[0]


def zero_for_row(row: dict) -> int:
    z = row["zero_stage_or_fsdp"].lower()
    if "shard_grad_op" in z:
        return 2
    if "fsdp" in z and "fsdp=0" not in z:
        return 3
    if "zero-0" in z:
        return 0
    if "distributed optimizer" in z or "zero-1" in z:
        return 1
    if "narayanan" in row["source"].lower():
        return 0  # PTD-P (2021) predates the distributed optimizer
    return 1  # Megatron recipes use the distributed optimizer


def recompute_for_row(row: dict) -> str:
    r = row["recompute"].lower()
    if r.startswith("full"):
        return "full"
    if r.startswith("selective"):
        return "selective"
    return "none"  # not stated: performance recipes run without recomputation


# Megatron-Bridge's LoRA recipe (megatron/bridge/peft/lora.py, class LoRA): rank ``dim`` 32 on
# every linear layer (linear_qkv, linear_proj, linear_fc1, linear_fc2), base model frozen.
BRIDGE_LORA_RANK = 32
# ... and its target_modules default: the four fused Megatron-Core linears, one adapter each (q/k/v are one
# module, gate/up another), not PEFT's seven projections. Megatron-stack LoRA rows read these unless notes
# state otherwise; NeMo 2's LoRA (nemo/collections/llm/peft/lora.py) has the same default.
BRIDGE_LORA_TARGETS = ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2")
# What a row's source states, in its notes (spelling shared with the external sets' collectors):
# 'LORA RANK: 16', 'LORA TARGETS: linear_qkv,linear_proj', 'CUDA GRAPHS: yes' / 'CUDA GRAPHS: no',
# 'CP COMM TYPE: a2a' (p2p, a2a, a2a+p2p, all_gather).
# 'yes' reads as Megatron-Core's per-layer capture (NeMo/MLPerf `enable_cuda_graph`, one graph per
# transformer layer), the only graphs such a row can state without naming the scope.
NOTES_CUDA_GRAPHS = {"yes": "per-layer", "no": "none"}


def lora_for_row(row: dict, mode: str, framework: str) -> dict:
    """TrainingSetup LoRA fields of a LoRA row: rank and targets as its notes state them, else Bridge's
    default rank and, on the Megatron stack, its fused modules (elsewhere PEFT's default targets)."""
    if mode != "lora":
        return {}
    notes = row["notes"]
    rank = re.search(r"LORA RANK: (\d+)", notes)
    targets = re.search(r"LORA TARGETS: ([\w,]+)", notes)
    out = {"lora_rank": int(rank.group(1)) if rank else BRIDGE_LORA_RANK}
    if targets:
        out["lora_targets"] = tuple(t.strip() for t in targets.group(1).split(",") if t.strip())
    elif framework == "megatron":
        out["lora_targets"] = BRIDGE_LORA_TARGETS
    return out


def cp_comm_type_for_row(row: dict) -> dict:
    """'CP COMM TYPE: a2a' (p2p, a2a, a2a+p2p, all_gather) in notes, as TrainingSetup.cp_comm_type; absent: p2p."""
    m = re.search(r"CP COMM TYPE: (a2a\+p2p|a2a|p2p|all_gather)\b", row["notes"])
    return {"cp_comm_type": m.group(1)} if m else {}


def cuda_graphs_for_row(row: dict) -> dict:
    """'CUDA GRAPHS: yes/no' in notes, as TrainingSetup.cuda_graphs; absent: nothing (the recipe's or none)."""
    m = re.search(r"CUDA GRAPHS: (yes|no)\b", row["notes"])
    return {"cuda_graphs": NOTES_CUDA_GRAPHS[m.group(1)]} if m else {}


# Megatron-Bridge's fine-tuning performance rows ("SFT Performance", "LoRA Performance") train on
# SQuAD packed into sequences (scripts/performance/configs/llama/llama3_llm_finetune.py:
# `packed_sequence=True`), each sample "Context: {context} Question: {question} Answer:" + the answer
# (megatron/bridge/data/hf_processors/squad.py), attended per sample (THD / cu_seqlens). Mean sample
# length, ~180 tokens: SQuAD v1.1 question + context averages 0.46 × 384 = 177 BERT WordPiece tokens
# ("padding accounts for 54 % of the total input tokens when the max sequence length is 384",
# openreview.net/forum?id=3nzKUh9a4M); the template and answer add ~8 tokens and Llama 3's 128K-token
# BPE needs somewhat fewer tokens than WordPiece for English: 170-190, we take 180 (an estimate, not
# a measurement of the recipe's data).
BRIDGE_SQUAD_MEAN_DOC_LEN = 180


def packed_doc_len_for_row(row: dict) -> int | None:
    notes = row["notes"].lower()
    if "bridge" in row["source"].lower() and ("task=lora" in notes or "task=sft" in notes):
        return BRIDGE_SQUAD_MEAN_DOC_LEN
    return None


def mode_for_row(row: dict) -> str:
    """'lora' for Megatron-Bridge's 'LoRA Performance' rows (a frozen base: no weight gradients,
    no optimizer over the base, measured faster than pre-training); 'full' otherwise (SFT is full)."""
    return "lora" if "task=lora" in row["notes"].lower() else "full"


def _ga_from_notes(notes: str) -> int | None:
    m = re.search(r"(?:GA|GradAcc|GradAccum)=(\d+)", notes)
    return int(m.group(1)) if m else None


def _local_batch(notes: str) -> int | None:
    m = re.search(r"local batch(?: size)? '?(\d+)", notes)
    return int(m.group(1)) if m else None


# --- Measured throughput -----------------------------------------------------------------------
def narayanan_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """Narayanan et al. 2021, eq. (3): Megatron's count with the layers' forward done twice
    (full recomputation, 4 passes instead of 3); the logit layer counted 3 times."""
    logits = 6.0 * matmul_params(model).logits
    return (megatron_flops_per_token(model, seq_len) - logits) * 4 / 3 + logits


# Runs whose reported MFU is below this spent most of the step neither computing nor moving
# the bytes the plan needs (the Playbook sweep's multi-node TP×PP runs with micro-batch 1 take
# up to 40× longer than their own compute and traffic, and identical configurations differ 15×):
# they are kept in the data and listed by `shardwise validate --all`, but not fitted or scored.
STALLED_MFU_PERCENT = 10.0

PEAK_FOR_REPORTED_MFU = {"a100": 312e12, "h100": 989e12}


def measured_throughput(row: dict, model: ModelSpec, seq_len: int) -> tuple[float | None, str]:
    tokens = _num(row["measured_tokens_per_sec_per_gpu"])
    if tokens:
        return tokens, "reported"
    src = row["source"].lower()
    flops_per_token = (narayanan_flops_per_token(model, seq_len) if "narayanan" in src
                       else megatron_flops_per_token(model, seq_len))
    basis = "Narayanan eq. 3 (incl. recompute)" if "narayanan" in src else "Megatron formula"
    tflops = _num(row["measured_tflops_per_gpu"])
    if tflops:
        return tflops * 1e12 / flops_per_token, f"from model TFLOP/s/GPU ({basis})"
    mfu = _num(row["measured_mfu"])
    if mfu:
        peak = PEAK_FOR_REPORTED_MFU["a100" if "a100" in row["gpu"].lower() else "h100"]
        return mfu / 100 * peak / flops_per_token, f"from MFU ({basis}, peak {peak / 1e12:g} TFLOP/s)"
    return None, "no throughput"


# Sources whose peak memory is torch.cuda.max_memory_allocated (tensors only): they are compared
# with the memory model's tensor peak, total − other (no CUDA context, NCCL buffers, fragmentation).
ALLOCATED_MEMORY_SOURCES = frozenset({"playbook-sweep"})


def _memory_gib(row: dict) -> float | None:
    v = _num(row["measured_peak_mem_gb"])
    if v is None:
        return None
    # torchtitan reports GiB; the Playbook's "GB" comes from torch.cuda.max_memory_allocated / 1024^3.
    return v


# --- Perf recipes behind Megatron-Bridge MoE rows --------------------------------------------
def _release_of(framework: str) -> str:
    m = re.search(r"\((\d+\.\d+(?:\.\d+)?) NeMo", framework)
    return m.group(1) if m else ""


@lru_cache(maxsize=1)
def _recipes() -> tuple[dict, ...]:
    with open(DATA / RECIPE_FILE, newline="") as f:
        return tuple(csv.DictReader(f))


# The recipe file's graph modes as TrainingSetup.cuda_graphs: "partial" is Bridge's per-layer TE capture of
# attn, moe_router and moe_preprocess (bridge_moe_recipes.csv notes), i.e. per-layer graphs of a dropless MoE.
RECIPE_CUDA_GRAPHS = {"none": "none", "partial": "per-layer", "full_iteration": "full-iteration"}


def recipe_recompute_modules(recipe: dict) -> tuple[str, ...] | None:
    """The recipe's Megatron-Core `recompute_modules` that shardwise models, or None without a recipe.
    Bridge's DeepSeek recipes set recompute_granularity="selective" with this list (perf_recipes/
    deepseek/common.py `_deepseek_v3_common`); an empty list recomputes nothing. `mlp` (the dense MLP of
    DeepSeek's first three layers, one B200 recipe) is not modelled: those layers are counted as kept,
    a slight over-count on the first stage."""
    if not recipe:
        return None
    listed = [m for m in recipe.get("recompute_modules", "").split(";") if m]
    return tuple(m for m in listed if m in RECOMPUTE_MODULE_NAMES)


# What every Megatron-Bridge performance recipe trains with, beyond the recipe file's columns: gradients reduced
# (and kept as main_grad) in BF16 - `cfg.ddp.grad_reduce_in_fp32 = False` in perf_recipes/_common.py
# `_benchmark_common` (scripts/performance/configs/{deepseek,gpt_oss,qwen}/*_llm_pretrain.py before the flat
# recipes, at every commit the recipe file cites) - and, in FP8, FP8 primary weights: Bridge's FP8 presets
# (training/mixed_precision.py `bf16_with_mxfp8_mixed`, `bf16_with_fp8_current_scaling_mixed`) set
# `fp8_param_gather = True` (MXFP8 also `reuse_grad_buf_for_mxfp8_param_ag`).
BRIDGE_PERF_GRAD_REDUCE_DTYPE = "bf16"
BRIDGE_FP8_PARAM_GATHER = True


def recipe_for_row(row: dict) -> dict:
    """The recipe entry (bridge_moe_recipes.csv) for a Megatron-Bridge row: same model, system,
    precision and container release; {} when none is recorded (the engine's defaults apply)."""
    if "bridge" not in row["source"].lower():
        return {}
    release, gpu = _release_of(row["framework"]), row["gpu"].split(" ")[0]
    for r in _recipes():
        if (row["model"] == r["model"] and gpu == r["gpu"] and row["precision"] == r["precision"]
                and release in r["releases"].split(";")):
            return r
    return {}


# --- Rows -> runs ------------------------------------------------------------------------------
def _run(file: str, line: int, row: dict) -> CalibrationRun:
    key = f"{file}:{line}"
    label = row["model"]
    source = short_source(row["source"])
    framework, unmodelled = framework_for_stack(row["framework"])
    host = framework or ""
    recipe = recipe_for_row(row)
    common = dict(key=key, source=source, model_label=label, tp_comm_overlap=True, release=row["framework"],
                  host_framework=host, fp8_rowwise="rowwise" in row["precision"].lower(),
                  cuda_graphs=recipe.get("cuda_graphs") or "none")

    def excluded(reason: str, model=None) -> CalibrationRun:
        return CalibrationRun(model=model, cluster=None, setup=None, strategy=None, measured_tokens_per_gpu=None,
                              throughput_basis="", measured_memory_gib=None, group="", config="",
                              status=f"excluded: {reason}", **common)

    if row.get("status", "ok") != "ok":
        return excluded("crashed or out of memory in the source")
    if file == "measured_runs.csv" and "playbook" in row["source"].lower():
        return excluded("same run as in the sweep file")
    model, why = model_for_row(row)
    if model is None:
        return excluded(why)
    if framework is None:
        return excluded(unmodelled, model)
    gpu, fast_domain, why = gpu_for_row(row)
    if gpu is None:
        return excluded(why)
    precision, why = precision_for_row(row)
    if precision is None:
        return excluded(why, model)
    tp, pp, cp = _int(row["tp"]), _int(row["pp"]), _int(row["cp"], 1) or 1
    if tp is None or pp is None:
        return excluded("parallel layout (TP/PP) not stated", model)
    seq = _int(row["seq_len"])
    num_gpus = _int(row["num_gpus"])
    vpp = _int(row["vpp"], 1) or 1
    ep = _int(row["ep"], 1) or 1
    dp = max(num_gpus // (tp * pp * cp), 1)
    notes = row["notes"]
    micro = _int(row["micro_batch"]) or 1
    gbs = _int(row["global_batch_seqs"])
    if gbs is None:
        local = _local_batch(notes) or (micro * _ga_from_notes(notes) if _ga_from_notes(notes) else None)
        if local is None and pp == 1:
            local = micro  # no pipeline: one micro-batch per step is the reading that needs no guess
        if local is None:
            return excluded("global batch not stated (the pipeline bubble depends on it)", model)
        gbs = local * dp
    ga = _ga_from_notes(notes)
    if ga is not None and _int(row["global_batch_seqs"]) is not None and micro * ga * dp != gbs:
        return excluded("inconsistent batch: micro-batch × gradient accumulation × DP differs from the global batch", model)
    mfu = _num(row["measured_mfu"])
    if mfu is not None and mfu < STALLED_MFU_PERCENT:
        return excluded(f"stalled run: measured MFU below {STALLED_MFU_PERCENT:g} %", model)
    tokens, basis = measured_throughput(row, model, seq)
    if tokens is None:
        return excluded("no measured throughput", model)
    cluster = Cluster(gpu=gpu, num_gpus=num_gpus, gpus_per_node=gpus_per_node_for_row(row, gpu, fast_domain, num_gpus),
                      network=network_for_row(row, gpu))
    mode = mode_for_row(row)
    dispatch = {"moe_dispatcher": recipe.get("moe_dispatcher") or "alltoall",
                "moe_a2a_overlap": recipe["moe_a2a_overlap"] == "true",
                "cuda_graphs": RECIPE_CUDA_GRAPHS[recipe.get("cuda_graphs") or "none"],
                "grad_reduce_dtype": BRIDGE_PERF_GRAD_REDUCE_DTYPE,
                "fp8_param_gather": BRIDGE_FP8_PARAM_GATHER and precision == "fp8"} if recipe else {}
    recompute = recompute_for_row(row)
    modules = recipe_recompute_modules(recipe) if not row["recompute"].strip() else None
    if modules is not None:  # the row states none; the recipe it ran says what was recomputed
        recompute = "selective" if modules else "none"
        dispatch["recompute_modules"] = modules if modules else None
    setup = TrainingSetup(seq_len=seq, global_batch=gbs, precision=precision, framework=framework,
                          mode=mode, **lora_for_row(row, mode, framework),
                          **{**dispatch, **cuda_graphs_for_row(row), **cp_comm_type_for_row(row)},
                          mean_doc_len=packed_doc_len_for_row(row))
    strategy = Strategy(tp=tp, pp=pp, vpp=vpp, cp=cp, ep=ep, zero_stage=zero_for_row(row), micro_batch=micro,
                        recompute=recompute, sequence_parallel=True)
    src = row["source"].lower()
    overlap = not any(k in src for k in ("nanotron", "narayanan", "korthikanti")) and "vanilla tp" not in notes.lower()
    group = f"{source} | {model.name} | {gpu.id} x{num_gpus} | seq {seq} | {precision}" + (" | lora" if mode == "lora" else "")
    # precision is part of the group; the plan as the row states it (a recipe's recompute modules refine the
    # run, they do not make it another configuration of the same plan)
    stated = strategy.model_copy(update={"recompute": recompute_for_row(row)})
    config = f"{stated.label()} vpp{vpp} cp{cp} ep{ep} gbs{gbs}"
    return CalibrationRun(
        model=model, cluster=cluster, setup=setup, strategy=strategy, measured_tokens_per_gpu=tokens,
        throughput_basis=basis, measured_memory_gib=_memory_gib(row), group=group, config=config,
        status="used", **{**common, "tp_comm_overlap": overlap})


def _dedupe(runs: list[CalibrationRun]) -> list[CalibrationRun]:
    """Megatron-Bridge repeats one configuration across container releases; keep the newest
    release's row (the engine predicts today's software) and mark the others."""
    newest: dict[tuple[str, str], CalibrationRun] = {}
    for r in runs:
        if r.used and r.source == "megatron-bridge":
            k = (r.group, r.config)
            if k not in newest or _release(r) > _release(newest[k]):
                newest[k] = r
    keep = {id(r) for r in newest.values()}
    out = []
    for r in runs:
        if r.used and r.source == "megatron-bridge" and id(r) not in keep:
            r = CalibrationRun(**{**r.__dict__, "status": "excluded: same configuration measured with a newer release"})
        out.append(r)
    return out


def _release(run: CalibrationRun) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", run.release)
    return tuple(int(x or 0) for x in m.groups()) if m else (0,)


@lru_cache(maxsize=1)
def load_runs() -> tuple[CalibrationRun, ...]:
    runs = []
    for file in RUN_FILES:
        with open(DATA / file, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                runs.append(_run(file, line, row))
    return tuple(_dedupe(runs))


def used_runs(source: str | None = None) -> list[CalibrationRun]:
    return [r for r in load_runs() if r.used and (source is None or r.source == source)]
