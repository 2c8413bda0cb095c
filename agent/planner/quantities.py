"""Quantities in a message, the way engineers write them: GPU and node counts ("64 GPUs",
"8 nodes", "nodes of 8", "8 GPUs each"), sequence lengths ("32k ctx", "8k seqs", "seq 4096",
"1M token context"), batches ("gbs 512", "512 seqs per batch", "4M tok batch", "2M tokens/step")
and the training mode ("LoRA r=64", "QLoRA", "full fine-tune")."""

from __future__ import annotations

import re

DEFAULT_NODE_SIZE = 8  # HGX/DGX servers, when neither the message nor the session names a GPU
K = 1024  # "8k context" = 8192 tokens and "16k GPUs" = 16384, as both are quoted in powers of two
M = 2**20  # "1M context" = 1,048,576 tokens; "4M tokens" per batch is kept as text ('4M' = 4·2^20)
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "eight": 8}


def _count(text: str) -> int | None:
    text = text.replace(",", "").strip()
    if text in NUMBER_WORDS:
        return NUMBER_WORDS[text]
    m = re.fullmatch(r"(-?\d+)(k)?", text)
    if not m:
        return None
    return int(m.group(1)) * (K if m.group(2) else 1)


def find_counts(text: str) -> tuple[int | None, int | None, int | None]:
    """(gpus, nodes, gpus per node) from words like '64 GPUs', '8 nodes', '8 per node', 'nodes of 8'."""
    gpus = nodes = per_node = None
    m = re.search(r"(?<![\w.\-])(-?\s?\d[\d,]*k?)\s*(?:x\s*)?(?:gpus?|cards|accelerators|devices|ranks)\b", text)
    if m:
        gpus = _count(m.group(1).replace(" ", ""))
    else:
        m = re.search(r"(?<![\w.])(\d[\d,]*)\s+of\s+(?:them|those|these)\b", text)  # "assume 64 of them"
        # "could it run on 4 instead?", "train it with only 16": a count of what it runs on is GPUs
        m = m or re.search(r"\b(?:run|train|fit|go)\s+(?:it\s+|this\s+|that\s+)?(?:on|with|to)\s+(?:just\s+|only\s+)?"
                           r"(\d[\d,]*)\b(?![.\d%]|\s*(?:k|m|b|gb|gib|x|nodes?|box(?:es)?|servers?|machines?|hosts?|racks?)\b)", text)
        # "fewer gpus, say 4", "more cards - like 32?": the count offered for the hardware just named
        m = m or re.search(r"\b(?:gpus|cards)\b\s*[,:(\u2013\u2014-]*\s*(?:say|like|e\.?g\.?,?|maybe|perhaps|so)\s+"
                           r"(?:just\s+|only\s+)?(\d[\d,]*)\b(?![.\d%]|\s*(?:k|m|b|gb|gib|x|nodes?)\b)", text)
        gpus = _count(m.group(1)) if m else None
    # "6 HGX boxes", "4 DGX nodes", "6 DGXs": a DGX/HGX is a server, so its count is of nodes
    m = re.search(r"(?<!span )(?<!spans )(?<!across )(?<!over )\b(\d+|one|a|single|two|four|eight)\s*(?:x\s*)?"
                  r"(?:\d+\s*-?\s*gpu\s*)?(?:(?:nvidia\s+)?[dh]gx(?:s|es)?\b\s*)?(?:nodes?|boxes|servers|machines|hosts)\b|"
                  r"(?<!span )(?<!spans )(?<!across )(?<!over )\b(\d+|two|four|eight)\s*(?:x\s*)?(?:nvidia\s+)?[dh]gx(?:s|es)?\b", text)
    if m:
        nodes = _count(m.group(1) or m.group(2))
    # "8 per node", "8/node", "8 gpus each"; not "64/step" or "2 per step" (a node word after "per" or "/")
    m = re.search(r"(\d+)\s*(?:gpus?\s*)?(?:(?:per|/)\s*(?:node|box|server|machine|host)|each)\b|"
                  r"(?:nodes?|boxes|servers|machines)\s*(?:of|with|x)\s*(\d+)\b|(\d+)\s*-?\s*gpu\s*(?:nodes?|boxes|servers)"
                  r"|(\d+)\s*gpus?\s*each", text)
    if m:
        per_node = int(next(g for g in m.groups() if g))
        if gpus == per_node and nodes:  # "8 nodes with 8 GPUs": the 8 was per node
            gpus = None
    return gpus, nodes, per_node


NUMBER = r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?"
SAMPLE = r"(?:samples?|sequences?|seqs?|examples?|documents?|docs?|rows?|conversations?|pairs?)\b"  # DPO: "pairs of 2k tokens"
# "at step 12k", "~iter 30k": a point in training, not a length
STEP_BEFORE = re.compile(r"\b(?:steps?|iters?|iterations?|updates?)\s*[~#]?\s*$")
BATCH_WORD_BEFORE = re.compile(r"(?:\bgbs|\bbsz?|\bbatch(?:[\s_-]*size)?|\bglobal)\s*(?:of|=|:|is|to)?\s*$")
# A rate right after a number: "8k tokens/s", "8k tok/s/gpu", "8k tokens per second (per GPU)", "8k tps", "8k
# samples a second". A throughput is never a sequence length ("samples at 8k tokens/s" was read as 8k long).
PER_SECOND = r"(?:s|secs?|seconds?)\b"
RATE_AFTER = re.compile(
    r"\s*-?\s*(?:(?:tok(?:en)?s?|samples?|seqs?|sequences?)\s*)?"
    rf"(?:(?:/|per|an?|each)\s*(?:gpu\s*(?:/|per)\s*)?{PER_SECOND}|(?:/|per)\s*gpu\s*(?:/|per)\s*{PER_SECOND}|tps\b)")


def find_seq_len(text: str) -> int | None:
    def tokens(number: str, unit: str | None) -> int:
        scale = {"k": K, "m": M}.get(unit or "", 1)
        return int(float(number.replace(",", "")) * scale)

    patterns = [
        r"(?<![\w.])(\d+(?:\.\d+)?)\s*([km])?\s*(?:-?\s*tokens?\s*)?(?:ctx|context|seq(?:uence)?(?!\s*parallel)(?:\s*len(?:gth)?)?)(?!\s*s?\s*(?:/|per))\b"
        r"(?!\s*(?:is|=|:|of)\s*\d)",  # "… size: 1 seq is 32k": the 1 is another line's, the length follows
        r"(?:ctx|context|(?:model[\s_-]*)?max[\s_-]*(?:seq(?:uence)?[\s_-]*)?len(?:gth)?|cutoff[\s_-]*len(?:gth)?|block[\s_-]*size|seq(?:uence)?(?:[\s_-]*len(?:gth)?)?)"
        r"\s*(?:of|=|:|is)?\s*(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?([km]))?\b",
        r"(\d+(?:\.\d+)?)\s*(k)\s*seqs?\b",  # "8k seqs": sequences 8k long
        # the length of one sample: "131072 tokens per sample", "16,384-token sequences", "docs of 32k tokens"
        rf"({NUMBER})\s*([km])?\s*-?\s*tok(?:en)?s?\s*(?:per|/|an?|each)\s*{SAMPLE}",
        rf"({NUMBER})\s*([km])?\s*-?\s*tok(?:en)?s?\s+{SAMPLE}",
        rf"{SAMPLE}\s+(?:of|with|at|up\s+to)\s+({NUMBER})\s*([km])?\s*-?\s*tok(?:en)?s?\b",
        # a bound on the samples' length: "each example is at most 3k tokens", "conversations are under 3k tokens",
        # "samples ~2k tokens long" (not a rate: "samples at 8k tokens/s")
        rf"{SAMPLE}\s+(?:(?:is|are|were|of|with)\s+)?(?:up\s+to|at\s+most|under|below|<=?|≤|max(?:imum)?|around|about|"
        rf"roughly|~)\s*({NUMBER})\s*([km])?\s*-?\s*tok(?:en)?s?\b(?!\s*(?:/|per)\s*(?:s\b|sec|second|gpu|step))",
        rf"({NUMBER})\s*([km])?\s*-?\s*tok(?:en)?s?\s+each\b(?!\s*(?:step|batch|iteration))",
        # what the samples were made into: "every sample packed to 4096 tokens", "padded to 2k tokens"
        rf"\b(?:packed|padded|truncated|chunked|concatenated)\s+(?:in)?to\s+(?:a\s+length\s+of\s+)?({NUMBER})\s*([km])?\s*-?\s*tok(?:en)?s?\b",
        # "all seqs packed to 4096", "samples padded to 2k": the samples named before, the unit left unsaid
        rf"{SAMPLE}\s+(?:(?:are|were|get|got|all)\s+)?(?:packed|padded|truncated|chunked|concatenated)\s+(?:in)?to\s+"
        rf"(?:a\s+length\s+of\s+)?({NUMBER})\s*([km])?\b(?!\s*(?:%|x\b|gpus?|nodes?|{SAMPLE}))",
        r"(?<![\w.])(\d+(?:\.\d+)?)(k)(?![\w])(?!\s*(?:-?\s*tok|tokens|gpus?|h100|h200|b200|a100|cards|nodes|steps?|iters?|iterations?|updates?))",  # "4k,"
    ]
    for pattern in patterns:
        for m in re.finditer(pattern, text):
            if STEP_BEFORE.search(text[:m.start()]):
                continue  # "loss spikes at step 12k": a step count
            if BATCH_WORD_BEFORE.search(text[:m.start()]):
                continue  # "gbs 1k": a batch of 1,024 sequences, not a length
            if RATE_AFTER.match(text, max(m.end(g) for g in (1, 2) if m.group(g))):
                continue  # "samples at 8k tokens/s": a throughput
            if re.match(r"\s*(?:tok\w*\s*)?(?:global\s*)?(?:batch|gbs)(?!\s*(?:size\s*)?(?:of|=|:)?\s*\d)", text[m.end():]):
                continue
            return tokens(m.group(1), m.group(2))
    return None


def find_batch(text: str) -> tuple[int | None, str | None]:
    """(global batch in sequences, or tokens per batch as written: '4M')."""
    token_patterns = [
        r"(\d+(?:\.\d+)?)\s*([mb])\s*-?\s*(?:tok(?:en)?s?)?\s*(?:/|per\s+)?\s*(?:global\s*)?(?:batch(?:es)?|step|gbs)\b(?!\s*\d)",
        r"(\d+(?:\.\d+)?)\s*(k)\s*-?\s*tok(?:en)?s?\s*(?:/|per\s+)?\s*(?:global\s*)?(?:batch(?:es)?|step|gbs)\b",
        r"(\d+(?:\.\d+)?)\s*([kmb])?\s*-?\s*tok(?:en)?s?\s*(?:/|per\s+)\s*(?:step|batch|iter(?:ation)?|update)",
        r"(?:batch(?:es)?|gbs|\bbsz?)\s*(?:size\s*)?(?:of|=|:|is|to)?\s*(\d+(?:\.\d+)?)\s*([kmb])?\s*-?\s*tok",
        # millions of tokens with no other role are a batch ("1.5M tok", "~0.5m tokens"): a dataset is
        # counted in billions, a context in thousands; "1M token context" is a length, read elsewhere
        # (nor a rate: "the job does 1.23m tokens/s")
        r"(?<![\w.])(\d+(?:\.\d+)?)\s*(m)\s*-?\s*tok(?:en)?s?\b(?!\s*-?\s*(?:ctx|context|seq|window|long|per\s+(?:sample|seq)))"
        r"(?!\s*(?:/\s*s(?:ec(?:ond)?)?\b|per\s+s(?:ec(?:ond)?)?\b|a\s+second\b))",
    ]
    for pattern in token_patterns:
        m = re.search(pattern, text)
        if m:
            return None, f"{m.group(1)}{(m.group(2) or '').upper()}"
    sequence_patterns = [
        # "global bs 512", "gbs=1k", "total bs 128", "bs 16", "batch size of 64", "bump the batch to 1024"
        r"(?:global[\s_-]*(?:batch|bs)(?:[\s_-]*size)?|\bglobal|\bgbs|(?<!micro)(?<!micro[\s_-])\b(?:total[\s_-]*)?"
        r"(?:batch(?:[\s_-]*size)?|bsz?))\s*(?:of|=|:|is|to)?\s*(\d[\d,]*)(?:\s?(k))?\b(?!\s*[kmb]?\s*-?\s*tok)",
        r"(\d[\d,]*)\s*(?:sequences?|seqs?|samples?)\s*(?:per|/)\s*(?:step|batch)",
        r"(?<![\w.])(\d[\d,]*)\s*(?:gbs|global\s*batch|(?<!micro\s)batch\b)",
        r"(?<![\w.])(\d[\d,]*)\s*(?:seqs|sequences)\b",
        # "4k/512": sequence length / global batch, the way recipes abbreviate a run
        r"(?<![\w.])\d+(?:\.\d+)?k\s*/\s*(\d[\d,]*)\b(?!\s*[kmb]|\s*(?:tok|gpu|node|s\b|sec|step|iter))",
        # "(so 64/step)", "128 per optimizer step", "256 per batch": sequences per step, a count with no unit of its own
        r"(?<![\w.~])(\d[\d,]*)\s*(?:/\s*|per\s+)(?:optimi[sz]er\s+|global\s+)?(?:step|batch)\b(?!\s*time)"
        r"(?!\s*(?:/|per|on\s+each|each)\s*(?:rank|gpu|device))",
    ]
    for pattern in sequence_patterns:
        m = re.search(pattern, text)
        if m:
            scale = K if m.lastindex and m.lastindex >= 2 and m.group(2) else 1
            return int(m.group(1).replace(",", "")) * scale, None
    return None, None


# A mode ruled out is not chosen: "LoRA (bf16 base, not qlora)", "no qlora", "without quantization"
NEGATED_MODE = re.compile(r"(?:\bnot|\bno|\bwithout|(?<!\S)w/o|\bnon)[\s-]+(?:an?\s+|any\s+|the\s+)?"
                          r"(?:q[\s\-]?lora|quanti[sz]\w*|4[\s-]?bit|nf4)\b")


# Between "rank" and its value: "r=64", "rank of 64", "rank: 64", a change to it ("rank to 128", "rank up to 128",
# "rank from 16 to 128", "rank 16 -> 128"): the value is the last one written.
RANK_LINK = r"(?:(?:=|of|:|at)\s*|(?:(?:up\s+|all\s+the\s+way\s+)?to|(?:from\s+)?\d+\s*(?:to|->|→))\s+)?"


def find_mode(text: str) -> tuple[str | None, int | None]:
    mode = None
    text = NEGATED_MODE.sub(" ", text)
    if re.search(r"\bq[\s\-]?lora\b", text):
        mode = "qlora"
    elif re.search(r"\blora\b", text):
        mode = "lora"
    elif re.search(r"full[\s\-]*(?:fine[\s\-]?tun\w*|training|param\w*|ft)\b|pre[\s\-]?train|\bno\s+lora\b|\bwithout\s+lora\b",
                   text):
        mode = "full"
    rank = re.search(rf"\b(?:rank|r)\s*{RANK_LINK}(\d+)\b", text) if mode in ("lora", "qlora") else \
        re.search(rf"\b(?:lora|adapter)[\s_-]*(?:rank|r)\s*{RANK_LINK}(\d+)\b|(?<!process\s)(?<!global\s)(?<!local\s)\brank\s+"
                  rf"{RANK_LINK}(\d+)\b(?!\s*(?:gpus?|ooms?|process|node))", text)  # "what if we used rank 64?"
    if rank is not None and not int(next(g for g in rank.groups() if g)):
        rank = None
    return mode, int(next(g for g in rank.groups() if g)) if rank else None


# Gradient accumulation as trainers print it: "grad accum 4", "gradient_accumulation_steps=8", "4 grad accum steps"
GRAD_ACCUM = re.compile(r"\bgrad(?:ient)?[\s_-]*accum(?:ulation)?(?:[\s_-]*steps?)?\s*(?:of|=|:|is)?\s*(\d+)\b(?![.\d])"
                        r"|(?<![\w.])(\d+)\s*(?:x\s*)?grad(?:ient)?[\s_-]*accum(?:ulation)?\b")


NO_ACCUM = re.compile(r"(?:\bno|\bwithout|(?<!\S)w/o|\bzero)\s+(?:grad(?:ient)?[\s_-]*)?accum(?:ulation)?\b")


def find_grad_accum(text: str) -> int | None:
    """Micro-batches accumulated per step, as written; with the per-device batch and the data-parallel
    size it gives the global batch (HF Trainer: per_device_train_batch_size x accumulation x world size)."""
    m = GRAD_ACCUM.search(text)
    if m is None and NO_ACCUM.search(text):
        return 1  # "no grad accum": one micro-batch per step
    return int(m.group(1) or m.group(2)) if m else None


# A token budget to train on, in billions or trillions ("200B tokens", "1.5T tok", "300 billion tokens"); a batch
# is counted in millions ("4M tok batch") and is read by find_batch.
TRAIN_TOKENS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(b|t|billion|trillion)\s*-?\s*tok(?:en)?s?\b"
                          r"(?!\s*(?:/|per|a|each)?\s*(?:global\s*)?(?:batch|step|gbs|iter))")
# A price per GPU-hour: "$2.5/gpu-hr", "@ ~$2.49 per GPU hour", "2.5 usd/gpu-hour", "$3/hr per gpu"
GPU_HOUR = r"(?:gpu[\s-]*(?:h(?:ou)?rs?|h)\b|h(?:ou)?r\s*(?:per|/|a)\s*gpu\b)"
PRICE_PER_GPU_HOUR = re.compile(rf"\$\s*(\d+(?:\.\d+)?)\s*(?:/|per|an?)\s*{GPU_HOUR}"
                                rf"|(?<![\w.])(\d+(?:\.\d+)?)\s*(?:usd|dollars?|\$)\s*(?:/|per|an?)\s*{GPU_HOUR}")


def find_train_tokens(text: str) -> str | None:
    """The token budget as written ("200B"), or None."""
    m = TRAIN_TOKENS.search(text)
    return f"{m.group(1)}{m.group(2)[0].upper()}" if m else None


def find_price(text: str) -> float | None:
    """USD per GPU-hour the user pays, or None."""
    m = PRICE_PER_GPU_HOUR.search(text)
    return float(m.group(1) or m.group(2)) if m else None
