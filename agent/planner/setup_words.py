"""Setup options said in words: the MoE token dispatcher ("we use DeepEP", "the alltoall dispatcher"), the
expert all-to-all overlap ("overlap the a2a"), CUDA graphs ("full cuda graphs", "per-layer graphs", "no
cuda graphs") and packed sequences with their document length ("packed alpaca samples, ~200 tokens each",
"mean doc length 512"). They are scenario facts like precision and framework (tools/scenario.py fields
moe_dispatcher, moe_a2a_overlap, cuda_graphs, mean_doc_len).

Nothing is guessed from a word that has another meaning: "all-to-all" and "allgather" name the dispatcher
only next to "dispatch(er)" (they are also collectives), "graph" counts only as a CUDA graph ("graph neural
network" does not), a document length counts only where the data is said to be packed or the length is
called the mean/average document length ("packed bf16 weights" has none). "cuda graphs" with no scope is
read as per-layer graphs (UNSCOPED_CUDA_GRAPHS below) and the answer says it was a default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .names import DISPATCHER_OFFERED
from .quantities import K

# "cuda graphs" with no scope said. Megatron-LM's own switch, `--enable-cuda-graph` (deprecated; now
# `--cuda-graph-impl local`), captures per layer (CudaGraphManager), as does `--external-cuda-graph`
# (TE make_graphed_callables; now `transformer_engine`); whole-step capture takes its own flag
# (`--cuda-graph-scope full_iteration`) — Megatron-Core user guide, "CUDA Graph". Megatron-Bridge's
# CUDA-graph guide: "Start with TE-scoped graphs for most training workloads … use local + full_iteration
# only when you specifically want full-iteration capture". So unscoped graphs are per-layer graphs.
UNSCOPED_CUDA_GRAPHS = "per-layer"
UNSCOPED_CUDA_GRAPHS_SOURCE = "what Megatron's --enable-cuda-graph captures; say \"full-iteration\" for the whole step"

CUDA = r"(?:cuda[\s_-]?graphs?|cudagraphs?)"
DISPATCHER_WORD = r"(?:token[\s_-]+)?dispatch(?:er|ing)?\b"
ALL_TO_ALL = r"(?:all[\s_-]?to[\s_-]?all|alltoall|a2a)"
ALL_GATHER = r"(?:all[\s_-]?gather|allgather)"
DEEPEP = r"(?:deep[\s_-]?ep|hybrid[\s_-]?ep|flex\s+(?:token\s+)?dispatcher)\b"
NEGATION = r"(?:\bno|\bnot|\bwithout|(?<!\S)w/o|\bdisabl\w*|\bturn(?:ed|ing)?\s+off|\bdrop(?:ped|ping)?|\bskip\w*|" \
           r"\b(?:don'?t|do\s+not|never)\s+(?:use|run|enable|turn\s+on)|\binstead\s+of|\brather\s+than)"

# "per-layer graphs instead of full graphs" keeps graphs on: only a plain negation turns them off
GRAPH_NEGATION = r"(?:\bno|\bnot|\bwithout|(?<!\S)w/o|\bdisabl\w*|\bturn(?:ed|ing)?\s+off|\bdrop(?:ped|ping)?|\bskip\w*|" \
                 r"\b(?:don'?t|do\s+not|never)\s+(?:use|run|enable|turn\s+on))"

# The dispatcher: DeepEP by name; all-to-all / allgather only as a dispatcher; Megatron's own flag.
DISPATCHER_FLAG = re.compile(r"moe[\s_-]+token[\s_-]+dispatcher[\s_-]+type\s*[=:]?\s*(alltoall|allgather|flex)\b")
DISPATCHERS = (
    ("deepep", re.compile(rf"\b{DEEPEP}")),
    ("alltoall", re.compile(rf"\b{ALL_TO_ALL}\s+{DISPATCHER_WORD}|\b{DISPATCHER_WORD}\s*(?:=|:|is|of)?\s*(?:the\s+)?{ALL_TO_ALL}\b")),
    ("allgather", re.compile(rf"\b{ALL_GATHER}\s+{DISPATCHER_WORD}|\b{DISPATCHER_WORD}\s*(?:=|:|is|of)?\s*(?:the\s+)?{ALL_GATHER}\b")),
)
# A change written as one: "from alltoall to deepep", "deepep instead of alltoall": the new one counts.
REPLACED = re.compile(rf"(?:\bfrom\s+(?:the\s+)?|{NEGATION}\s+(?:the\s+)?)$")

# The expert all-to-all overlapped with the other micro-batch (Megatron-Core --overlap-moe-expert-parallel-comm)
OVERLAP_TARGET = rf"(?:(?:ep|expert|moe)[\s_-]+)?(?:{ALL_TO_ALL}|(?:ep|expert[\s_-]parallel|moe)[\s_-]+comm\w*|dispatch\w*)"
OVERLAP = re.compile(rf"\boverlap(?:s|ped|ping)?\s+(?:of\s+)?(?:the\s+)?(?:expert\s+)?{OVERLAP_TARGET}"
                     rf"|\b(?:{ALL_TO_ALL}|ep|expert|moe)(?:[\s_-]+comm\w*)?[\s_-]+overlap\w*"
                     r"|overlap[\s_-]+moe[\s_-]+expert[\s_-]+parallel[\s_-]+comm|moe[\s_-]+a2a[\s_-]+overlap")

# "we don't overlap the a2a", "ep overlap off"
OFF_BEFORE = re.compile(rf"(?:{GRAPH_NEGATION}|\b(?:don'?t|do\s+not|never|can'?t|cannot))\s+(?:any\s+|the\s+)?$")
OFF_AFTER = re.compile(r"\s*(?:=|:|is|turned)?\s*(?:off|disabled|false|0)\b")

GRAPHS_OFF = re.compile(rf"{GRAPH_NEGATION}\s+(?:any\s+|the\s+)?(?:full[\s-]?(?:iteration\s+)?|per[\s-]?layer\s+)?{CUDA}"
                        rf"|{CUDA}\s*(?:=|:)?\s*(?:off|none|disabled)\b")
GRAPHS_FULL = re.compile(rf"\bfull[\s_-]*(?:iteration|iter|step)s?\s+(?:{CUDA}|graphs?)\b|\bfull\s+{CUDA}"
                         rf"|\bfull[\s-]graphs?\b(?!\s+neural)|\bwhole[\s-](?:step|iteration)\s+(?:{CUDA}|graphs?)\b"
                         rf"|{CUDA}\s+(?:for|over|of|on|around)\s+the\s+(?:whole|full|entire)\s+(?:step|iteration)"
                         r"|cuda[\s_-]graph[\s_-](?:scope|impl)\s*[=:]?\s*(?:local\s+)?(?:--cuda[\s_-]graph[\s_-]scope\s+)?full[\s_-]iteration"
                         rf"|\bfull[\s_-]iteration\s+(?:capture|{CUDA})")
GRAPHS_PER_LAYER = re.compile(rf"\bper[\s_-]?layer\s+(?:{CUDA}|graphs?)\b|\blayer[\s_-]?wise\s+(?:{CUDA}|graphs?)\b"
                              rf"|\b(?:te|transformer[\s_-]engine)(?:[\s_-]+scoped)?\s+(?:{CUDA}|graphs?)\b|\bscoped\s+(?:{CUDA}|graphs?)\b"
                              r"|enable[\s_-]cuda[\s_-]graph|external[\s_-]cuda[\s_-]graph"
                              r"|cuda[\s_-]graph[\s_-]impl\s*[=:]?\s*(?:transformer_engine|local)\b(?!\s+--cuda[\s_-]graph[\s_-]scope\s+full)")
GRAPHS_BARE = re.compile(rf"\b{CUDA}\b")

# Packed data: sample/sequence packing, or packed samples/sequences/data ("packed alpaca samples")
PACKED = re.compile(r"\b(?:sample|sequence|seq|example|document|doc|data)[\s_-]+packing\b|\bpacking\b(?!\s+(?:bf16|fp8|weights?|params?))"
                    r"|\bpack(?:ed|s)?\s+(?:\w+[\s-]+){0,2}?(?:sequences?|seqs?|samples?|examples?|docs?|documents?|data(?:set)?|"
                    r"conversations?|instructions?|sft|chats?)\b"
                    r"|\b(?:data(?:set)?|samples|sequences|examples|docs|documents)\s+(?:is|are|were|get|gets)\s+packed\b|\b(?:seqs|sequences|samples)\s+packed\b"
                    # "we pack them into 8k sequences", "packing it to 4k"
                    r"|\bpack(?:ed|s|ing)?\s+(?:them|these|those|it|everything)\s+(?:in)?to\b"
                    # masking attention at document boundaries only exists for packed data: "intra-doc masking"
                    r"|\b(?:intra|cross|inter|per)[\s_-]?(?:doc|document|sample)s?[\s_-]+(?:attention[\s_-]+)?mask"
                    r"|\b(?:doc|document)[\s_-]+(?:boundary[\s_-]+)?(?:attention[\s_-]+)?masking\b")
LENGTH = r"(?:~|about\s+|around\s+|roughly\s+|approx(?:\.|imately)?\s+|avg\.?\s+|averag\w+\s+|typically\s+|<?)?\s*(\d{1,3}(?:,\d{3})+|\d+)\s*(k)?"
UNIT = r"\s*-?\s*tok(?:en)?s?\b(?!\s*/\s*(?:s|sec|gpu)\b|\s+per\s+(?:s|sec|second|gpu)\b)"  # not a throughput
DOC = r"(?:samples?|docs?|documents?|examples?|conversations?|instructions?|rows?)"
# Words between documents and their length that say nothing else: "samples are short (avg 400 tokens)"
DOC_WORD = r"(?:short|small|tiny|brief|long|mostly|usually|typically|only|quite|pretty|fairly|very|avg\.?|average|about|around|roughly)"
# A mean document length said as such: "mean doc length 512", "avg sample len of ~300", "--mean-doc-len 512"
MEAN_DOC_LEN = re.compile(rf"\b(?:mean|avg\.?|average|typical)[\s_-]+(?:{DOC}|seq(?:uence)?)[\s_-]+len(?:gth)?\s*(?:of|=|:|is|~)?\s*{LENGTH}(?:{UNIT})?")
# With packing said: "samples of ~200 tokens", "~200 tokens each", "200-token samples", "~200 tokens per sample"
DOC_LEN = re.compile(rf"\b{DOC}\s+(?:of|with|at|averaging|around|about)\s+{LENGTH}{UNIT}"
                     rf"|(?<![\w.])~?\s*(\d{{1,3}}(?:,\d{{3}})+|\d+)\s*(k)?{UNIT}\s+(?:each|(?:per|a|an|/)\s*{DOC})"
                     rf"|(?<![\w.])~?\s*(\d{{1,3}}(?:,\d{{3}})+|\d+)\s*(k)?{UNIT}\s+(?:\w+\s+)?{DOC}"
                     rf"|\b{DOC}\s+(?:are|were)\s+{LENGTH}{UNIT}"
                     # a length qualified by words about the documents: "samples are short (avg 400 tokens)",
                     # "docs are mostly ~300 tokens", "samples average 400 tokens"
                     rf"|\b{DOC}\s+(?:are|were|average|averaging|run)\s+(?:{DOC_WORD}[\s,(:-]+){{1,3}}{LENGTH}{UNIT}"
                     # with packing said, a length called an average is a document's: the packed sequence has no
                     # average ("(avg 400 tokens)", "400 tokens on average")
                     rf"|\b(?:avg\.?|average|mean)\s+(?:of\s+)?(?:~|about\s+|around\s+|roughly\s+)?(\d{{1,3}}(?:,\d{{3}})+|\d+)\s*(k)?{UNIT}"
                     rf"|(?<![\w.])~?\s*(\d{{1,3}}(?:,\d{{3}})+|\d+)\s*(k)?{UNIT}\s+(?:on\s+)?(?:avg|average)\b")


# Two values of one option contrasted ("deepep vs alltoall dispatcher", "full or per-layer cuda graphs", "with or
# without cuda graphs"): one scenario each (sides.py). A dispatcher pair needs "dispatch" in the message, or DeepEP.
SIDE_CONTRAST = r"\s*(?:vs\.?|versus|or|compared\s+(?:to|with)|against)\s*"
DISPATCHER_VALUE = rf"({DEEPEP}|{ALL_TO_ALL}|{ALL_GATHER})"
DISPATCHER_SIDES = re.compile(rf"\b{DISPATCHER_VALUE}(?:\s+{DISPATCHER_WORD})?{SIDE_CONTRAST}(?:the\s+)?{DISPATCHER_VALUE}")
GRAPH_SCOPE = r"(full[\s_-]?iteration|full|per[\s_-]?layer|no)"
GRAPH_SIDES = re.compile(rf"\b{GRAPH_SCOPE}(?:\s+(?:{CUDA}|graphs?))?{SIDE_CONTRAST}{GRAPH_SCOPE}\s+(?:{CUDA}|graphs?)\b"
                         rf"|\bwith\s+(?:or|vs\.?|and)\s+without\s+{CUDA}|{CUDA}\s+on\s+(?:or|vs\.?)\s+off\b")


def _dispatcher_value(written: str) -> str:
    return next(name for name, pattern in (("deepep", DEEPEP), ("alltoall", ALL_TO_ALL), ("allgather", ALL_GATHER))
                if re.fullmatch(pattern, written))


def _scope_value(written: str) -> str:
    return "none" if written == "no" else "per-layer" if written.startswith("per") else "full-iteration"


def setup_sides(text: str) -> tuple[dict, ...] | None:
    """({option: a}, {option: b}, …) for values of one setup option contrasted in a (normalised) message."""
    m = DISPATCHER_SIDES.search(text)
    if m and (re.search(r"\bdispatch", text) or re.search(DEEPEP, m.group(0))):
        values, rest = [_dispatcher_value(m.group(1)), _dispatcher_value(m.group(2))], text[m.end():]
        while more := re.match(rf"(?:\s+{DISPATCHER_WORD})?(?:\s*,\s*(?:or\s+|and\s+)?|{SIDE_CONTRAST})(?:the\s+)?{DISPATCHER_VALUE}",
                               rest):  # "deepep vs alltoall vs allgather": every dispatcher listed
            values.append(_dispatcher_value(more.group(1)))
            rest = rest[more.end():]
        values = list(dict.fromkeys(values))
        if len(values) > 1:
            return tuple({"moe_dispatcher": v} for v in values)
    m = GRAPH_SIDES.search(text)
    if m:
        if m.group(1) is None:  # "with or without cuda graphs": unscoped graphs are per-layer (above)
            return {"cuda_graphs": UNSCOPED_CUDA_GRAPHS}, {"cuda_graphs": "none"}
        a, b = _scope_value(m.group(1)), _scope_value(m.group(2))
        if a != b:
            return {"cuda_graphs": a}, {"cuda_graphs": b}
    return None


@dataclass
class SetupWords:
    moe_dispatcher: str | None = None
    moe_a2a_overlap: bool | None = None
    cuda_graphs: str | None = None
    cuda_graphs_unscoped: bool = False  # "cuda graphs" with no scope: UNSCOPED_CUDA_GRAPHS was assumed
    mean_doc_len: int | None = None
    packed: bool = False  # the data is said to be packed (with or without a document length)
    grad_reduce_dtype: str | None = None  # "grad reduce in bf16", "--grad-reduce-in-bf16"
    fp8_param_gather: bool | None = None  # "fp8 param gather", "--fp8-param-gather"
    recompute_modules: list[str] | None = None  # "recompute core_attn only", "--recompute-modules core_attn layernorm"


def _kept(named: list[tuple[int, str]], text: str) -> list[str]:
    """The names (at their start offsets) not said to be replaced: "from the alltoall to …", "no deepep"."""
    return [name for start, name in sorted(named) if not REPLACED.search(text[max(0, start - 24):start])]


def _dispatcher(text: str) -> str | None:
    text = re.sub(DISPATCHER_OFFERED, " ", text)  # "do deepspeed / nanotron even have deepep?": asked about, not set
    flag = DISPATCHER_FLAG.search(text)
    if flag:
        return {"flex": "deepep"}.get(flag.group(1), flag.group(1))
    named = [(m.start(), name) for name, pattern in DISPATCHERS for m in pattern.finditer(text)]
    kept = _kept(named, text)
    if len(set(kept)) == 1:
        return kept[0]
    if not kept and named and all(name == "deepep" for _, name in named):
        return "alltoall"  # "without deepep": Megatron-Core's default dispatcher
    return None  # two dispatchers named side by side: not guessed


def _overlap(text: str) -> bool | None:
    m = OVERLAP.search(text)
    if m is None:
        return None
    before, after = text[max(0, m.start() - 30):m.start()], text[m.end():m.end() + 12]
    return not (OFF_BEFORE.search(before) or OFF_AFTER.match(after))


def _graphs(text: str) -> tuple[str | None, bool]:
    """(cuda graphs, scope assumed)."""
    if GRAPHS_OFF.search(text):
        return "none", False
    scoped = [(m.start(), scope) for scope, pattern in (("full-iteration", GRAPHS_FULL), ("per-layer", GRAPHS_PER_LAYER))
              for m in pattern.finditer(text)]
    kept = set(_kept(scoped, text))
    if len(kept) == 1:  # "per-layer graphs instead of full cuda graphs": the one kept
        return kept.pop(), False
    if scoped:
        return None, False  # both scopes named side by side: not guessed
    if GRAPHS_BARE.search(text):
        return UNSCOPED_CUDA_GRAPHS, True
    return None, False


def _doc_len(text: str, packed: bool) -> int | None:
    m = MEAN_DOC_LEN.search(text) or (DOC_LEN.search(text) if packed else None)
    if m is None:
        return None
    groups = m.groups()  # (number, "k") pairs, one per alternative
    i = next(i for i, g in enumerate(groups) if g is not None)
    return int(groups[i].replace(",", "")) * (K if groups[i + 1] else 1)


def without_doc_len(text: str, setup: SetupWords) -> str:
    """The text with the document length blanked: "samples of ~200 tokens" in packed data is not the sequence."""
    if setup.mean_doc_len is None:
        return text
    text = MEAN_DOC_LEN.sub(" ", text)
    return DOC_LEN.sub(" ", text) if setup.packed else text


# Megatron-Core's gradient reduction dtype (--grad-reduce-in-bf16; Megatron-Bridge ddp.grad_reduce_in_fp32) and FP8
# primary weights (--fp8-param-gather): the chat's scenario takes both (tools/scenario.py). The "bf16"/"fp8" inside
# these phrases is no training precision of its own (`without_megatron_options` blanks them before precision is read).
GRAD_REDUCE_BF16 = re.compile(r"grad(?:ient)?s?[\s_-]*(?:reduc\w*|all[\s_-]?reduce|buffer)[\s_-]*(?:in|=|:|as|to|with)?[\s_-]*bf16"
                              r"|\bbf16[\s_-]+grad(?:ient)?s?[\s_-]*(?:reduc\w*|all[\s_-]?reduce|buffer|accum\w*)?"
                              r"|grad[\s_-]*reduce[\s_-]*in[\s_-]*fp32\s*[=:]\s*false"
                              r"|\b(?:reduc|all[\s_-]?reduc)\w*\s+(?:the\s+)?grad(?:ient)?s?\s+(?:in|as|with)\s+bf16")
GRAD_REDUCE_FP32 = re.compile(r"grad(?:ient)?s?[\s_-]*(?:reduc\w*|all[\s_-]?reduce|buffer)[\s_-]*(?:in|=|:|as|to|with)?[\s_-]*fp32"
                              r"(?!\s*[=:]\s*false)|\bfp32[\s_-]+grad(?:ient)?s?[\s_-]*(?:reduc\w*|all[\s_-]?reduce|buffer)"
                              r"|\b(?:reduc|all[\s_-]?reduc)\w*\s+(?:the\s+)?grad(?:ient)?s?\s+(?:in|as|with)\s+fp32")
FP8_PARAM_GATHER = re.compile(r"\bfp8[\s_-]*param(?:eter)?s?[\s_-]*(?:all[\s_-]?)?gather\w*|\bfp8[\s_-]+(?:primary|master)[\s_-]+weights?")
FP8_GATHER_OFF = re.compile(rf"{GRAPH_NEGATION}\s+(?:the\s+)?(?:fp8[\s_-]*param(?:eter)?s?[\s_-]*(?:all[\s_-]?)?gather|fp8[\s_-]+(?:primary|master))")


def _grad_reduce(text: str) -> str | None:
    if GRAD_REDUCE_BF16.search(text):
        return "bf16"
    return "fp32" if GRAD_REDUCE_FP32.search(text) else None


def _fp8_gather(text: str) -> bool | None:
    if FP8_GATHER_OFF.search(text):
        return False
    return True if FP8_PARAM_GATHER.search(text) else None


# Megatron-Core's --recompute-modules (engine/training.py RECOMPUTE_MODULE_NAMES), by name or in words, said beside
# "recompute": "selective recompute of core_attn only", "recompute modules core_attn, layernorm"
MODULE_WORDS = (("core_attn", r"core[\s_-]*attn|core[\s_-]+attention"), ("layernorm", r"layer[\s_-]*norms?"),
                ("mla_up_proj", r"mla[\s_-]*up[\s_-]*proj\w*"), ("moe_act", r"moe[\s_-]*act\w*"))
_MODULE = "|".join(w for _, w in MODULE_WORDS)
RECOMPUTE_MODULES = re.compile(rf"recomput\w*(?:[\s_-]+modules?)?\s*(?:=|:|of|for|on|just|only)?\s*(?:the\s+|just\s+|only\s+)?"
                               rf"((?:(?:{_MODULE})(?:\s*(?:,|and|\+|&)?\s*))+)"
                               rf"|((?:(?:{_MODULE})(?:\s*(?:,|and|\+|&)?\s*))+)\s*(?:only\s+)?recomput\w*")


def _recompute_modules(text: str) -> list[str] | None:
    m = RECOMPUTE_MODULES.search(text)
    if m is None:
        return None
    said = m.group(1) or m.group(2)
    return [name for name, words in MODULE_WORDS if re.search(words, said)]


def without_megatron_options(text: str) -> str:
    """The text without the gradient-dtype and FP8-gather phrases, whose "bf16"/"fp8" is no training precision."""
    for pattern in (GRAD_REDUCE_BF16, GRAD_REDUCE_FP32):
        text = pattern.sub(" ", text)
    return text


def find_setup(text: str) -> SetupWords:
    """The setup options a (normalised) message states."""
    graphs, unscoped = _graphs(text)
    packed = PACKED.search(text) is not None
    doc_len = _doc_len(text, packed)
    return SetupWords(moe_dispatcher=_dispatcher(text), moe_a2a_overlap=_overlap(text), cuda_graphs=graphs,
                      cuda_graphs_unscoped=unscoped, mean_doc_len=doc_len, packed=packed or doc_len is not None,
                      grad_reduce_dtype=_grad_reduce(text), fp8_param_gather=_fp8_gather(text),
                      recompute_modules=_recompute_modules(text))
