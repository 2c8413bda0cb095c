"""Entities in a message, the way engineers write them: "llama3 70b", "8x H100 nodes", "64 GPUs",
"32k ctx", "4M tok batch", "LoRA r=64", "TP=4 over TP=8", "the DeepSpeed config".

Model and GPU names come from the catalogs (ids and aliases), so a model added to the
catalog is recognised without touching this file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ...engine import hardware_catalog, model_catalog
from ...tools.scenario import Plan, Scenario

SEP = r"[\s\-_]*"
LEFT = r"(?<![a-z0-9.])"
RIGHT = r"(?![a-z0-9])"
DEFAULT_NODE_SIZE = 8  # HGX/DGX servers, when neither the message nor the session names a GPU
K_TOKENS = 1024  # "8k context" = 8192 tokens, as context lengths are quoted
EXPORT_WORDS = {
    "megatron-bridge": r"megatron[\s\-_]*bridge|\bnemo\b|\bbridge\b",
    "deepspeed": r"deep[\s\-]?speed|\bds[\s_-]?config",
    "torchtitan": r"torch[\s\-]?titan|\btitan\b",
    "accelerate": r"\baccelerate\b",
    "nanotron": r"\bnanotron\b",
    "megatron": r"\bmegatron(?:[\s\-]?lm)?\b",
    "fsdp": r"\bfsdp2?\b|fully[\s_]shard",
    "launch": r"\blaunch\b|\btorchrun\b|\bsrun\b|\bslurm\b|\bsbatch\b",
}
FRAMEWORK_WORDS = {"deepspeed": r"deep[\s\-]?speed", "fsdp": r"\bfsdp2?\b|torch[\s\-]?titan",
                   "megatron": r"\bmegatron\b|\bnemo\b|\bnanotron\b"}
NETWORK_PHRASES = [  # people's words for networks beyond the catalog's aliases
    (r"infiniband\s*ndr|\bib[\s\-]?ndr\b|400\s*g(?:b|bit)?(?:/s)?\s*(?:ib|infiniband)", "ib-ndr"),
    (r"infiniband\s*hdr|\bib[\s\-]?hdr\b|200\s*g(?:b|bit)?(?:/s)?\s*(?:ib|infiniband)", "ib-hdr"),
    (r"infiniband\s*xdr|\bib[\s\-]?xdr\b", "ib-xdr"),
    (r"\broce\b[\s\-]*(?:v2)?\s*200", "roce-200g"),
    (r"\broce\b", "roce-400g"),
    (r"\b100\s*g(?:b|bit)?(?:e|/s)?\s*(?:ethernet|eth)?\b(?!\s*(?:b|gb|gib)\b)|\bethernet\b", "eth-100g"),
    (r"\b25\s*g(?:b|bit)?(?:e|/s)?\s*(?:ethernet|eth)?\b", "eth-25g"),
    (r"\bslingshot\b", "slingshot-11"),
    (r"\binfiniband\b|\bib\b", "ib-ndr"),
]
CONCEPTS = [  # (pattern, concept), most specific first
    (r"\bq[\s\-]?lora\b", "qlora"),
    (r"\blora\b", "lora"),
    (r"bubble", "pipeline_bubble"),
    (r"interleav|virtual\s*(?:pipeline|stage)|\bvpp\b", "virtual_pipeline"),
    (r"sequence[\s\-]?parallel|\bsp\b", "sequence_parallel"),
    (r"context[\s\-]?parallel|ring[\s\-]?attention|\bcp\b", "context_parallel"),
    (r"expert[\s\-]?parallel|\bep\b|all[\s\-]?to[\s\-]?all", "expert_parallel"),
    (r"\bfsdp\b|fully[\s\-]?sharded", "fsdp"),
    (r"\bzero\b|zero[\s\-]?[0-3]|zero[\s\-]?redundancy", "zero"),
    (r"recomput|checkpointing|rematerial", "activation_recompute"),
    (r"micro[\s\-]?batch|gradient\s*accum|grad[\s\-]?accum", "micro_batch"),
    (r"\bmfu\b|\bhfu\b|flops?\s*utili", "mfu"),
    (r"memory\s*breakdown|where\s+(?:does|did)\s+(?:the\s+)?memory|activation\s*memory|memory\s*go", "memory_breakdown"),
    (r"tensor[\s\-]?parallel|\btp\b|all[\s\-]?reduce", "tensor_parallel"),
    (r"pipeline[\s\-]?parallel|\bpp\b|pipelin", "pipeline_bubble"),
    (r"data[\s\-]?parallel|\bdp\b|\bddp\b", "data_parallel"),
]
KNOB_PATTERNS = {  # plan knobs as written: "TP=4", "tp 4", "TP4", "ZeRO-3", "mb 2", "micro-batch of 2"
    "tp": r"\btp\s*(?:=|:|-|\s)?\s*(\d+)\b|\btensor[\s\-]?parallel(?:ism)?\s*(?:of|=|:)?\s*(\d+)\b",
    "pp": r"\bpp\s*(?:=|:|-|\s)?\s*(\d+)\b|\bpipeline[\s\-]?parallel(?:ism)?\s*(?:of|=|:)?\s*(\d+)\b",
    "vpp": r"\bvpp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "cp": r"\bcp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "ep": r"\bep\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "etp": r"\betp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "zero": r"\bzero\s*(?:stage)?\s*(?:=|:|-|\s)?\s*([0-3])\b",
    "micro_batch": r"\b(?:mbs?|micro[\s\-]?batch(?:[\s\-]?size)?)\s*(?:of|=|:|-|\s)?\s*(\d+)\b",
    "recompute": r"\b(none|no|selective|full)\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                 r"|\b(?:recompute|recomputation|checkpointing)\s*(?:=|:)?\s*(none|off|selective|full)\b",
}
PLAN_SEPARATOR = r"\bover\b|\bvs\.?\b|\bversus\b|\binstead\s+of\b|\brather\s+than\b|\bcompared\s+(?:to|with)\b|\bthan\b|\bnot\b"


@dataclass
class Entities:
    model: str | None = None
    params: str | None = None
    gpu: str | None = None
    gpus: int | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    network: str | None = None
    seq_len: int | None = None
    global_batch: int | None = None
    global_batch_tokens: str | None = None
    mode: str | None = None
    lora_rank: int | None = None
    precision: str | None = None
    framework: str | None = None
    plans: list[dict] = field(default_factory=list)  # knob settings, in the order written (A, then B)
    export_format: str | None = None
    concept: str | None = None

    def scenario_patch(self, default_gpu: str | None = None) -> Scenario:
        """The scenario fields this message sets (others null); node counts use the GPU's node size."""
        gpus = self.gpus
        per_node = self.gpus_per_node
        if self.nodes and not gpus:
            gpu = self.gpu or default_gpu
            per_node = per_node or (hardware_catalog.get_gpu(gpu).gpus_per_node if gpu else DEFAULT_NODE_SIZE)
            gpus = self.nodes * per_node
        if self.nodes and gpus and not per_node and gpus % self.nodes == 0:
            per_node = gpus // self.nodes
        return Scenario(model=self.model, params=self.params, gpu=self.gpu, gpus=gpus, gpus_per_node=per_node,
                        network=self.network, seq_len=self.seq_len, global_batch=self.global_batch,
                        global_batch_tokens=self.global_batch_tokens, mode=self.mode, lora_rank=self.lora_rank,
                        precision=self.precision, framework=self.framework)

    def has_scenario(self) -> bool:
        return any(v is not None for v in self.scenario_patch().model_dump().values())


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower().replace("×", "x").replace("–", "-").replace("—", "-")).strip()


def _name_pattern(name: str) -> str:
    """'llama-3.1-70b' -> a regex matching 'Llama 3.1 70B', 'llama3.1-70b', 'Meta-Llama-3.1-70B-Instruct'."""
    name = name.lower().rsplit("/", 1)[-1]
    name = re.sub(r"(?<=[a-z])(?=\d)", " ", name)  # llama3 -> llama 3
    name = re.sub(r"(?<=\d)(?=[a-z]{2,})", " ", name)  # 70b stays, 3b300 is rare
    words = [w for w in re.split(r"[\s\-_]+", name) if w]
    parts = []
    for w in words:
        m = re.fullmatch(r"(\d+(?:\.\d+)?)([bmkt])", w)
        parts.append(re.escape(m.group(1)) + r"\s*" + m.group(2) if m else re.escape(w))
    return LEFT + SEP.join(parts) + RIGHT


@lru_cache(maxsize=1)
def _model_patterns() -> list[tuple[re.Pattern, str]]:
    pairs = []
    for entry in model_catalog.list_catalog():
        for name in {entry.id, entry.spec.name, *entry.aliases}:
            pairs.append((len(name), re.compile(_name_pattern(name)), entry.id))
    return [(p, i) for _, p, i in sorted(pairs, key=lambda t: -t[0])]


@lru_cache(maxsize=1)
def _family_index() -> dict[tuple[str, str], str]:
    """(family word, size) -> the newest catalog id, for "llama 70b" or "qwen 7b"."""
    index: dict[tuple[str, str], str] = {}
    for entry in model_catalog.list_catalog():
        m = re.match(r"([a-z]+)", entry.id)
        size = re.search(r"(?<![a-z0-9.])(\d+(?:\.\d+)?b)(?![a-z0-9])", entry.id)
        if m and size:
            index[(m.group(1), size.group(1))] = entry.id  # catalog order: later versions overwrite
    return index


@lru_cache(maxsize=1)
def _gpu_patterns() -> list[tuple[re.Pattern, str]]:
    pairs = []
    for gpu in hardware_catalog.list_gpus():
        for name in {gpu.id, *gpu.aliases}:
            words = [re.escape(w) for w in re.split(r"[\s\-_]+", name.lower()) if w]
            pattern = r"(?<![a-z0-9])(?:nvidia\s+|amd\s+)?" + SEP.join(words) + r"(?:s|'s)?(?![a-z0-9])"
            pairs.append((len(name), re.compile(pattern), gpu.id))
    return [(p, i) for _, p, i in sorted(pairs, key=lambda t: -t[0])]


def _blank(text: str, span: tuple[int, int]) -> str:
    return text[:span[0]] + " " * (span[1] - span[0]) + text[span[1]:]


def find_model(text: str) -> tuple[str | None, str]:
    for pattern, model_id in _model_patterns():
        m = pattern.search(text)
        if m:
            return model_id, _blank(text, m.span())
    for m in re.finditer(r"(?<![a-z0-9])([a-z]+)[\s\-]*(?:\d+(?:\.\d+)?[\s\-]+)?(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", text):
        model_id = _family_index().get((m.group(1), m.group(2) + "b"))
        if model_id:
            return model_id, _blank(text, m.span())
    return None, text


def find_params(text: str) -> str | None:
    """A bare size: "a 70B model", "13b params" (not "4B tokens")."""
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bt])(?:n|illion)?(?![a-z0-9])(?!\s*tok)", text)
    if m:
        return f"{m.group(1)}{m.group(2).upper()}"
    return None


def find_gpu(text: str) -> tuple[str | None, dict, str]:
    """(gpu id, counts written beside it {gpus, nodes, gpus_per_node}, text with the match blanked)."""
    for pattern, gpu_id in _gpu_patterns():
        m = pattern.search(text)
        if not m:
            continue
        before, after = text[:m.start()], text[m.end():]
        counts: dict = {}
        start = m.start()
        c = re.search(r"(\d[\d,]*)\s*(?:x|\*|of)?\s*$", before)
        if c:
            counts["gpus"] = int(c.group(1).replace(",", ""))
            start = c.start()
            n = re.search(r"(\d+)\s*(?:nodes?|boxes|servers|machines|hosts)\s*(?:of|with|,|x)?\s*$", before[:c.start()])
            if n:  # "2 nodes of 8x H100": the count beside the GPU is per node
                counts = {"nodes": int(n.group(1)), "gpus_per_node": counts["gpus"]}
                start = n.start()
        if "gpus" in counts and re.match(r"\s*(?:gpus?\s*)?(?:nodes?|boxes|servers|machines|hosts)\b", after):
            counts = {"nodes": counts["gpus"]}  # "8x H100 nodes": eight nodes
        if not counts:
            x = re.match(r"\s*(?:x|\*)\s*(\d+)\b", after)
            if x:
                counts["gpus"] = int(x.group(1))
        return gpu_id, counts, _blank(text, (start, m.end()))
    return None, {}, text


def find_network(text: str) -> str | None:
    for pattern, network in NETWORK_PHRASES:
        if re.search(pattern, text):
            return network
    return None


def find_counts(text: str) -> tuple[int | None, int | None, int | None]:
    """(gpus, nodes, gpus per node) from words like '64 GPUs', '8 nodes', '8 per node', 'nodes of 8'."""
    gpus = nodes = per_node = None
    m = re.search(r"(\d[\d,]*)\s*(?:x\s*)?(?:gpus?|cards|accelerators|devices|ranks)\b", text)
    if m:
        gpus = int(m.group(1).replace(",", ""))
    m = re.search(r"(\d+)\s*(?:x\s*)?(?:\d+\s*-?\s*gpu\s*)?(?:nodes?|boxes|servers|machines|hosts)\b", text)
    if m:
        nodes = int(m.group(1))
    m = re.search(r"(\d+)\s*(?:gpus?\s*)?(?:per|/|each)\s*(?:node|box|server|machine|host)\b|"
                  r"(?:nodes?|boxes|servers|machines)\s*(?:of|with)\s*(\d+)\b|(\d+)\s*-?\s*gpu\s*(?:nodes?|boxes|servers)", text)
    if m:
        per_node = int(next(g for g in m.groups() if g))
        if gpus == per_node and nodes:  # "8 nodes with 8 GPUs": the 8 was per node
            gpus = None
    return gpus, nodes, per_node


def find_seq_len(text: str) -> int | None:
    def tokens(number: str, k: str) -> int:
        return int(float(number) * K_TOKENS) if k else int(number.replace(",", ""))

    patterns = [
        r"(\d+(?:\.\d+)?)\s*(k)?\s*(?:tokens?\s*)?(?:ctx|context|seq(?:uence)?(?!s)(?:\s*len(?:gth)?)?)\b",
        r"(?:ctx|context|seq(?:uence)?(?:[\s_-]*len(?:gth)?)?)\s*(?:of|=|:|is)?\s*(\d[\d,]*(?:\.\d+)?)\s*(k)?\b",
    ]
    for pattern in patterns:
        m = re.search(pattern, text)
        if m and not re.match(r"\s*(?:tok\w*\s*)?(?:global\s*)?batch", text[m.end():]):
            return tokens(m.group(1), m.group(2))
    return None


def find_batch(text: str) -> tuple[int | None, str | None]:
    """(global batch in sequences, or tokens per batch as written: '4M')."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kmb])?\s*-?\s*tok(?:en)?s?\s*(?:global\s*)?(?:batch(?:es)?|per\s*(?:step|batch))", text)
    if not m:
        m = re.search(r"batch(?:es)?\s*(?:size\s*)?(?:of|=|:)?\s*(\d+(?:\.\d+)?)\s*([kmb])?\s*tok", text)
    if m:
        return None, f"{m.group(1)}{(m.group(2) or '').upper()}"
    m = re.search(r"(?:global[\s_-]*batch(?:[\s_-]*size)?|\bgbs)\s*(?:of|=|:)?\s*(\d[\d,]*)\b(?!\s*[kmb]?\s*tok)", text)
    if not m:
        m = re.search(r"(\d[\d,]*)\s*(?:sequences?|samples?)\s*(?:per|/)\s*(?:step|batch)", text)
    if m:
        return int(m.group(1).replace(",", "")), None
    return None, None


def find_mode(text: str) -> tuple[str | None, int | None]:
    mode = None
    if re.search(r"\bq[\s\-]?lora\b", text):
        mode = "qlora"
    elif re.search(r"\blora\b", text):
        mode = "lora"
    elif re.search(r"full[\s\-]*(?:fine[\s\-]?tun\w*|training|param\w*|ft)\b|pre[\s\-]?train|\bno\s+lora\b|\bwithout\s+lora\b", text):
        mode = "full"
    rank = re.search(r"\b(?:rank|r)\s*(?:=|of|:)?\s*(\d+)\b", text) if mode in ("lora", "qlora") else None
    return mode, int(rank.group(1)) if rank else None


def find_plans(text: str) -> list[dict]:
    """Knob settings; two groups when the text contrasts plans ("TP=4 over TP=8")."""
    found = []
    for knob, pattern in KNOB_PATTERNS.items():
        for m in re.finditer(pattern, text):
            value = next((g for g in m.groups() if g is not None), None)
            if knob == "zero":
                value = int(value)
            elif knob == "recompute":
                value = {"no": "none", "off": "none"}.get(value, value)
            else:
                value = int(value)
            found.append((m.start(), knob, value))
    if not found:
        return []
    found.sort()
    sep = re.search(PLAN_SEPARATOR, text)
    if sep:
        first = {k: v for pos, k, v in found if pos < sep.start()}
        second = {k: v for pos, k, v in found if pos > sep.start()}
        if first and second:
            return [first, second]
        if second and not first:  # "why not TP=8?": only the alternative is named
            return [{}, second]
    plan: dict = {}
    for _, knob, value in found:
        plan.setdefault(knob, value)
    return [plan]


def find_export_format(text: str) -> str | None:
    for fmt, pattern in EXPORT_WORDS.items():
        if re.search(pattern, text):
            return fmt
    return None


def find_framework(text: str) -> str | None:
    m = re.search(r"\b(?:with|using|in|on|via|for|under)\s+(?:pytorch\s+)?(deep[\s\-]?speed|fsdp2?|torch[\s\-]?titan|megatron(?:[\s\-]?lm)?|nemo)\b", text)
    if not m:
        return None
    word = m.group(1)
    for framework, pattern in FRAMEWORK_WORDS.items():
        if re.search(pattern, word):
            return framework
    return None


def find_concept(text: str) -> str | None:
    for pattern, concept in CONCEPTS:
        if re.search(pattern, text):
            return concept
    return None


def extract(message: str) -> Entities:
    text = normalise(message)
    e = Entities()
    e.plans = find_plans(text)
    e.export_format = find_export_format(text)
    e.concept = find_concept(text)
    e.model, rest = find_model(text)
    e.gpu, counts, rest = find_gpu(rest)
    gpus, nodes, per_node = find_counts(rest)
    e.gpus = counts.get("gpus") or gpus
    e.nodes = counts.get("nodes") or nodes
    e.gpus_per_node = counts.get("gpus_per_node") or per_node
    e.network = find_network(rest)
    e.seq_len = find_seq_len(rest)
    e.global_batch, e.global_batch_tokens = find_batch(rest)
    if e.model is None:
        e.params = find_params(re.sub(r"\d+(?:\.\d+)?\s*[kmb]?\s*-?\s*tok\w*", " ", rest))
    e.mode, e.lora_rank = find_mode(text)
    if re.search(r"\bfp8\b", text):
        e.precision = "fp8"
    elif re.search(r"\bbf16\b|bfloat16", text):
        e.precision = "bf16"
    e.framework = find_framework(text)
    return e
