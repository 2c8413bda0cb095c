"""Entities in a message, the way engineers write them: "llama3 70b", "8x H100 nodes", "a single
8xH100 box", "64 GPUs (8 nodes)", "32k ctx", "8k seqs", "4M tok batch", "gbs 512", "LoRA r=64",
"TP=4 PP=4 over TP=8 PP=2, both zero1 mb1", "EP8 or EP4", "the DeepSpeed config".

Model and GPU names come from the catalogs (ids and aliases), so a model added to the catalog
is recognised without touching this file. Quoted text ("my notes say: '…'") is data the user
pasted, not their request: it is left out of the extraction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ...engine import hardware_catalog, model_catalog
from ...tools.scenario import Scenario

SEP = r"[\s\-_]*"
LEFT = r"(?<![a-z0-9.])"
RIGHT = r"(?![a-z0-9])"
DEFAULT_NODE_SIZE = 8  # HGX/DGX servers, when neither the message nor the session names a GPU
K = 1024  # "8k context" = 8192 tokens and "16k GPUs" = 16384, as both are quoted in powers of two
M = 2**20  # "1M context" = 1,048,576 tokens; "4M tokens" per batch is kept as text ('4M' = 4·2^20)
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "eight": 8}
# A size alone ("70B on 64 H100s") means the Llama 3.1 model of that size when there is one:
# the dense reference family (8B, 70B, 405B); other sizes become an approximate shape.
BARE_SIZE_FAMILY = ("llama", "3.1")
FAMILY_DEFAULTS = {"mixtral": "mixtral-8x7b"}  # a family named without a size
UNSUPPORTED_HARDWARE = {r"\btpu\s*v?\d*\w*": "TPUs", r"\bgaudi\s*\d*": "Intel Gaudi", r"\btrainium\d*": "AWS Trainium",
                        r"\binferentia\d*": "AWS Inferentia", r"\bcpus?\s+only\b": "CPU-only training"}
MODEL_FAMILIES = r"gpt|llama|qwen|mistral|mixtral|gemma|phi|deepseek|falcon|olmo|claude|gemini|grok|yi|command[\s-]?r"

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
                   "megatron": r"\bmegatron(?:[\s\-]?lm)?\b|\bnemo\b"}
NETWORK_PHRASES = [  # people's words for networks beyond the catalog's aliases
    (r"infiniband\s*ndr|\bib[\s\-]?ndr\b|\bndr\b|400\s*g(?:b|bit)?(?:/s)?\s*(?:ib|infiniband)", "ib-ndr"),
    (r"infiniband\s*hdr|\bib[\s\-]?hdr\b|\bhdr\b|200\s*g(?:b|bit)?(?:/s)?\s*(?:ib|infiniband)", "ib-hdr"),
    (r"infiniband\s*xdr|\bib[\s\-]?xdr\b|\bxdr\b", "ib-xdr"),
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
    (r"interleav|virtual\s*(?:pipeline|stage)|\bvpp\b(?!\s*[=:]?\s*\d)", "virtual_pipeline"),
    (r"sequence[\s\-]?parallel|\bsp\b(?!\s*[=:]?\s*\d)", "sequence_parallel"),
    (r"context[\s\-]?parallel|ring[\s\-]?attention|\bcp\b(?!\s*[=:]?\s*\d)", "context_parallel"),
    (r"expert[\s\-]?parallel|\bep\b(?!\s*[=:]?\s*\d)|all[\s\-]?to[\s\-]?all|all2all", "expert_parallel"),
    (r"\bfsdp\b|fully[\s\-]?sharded", "fsdp"),
    (r"\bzero\b(?!\s*(?:stage\s*)?[=:\-]?\s*[0-3])|zero[\s\-]?redundancy|\bwhat\s+does\s+zero|\bexplain\s+zero", "zero"),
    (r"recomput|checkpointing|rematerial", "activation_recompute"),
    (r"micro[\s\-]?batch|gradient\s*accum|grad[\s\-]?accum", "micro_batch"),
    (r"\bmfu\b|\bhfu\b|flops?\s*utili", "mfu"),
    (r"memory\s*breakdown|where\s+(?:does|did)\s+(?:the\s+)?memory|activation\s*memory|memory\s*go", "memory_breakdown"),
    (r"tensor[\s\-]?parallel|\btp\b(?!\s*[=:]?\s*\d)|all[\s\-]?reduce|tp\s*comm", "tensor_parallel"),
    (r"pipeline[\s\-]?parallel|\bpp\b(?!\s*[=:]?\s*\d)|pipelin", "pipeline_bubble"),
    (r"data[\s\-]?parallel|\bdp\b(?!\s*[=:]?\s*\d)|\bddp\b", "data_parallel"),
]
KNOB = r"tp|pp|vpp|cp|ep|etp|zero(?:\s*stage)?|mbs?|micro[\s\-]?batch(?:[\s\-]?size)?"
KNOB_PATTERNS = {  # plan knobs as written: "TP=4", "tp 4", "TP4", "ZeRO-3", "mb 2", "micro-batch of 2"
    "tp": r"\btp\s*(?:=|:|-|\s)?\s*(\d+)\b|\btensor[\s\-]?parallel(?:ism)?\s*(?:of|=|:)?\s*(\d+)\b",
    "pp": r"\bpp\s*(?:=|:|-|\s)?\s*(\d+)\b|\bpipeline[\s\-]?parallel(?:ism)?\s*(?:of|=|:)?\s*(\d+)\b",
    "vpp": r"\bvpp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "cp": r"\bcp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "ep": r"\bep\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "etp": r"\betp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "zero": r"\bzero\s*(?:stage)?\s*(?:=|:|-|\s)?\s*([0-3])\b",
    "micro_batch": r"\b(?:mbs?|micro[\s\-]?batch(?:[\s\-]?size)?)\s*(?:of|=|:|-|\s)?\s*(\d+)\b(?!\s*(?:vs|or|versus)\b)",
    "recompute": r"\b(none|no|selective|full)\s+(?:activation\s+)?(?:recompute|recomputation|checkpointing)\b"
                 r"|\b(?:recompute|recomputation|checkpointing)\s*(?:=|:)?\s*(none|off|selective|full)\b",
}
ONLY_DP = r"\bpure\s+(?:dp|data[\s-]?parallel)|\bno\s+tp\s*(?:/|or|and|,)\s*pp\b|\bplain\s+(?:fsdp|ddp|dp)\b"
NO_TP = r"\bno\s+tp\b|\bwithout\s+tp\b|\btp\s*=?\s*1\s+only\b"
NO_PP = r"\bno\s+pp\b|\bwithout\s+pp\b"
KNOB_VS = re.compile(  # "EP8 or EP4", "ZeRO-3 vs ZeRO-1", "micro batch 1 vs 4", "selective vs full"
    rf"\b(?P<knob>{KNOB})\s*[=:\-]?\s*(?P<a>\d+)\s*(?:vs\.?|versus|or|over)\s*(?:(?P=knob)\s*[=:\-]?\s*)?(?P<b>\d+)\b"
    r"|\b(?P<ra>none|selective|full)\s+(?:vs\.?|versus|or|over)\s+(?P<rb>none|selective|full)\b")
PLAN_SEPARATOR = re.compile(r"\bover\b|\bvs\.?|\bversus\b|\binstead\s+of\b|\brather\s+than\b|\bcompared\s+(?:to|with)\b"
                            r"|\bthan\b|\bnot\b|\bor\b")
SHARED_BREAK = re.compile(r"[(),;:?!]|\bboth\b|\bwith\b|\band\b|--| - ")


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
    gpus_factor: float | None = None  # "double the GPUs": 2.0
    unknown: list[str] = field(default_factory=list)  # names that look like models/hardware but are not known
    conflicts: list[str] = field(default_factory=list)  # numbers that contradict each other

    def scenario_patch(self, default_gpu: str | None = None, base_gpus: int | None = None) -> Scenario:
        """The scenario fields this message sets (others null); node counts use the GPU's node size."""
        gpu = self.gpu or default_gpu
        node_size = hardware_catalog.get_gpu(gpu).gpus_per_node if gpu else DEFAULT_NODE_SIZE
        gpus, per_node = self.gpus, self.gpus_per_node
        if gpus is None and self.gpus_factor and base_gpus:
            gpus = max(1, round(base_gpus * self.gpus_factor))
        if self.nodes and not gpus:
            per_node = per_node or node_size
            gpus = self.nodes * per_node
        if self.nodes and gpus and not per_node and gpus % self.nodes == 0 and gpus // self.nodes <= node_size:
            per_node = gpus // self.nodes
        return Scenario(model=self.model, params=self.params, gpu=self.gpu, gpus=gpus, gpus_per_node=per_node,
                        network=self.network, seq_len=self.seq_len, global_batch=self.global_batch,
                        global_batch_tokens=self.global_batch_tokens, mode=self.mode, lora_rank=self.lora_rank,
                        precision=self.precision, framework=self.framework)

    def has_scenario(self) -> bool:
        return self.gpus_factor is not None or any(v is not None for v in self.scenario_patch().model_dump().values())


def normalise(text: str) -> str:
    text = text.lower().replace("×", "x").replace("–", "-").replace("—", "-").replace("’", "'")
    text = re.sub(r"(?<=\d)x(?=[a-z])", "x ", text)  # "8xh100" -> "8x h100" ("8x7b" stays)
    return re.sub(r"\s+", " ", text).strip()


def without_quotes(text: str) -> str:
    """Pasted text in quotes is data, not the request."""
    return re.sub(r"\"[^\"]{3,}\"|“[^”]{3,}”|'[^']{12,}'", " ", text)


def _name_pattern(name: str) -> str:
    """'llama-3.1-70b' -> a regex matching 'Llama 3.1 70B', 'llama3.1-70b', 'Meta-Llama-3.1-70B-Instruct'."""
    name = name.lower().rsplit("/", 1)[-1]
    name = re.sub(r"(?<=[a-z])(?=\d)", " ", name)  # llama3 -> llama 3
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
def _family_index() -> dict[tuple[str, str, str], str]:
    """(family, version or '', size) -> catalog id; with version '' the newest of that family and size."""
    index: dict[tuple[str, str, str], str] = {}
    for entry in model_catalog.list_catalog():
        m = re.match(r"([a-z]+)[\-]?(\d+(?:\.\d+)?)?", entry.id)
        size = re.search(r"(?<![a-z0-9.])(\d+(?:\.\d+)?b)(?![a-z0-9])", entry.id)
        if m and size:
            index[(m.group(1), m.group(2) or "", size.group(1))] = entry.id
            index[(m.group(1), "", size.group(1))] = entry.id  # catalog order: later versions overwrite
    return index


def _blank(text: str, span: tuple[int, int]) -> str:
    return text[:span[0]] + " " * (span[1] - span[0]) + text[span[1]:]


def find_model(text: str) -> tuple[str | None, str]:
    for pattern, model_id in _model_patterns():
        m = pattern.search(text)
        if m:
            return model_id, _blank(text, m.span())
    index = _family_index()
    family = rf"(?P<fam>[a-z]+)[\s\-]*(?P<ver>\d+(?:\.\d+)?)?"
    size = r"(?P<size>\d+(?:\.\d+)?)\s*b(?![a-z0-9])"
    for pattern in (rf"(?<![a-z0-9]){family}[\s\-]+{size}",  # llama 70b, qwen 7b, llama 3 70b
                    rf"(?<![a-z0-9.]){size}\s*(?:\(|,)?\s*{family}"):  # 70b llama 3.1, 405b (llama 3.1)
        for m in re.finditer(pattern, text):
            fam, ver, sz = m.group("fam"), m.group("ver") or "", m.group("size") + "b"
            model_id = index.get((fam, ver, sz)) or (index.get((fam, "3.1", sz)) if fam == "llama" and not ver else None)
            model_id = model_id or index.get((fam, "", sz))
            if model_id:
                return model_id, _blank(text, m.span())
    for fam, model_id in FAMILY_DEFAULTS.items():
        m = re.search(rf"\b{fam}\b", text)
        if m:
            return model_id, _blank(text, m.span())
    return None, text


def find_params(text: str) -> tuple[str | None, str | None]:
    """A bare size: "a 70B model", "13b params" (not "4B tokens"): (catalog id if one is meant, params)."""
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bt])(?:n|illion)?(?![a-z0-9])(?!\s*tok)", text)
    if not m:
        return None, None
    if m.group(2) == "b":
        version = re.search(r"\((\d+(?:\.\d+)?)\)|\bllama\s*(\d+(?:\.\d+)?)", text)
        ver = (version.group(1) or version.group(2)) if version else BARE_SIZE_FAMILY[1]
        model_id = _family_index().get((BARE_SIZE_FAMILY[0], ver, m.group(1) + "b"))
        if model_id:
            return model_id, None
    return None, f"{m.group(1)}{m.group(2).upper()}"


@lru_cache(maxsize=1)
def _gpu_patterns() -> list[tuple[re.Pattern, str]]:
    pairs = []
    for gpu in hardware_catalog.list_gpus():
        for name in {gpu.id, *gpu.aliases}:
            words = [re.escape(w) for w in re.split(r"[\s\-_]+", name.lower()) if w]
            pattern = r"(?<![a-z0-9])(?:nvidia\s+|amd\s+)?" + SEP.join(words) + r"(?:s|'s)?(?![a-z0-9])"
            pairs.append((len(name), re.compile(pattern), gpu.id))
    return [(p, i) for _, p, i in sorted(pairs, key=lambda t: -t[0])]


def _count(text: str) -> int | None:
    text = text.replace(",", "").strip()
    if text in NUMBER_WORDS:
        return NUMBER_WORDS[text]
    m = re.fullmatch(r"(-?\d+)(k)?", text)
    if not m:
        return None
    return int(m.group(1)) * (K if m.group(2) else 1)


def find_gpu(text: str) -> tuple[str | None, dict, str]:
    """(gpu id, counts written beside it {gpus, nodes, gpus_per_node}, text with the match blanked)."""
    count_word = r"(?<![\w\-])(-?\d[\d,]*k?|one|single|a|an|two|four|eight)"
    for pattern, gpu_id in _gpu_patterns():
        m = pattern.search(text)
        if not m:
            continue
        before, after = text[:m.start()], text[m.end():]
        counts: dict = {}
        start, end = m.start(), m.end()
        c = re.search(count_word + r"\s*(?:x|\*|of)?\s*(?:(?:dgx|hgx)\s+)?$", before)
        if c and _count(c.group(1)) is not None:
            counts["gpus"] = _count(c.group(1))
            start = c.start()
            n = re.search(count_word + r"\s*(?:nodes?|boxes|servers|machines|hosts)\s*(?:of|with|,|x)?\s*$",
                          before[:c.start()])
            if n and _count(n.group(1)):  # "2 nodes of 8x H100": the count beside the GPU is per node
                counts = {"nodes": _count(n.group(1)), "gpus_per_node": counts["gpus"]}
                start = n.start()
        node_after = re.match(r"\s*(?:gpus?\s*)?(?:nodes?|box(?:es)?|servers?|machines?|hosts?)\b", after)
        if "gpus" in counts and node_after:
            word = c.group(1)
            if word in NUMBER_WORDS or re.search(r"\b(?:one|single|a|an|1)\s+$", before[:c.start()]):
                counts = {"nodes": 1, "gpus_per_node": counts["gpus"]} if word not in NUMBER_WORDS else \
                    {"nodes": counts["gpus"]}
            else:
                counts = {"nodes": counts["gpus"]}  # "8x H100 nodes": eight nodes
        paren = re.match(r"\s*(?:rack|node|box|server|system|pod)?\s*\(\s*(\d[\d,]*)\s*(?:x\b|gpus?\b|\))", after)
        if paren and "gpus" not in counts:  # "DGX A100 (8x 80GB)", "A100 40GB (8)", "16k H100s (16384)"
            counts["gpus"] = int(paren.group(1).replace(",", ""))
        elif paren and counts.get("gpus") and int(paren.group(1).replace(",", "")) > counts["gpus"]:
            counts["gpus"] = int(paren.group(1).replace(",", ""))
        if not counts:
            x = re.match(r"\s*(?:x|\*)\s*(\d+)\b", after)
            if x:
                counts["gpus"] = int(x.group(1))
            elif re.search(r"\b(?:dgx|hgx)\s*$", before):
                counts = {"gpus": 8}  # a DGX/HGX server holds eight
        return gpu_id, counts, _blank(text, (start, end))
    return None, {}, text


def find_network(text: str) -> str | None:
    for pattern, network in NETWORK_PHRASES:
        if re.search(pattern, text):
            return network
    return None


def find_counts(text: str) -> tuple[int | None, int | None, int | None]:
    """(gpus, nodes, gpus per node) from words like '64 GPUs', '8 nodes', '8 per node', 'nodes of 8'."""
    gpus = nodes = per_node = None
    m = re.search(r"(?<![\w.\-])(-?\s?\d[\d,]*k?)\s*(?:x\s*)?(?:gpus?|cards|accelerators|devices|ranks)\b", text)
    if m:
        gpus = _count(m.group(1).replace(" ", ""))
    m = re.search(r"(?<!span )(?<!spans )(?<!across )(?<!over )\b(\d+|one|a|single|two|four|eight)\s*(?:x\s*)?"
                  r"(?:\d+\s*-?\s*gpu\s*)?(?:nodes?|boxes|servers|machines|hosts)\b", text)
    if m:
        nodes = _count(m.group(1))
    m = re.search(r"(\d+)\s*(?:gpus?\s*)?(?:per|/|each)\s*(?:node|box|server|machine|host)?\b|"
                  r"(?:nodes?|boxes|servers|machines)\s*(?:of|with)\s*(\d+)\b|(\d+)\s*-?\s*gpu\s*(?:nodes?|boxes|servers)"
                  r"|(\d+)\s*gpus?\s*each", text)
    if m:
        per_node = int(next(g for g in m.groups() if g))
        if gpus == per_node and nodes:  # "8 nodes with 8 GPUs": the 8 was per node
            gpus = None
    return gpus, nodes, per_node


def find_seq_len(text: str) -> int | None:
    def tokens(number: str, unit: str | None) -> int:
        scale = {"k": K, "m": M}.get(unit or "", 1)
        return int(float(number.replace(",", "")) * scale)

    patterns = [
        r"(?<![\w.])(\d+(?:\.\d+)?)\s*([km])?\s*(?:-?\s*tokens?\s*)?(?:ctx|context|seq(?:uence)?(?!\s*parallel)(?:\s*len(?:gth)?)?)(?!\s*s?\s*(?:/|per))\b",
        r"(?:ctx|context|seq(?:uence)?(?:[\s_-]*len(?:gth)?)?)\s*(?:of|=|:|is)?\s*(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?([km]))?\b",
        r"(\d+(?:\.\d+)?)\s*(k)\s*seqs?\b",  # "8k seqs": sequences 8k long
        r"(?<![\w.])(\d+(?:\.\d+)?)(k)(?![\w])(?!\s*(?:-?\s*tok|tokens|gpus?|h100|h200|b200|a100|cards|nodes))",  # "4k,"
    ]
    for pattern in patterns:
        for m in re.finditer(pattern, text):
            if re.match(r"\s*(?:tok\w*\s*)?(?:global\s*)?(?:batch|gbs)(?!\s*(?:size\s*)?(?:of|=|:)?\s*\d)", text[m.end():]):
                continue
            return tokens(m.group(1), m.group(2))
    return None


def find_batch(text: str) -> tuple[int | None, str | None]:
    """(global batch in sequences, or tokens per batch as written: '4M')."""
    token_patterns = [
        r"(\d+(?:\.\d+)?)\s*([mb])\s*-?\s*(?:tok(?:en)?s?)?\s*(?:/|per\s+)?\s*(?:global\s*)?(?:batch(?:es)?|step|gbs)\b(?!\s*\d)",
        r"(\d+(?:\.\d+)?)\s*(k)\s*-?\s*tok(?:en)?s?\s*(?:/|per\s+)?\s*(?:global\s*)?(?:batch(?:es)?|step|gbs)\b",
        r"(\d+(?:\.\d+)?)\s*([kmb])?\s*-?\s*tok(?:en)?s?\s*(?:/|per\s+)\s*(?:step|batch)",
        r"(?:batch(?:es)?|gbs)\s*(?:size\s*)?(?:of|=|:)?\s*(\d+(?:\.\d+)?)\s*([kmb])?\s*-?\s*tok",
    ]
    for pattern in token_patterns:
        m = re.search(pattern, text)
        if m:
            return None, f"{m.group(1)}{(m.group(2) or '').upper()}"
    sequence_patterns = [
        r"(?:global[\s_-]*batch(?:[\s_-]*size)?|\bgbs|(?<!micro)(?<!micro[\s-])\bbatch(?:[\s_-]*size)?)\s*(?:of|=|:|is)?\s*(\d[\d,]*)\b(?!\s*[kmb]?\s*-?\s*tok)",
        r"(\d[\d,]*)\s*(?:sequences?|seqs?|samples?)\s*(?:per|/)\s*(?:step|batch)",
        r"(?<![\w.])(\d[\d,]*)\s*(?:gbs|global\s*batch|(?<!micro\s)batch\b)",
        r"(?<![\w.])(\d[\d,]*)\s*(?:seqs|sequences)\b",
    ]
    for pattern in sequence_patterns:
        m = re.search(pattern, text)
        if m:
            return int(m.group(1).replace(",", "")), None
    return None, None


def find_mode(text: str) -> tuple[str | None, int | None]:
    mode = None
    if re.search(r"\bq[\s\-]?lora\b", text):
        mode = "qlora"
    elif re.search(r"\blora\b", text):
        mode = "lora"
    elif re.search(r"full[\s\-]*(?:fine[\s\-]?tun\w*|training|param\w*|ft)\b|pre[\s\-]?train|\bno\s+lora\b|\bwithout\s+lora\b",
                   text):
        mode = "full"
    rank = re.search(r"\b(?:rank|r)\s*(?:=|of|:)?\s*(\d+)\b", text) if mode in ("lora", "qlora") else None
    return mode, int(rank.group(1)) if rank else None


def _knob_value(knob: str, m: re.Match):
    value = next((g for g in m.groups() if g is not None), None)
    if knob == "recompute":
        return {"no": "none", "off": "none"}.get(value, value)
    return int(value)


def _knob_name(written: str) -> str:
    written = re.sub(r"[\s\-]", "", written)
    if written.startswith("zero"):
        return "zero"
    if written.startswith(("mb", "micro")):
        return "micro_batch"
    return written


def find_plans(text: str) -> list[dict]:
    """Knob settings; two plans when the text contrasts them ("TP=4 over TP=8", "EP8 or EP4").

    Knobs named after a break in the sentence that follows the second plan (a parenthesis, a
    comma, "both", "with") apply to both plans; a plan named by several knobs is that plan.
    """
    found = []
    for knob, pattern in KNOB_PATTERNS.items():
        for m in re.finditer(pattern, text):
            found.append((m.start(), knob, _knob_value(knob, m)))
    shared_layout: dict = {}
    if re.search(ONLY_DP, text):
        shared_layout = {"tp": 1, "pp": 1}
    else:
        if re.search(NO_TP, text):
            shared_layout["tp"] = 1
        if re.search(NO_PP, text):
            shared_layout["pp"] = 1
    vs = next((v for v in KNOB_VS.finditer(text) if (v.group("a"), v.group("ra")) != (v.group("b"), v.group("rb"))), None)
    if vs:  # one knob, two values; everything else is common to both
        if vs.group("knob"):
            knob = _knob_name(vs.group("knob"))
            a, b = int(vs.group("a")), int(vs.group("b"))
        else:
            knob, a, b = "recompute", vs.group("ra"), vs.group("rb")
        common = {k: v for pos, k, v in found if not vs.start() <= pos < vs.end() and k != knob}
        common = {**shared_layout, **common}
        return [{**common, knob: a}, {**common, knob: b}]
    if not found:
        return [shared_layout] if shared_layout else []
    found.sort()
    first_pos = found[0][0]
    sep = next((s for s in PLAN_SEPARATOR.finditer(text) if s.start() > first_pos), None)
    if sep is None and re.match(r"\s*why\s+not\b", text):
        sep = re.search(r"\bnot\b", text)
    if sep is not None:
        first = {k: v for pos, k, v in found if pos < sep.start()}
        rest = [(pos, k, v) for pos, k, v in found if pos > sep.start()]
        if rest:
            second: dict = {}
            shared: dict = {}
            brk = next((b for b in SHARED_BREAK.finditer(text) if b.start() > rest[0][0]), None)
            for pos, k, v in rest:
                if brk is not None and pos > brk.start() and k not in first:
                    shared[k] = v
                else:
                    second.setdefault(k, v)
            if first or re.search(r"\bnot\b", text[:sep.end()]):
                a = {**shared_layout, **shared, **first}
                b = {**shared_layout, **shared, **second}
                return [a if first else {}, b]
    plan: dict = dict(shared_layout)
    for _, knob, value in found:
        plan.setdefault(knob, value)
    return [plan]


def find_export_format(text: str) -> str | None:
    for fmt, pattern in EXPORT_WORDS.items():
        if re.search(pattern, text):
            return fmt
    return None


def find_framework(text: str) -> str | None:
    """A framework named as how the user trains ("with deepspeed", "deepspeed zero2", "plain FSDP")."""
    for framework, pattern in FRAMEWORK_WORDS.items():
        if re.search(pattern, text):
            return framework
    return None


def find_concept(text: str) -> str | None:
    for pattern, concept in CONCEPTS:
        if re.search(pattern, text):
            return concept
    return None


def find_unknown(text: str, model: str | None) -> list[str]:
    unknown = [label for pattern, label in UNSUPPORTED_HARDWARE.items() if re.search(pattern, text)]
    if model is None:
        for m in re.finditer(rf"\b(?:{MODEL_FAMILIES})[\s\-]*[\w.]*\d[\w.]*", text):
            unknown.append(m.group(0).strip())
    return unknown


def extract(message: str) -> Entities:
    text = without_quotes(normalise(message))
    e = Entities()
    e.plans = find_plans(text)
    e.export_format = find_export_format(text)
    e.concept = find_concept(text)
    e.model, rest = find_model(text)
    e.gpu, counts, rest = find_gpu(rest)
    gpus, nodes, per_node = find_counts(rest)
    e.gpus = counts.get("gpus") if counts.get("gpus") is not None else gpus
    e.nodes = counts.get("nodes") or nodes
    e.gpus_per_node = counts.get("gpus_per_node") or per_node
    if e.gpus is None and re.search(r"\b(?:double|twice)\b[^.?!]*\bgpus?\b|\b2x\s+(?:the\s+)?gpus", text):
        e.gpus_factor = 2.0
    elif e.gpus is None and re.search(r"\bhalve\b[^.?!]*\bgpus?\b|\bhalf\s+(?:the\s+)?gpus", text):
        e.gpus_factor = 0.5
    e.network = find_network(rest)
    e.seq_len = find_seq_len(rest)
    e.global_batch, e.global_batch_tokens = find_batch(rest)
    if e.model is None:
        tokens_free = re.sub(r"\d+(?:\.\d+)?\s*[kmb]?\s*-?\s*tok\w*", " ", rest)
        e.model, e.params = find_params(tokens_free)
    e.mode, e.lora_rank = find_mode(text)
    if re.search(r"\bfp8\b", text):
        e.precision = "fp8"
    elif re.search(r"\bbf16\b|bfloat16", text):
        e.precision = "bf16"
    e.framework = find_framework(text)
    e.unknown = find_unknown(text, e.model or e.params)
    if e.gpus and e.nodes and e.gpus_per_node and e.gpus != e.nodes * e.gpus_per_node:
        e.conflicts.append(f"you wrote {e.gpus} GPUs, and also {e.nodes} nodes of {e.gpus_per_node} GPUs each")
    return e
