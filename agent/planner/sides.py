"""Two scenarios side by side: "H100 vs H200 for 405B on 1024 GPUs", "64 or 128 GPUs?", "LoRA or QLoRA
on 2 A100s", "bf16 vs fp8", "deepep vs alltoall dispatcher", "full or per-layer cuda graphs", "8k ctx (gbs 256) vs 16k ctx (gbs 128)". Two values of one scenario fact joined by a contrast word; everything
else the message states is common to both sides. Plan knobs ("TP=4 vs TP=8") are plans, not
scenarios, and are read by knobs.py."""

from __future__ import annotations

import re

from .names import _gpu_patterns, find_model
from .quantities import K
from .setup_words import setup_sides

CONTRAST = re.compile(r"\s*(?:\bvs\.?|\bversus|\bor|\bcompared\s+(?:to|with)|\bagainst|/)\s*")
COUNT = r"(\d[\d,]*k?)\s*(?:x\s*)?"
UNIT = r"(gpus?|cards|nodes?|boxes|servers)\b"
MODES = {"qlora": "qlora", "q-lora": "qlora", "lora": "lora", "full fine-tune": "full", "full finetune": "full",
         "full fine-tuning": "full", "full ft": "full", "full training": "full", "full": "full"}
MODE = r"(q-?lora|lora|full\s+fine-?tun(?:e|ing)|full\s+ft|full\s+training|full)\b"
PRECISION = r"(bf16|fp8)\b"


def _gpu_at(text: str, at_end: bool) -> str | None:
    """The GPU named at the end (left side) or the start (right side) of the text."""
    for pattern, gpu_id in _gpu_patterns():
        for m in pattern.finditer(text):
            if (at_end and not text[m.end():].strip(" s'")) or (not at_end and not text[:m.start()].strip()):
                return gpu_id
    return None


def _model_at(text: str, at_end: bool) -> str | None:
    """The catalog model named at the end (left side) or the start (right side) of the text."""
    model, blanked = find_model(text)
    if model is None:
        return None
    changed = [i for i, (a, b) in enumerate(zip(text, blanked)) if a != b]
    if not changed:
        return None
    if at_end:
        return model if not text[changed[-1] + 1:].strip(" s',") else None
    return model if not text[:changed[0]].strip() else None


def _models_after(right: str) -> list[str]:
    """Catalog models listed after the right side of a pair ("llama 3.1 8b vs qwen 2.5 7b vs mistral 7b")."""
    out: list[str] = []
    rest = right
    while True:
        model, blanked = find_model(rest[:40])
        changed = [i for i, (a, b) in enumerate(zip(rest, blanked)) if a != b]
        if model is None or not changed or rest[:changed[0]].strip():
            return out[1:]  # the first is the pair's own right side
        out.append(model)
        rest = rest[changed[-1] + 1:]
        m = LISTED.match(rest)
        if not m:
            return out[1:]
        rest = rest[m.end():]


def _count(written: str) -> int:
    written = written.replace(",", "")
    return int(written[:-1]) * 1024 if written.endswith("k") else int(written)


def _gpu_span_at_end(text: str) -> tuple[str, int] | None:
    """(GPU id, where its name starts) for a GPU named at the very end of the text."""
    for pattern, gpu_id in _gpu_patterns():
        for m in pattern.finditer(text):
            if not text[m.end():].strip(" s'"):
                return gpu_id, m.start()
    return None


def _listed_before(left: str) -> list[str]:
    """GPUs listed before the last two, joined to them by commas ("H100, H200 or B200")."""
    found = _gpu_span_at_end(left)
    out: list[str] = []
    rest = left[:found[1]] if found else ""
    while (m := re.search(r",\s*$", rest)) and (prev := _gpu_span_at_end(rest[:m.start()])):
        out.insert(0, prev[0])
        rest = rest[:prev[1]]
    return out


# What joins one listed side to the next: a comma (", and", ", or"), a contrast word, "and", a slash
LISTED = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|(?:\bvs\.?|\bversus|\bor|\band|\bcompared\s+(?:to|with)|\bagainst|/)\s*)")


def _gpu_span_at_start(text: str) -> tuple[str, int] | None:
    """(GPU id, where its name ends) for a GPU named at the very start of the text (the longest name wins)."""
    for pattern, gpu_id in _gpu_patterns():
        m = pattern.match(text)
        if m:
            return gpu_id, m.end()
    return None


def _listed_after(right: str) -> list[str]:
    """GPUs listed after the right side of a pair ("H100 vs H200 vs A100 40GB", "H100 or H200, or B200"):
    the right side's own name first, then each GPU joined to the one before by a comma or a contrast word."""
    first = _gpu_span_at_start(right)
    out: list[str] = []
    rest = right[first[1]:] if first else ""
    while (m := LISTED.match(rest)) and (nxt := _gpu_span_at_start(rest[m.end():])):
        out.append(nxt[0])
        rest = rest[m.end() + nxt[1]:]
    return out


# "compare qwen 7b and llama 8b", "h100 and h200, which is faster": "and" joins two sides when the message compares
JOINED = re.compile(r"\s*(?:,\s*)?\band\s+")
COMPARES = re.compile(r"\bcompar\w*|\bwhich\b|\b(?:faster|slower|better|quicker|cheaper)\b|\beach\b|\bside\s+by\s+side\b")


def _joined_sides(text: str) -> tuple[dict, ...] | None:
    """Two models, or two or more GPUs, joined by "and" in a message that compares them."""
    if not COMPARES.search(text):
        return None
    for c in JOINED.finditer(text):
        left, right = text[:c.start()], text[c.end():]
        ma, mb = _model_at(left[-40:], True), _model_at(right[:40], False)
        if ma and mb and ma != mb:
            return {"model": ma}, {"model": mb}
        ga, gb = _gpu_at(left[-40:], True), _gpu_at(right[:40], False)
        if ga and gb and ga != gb:  # "compare h100, h200 and a100": the GPUs listed before by commas too
            return tuple({"gpu": g} for g in dict.fromkeys(_listed_before(left[-80:]) + [ga, gb] + _listed_after(right)))
    return None


# Two sequence lengths, each maybe with its own batch: "8k ctx (gbs 256) vs 16k ctx (gbs 128)", "4k vs 8k context",
# "seq 4096 with gbs 512 or seq 8192 with gbs 256". A context word must be in the pair: "8k or 16k" alone may be a
# batch or a GPU count and is not read; "2048 vs 4096 tokens per step" is a batch.
CTX_WORD = r"(?:ctx|context(?:\s+length)?|seq(?:uence)?(?:\s+len(?:gth)?)?|seqs|sequences|tokens?)"


def _length_side(w: str) -> str:
    """One side: a length, its context word before or after, and maybe its own global batch in sequences."""
    return (rf"(?:(?P<{w}1>{CTX_WORD})\s*[=:]?\s*)?(?P<{w}n>\d+(?:\.\d+)?k|\d{{3,7}})(?![\w.])(?:\s*(?P<{w}2>{CTX_WORD}))?"
            r"(?:\s*[(,]?\s*(?:with\s+|@\s*|at\s+)?(?:an?\s+)?(?:gbs|global\s+batch(?:\s+size)?|batch(?:\s+size)?|bs)\s*(?:of|=|:)?\s*"
            rf"(?P<{w}b>\d[\d,]*)(?!\s*[km]?\s*tok)(?:\s+(?:seqs|sequences))?[^()]*?\)?)?")


LENGTH_SIDES = re.compile(_length_side("a") + r"\s*(?:\bvs\.?|\bversus|\bor|\bcompared\s+(?:to|with)|\bagainst)\s*"
                          + _length_side("b") + r"(?!\s*(?:gpus?|cards|nodes?|boxes|servers|x\b))"
                          r"(?<!tokens)(?<!token)(?!\s*(?:per|/|a|an|each)\s*(?:step|batch|iter\w*|update|gpu|sec\w*|s)\b)")


def _length_sides(text: str) -> tuple[dict, dict] | None:
    for m in LENGTH_SIDES.finditer(text):
        worded = [bool(m.group(f"{w}1") or m.group(f"{w}2")) for w in "ab"]
        if not any(worded):
            continue
        sides = []
        for w in "ab":
            number = m.group(f"{w}n")
            sides.append({"seq_len": int(float(number[:-1]) * K) if number.endswith("k") else int(number)})
        batches = [m.group(f"{w}b") for w in "ab"]
        if all(batches):  # each side its own batch; one batch said once ("4k vs 8k ctx, gbs 512") is common to both
            for side, batch in zip(sides, batches):
                side["global_batch"] = int(batch.replace(",", ""))
        if sides[0] != sides[1]:
            return sides[0], sides[1]
    return None


def scenario_sides(text: str) -> tuple[dict, ...] | None:
    """({fact: value}, {fact: value}, …) for the scenarios a (normalised) message contrasts, or None: two,
    or more GPUs listed ("H100, H200 or B200"). Count facts are {"gpus": n} or {"nodes": n}."""
    for c in CONTRAST.finditer(text):
        left, right = text[:c.start()], text[c.end():]
        count_b = re.match(rf"{COUNT}(?=[a-z])|{COUNT}\s+", right)  # "… or 4x H100": a count of its own
        a, b = _gpu_at(left[-40:], True), _gpu_at(right[count_b.end() if count_b else 0:][:40], False)
        if a and b and a != b:
            count_a = re.search(rf"(?<![\w.]){COUNT}\s*(?:(?:dgx|hgx)\s+)?[\w.-]*\s*[\w.-]*$", left[-40:]) if count_b else None
            if count_a and count_b:  # "8x A100 40GB or 4x H100": each side its own count
                return {"gpu": a, "gpus": _count(count_a.group(1))}, {"gpu": b, "gpus": _count(count_b.group(1))}
            listed = _listed_before(left[-80:]) + [a, b] + _listed_after(right[count_b.end() if count_b else 0:].lstrip())
            return tuple({"gpu": g} for g in dict.fromkeys(listed))
        ma, mb = _model_at(left[-40:], True), _model_at(right[:40], False)
        if ma and mb and ma != mb:  # "llama 3.1 8b vs gemma 2 9b on the same cluster": one plan per model
            return tuple({"model": m} for m in dict.fromkeys([ma, mb] + _models_after(right)))
        if c.group(0).strip() == "/":
            continue  # "gbs 1024 / 32 nodes" lists facts; only a GPU pair reads as "or" across a slash
        la = re.search(rf"(?<![\w.=]){COUNT}(?:{UNIT})?$", left)
        rb = re.match(rf"{COUNT}(?:{UNIT})?", right)
        if la and rb and not re.search(r"\b(?:tp|pp|cp|ep|vpp|etp|mb|zero|gbs|bs|batch|ctx|context|seq|len)\s*[=:]?\s*$",
                                       left[:la.start()]):
            counts, rest = [la, rb], right[rb.end():]
            while (m := LISTED.match(rest)) and (more := re.match(rf"{COUNT}(?:{UNIT})?(?![\w.])", rest[m.end():])):
                counts.append(more)  # "32 vs 64 vs 128 GPUs": every count listed, the unit said once
                rest = rest[m.end() + more.end():]
            units = [c.group(2) for c in counts if c.group(2)]
            if not units and _gpu_at(rest[:30], False):
                units = ["gpus"]  # "32 vs 64 H100s": the GPU's name is the unit
            facts = {"nodes" if re.match(r"node|box|server", u) else "gpus" for u in units}
            values = list(dict.fromkeys(_count(c.group(1)) for c in counts))
            if len(facts) == 1 and len(values) > 1:  # "2 nodes / 16 GPUs" is one setup
                fact = facts.pop()
                return tuple({fact: v} for v in values)
        for pattern, table in ((MODE, MODES), (PRECISION, None)):
            # "LoRA or QLoRA", "full finetune on 4 L40S vs lora on 4 L40S": the nearest value on each side
            ma = ([None] + list(re.finditer(rf"\b{pattern}", left[-60:])))[-1]
            mb = re.search(rf"\b{pattern}", right[:60])
            if ma and mb:
                va, vb = (re.sub(r"\s+", " ", m.group(1)) for m in (ma, mb))
                va, vb = (table.get(v, v) for v in (va, vb)) if table else (va, vb)
                rest, values = right[mb.end():], [va, vb]
                while (m := LISTED.match(rest)) and (more := re.match(rf"{pattern}", rest[m.end():])):
                    values.append(re.sub(r"\s+", " ", more.group(1)))  # "full vs lora vs qlora"
                    rest = rest[m.end() + more.end():]
                values = list(dict.fromkeys(table.get(v, v) for v in values) if table else dict.fromkeys(values))
                if len(values) > 1:
                    return tuple({"mode" if table else "precision": v} for v in values)
    return _length_sides(text) or setup_sides(text) or _joined_sides(text)
