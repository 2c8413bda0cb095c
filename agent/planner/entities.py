"""Entities in a message, the way engineers write them: "llama3 70b", "8x H100 nodes", "a single
8xH100 box", "64 GPUs (8 nodes)", "32k ctx", "8k seqs", "4M tok batch", "gbs 512", "LoRA r=64",
"TP=4 PP=4 over TP=8 PP=2, both zero1 mb1", "EP8 or EP4", "the DeepSpeed config".

Model and GPU names come from the catalogs (ids and aliases), so a model added to the catalog
is recognised without touching this file. Quoted text ("my notes say: '…'") is data the user
pasted, not their request: it is left out of the extraction. Quoted lines ("> …", a forwarded
thread) may carry the setup the user refers to, but a plan written in them is not the user's
unless their own words ask to check it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...engine import hardware_catalog
from ...tools.scenario import Scenario, default_global_batch
from .knobs import find_plans
from .measured import pasted_log, without_log_lines
from .pasted import printed_lines_only, without_instructions, without_log_blocks
from .post_training import combined_mode, find_post_training, rollout_mode
from .names import (find_concept, find_export_format, find_framework, framework_model, find_gpu, find_link_speed, find_model, find_network, find_params,
                    find_unknown, UNSUPPORTED_HARDWARE)
from .unlisted_accelerator import unlisted_accelerator
from ..count_words import with_digit_counts
from .setup_words import find_setup, without_doc_len, without_megatron_options
from .quantities import (DEFAULT_NODE_SIZE, _count, find_batch, find_counts, find_grad_accum, find_mode, find_price,
                         find_seq_len, find_train_tokens)


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
    prompt_len: int | None = None  # post-training rollouts: "512-token prompts"
    response_len: int | None = None  # "1k-token responses"
    group_size: int | None = None  # "8 samples per prompt"
    precision: str | None = None
    framework: str | None = None
    moe_dispatcher: str | None = None  # "we use deepep", "the allgather dispatcher" (setup_words.py)
    moe_a2a_overlap: bool | None = None  # "overlap the a2a"
    grad_reduce_dtype: str | None = None  # "grad reduce in bf16" (setup_words.py)
    fp8_param_gather: bool | None = None  # "fp8 param gather"
    recompute_modules: list[str] | None = None  # "recompute core_attn only"
    cuda_graphs: str | None = None  # "full cuda graphs", "per-layer graphs", "no cuda graphs"
    cuda_graphs_unscoped: bool = False  # "cuda graphs" with no scope: read as setup_words.UNSCOPED_CUDA_GRAPHS
    mean_doc_len: int | None = None  # packed data: "packed samples, ~200 tokens each", "mean doc length 512"
    packed: bool = False  # the data is said to be packed, with or without a document length
    plans: list[dict] = field(default_factory=list)  # knob settings, in the order written (A, then B)
    export_format: str | None = None
    concept: str | None = None
    gpus_factor: float | None = None  # "double the GPUs": 2.0
    batch_factor: float | None = None  # "halve the batch": 0.5
    batch_with_gpus: bool = False  # "scale the batch with the gpus", "keep the per-gpu batch": the batch grows with the GPUs
    same_tokens: bool = False  # "keep the tokens per step the same": a new length keeps the batch's tokens, not its sequences
    nodes_added: int | None = None  # "3 more nodes like that one": added to the current count
    gpus_added: int | None = None  # "another 16 GPUs"
    unknown: list[str] = field(default_factory=list)  # names that look like models/hardware but are not known
    unlisted_gpu: str | None = None  # an accelerator named with a count that the catalog lacks ("32 … p150 cards")
    conflicts: list[str] = field(default_factory=list)  # numbers that contradict each other
    node_size_of: str | None = None  # the GPU whose node size a conflict quotes (cited from list_hardware)
    mode_named_by_rank: bool = False  # "lora" only in "lora rank 64": in a QLoRA setup it names the rank, not the mode
    network_unmatched: str | None = None  # a link speed the catalog has no network for: "10 Gb/s Ethernet"
    train_tokens: str | None = None  # "200B tokens": a budget to train on (time, GPU-hours, cost)
    price_per_gpu_hour: float | None = None  # "@ $2.5/gpu-hr"
    grad_accum: int | None = None  # "grad accum 4": with the per-device batch, the global batch (batch_from_accum)

    def scenario_patch(self, default_gpu: str | None = None, base_gpus: int | None = None,
                       base_per_node: int | None = None, base: Scenario | None = None) -> Scenario:
        """The scenario fields this message sets (others null); node counts use the GPU's node size
        (the current setup's, for nodes added to it); a scaled batch scales `base`'s."""
        gpu = self.gpu or default_gpu
        node_size = hardware_catalog.get_gpu(gpu).gpus_per_node if gpu else DEFAULT_NODE_SIZE
        gpus, per_node = self.gpus, self.gpus_per_node
        if gpus is None and self.gpus_factor and base_gpus:
            gpus = max(1, round(base_gpus * self.gpus_factor))
        if gpus is None and (self.nodes_added or self.gpus_added) and base_gpus:
            gpus = base_gpus + (self.gpus_added or 0) + (self.nodes_added or 0) * (base_per_node or node_size)
        if self.nodes and not gpus:
            per_node = per_node or node_size
            gpus = self.nodes * per_node
        if self.nodes and gpus and not per_node and gpus % self.nodes == 0 and gpus // self.nodes <= node_size:
            per_node = gpus // self.nodes
        batch, batch_tokens = self.global_batch, self.global_batch_tokens
        if self.batch_factor and batch is None and not batch_tokens and base is not None:
            batch, batch_tokens = scaled_batch(base, self.batch_factor)
        if self.batch_with_gpus and batch is None and not batch_tokens and base is not None and gpus and base.gpus \
                and gpus != base.gpus:  # the batch per GPU kept: 256 sequences on 64 GPUs are 512 on 128
            batch, batch_tokens = scaled_batch(base, gpus / base.gpus)
        if self.same_tokens and batch is None and not batch_tokens and base is not None and self.seq_len \
                and base.seq_len and base.global_batch and not base.global_batch_tokens:
            # tokens per step = sequences x length, held: 8 x 8,192 = 65,536 tokens is 4 sequences of 16,384
            batch = max(1, round(base.global_batch * base.seq_len / self.seq_len))
        if batch is None and not batch_tokens:
            batch = self.batch_from_accum(gpus)
        seq_len, prompt_len, response_len = self.seq_len, self.prompt_len, self.response_len
        if not rollout_mode(self.mode or (base.mode if base is not None else None)) and response_len and not seq_len:
            # outside GRPO/PPO there is no rollout: "samples up to 2k tokens", "1k-token responses" in LoRA or DPO
            # are the training sequence, prompt and response together
            seq_len, prompt_len, response_len = response_len + (prompt_len or 0), None, None
        return Scenario(model=self.model, params=self.params, gpu=self.gpu, gpus=gpus, gpus_per_node=per_node,
                        network=self.network, seq_len=seq_len, global_batch=batch,
                        global_batch_tokens=batch_tokens,
                        mode=None if self.mode_named_by_rank and base is not None and base.mode == "qlora" else self.mode,
                        lora_rank=self.lora_rank,
                        precision=self.precision, framework=self.framework, prompt_len=prompt_len,
                        response_len=response_len, group_size=self.group_size,
                        moe_dispatcher=self.moe_dispatcher, moe_a2a_overlap=self.moe_a2a_overlap,
                        cuda_graphs=self.cuda_graphs, mean_doc_len=self.mean_doc_len,
                        grad_reduce_dtype=self.grad_reduce_dtype, fp8_param_gather=self.fp8_param_gather,
                        recompute_modules=self.recompute_modules)

    def batch_from_accum(self, gpus: int | None) -> int | None:
        """The global batch of a per-device batch and its accumulation, the way HF Trainer and DeepSpeed
        count it: micro-batch x accumulation steps x data-parallel size (GPUs / (TP x PP x CP))."""
        plan = self.plans[0] if len(self.plans) == 1 else {}
        if not (self.grad_accum and gpus and plan.get("micro_batch")):
            return None
        model_parallel = (plan.get("tp") or 1) * (plan.get("pp") or 1) * (plan.get("cp") or 1)
        if gpus % model_parallel:
            return None
        return plan["micro_batch"] * self.grad_accum * (gpus // model_parallel)

    def has_scenario(self) -> bool:
        return self.gpus_factor is not None or self.batch_factor is not None or self.batch_with_gpus or self.nodes_added is not None or self.gpus_added is not None or any(v is not None for v in self.scenario_patch().model_dump().values())


def scaled_batch(base: Scenario, factor: float) -> tuple[int | None, str | None]:
    """(sequences, tokens as written) of `base`'s batch times `factor`; its default when it gave none."""
    if base.global_batch_tokens:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmbKMB]?)\s*", str(base.global_batch_tokens))
        if m:
            return None, f"{float(m.group(1)) * factor:g}{m.group(2).upper()}"
    return max(1, round((base.global_batch or default_global_batch(base.mode)) * factor)), None


# A value the user corrects as they write: "local bs 8... wait no, local 1", "tp4 - i mean tp8", "seq 4k, make that 8k".
# The phrase ending in the corrected value (back to the last comma, bracket or colon) is replaced by the correction.
SELF_CORRECTION = re.compile(r"(?P<old>[^,;:()\n]*?\d\w*(?:\.\d+)?)\s*(?:\.{2,}|…|,|-+)?\s*"
                             r"(?:wait\s*,?\s*no|no\s*,?\s*wait|i\s+mean|scratch\s+that|make\s+(?:that|it)|correction)\b"
                             r"\s*[,:]?\s*(?P<new>[^,;()\n]*\d[^,;()\n]*)")


def _corrected(m: re.Match) -> str:
    """The correction in place of the corrected phrase; a correction that repeats only some of its words ("local 1"
    for "local bs 8", or just "16" for "tp 8") keeps the phrase's words before the new value."""
    old_words = re.match(r"\s*(.*?)\s*\d", m.group("old")).group(1).split()
    lead = re.match(r"\s*(.*?)\s*(?=\d)", m.group("new"))
    new_words = lead.group(1).split() if lead else []
    if len(new_words) < len(old_words) and all(w in old_words for w in new_words):
        return " " + " ".join(old_words) + " " + m.group("new")[lead.end():] if lead else m.group("new")
    return " " + m.group("new")


def normalise(text: str) -> str:
    text = text.lower().replace("×", "x").replace("–", "-").replace("—", "-").replace("’", "'")
    text = re.sub(r"(?<=\d)x(?=[a-z])", "x ", text)  # "8xh100" -> "8x h100" ("8x7b" stays)
    text = with_digit_counts(text)  # "sixteen gpus" -> "16 gpus", "a dozen nodes" -> "12 nodes"
    # "8k->16k", "8k → 16k": from one value to the other, as "from 8k to 16k" is read
    text = re.sub(r"(?<![\w.])(\d+(?:\.\d+)?\s*[km]?)\s*(?:->|→|=>)\s*(?=\d)", r"from \1 to ", text)
    # "40gb a100s" -> "a100 40gb": the memory written before the GPU's name, as catalog aliases write it after
    text = re.sub(r"\b(\d{2,3})\s*g(?:b|ib)?\s+(a100|h100|h200|a10g?|l40s?|v100|mi300x?)(s?)\b", r"\2 \1gb\3", text)
    text = re.sub(r"\*(\w[\w\s]*?)\*|(?<![\w])_(\w+)_(?![\w])", lambda m: m.group(1) or m.group(2), text)  # *is*, _is_
    text = SELF_CORRECTION.sub(_corrected, text)  # "local bs 8... wait no, local 1": the value corrected to
    # a batch per device is the micro-batch, as frameworks name it: torchtitan's `local_batch_size`, HF Trainer's
    # `per_device_train_batch_size`, "per-GPU batch 2", "local bs 1" (the global batch is another setting)
    text = re.sub(r"\b(?:local|per[\s_-]?(?:device|gpu|rank)(?:[\s_-]?train)?)[\s_-]?(?:batch(?:[\s_-]?size)?|bsz?)\b",
                  "micro-batch", text)
    # the batch said per device after its value: "batch_size 2 per rank", "bs of 4 per gpu", "batch 1 each device"
    # ("batch_size 4 per dp rank": the data-parallel rank, as torchtitan's local batch is counted)
    text = re.sub(r"\b(?:batch(?:[\s_-]?size)?|bsz?)\s*(?:of|=|:)?\s*(\d+)\s*(?:/|per|a|each|on\s+each)[\s-]*"
                  r"(?:(?:dp|data[\s-]parallel)[\s_-]*)?(?:rank|gpu|device|replica|worker)\b", r"micro-batch \1", text)
    # sequences said per GPU: "2 seqs per gpu", "4 samples/device" (the GPU word is no accelerator named "seqs")
    text = re.sub(r"(?<![\w.])(\d+)\s*(?:seqs?|sequences?|samples?)\s*(?:/|per|a|each|on\s+each)[\s-]*"
                  r"(?:(?:dp|data[\s-]parallel)[\s_-]*)?(?:rank|gpu|device|replica|worker)\b", r"micro-batch \1", text)
    for pattern, written in MILLIONS:  # "half a million tokens" -> "0.5m tokens", as "4M tokens" is read
        text = re.sub(pattern, written, text)
    return re.sub(r"\s+", " ", text).strip()


# the batch's tokens held while the length changes: "keep the tokens per step the same", "same tokens per batch",
# "at a constant token budget per step"
STEP_WORD = r"(?:step|batch|iter\w*|update)"
# The batch per GPU held while the GPUs change ("scale the batch with the gpus", "128 GPUs, scaling the batch with
# them", "keep the per-gpu batch", "same local batch", "weak scaling"): the global batch grows with them, as a torchtitan local batch or a DeepSpeed micro-batch does.
# normalise() has written a per-device batch as "micro-batch" by then; with no value after it, it is the batch kept.
BATCH_WITH_GPUS = re.compile(
    r"\bscal\w*\s+(?:the\s+|our\s+)?(?:global\s+)?(?:batch|gbs)(?:\s+size)?\s+(?:(?:up\s+)?(?:with|by|along\s+with|in\s+line\s+with|"
    r"linearly\s+with)\s+(?:the\s+)?(?:gpus?|dp|data[\s-]parallel\w*|nodes?|gpu\s+count|them)\b|too\b|as\s+well\b|accordingly\b|"
    r"proportionally\b)|\b(?:same|keep\w*\s+(?:the\s+|our\s+)?|constant|fixed|unchanged)\s*micro-batch\b(?!\s*(?:of\s+|=\s*)?\d)|"
    r"\bmicro-batch\s+(?:stays|kept|fixed|constant|(?:is\s+)?the\s+same|unchanged)\b|"
    r"\bweak[\s-]scal\w*")
SAME_TOKENS = re.compile(
    rf"\b(?:same|constant|fixed|unchanged|equal)\s+(?:number\s+of\s+)?tok(?:en)?s?(?:[\s-]+budget)?(?:\s*(?:per|/|a|each)\s*{STEP_WORD})?\b"
    rf"|\btok(?:en)?s?(?:[\s-]+budget)?\s*(?:per|/|a|each)\s*{STEP_WORD}\s+(?:(?:stay|stays|remain|remains|held|kept|is|are)\s+)?"
    rf"(?:the\s+)?(?:same|constant|fixed|unchanged)\b")


MILLIONS = [(r"\b(?:a\s+|one\s+)?half\s+(?:of\s+)?(?:a\s+)?mil(?:lion|l?)\b", "0.5m"),
            (r"\b(?:a\s+|one\s+)?quarter\s+(?:of\s+)?(?:a\s+)?mil(?:lion|l?)\b", "0.25m"),
            (r"\b(\d+(?:\.\d+)?)\s*mil(?:lion|l?)\b", r"\1m"),
            (r"\b(?:a|one)\s+mil(?:lion|l?)\b", "1m"), (r"\btwo\s+mil(?:lion|l?)\b", "2m"),
            (r"\bfour\s+mil(?:lion|l?)\b", "4m"), (r"\beight\s+mil(?:lion|l?)\b", "8m")]


def without_quotes(text: str) -> str:
    """Pasted text in quotes is data, not the request."""
    # a single quote between letters is an apostrophe ("we're … what's"), not a quotation mark
    return re.sub(r"\"[^\"]{3,}\"|“[^”]{3,}”|(?<![a-z])'[^']{12,}'(?![a-z])", " ", text)


MORE_HARDWARE = re.compile(
    r"(?:\b(?P<n>\d+|one|a|an|two|three|four|eight)\s+(?:more|extra|additional)|\banother(?:\s+(?P<n2>\d+|two|three|four|eight))?)"
    r"\s+(?:(?:h100|h200|b200|a100|gpu)\s+)?(?P<what>nodes?|boxes|box|servers?|machines?|hosts?|gpus?|cards)\b")
QUOTED_LINE = re.compile(r"^\s*>")  # "> …": a forwarded message, a quoted Slack thread or email
# The user's own words ask for a verdict on the plan in the pasted text ("can you check their layout?").
CHECK_PASTED = re.compile(r"\b(?:review|check|evaluate|validate|sanity|verify|thoughts\s+on|look\s+at|opinion)\b|"
                          r"\b(?:is|does|would|will)\s+(?:this|that|it|their|the)\b[^.?!]*\b(?:ok|fine|good|right|valid|fit|work)\b")


def own_words(message: str) -> str:
    """The message without its quoted lines, pasted logs and instructions to the assistant: what the user asks,
    as opposed to what they pasted (pasted.py)."""
    unpasted = without_instructions(without_log_blocks(message))
    lines = unpasted.splitlines()
    own = [line for line in lines if not QUOTED_LINE.match(line)]
    if own and len(own) < len(lines):
        return "\n".join(own)
    return unpasted if unpasted.strip() else message


# A training log's iteration counter ("iteration       20/     100"): never a node size or GPU count
ITERATION_COUNTER = re.compile(r"\biteration\s+\d+\s*/\s*\d+")


def extract(message: str) -> Entities:
    # A pasted log's numbers are its own ("iteration 20/100" is no node size, "consumed samples: 10240" no
    # batch): the words are read without its lines. What the log says about its run (plan, sequence, batch,
    # framework) is applied where it is calibrated on (tools/log_run.py), as `calibrate --from-log` does.
    message = ITERATION_COUNTER.sub(" ", message)
    original = message
    if pasted_log(message) is not None:
        message = without_log_lines(message)
    text = without_quotes(normalise(message))
    own = without_quotes(normalise(own_words(message)))
    e = Entities()
    # A plan inside pasted text is data: it is the plan only when the user's own words ask to check it, and then
    # only from lines a program printed, never from a note written into a pasted log or from instructions to the
    # assistant (pasted.py).
    checkable = without_quotes(normalise(without_instructions(printed_lines_only(message))))
    e.plans = find_plans(checkable) if own == text or CHECK_PASTED.search(own) else find_plans(own)
    e.export_format = find_export_format(text)
    e.concept = find_concept(text)
    e.model, rest = find_model(text)
    e.model = framework_model(e.model, text + " " + normalise(original))  # "torchtitan llama3 8b": Llama 3.1 8B
    e.gpu, counts, rest = find_gpu(rest)
    added = MORE_HARDWARE.search(rest)  # "3 more nodes like that one", "another 16 gpus": on top of the current count
    if added:
        number = _count(added.group("n") or added.group("n2") or "1") or 1
        if re.match(r"gpus?|cards", added.group("what")):
            e.gpus_added = number
        else:
            e.nodes_added = number
        rest = rest[:added.start()] + " " * (added.end() - added.start()) + rest[added.end():]
    gpus, nodes, per_node = find_counts(rest)
    e.gpus = counts.get("gpus") if counts.get("gpus") is not None else gpus
    if e.gpus is None and counts.get("owned_one") and not (counts.get("nodes") or nodes):
        e.gpus = 1  # "on my 4090" with no count anywhere: the one GPU
    e.nodes = counts.get("nodes") or nodes
    e.gpus_per_node = counts.get("gpus_per_node") or per_node
    hardware = r"\b(?:gpus?|nodes?|cards|accelerators)\b"  # "double the nodes", "half that many gpus"
    times = re.search(r"\b(\d+(?:\.\d+)?)\s*x\s+(?:more|the|as\s+many)\s+(?:gpus?|nodes?|cards|boxes)\b", text)
    if e.gpus is None and times:  # "2x more nodes", "4x the GPUs": the current count times that
        e.gpus_factor = float(times.group(1))
    elif e.gpus is None and re.search(rf"\b(?:doubl(?:e|es|ed|ing)|twice)\b[^.?!]*{hardware}|\b2x\s+(?:the\s+)?gpus", text):
        e.gpus_factor = 2.0
    elif e.gpus is None and re.search(rf"\b(?:halv(?:e|es|ed|ing)|half)\b[^.?!]*{hardware}", text):
        e.gpus_factor = 0.5
    batch = r"\b(?:global\s+)?(?:batch(?:\s+size)?|gbs|bs)\b"  # "halve the batch", "double gbs" (no new value given)
    if e.global_batch is None and not e.global_batch_tokens:
        if re.search(rf"\b(?:doubl(?:e|es|ed|ing)|twice)\s+(?:the\s+|our\s+|that\s+)?{batch}", text):
            e.batch_factor = 2.0
        elif re.search(rf"\b(?:halv(?:e|es|ed|ing)|half)\s+(?:the\s+|our\s+|that\s+)?{batch}", text):
            e.batch_factor = 0.5
        e.same_tokens = SAME_TOKENS.search(text) is not None
        e.batch_with_gpus = BATCH_WITH_GPUS.search(text) is not None
    e.network = find_network(rest)
    _, e.network_unmatched = find_link_speed(rest)
    setup = find_setup(text)
    e.moe_dispatcher, e.moe_a2a_overlap, e.cuda_graphs = setup.moe_dispatcher, setup.moe_a2a_overlap, setup.cuda_graphs
    e.cuda_graphs_unscoped, e.mean_doc_len, e.packed = setup.cuda_graphs_unscoped, setup.mean_doc_len, setup.packed
    e.grad_reduce_dtype, e.fp8_param_gather = setup.grad_reduce_dtype, setup.fp8_param_gather
    e.recompute_modules = setup.recompute_modules
    rest = without_doc_len(rest, setup)  # a packed document's length is not the sequence length
    post, rest = find_post_training(rest)  # rollout lengths first: "1k-token responses" is not the sequence
    e.prompt_len, e.response_len, e.group_size = post.prompt_len, post.response_len, post.group_size
    e.seq_len = find_seq_len(rest)
    e.global_batch, e.global_batch_tokens = find_batch(rest)
    e.grad_accum = find_grad_accum(rest)
    e.train_tokens, e.price_per_gpu_hour = find_train_tokens(rest), find_price(text)
    if e.model is None:
        tokens_free = re.sub(r"\d+(?:\.\d+)?\s*[kmb]?\s*-?\s*tok\w*", " ", rest)
        e.model, e.params = find_params(tokens_free)
    e.mode, e.lora_rank = find_mode(text)
    e.mode_named_by_rank = e.mode == "lora" and find_mode(re.sub(r"\blora[\s_-]*(?:rank|r)\b", " rank ", text))[0] is None
    e.mode = combined_mode(e.mode, find_post_training(text)[0].algorithm)
    worded = without_megatron_options(text)  # "grad reduce in bf16" names no training precision
    if re.search(r"\bfp8\b", worded):
        e.precision = "fp8"
    elif re.search(r"\bbf16\b|bfloat16", worded):
        e.precision = "bf16"
    e.framework = find_framework(text)
    e.unknown = find_unknown(text, e.model or e.params)
    if e.gpu is None and not any(u in UNSUPPORTED_HARDWARE.values() for u in e.unknown):
        e.unlisted_gpu = unlisted_accelerator(text)
    if e.gpus and e.nodes and e.gpus_per_node and e.gpus != e.nodes * e.gpus_per_node:
        e.conflicts.append(f"you wrote {e.gpus} GPUs, and also {e.nodes} nodes of {e.gpus_per_node} GPUs each")
    elif e.gpus and e.nodes and not e.gpus_per_node and e.gpu:
        gpu = hardware_catalog.get_gpu(e.gpu)
        if e.gpus > e.nodes * gpu.gpus_per_node:  # "2 DGX boxes, 24 GPUs": more GPUs than those nodes hold
            e.node_size_of = e.gpu
            e.conflicts.append(f"you wrote {e.gpus} GPUs, and also {e.nodes} nodes, but each {gpu.name} node holds "
                               f"{gpu.gpus_per_node} GPUs, so {e.nodes} of them cannot hold {e.gpus}")
    return e
