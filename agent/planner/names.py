"""Names in a message, resolved through the catalogs: models ("llama3 70b", "70b llama 3.1",
"405B"), GPUs with the counts written beside them ("8x H100 nodes", "a single 8xH100 box",
"DGX A100 (8x 80GB)"), networks, config formats, frameworks, concepts, and names that look
like models or hardware but are not known. A model or GPU added to a catalog is recognised
without touching this file."""

from __future__ import annotations

import re
from functools import lru_cache

from ...engine import hardware_catalog, model_catalog
from .quantities import NUMBER_WORDS, _count

SEP = r"[\s\-_]*"
LEFT = r"(?<![a-z0-9.])"
RIGHT = r"(?![a-z0-9])"
# A size alone ("70B on 64 H100s") means the Llama 3.1 model of that size when there is one:
# the dense reference family (8B, 70B, 405B); other sizes become an approximate shape.
BARE_SIZE_FAMILY = ("llama", "3.1")
FAMILY_DEFAULTS = {"mixtral": "mixtral-8x7b"}  # a family named without a size
# a family's short form, as people write it before a version ("ds-v2-lite", "dsv2"); a version must follow,
# so "ds config" stays DeepSpeed's
FAMILY_SHORT = {"deepseek": "ds"}
# Accelerators shardwise has no specs for (it models NVIDIA and AMD GPUs): named, they are refused, not guessed.
UNSUPPORTED_ACCELERATORS = {r"\btpu\s*v?\d*\w*": "TPUs", r"\bgaudi\s*\d*": "Intel Gaudi", r"\btrainium\d*": "AWS Trainium",
                            r"\binferentia\d*": "AWS Inferentia", r"\bascend\b|\bhuawei\b": "Huawei Ascend",
                            r"\bcerebras\b|\bwse[\s\-]?\d\b": "Cerebras", r"\bgraphcore\b|\bipus?\b": "Graphcore IPUs",
                            r"\bsambanova\b": "SambaNova", r"\bgroq\b|\blpus?\b": "Groq"}
UNSUPPORTED_HARDWARE = {**UNSUPPORTED_ACCELERATORS, r"\bcpus?\s+only\b": "CPU-only training"}
# torchtitan's "llama3" model is Llama 3.1: its 8B/70B/405B recipes are "Llama 3.1 8B, 70B, and 405B" and fetch
# meta-llama/Llama-3.1-* assets (pytorch/torchtitan, torchtitan/models/llama3/README.md). "torchtitan llama3 8b"
# names that model, not the April 2024 Llama 3 of the same shape. Only torchtitan's own spelling ("llama3 8b",
# "llama3_8b": its model name and flavor): "llama 3 8b" names Meta's Llama 3 release, whatever trains it.
TORCHTITAN_SAID = re.compile(r"torch[\s\-]?titan|\[titan\]")
TORCHTITAN_FLAVOR = re.compile(r"\bllama3[\s_\-]*(?:8|70)b\b")
TORCHTITAN_LLAMA3 = {"llama-3-8b": "llama-3.1-8b", "llama-3-70b": "llama-3.1-70b"}
MODEL_FAMILIES = r"gpt|llama|qwen|mistral|mixtral|gemma|phi|deepseek|falcon|olmo|claude|gemini|grok|yi|command[\s-]?r"

EXPORT_WORDS = {
    "megatron-bridge": r"megatron[\s\-_]*bridge|\bnemo\b|\bbridge\b",
    "deepspeed": r"deep[\s\-]?speed|\bds[\s_-]?config",
    "torchtitan": r"torch[\s\-]?titan|\btitan\b",
    "accelerate": r"\baccelerate\b|\btrl\b",  # TRL's DPO settings ride on the Accelerate export's note
    "nanotron": r"\bnanotron\b",
    "megatron": r"\bmegatron(?:[\s\-]?lm)?\b",
    "fsdp": r"\bfsdp2?\b|fully[\s_]shard|\bverl\b",  # verl's GRPO/PPO settings ride on the FSDP export's note
    "launch": r"\blaunch\b|\btorchrun\b|\bsrun\b|\bslurm\b|\bsbatch\b",
}
FRAMEWORK_WORDS = {"deepspeed": r"deep[\s\-]?speed|\bds[\s_-]?config", "fsdp": r"\bfsdp2?\b|torch[\s\-]?titan",
                   "megatron": r"\bmegatron(?:[\s\-]?lm)?\b|\bnemo\b", "nanotron": r"\bnanotron\b"}
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
FRAMEWORK_NAME = r"(?:megatron(?:[\s\-]?(?:lm|core|bridge))?|deep[\s\-]?speed|fsdp2?|torch[\s\-]?titan|nanotron|nemo|accelerate)\b"
# Frameworks asked about, not trained with: "do torchtitan / deepspeed / nanotron even have deepep?", "does nanotron
# support expert parallelism", "is deepep available in deepspeed?". The frameworks are the question's topic.
FRAMEWORK_LIST = rf"(?:the\s+)?{FRAMEWORK_NAME}(?:\s*(?:/|,|&|\+|\bor\b|\band\b)\s*(?:the\s+)?{FRAMEWORK_NAME}){{0,5}}"
FRAMEWORKS_ASKED = (rf"\b(?:do|does|did|would|will|can|could)\s+{FRAMEWORK_LIST}\s+(?:even\s+|actually\s+|also\s+|still\s+|already\s+)?"
                    r"(?:have|has|offer|support|ship|provide|implement|expose|let|allow|come\s+with)\w*\b"
                    rf"|\b(?:available|supported|offered|usable|implemented)\s+(?:in|on|with|by|for)\s+{FRAMEWORK_LIST}")
# Which framework offers an MoE token dispatcher (DeepEP above all): answered from the engine's rule
# (explain_concept moe_dispatcher), not as a plan. "which frameworks actually let me use deepep", "do torchtitan /
# deepspeed even have deepep?", "is deepep supported in deepspeed", "what dispatchers does fsdp offer"
DISPATCH_WORD = r"(?:deep[\s_-]?ep|hybrid[\s_-]?ep|(?:token\s+|expert\s+|moe\s+)?dispatch(?:ers?|ing)?)\b"
OFFER_VERB = (r"(?:let|lets|allow|allows|support|supports|offer|offers|have|has|ship|ships|provide|provides|implement|"
              r"implements|expose|exposes|work|works|can|come\s+with|available|usable|supported|offered)\b")
DISPATCHER_OFFERED = (rf"\b(?:which|what)\s+(?:\w+\s+)?(?:frameworks?|stacks?|trainers?|libraries|codebases?)\b[^.?!]{{0,40}}?"
                      rf"\b{OFFER_VERB}[^.?!]{{0,50}}\b{DISPATCH_WORD}"
                      rf"|\b{DISPATCH_WORD}[^.?!]{{0,50}}\b(?:in|on|with|by)\s+which\s+(?:\w+\s+)?frameworks?\b"
                      rf"|(?:{FRAMEWORKS_ASKED})[^.?!]{{0,40}}\b{DISPATCH_WORD}"
                      rf"|\b{DISPATCH_WORD}\s+(?:even\s+|actually\s+)?(?:available|supported|offered|usable)\s+(?:in|on|with|by|for)\s+{FRAMEWORK_LIST}"
                      rf"|\b(?:which|what)\s+(?:moe\s+|token\s+)?dispatchers?\s+(?:does|do|can|is|are|will)\b[^.?!]{{0,40}}\b{FRAMEWORK_NAME}")
CONCEPTS = [  # (pattern, concept), most specific first
    # what the 80 % intervals are, not a request for one plan's: "what does 'likely' mean? 80% of what?", "how are
    # the error bars computed?", "is that a confidence interval on our own run?"
    (r"\bwhat\s+(?:does|do)\s+['\"]?likely['\"]?\s+(?:\w+\s+)?mean|\b80\s*%\s+of\s+what\b|"
     r"\b(?:80\s*%|likely)\s+(?:intervals?|ranges?|bands?)\s+means?\b|\bwhat\s+(?:is|are)\s+(?:an?\s+|the\s+|your\s+)?"
     r"(?:80\s*%\s+)?(?:prediction\s+)?intervals?\b|\bconfidence\s+interval\s+(?:on|for|of)\s+(?:our|my)\s+(?:own\s+)?run\b|"
     r"\bhow\s+(?:are|is)\s+(?:the\s+|your\s+|those\s+)?(?:intervals?|error\s+bars?|bands?)\s+(?:computed|calculated|derived|made)",
     "intervals"),
    # what calibrating does, not a request to do it: "what does calibrating actually change?", "is it one fudge
    # factor?", "can one bad run wreck the profile?"
    (r"\bcalibrat\w*\s+(?:actually\s+|really\s+)?(?:change|changes|do|does|adjust|adjusts|touch|touches|fit|fits|mean|work)\b|"
     r"\bwhat\s+(?:does|do|would|will)\s+(?:a\s+|the\s+|your\s+)?(?:calibrat\w*|profile)\b|"
     r"\bhow\s+(?:does|do)\s+(?:the\s+|your\s+)?calibrat|\bfudge\s+factor|\bone\s+(?:bad|noisy|wrong)\s+(?:run|measurement)",
     "calibration"),
    (DISPATCHER_OFFERED, "moe_dispatcher"),  # before "expert parallel", "fsdp": the frameworks are the topic
    (r"\bq[\s\-]?lora\b", "qlora"),
    (r"\blora\b", "lora"),
    (r"\bdpo\b|\bgrpo\b|\bppo\b|\brlhf\b|post[\s\-]?train|reference\s+model|\brollouts?\b", "post_training"),
    (r"\bcuda[\s\-]?graph", "cuda_graphs"),  # before "pipelin…": "cuda graphs with pipelining" is about graphs
    # interleaving before the bubble: "what does interleaved 1F1B buy me, how much bubble goes away" is about VPP
    (r"interleav|virtual\s*(?:pipeline|stage)|\bvpp\b(?!\s*[=:]?\s*\d)", "virtual_pipeline"),
    (r"bubble", "pipeline_bubble"),
    (r"sequence[\s\-]?parallel|\bsp\b(?!\s*[=:]?\s*\d)", "sequence_parallel"),
    (r"context[\s\-]?parallel|ring[\s\-]?attention|\bcp\b(?!\s*[=:]?\s*\d)", "context_parallel"),
    (r"expert[\s\-]?parallel|\be?tp\b(?<=etp)(?!\s*[=:]?\s*\d)|\bep\b(?!\s*[=:]?\s*\d)|all[\s\-]?to[\s\-]?all|all2all", "expert_parallel"),
    (r"\bfsdp\b|fully[\s\-]?sharded", "fsdp"),
    (r"\bzero\b(?!\s*(?:stage\s*)?[=:\-]?\s*[0-3])|zero[\s\-]?redundancy|\bwhat\s+does\s+zero|\bexplain\s+zero", "zero"),
    (r"recomput|checkpointing|rematerial|\bremat\b|\b(?:act(?:ivations?)?|grad(?:ient)?|selective)[\s_-]*ckpt\b", "activation_recompute"),
    (r"micro[\s\-]?batch|gradient\s*accum|grad[\s\-]?accum", "micro_batch"),
    (r"\bmfu\b|\bhfu\b|flops?\s*utili", "mfu"),
    (r"memory\s*breakdown|where\s+(?:does|did)\s+(?:all\s+)?(?:the\s+|my\s+|our\s+)?memory|activation\s*memory|memory\s*go", "memory_breakdown"),
    (r"tensor[\s\-]?parallel|\btp\b(?!\s*[=:]?\s*\d)|all[\s\-]?reduce|tp\s*comm", "tensor_parallel"),
    (r"pipeline[\s\-]?parallel|\bpp\b(?!\s*[=:]?\s*\d)|pipelin", "pipeline_bubble"),
    (r"data[\s\-]?parallel|\bdp\b(?!\s*[=:]?\s*\d)|\bddp\b", "data_parallel"),
]


def _name_pattern(name: str) -> str:
    """'llama-3.1-70b' -> a regex matching 'Llama 3.1 70B', 'llama3.1-70b', 'Meta-Llama-3.1-70B-Instruct'."""
    name = name.lower().rsplit("/", 1)[-1]
    name = re.sub(r"(?<=[a-z])(?=\d)", " ", name)  # llama3 -> llama 3
    words = [w for w in re.split(r"[\s\-_]+", name) if w]
    parts = []
    if len(words) > 1 and words[0] in FAMILY_SHORT and re.fullmatch(r"v\d*", words[1]):
        parts.append(f"(?:{re.escape(words[0])}|{FAMILY_SHORT[words[0]]})")
        words = words[1:]
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


def framework_model(model_id: str | None, text: str) -> str | None:
    """The model a framework's own name for it means: torchtitan's "llama3 8b" is Llama 3.1 8B."""
    if model_id in TORCHTITAN_LLAMA3 and TORCHTITAN_SAID.search(text) and TORCHTITAN_FLAVOR.search(text):
        return TORCHTITAN_LLAMA3[model_id]
    return model_id


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


def unversioned_model(text: str) -> tuple[str, str, list[str]] | None:
    """A family and size written without a version ("llama 70b", "qwen 7b") where the catalog holds several
    versions of that size: (the words, the id find_model reads them as, the other versions' ids)."""
    if any(pattern.search(text) for pattern, _ in _model_patterns()):
        return None  # a catalog name or alias: the version is said
    index = _family_index()
    for m in re.finditer(r"(?<![a-z0-9])(?P<fam>[a-z]+)[\s\-]+(?P<size>\d+(?:\.\d+)?)\s*b(?![a-z0-9])", text):
        fam, size = m.group("fam"), m.group("size") + "b"
        model_id = index.get((fam, "", size))
        if model_id is None:
            continue
        if find_model(text)[0] != model_id:
            return None
        others = sorted({i for (f, v, sz), i in index.items() if f == fam and sz == size and v and i != model_id})
        return (m.group(0), model_id, others) if others else None
    return None


def find_params(text: str) -> tuple[str | None, str | None]:
    """A bare size: "a 70B model", "13b params" (not "4B tokens"): (catalog id if one is meant, params)."""
    # "for 70b-class models", "70B-scale runs", "like other 8b models": a size class cited, not the model trained
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:(b)(?:n|illion)?|(t)(?:n|rillion)?)(?![a-z0-9])(?!\s*tok)"
                  r"(?!\s*-?\s*(?:class|scale|range|sized?|ish)\b|\s+models\b|\s+(?:are\s+|is\s+)?active\b)", text)
    if not m:
        return None, None
    unit = m.group(2) or m.group(3)
    if unit == "b":
        version = re.search(r"\((\d+(?:\.\d+)?)\)|\bllama\s*(\d+(?:\.\d+)?)", text)
        ver = (version.group(1) or version.group(2)) if version else BARE_SIZE_FAMILY[1]
        model_id = _family_index().get((BARE_SIZE_FAMILY[0], ver, m.group(1) + "b"))
        if model_id:
            return model_id, None
    return None, f"{m.group(1)}{unit.upper()}"


@lru_cache(maxsize=1)
def _gpu_patterns() -> list[tuple[re.Pattern, str]]:
    pairs = []
    for gpu in hardware_catalog.list_gpus():
        for name in {gpu.id, *gpu.aliases}:
            words = [re.escape(w) for w in re.split(r"[\s\-_]+", name.lower()) if w]
            pattern = r"(?<![a-z0-9])(?:nvidia\s+|amd\s+)?" + SEP.join(words) + r"(?:s|'s)?(?![a-z0-9])"
            pairs.append((len(name), re.compile(pattern), gpu.id))
    return [(p, i) for _, p, i in sorted(pairs, key=lambda t: -t[0])]


# One GPU of their own, named in the singular: "on my 4090", "my only A100", "my rtx 4090 (24gb)" (not "my H100
# cluster", "my A100 nodes": a group whose size is said elsewhere or asked; not "our A100", a team's, often many)
OWNED_ONE = re.compile(r"\bmy\s+(?:own\s+|only\s+|local\s+|home\s+|single\s+|lone\s+|trusty\s+)?$")
GROUP_AFTER = re.compile(r"\s*(?:gpu\s+)?(?:cluster|nodes?|box(?:es)?|servers?|machines?|hosts?|racks?|pods?|fleet|farm|rigs|"
                         r"systems?|partition|allocation|instances?)\b")


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
        server = re.match(r"(?:nvidia\s+)?[dh]gx\b", m.group(0)) is not None  # a catalog alias "dgx b200"
        c = re.search(count_word + r"\s*(?:x|\*|of)?\s*(?:(?:dgx|hgx)\s+)?$", before)
        grid = re.search(r"(?<![\w.\-])(\d+)\s*[x*]\s*(\d+)\s*(?:x\s*)?$", before)
        if grid:  # "2x8 A100": two nodes of eight
            counts = {"nodes": int(grid.group(1)), "gpus_per_node": int(grid.group(2))}
            start = grid.start()
        elif c and _count(c.group(1)) is not None and (re.search(r"(?:dgx|hgx)\s+$", c.group(0)) or server):
            counts = {"nodes": _count(c.group(1))}  # "4x DGX B200", "a DGX H100": DGX/HGX name a server, not a GPU
            start = c.start()
        elif c and _count(c.group(1)) is not None:
            counts["gpus"] = _count(c.group(1))
            start = c.start()
            n = re.search(count_word + r"\s*(?:nodes?|boxes|servers|machines|hosts)\s*"
                          r"(?P<link>(?:,\s*)?(?:each\s+)?(?:of|with|w/|having|holding|containing)|,|x)?\s*$",
                          before[:c.start()])
            if n and _count(n.group(1)):  # "2 nodes of 8x H100", "3 nodes w/ 8x H100 each": the count beside
                per_node = counts["gpus"]  # the GPU is per node, unless a node of this GPU cannot hold that many
                linked = (n.group("link") or "").strip() not in ("", ",")  # ("4 nodes, 16 H100s")
                each = re.match(r"[\w\s-]{0,12}?\beach\b", after) is not None
                total = per_node > hardware_catalog.get_gpu(gpu_id).gpus_per_node and not (linked or each)
                counts = {"nodes": _count(n.group(1)), ("gpus" if total else "gpus_per_node"): per_node}
                start = n.start()
        node_after = re.match(r"\s*(?:gpus?\s*)?(?:nodes?|box(?:es)?|servers?|machines?|hosts?|racks?|pods?|systems?)\b", after)
        if "gpus" in counts and node_after:
            word = c.group(1)
            servers = re.search(r"(?<![\w.\-])(\d+)\s+$", before[:c.start()])
            if servers and int(servers.group(1)) > 0:  # "2 8x A100 boxes", "a couple of 8x A100 boxes": two of eight
                counts = {"nodes": int(servers.group(1)), "gpus_per_node": counts["gpus"]}
                start = servers.start()
            elif word in NUMBER_WORDS or re.search(r"\b(?:one|single|a|an|1)\s+$", before[:c.start()]):
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
            elif server or re.search(r"\b(?:dgx|hgx)\s*$", before):
                counts = {"gpus": 8}  # a DGX/HGX server holds eight
            elif OWNED_ONE.search(before) and not m.group(0).endswith("s") and not GROUP_AFTER.match(after):
                counts = {"owned_one": 1}  # "qlora on my 4090": one GPU of their own, unless a count says otherwise
        return gpu_id, counts, _blank(text, (start, end))
    return None, {}, text


MEMORY_SIZES = {16, 24, 32, 40, 48, 64, 80, 94, 96, 128, 141, 144, 180, 192, 256, 288}  # GiB of GPUs, not Gb/s
NETWORK_KINDS = {"eth": "Ethernet", "roce": "RoCE", "ib": "InfiniBand"}  # catalog id prefix -> how people say it
# A link speed with its kind: "25GbE", "25 gig ethernet", "200G RoCE", "400 Gb/s IB", "RoCE 200G", "ethernet 10g"
KIND = r"(?P<kind>ethernet|eth|roce(?:\s*v2)?|infiniband|ib)\b"
GBITS = r"(?P<speed>\d+)\s*(?:(?P<gbe>gbe)\b|(?:g|gb|gbit|gig|gigabit)(?:\s*/\s*s|\s*ps|bps|s)?\b)"
LINK_SPEEDS = (re.compile(rf"(?<![\w.]){GBITS}\s*-?\s*(?:{KIND})?"), re.compile(rf"\b{KIND}\s*-?\s*(?:at\s+|@\s*)?{GBITS}"))


@lru_cache(maxsize=1)
def _networks_by_speed() -> dict[tuple[str, int], str]:
    """(kind, Gb/s) -> catalog network id, read from the catalog's names ("RoCE v2 200 Gb/s" -> ("roce", 200))."""
    index = {}
    for net in hardware_catalog.list_networks():
        kind = net.id.split("-")[0]
        speed = re.search(r"(\d+)\s*Gb/s", net.name)
        if kind in NETWORK_KINDS and speed:
            index[(kind, int(speed.group(1)))] = net.id
    return index


def find_link_speed(text: str) -> tuple[str | None, str | None]:
    """(catalog network id, or None with the words as written when the catalog has no such network)."""
    for m in (m for pattern in LINK_SPEEDS for m in pattern.finditer(text)):
        speed = int(m.group("speed"))
        kind = m.group("kind") or ("ethernet" if m.group("gbe") else None)
        if kind is None or m.group(0)[len(m.group("speed")):].lstrip().startswith("gb ") and speed in MEMORY_SIZES:
            continue  # "80gb", "24g", "a100 40gb ib": a memory size, not a link
        kind = {"ethernet": "eth", "infiniband": "ib"}.get(kind, re.sub(r"\s*v2$", "", kind))
        network = _networks_by_speed().get((kind, speed))
        if network:
            return network, None
        return None, f"{speed} Gb/s {NETWORK_KINDS[kind]}"
    return None, None


def find_network(text: str) -> str | None:
    network, unmatched = find_link_speed(text)
    if network or unmatched:  # a speed the catalog lacks is not silently another network
        return network
    for pattern, network in NETWORK_PHRASES:
        if re.search(pattern, text):
            return network
    return None


# A framework or recipe cited as where a plan comes from ("like the megatron recipes do", "as in the nemo
# recipe", "per deepspeed's examples"): a source, not how the user trains or the file they want.
CITED = re.compile(r"\b(?:like|as\s+in|as|per|from)\s+(?:the\s+|a\s+)?(?:[\w-]+\s+)?[\w-]+?(?:'s)?\s+"
                   r"(?:recipes?|examples?|docs|papers?|tutorials?|reference|blog)\b|\b[\w-]+\s+recipes?\s+(?:do|does|use|uses)\b|"
                   # the other side of a comparison is a layout: "why would that beat plain fsdp (zero3, no tp)"
                   r"\b(?:beats?|vs\.?|versus|than|over|instead\s+of|compared\s+(?:to|with))\s+(?:a\s+|the\s+)?(?:plain|pure|vanilla)\s+(?:fsdp2?|ddp)\b|"
                   # a framework as the subject of a concept question: "is zero-3 basically the same thing as fsdp?"
                   r"\bsame\s+(?:thing\s+)?as\s+(?:plain\s+)?(?:fsdp2?|deepspeed|megatron)\b")


# A framework set aside: "deepspeed, not megatron", "rather than fsdp", "moving off megatron", "from megatron to …".
# Neither how the user trains nor the file they want.
SET_ASIDE = re.compile(r"\b(?:not|no|rather\s+than|instead\s+of|without|(?:switch|mov|migrat|port)\w*\s+(?:away\s+)?(?:from|off)|"
                       r"(?:don'?t|do\s+not|never)\s+(?:use|run|train\s+(?:with|on|in))|from(?=\s+\S+\s+to\b))\s+"
                       rf"(?:the\s+|plain\s+|using\s+)?{FRAMEWORK_NAME}")
# A framework said as how the user trains: "we use deepspeed", "we're on fsdp", "we train with nanotron", "we switched
# to deepspeed", "our stack is megatron", "deepspeed, not megatron". A change of setup, even in a request for its config.
FRAMEWORK_SAID = re.compile(r"\b(?:we|i)(?:'re|'m|\s+are|\s+am)?\s+(?:\w+ly\s+|now\s+|also\s+)?(?:use|using|run|running|on|"
                            r"train\w*\s+(?:with|on|in)|(?:moved?|moving|switch\w*|migrat\w*|port\w*)\s+(?:over\s+)?to)\s+"
                            rf"(?:the\s+)?{FRAMEWORK_NAME}|\bour\s+(?:stack|framework|trainer|codebase|training\s+code)\s+is\s+"
                            rf"(?:\w+\s+)?{FRAMEWORK_NAME}|{FRAMEWORK_NAME}\s*,?\s*(?:not|rather\s+than|instead\s+of)\s+{FRAMEWORK_NAME}")


def framework_said(text: str) -> bool:
    """Whether a (normalised) message says which framework the user trains with (FRAMEWORK_SAID)."""
    return FRAMEWORK_SAID.search(text) is not None


def find_export_format(text: str) -> str | None:
    text = SET_ASIDE.sub(" ", CITED.sub(" ", text))
    for fmt, pattern in EXPORT_WORDS.items():
        if re.search(pattern, text):
            return fmt
    return None


def find_export_formats(text: str) -> list[str]:
    """Every format named, in the order written ("megatron and deepspeed configs")."""
    text = SET_ASIDE.sub(" ", CITED.sub(" ", text))
    found = {}
    for fmt, pattern in EXPORT_WORDS.items():
        m = re.search(pattern, text)
        if m and not any(a <= m.start() < b for a, b in found.values()):  # "megatron-bridge" is not also "megatron"
            found[fmt] = (m.start(), m.end())
    return sorted(found, key=lambda f: found[f][0])


def find_framework(text: str) -> str | None:
    """A framework named as how the user trains ("with deepspeed", "deepspeed zero2", "plain FSDP"), not one
    cited as a source ("like the megatron recipes do", "as in deepspeed's examples")."""
    text = re.sub(FRAMEWORKS_ASKED, " ", SET_ASIDE.sub(" ", CITED.sub(" ", text)))  # "do deepspeed / nanotron have deepep?"
    for framework, pattern in FRAMEWORK_WORDS.items():
        if re.search(pattern, text):
            return framework
    return None


def find_concept(text: str) -> str | None:
    from .quantities import NEGATED_MODE
    text = NEGATED_MODE.sub(" ", text)  # "LoRA, not QLoRA" is about LoRA
    for pattern, concept in CONCEPTS:
        if re.search(pattern, text):
            return concept
    return None


# Two concepts set against each other: "SP vs CP", "difference between ZeRO and FSDP", "I mix up TP and SP"
CONCEPT_CONTRAST = re.compile(r"\bvs\.?\b|\bversus\b|\bdiffer\w*\b|\bcompared?\s+(?:to|with)\b|\bmix(?:ing|ed)?\s+(?:\w+\s+)?up\b|"
                              r"\bconfus\w*\b|\bsame\s+(?:thing\s+)?as\b|\bor\b")


def contrasted_concepts(text: str) -> list[str]:
    """The concepts a message sets against each other, in the order written ("sequence parallel vs context
    parallel" -> [sequence_parallel, context_parallel]); [] when it names fewer than two or does not contrast them."""
    from .quantities import NEGATED_MODE
    text = NEGATED_MODE.sub(" ", text)
    if not CONCEPT_CONTRAST.search(text):
        return []
    first: dict[str, int] = {}
    for pattern, concept in CONCEPTS:
        m = re.search(pattern, text)
        if m and concept not in first:
            first[concept] = m.start()
    found = sorted(first, key=first.get)
    return found[:2] if len(found) >= 2 else []


def find_unknown(text: str, model: str | None) -> list[str]:
    unknown = [label for pattern, label in UNSUPPORTED_HARDWARE.items() if re.search(pattern, text)]
    if model is None:
        for m in re.finditer(rf"\b(?:{MODEL_FAMILIES})[\s\-]*[\w.]*\d[\w.]*", text):
            unknown.append(m.group(0).strip())
    return unknown
