"""Plan knobs in a message: "TP=4", "tp8", "ZeRO-3", "mb 2", "full recompute", "pure DP", and
contrasts of two plans: "TP=4 PP=4 over TP=8 PP=2, both zero1 mb1", "EP8 or EP4 (tp2 pp2)",
"selective vs full"."""

from __future__ import annotations

import re

CKPT = (r"(?:(?:act(?:ivations?)?|grad(?:ient)?)[\s_-]*)?(?:recompute|recomputation|re-?materiali[sz]ation|remat|"
        r"checkpointing|checkpoint|ckpt)\b")
KNOB = r"tp|pp|vpp|cp|ep|etp|zero(?:\s*stage)?|mbs?|micro[\s\-_]?(?:batch(?:[\s\-_]?size)?|bs)"
KNOB_PATTERNS = {  # plan knobs as written: "TP=4", "tp 4", "TP4", "ZeRO-3", "mb 2", "micro-batch of 2"
    "tp": r"\btp\s*(?:=|:|-|\s)?\s*(\d+)\b|\btensor[\s\-]?parallel(?:ism)?\s*(?:of|=|:)?\s*(\d+)\b",
    "pp": r"\bpp\s*(?:=|:|-|\s)?\s*(\d+)\b|\bpipeline[\s\-]?parallel(?:ism)?\s*(?:of|=|:)?\s*(\d+)\b",
    "vpp": r"\bvpp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "cp": r"\bcp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "ep": r"\bep\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "etp": r"\betp\s*(?:=|:|-|\s)?\s*(\d+)\b",
    "zero": r"\bzero\s*(?:stage)?\s*(?:=|:|-|\s)?\s*([0-3])\b",
    "micro_batch": r"\b(?:mbs?|micro[\s\-_]?(?:batch(?:[\s\-_]?size)?|bs))\s*(?:of|=|:|-|\s)?\s*(\d+)\b(?!\s*(?:vs\.?|or|versus)\s*\d)",
    # "full act ckpt", "selective ckpt", "no grad checkpointing", "recompute=full"; a bare "activation
    # checkpointing" / "gradient checkpointing" / "act ckpt" is full recompute (HF's gradient_checkpointing)
    # torchtitan calls it AC ("AC mode full", "ac=selective", "full AC": activation_checkpoint.mode); "what if
    # recompute was full?" (a what-if said with a verb) is the same setting
    "recompute": rf"(?<![\w/])(none|no|without|w/o|selective|full)\s+(?:any\s+)?(?:{CKPT}|ac\b)"
                 rf"|(?:{CKPT}|\bac\b)(?:[\s_\-]*mode)?\s*(?:=|:|\s(?:was|is|were|set\s+to)\s)?\s*(none|off|selective|full)\b"
                 rf"|(?<!what )(?<!what is )(?<!explain )\b(?:act(?:ivations?)?|grad(?:ient)?)[\s_-]*(?P<bare>ckpt|checkpoint(?:ing|ed)?)\b",
    # sequence parallelism switched ("sequence parallel" is written "sp" by knob_words first): "SP off", "sp=false",
    # "no SP", "without sequence parallelism", "turn SP off", "disable SP", "SP was off"; "with SP", "turn SP on". A
    # bare "SP" names the idea (names.py), not a setting: only a word that switches it sets the knob. "with sp 2" is
    # a degree (DeepSpeed-Ulysses' sequence parallel size, CP here), not Megatron's SP.
    "sequence_parallel": rf"\bsp\s*(?:=|:)?\s*(?:(?:was|is|were|being|been|turned|switched|set|left)\s+)*(?:(?P<off>off|false|disabled)|(?P<on>on|true|enabled))\b"
                         rf"|(?P<off_before>\bno|\bwithout|(?<!\S)w/o|\bdisabl(?:e|ed|ing)|\bturn(?:ed|ing)?\s+off|\bswitch(?:ed|ing)?\s+off|\bdrop(?:ped|ping)?)[\s-]+(?:the\s+)?sp\b(?!\s*[=:]?\s*\d)"
                         rf"|(?P<on_before>\bwith|(?<!\S)w/|\benabl(?:e|ed|ing)|\bturn(?:ed|ing)?\s+on|\bswitch(?:ed|ing)?\s+on)\s+(?:the\s+)?sp\b(?!\s*[=:]?\s*\d)"
                         rf"|\b(?:turn(?:ed|ing)?|switch(?:ed|ing)?)\s+(?:the\s+)?sp\s+(?:back\s+)?(?:(?P<off_after>off)|(?P<on_after>on))\b",
}
ONLY_DP = r"\bpure\s+(?:dp|data[\s-]?parallel)|\bno\s+tp\s*(?:/|or|and|,)\s*pp\b|\bplain\s+(?:fsdp|ddp|dp)\b"
NO_TP = r"\btp\s*=?\s*1\s+only\b"
# "no CP", "without PP", "w/o EP": that dimension off (degree 1)
NEGATED = re.compile(r"(?:\bno|\bwithout|(?<!\S)w/o)\s+(?:any\s+)?(tp|pp|vpp|cp|ep|etp)\b")
# Alternatives the user labels: "option A: … option B: …", "plan 1) … plan 2) …", "(a) … (b) …"
OPTION_LABEL = re.compile(r"\b(?:option|opt|alt(?:ernative)?|variant|choice|plan|setup|layout|config)\s*#?\s*(?P<w>[ab12])"
                          r"\s*(?:[:)=,]|-(?!\s*\d)|\s+(?:is|would\s+be)\b"
                          # no punctuation, a knob straight after: "option a tp8 pp16 …, option b tp4 …"
                          r"|(?=\s+(?:tp|pp|vpp|cp|ep|etp|zero|mbs?)\s*[=:\-]?\s*\d|\s+(?:full|selective|no|pure|plain)\b))"
                          r"|(?:^|(?<=[\s,;:]))\(?(?P<p>[ab])\)\s")
# The plan under discussion named by pointing at it: "why that over …", "is yours better than …"
OURS = re.compile(r"\b(?:that|this|it|yours|ours|your\s+(?:plan|pick|choice|one|recommendation)|"
                  r"the\s+(?:recommended|current|suggested|chosen|new)\s+(?:one|plan|layout))\b(?:\s+[a-z']+){0,3}\s*$")
KNOB_VS = re.compile(  # "EP8 or EP4", "ZeRO-3 vs ZeRO-1", "micro batch 1 vs 4", "selective vs full"
    rf"\b(?P<knob>{KNOB})\s*[=:\-]?\s*(?P<a>\d+)\s*(?:vs\.?|versus|or|over)\s*(?:(?:(?P=knob)|stage|zero)\s*[=:\-]?\s*)?(?P<b>\d+)\b"
    r"|\b(?P<ra>none|selective|full)\s+(?:vs\.?|versus|or|over)\s+(?P<rb>none|selective|full)\b")
# "compare zero 1 and zero 3", "between tp 4 and 8": two values of one knob joined by "and"
KNOB_AND = re.compile(
    rf"\b(?:compare|comparing|between)\s+(?P<knob>{KNOB})\s*[=:\-]?\s*(?P<a>\d+)\s*(?:and|&|with|to)\s*(?:(?P=knob)\s*[=:\-]?\s*)?(?P<b>\d+)\b"
    r"|\b(?:compare|comparing|between)\s+(?P<ra>none|selective|full)\s+(?:and|&|with|to)\s+(?P<rb>none|selective|full)\b")
PLAN_SEPARATOR = re.compile(r"\bover\b|\bvs\.?|\bversus\b|\binstead\s+of\b|\brather\s+than\b|\bcompared\s+(?:to|with)\b"
                            r"|\bthan\b|\bnot\b|\bor\b|\b(?:beats?|beating|outperforms?|outperforming)\b")  # "why would tp4 pp2 beat tp8"
BASELINE = re.compile(r"\s*(?:the\s+|a\s+)?(?:plain|vanilla|standard|default|regular|non[\s-]?interleaved|no\s|without\s|off\b|none\b)")
KNOB_OFF = {"tp": 1, "pp": 1, "vpp": 1, "cp": 1, "ep": 1, "etp": 1, "recompute": "none"}  # the knob not used
SHARED_BREAK = re.compile(r"[(),;:?!]|\.(?=\s)|\bboth\b|\bwith\b|\band\b|--| - ")  # a sentence end too: "zero1 mb1 either way. tp4 pp2 vs tp8"
# Two plans joined by "and" / "with" / "to" in a comparison ("compare TP4 PP4 with TP8 PP2", "TP4 PP4 and TP8 PP2 -
# which is faster?"): the joiner separates plans only when a knob of the plan before it is named again right after
# it ("tp4 pp4 with zero1" is one plan), and the message asks to compare.
JOINER = re.compile(r"\band\b|\bwith\b|\bto\b|&")
COMPARED = re.compile(r"\bcompar\w*|\bbetween\b|\bwhich\b|\b(?:faster|slower|better|quicker|cheaper|wins?)\b"
                      # two people's plans set against each other: "who's right", "settle it", "which of us"
                      r"|\bwho(?:'s|s|\s+is)\s+(?:right|correct)\b|\bsettle\b")
# Where one person's plan ends and another's begins, with no contrast word between them: "colleague wants tp8 + zero1,
# i'd do tp4 + zero2", "he runs tp 8 pp 2; I'd go tp 4 pp 4". A clause break between two values of one knob.
CLAUSE_BREAK = re.compile(r"[,;]|\.(?=\s)|\bbut\b|\bwhile\b|\bwhereas\b|--| - ")


def _knob_value(knob: str, m: re.Match):
    if knob == "sequence_parallel":
        return not any(m.group(g) for g in ("off", "off_before", "off_after"))
    value = next((g for g in m.groups() if g is not None), None)
    if knob == "recompute" and m.groupdict().get("bare"):
        return "full"
    if knob == "recompute":
        return {"no": "none", "off": "none", "without": "none", "w/o": "none"}.get(value, value)
    return int(value)


def _knob_name(written: str) -> str:
    written = re.sub(r"[\s\-]", "", written)
    if written.startswith("zero"):
        return "zero"
    if written.startswith(("mb", "micro")):  # "mbs", "micro_batch", "micro bs"
        return "micro_batch"
    return written


def _found(text: str) -> list[tuple[int, str, object]]:
    """(position, knob, value) of every knob written, in order."""
    found = [(m.start(), knob, _knob_value(knob, m)) for knob, pattern in KNOB_PATTERNS.items()
             for m in re.finditer(pattern, text)
             if not (knob == "recompute" and m.groupdict().get("bare") and ASKED_WITH.search(text[:m.start()]))]
    return sorted(found, key=lambda t: t[0])


# A bare "activation checkpointing" listed among settings asked about is asked, not set: "which micro-batch and
# activation checkpointing?", "what mbs + act ckpt should i use"
ASKED_WITH = re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s*){1,3}(?:and|\+|&|,|/)\s*$")


def _layout_words(text: str) -> dict:
    """Dimensions switched off in words: "pure DP", "no TP/PP", "without CP"; plain FSDP is pure DP with
    ZeRO-3 (PyTorch FSDP's full sharding), plain DDP pure DP with ZeRO-0 (every rank holds the whole optimizer)."""
    if re.search(r"\b(?:plain|pure|vanilla)\s+fsdp2?\b", text):
        return {"tp": 1, "pp": 1, "zero": 3}
    if re.search(r"\b(?:plain|pure|vanilla)\s+ddp\b", text):  # PyTorch DDP replicates the optimizer: ZeRO stage 0
        return {"tp": 1, "pp": 1, "zero": 0}
    if re.search(ONLY_DP, text):
        return {"tp": 1, "pp": 1}
    layout = {m.group(1): 1 for m in NEGATED.finditer(text)}
    if re.search(NO_TP, text):
        layout["tp"] = 1
    return layout


def _one_plan(text: str) -> dict:
    plan = {}
    for _, knob, value in _found(text):
        plan.setdefault(knob, value)
    return {**_layout_words(text), **plan}


def labelled_options(text: str) -> list[dict] | None:
    """Two alternatives the user labelled ("option A: cp=2, no recompute; option B: full recompute"): each
    side is its own segment; knobs before the first label and after the second's sentence go to both."""
    labels = list(OPTION_LABEL.finditer(text))
    marks = [(m.group("w") or m.group("p")) for m in labels]
    firsts = [i for i, x in enumerate(marks) if x in ("a", "1")]
    if not firsts:
        return None
    i = firsts[0]
    j = next((k for k in range(i + 1, len(marks)) if marks[k] == {"a": "b", "1": "2"}[marks[i]]), None)
    if j is None:
        return None
    first_label, second_label = labels[i], labels[j]
    end = re.search(r"[?!\n]|\.\s", text[second_label.end():])
    b_end = second_label.end() + end.start() if end else len(text)
    both = re.search(r"\b(?:both|each)\b", text[second_label.end():b_end])  # "(b) tp4 pp4, both zero1"
    a_end = second_label.end() + both.start() if both else b_end
    a, b = _one_plan(text[first_label.end():second_label.start()]), _one_plan(text[second_label.end():a_end])
    if not a or not b:
        return None
    shared = {**_one_plan(text[:first_label.start()]), **_one_plan(text[a_end:])}
    return [{**shared, **a}, {**shared, **b}]


# Degrees said in words read as the abbreviations: "context parallel 2 or 4" is "cp 2 or 4", "8-way
# tensor parallelism" is "tp 8", "a TP size of 4" is "tp=4".
DIMENSION_WORDS = [(re.compile(rf"\b{word}[\s-]*parallel(?:ism)?\b(?:\s+(?:size|degree|dimension))?(?:\s+of\b)?"), abbr)
                   for word, abbr in (("tensor", "tp"), ("pipeline", "pp"), ("context", "cp"), ("expert", "ep"),
                                      ("sequence", "sp"), ("data", "dp"))]
WAY = re.compile(r"\b(\d+)[\s-]*way\s+(tp|pp|cp|ep|vpp|etp)\b")
GLUED = re.compile(r"(?<=\d)(?=(?:tp|pp|vpp|cp|ep|etp|mb|zero)\d)")
NO_ZERO = re.compile(r"(?:\bno|\bwithout|(?<!\S)w/o)\s+(?:any\s+)?zero\b(?!\s*[-=]?\s*\d)")
# "no interleaving" is VPP=1; "interleaving of 2" / "interleaved 2" is VPP=2
INTERLEAVING = re.compile(r"(\bno\s+|\bwithout\s+|(?<!\S)w/o\s+)?\binterleav(?:ing|ed)(?:\s+(?:1f1b|pipeline|schedule|stages?))?\b(?=\s*(?:of|=|:)?\s*\d|(?<=no interleaving)|(?<=without interleaving)|(?<=w/o interleaving))")
# a dimension switched off right after a knob of the same plan: "tp8 (no pp)", "tp8, no pp" is that plan's pp=1,
# so "compare tp8 (no pp) with tp4 pp2" names pp on both sides of the "with"
# A degree named to be dropped: "plain fsdp w/o the tp2", "without tp=4", "drop the pp2": that dimension off
DROPPED_DEGREE = re.compile(r"(?:\bno|\bwithout|(?<!\S)w/o|\bdrop(?:ping)?)\s+(?:the\s+)?(tp|pp|vpp|cp|ep|etp)\s*[=:]?\s*\d+\b")
OFF_AFTER_KNOB = re.compile(r"(\b(?:tp|pp|vpp|cp|ep|etp)\s*[=:\-]?\s*\d+)\s*(?:,|\()\s*(?:no|without|w/o)\s+(tp|pp|vpp|cp|ep|etp)\b\s*\)?")
SIZE_OF = re.compile(r"\b(tp|pp|vpp|cp|ep|etp)\s+(?:(?:size|degree|dim(?:ension)?)\s*(?:of|=|:|is)?|of)\s*(?=\d)")


def knob_words(text: str) -> str:
    """The text with parallel dimensions named in words written as their abbreviations."""
    for pattern, abbr in DIMENSION_WORDS:
        text = pattern.sub(abbr + " ", text)
    text = WAY.sub(r"\2 \1", text)
    text = GLUED.sub(" ", text)  # "tp4pp2" is "tp4 pp2"
    text = OFF_AFTER_KNOB.sub(r"\1 \g<2>1", text)
    text = DROPPED_DEGREE.sub(r"\1 1", text)
    text = NO_ZERO.sub("zero 0", text)  # "plain ddp w/o any zero": ZeRO stage 0
    text = INTERLEAVING.sub(lambda m: "vpp 1" if m.group(1) else "vpp", text)
    return re.sub(r"\s+", " ", SIZE_OF.sub(r"\1=", text))


def _joiner_between_plans(text: str, found: list[tuple[int, str, object]], first_pos: int,
                          two_said: bool = False) -> re.Match | None:
    """The "and" / "with" / "to" that separates two plans: the same knob named in the clause just before and
    the clause just after it ("tp4 pp4 | and | tp8 pp2"); when the message says it has two plans (settings "for
    both"), any knob on each side ("compare cp4 | with | tp4, zero1 for both")."""
    breaks = [b for b in SHARED_BREAK.finditer(text)]
    for j in JOINER.finditer(text, first_pos):
        start = max((b.end() for b in breaks if b.end() <= j.start()), default=0)
        end = min((b.start() for b in breaks if b.start() >= j.end()), default=len(text))
        before = {k for pos, k, _ in found if start <= pos < j.start()}
        after = {k for pos, k, _ in found if j.end() <= pos < end}
        if before & after or two_said and before and after:
            return j
    return None


def _clause_between_plans(text: str, found: list[tuple[int, str, object]]) -> re.Match | None:
    """The clause break between two plans each naming the same knob with its own value ("… wants tp8 + zero1, i'd
    do tp4 + zero2"): the last break before the knob is named again, when one lies after its first value."""
    for i, (pos_a, knob, value) in enumerate(found):
        again = next(((pos, v) for pos, k, v in found[i + 1:] if k == knob), None)
        if again is None:
            continue
        if again[1] == value:
            return None  # the same value twice: one plan said again, not two
        breaks = [b for b in CLAUSE_BREAK.finditer(text, pos_a, again[0])]
        return breaks[-1] if breaks else None
    return None


def find_plans(text: str) -> list[dict]:
    """Knob settings; two plans when the text contrasts them ("TP=4 over TP=8", "EP8 or EP4").

    Knobs named after a break in the sentence that follows the second plan (a parenthesis, a
    comma, "both", "with") apply to both plans; a plan named by several knobs is that plan.
    Settings said for both plans ("zero1 for both", "in both cases full recompute", "same for each")
    go to both, wherever they are written (shared_settings.py).
    """
    text = knob_words(text)
    options = labelled_options(text)
    if options:
        return options
    from .shared_settings import said_for_both  # it reads the knob patterns defined here

    shared, rest = said_for_both(text)
    if shared:
        plans = _contrasted(rest, two_said=True)
        if len(plans) == 2 and all(plans):
            return [{**plan, **shared} for plan in plans]
    return _contrasted(text)


def _contrasted(text: str, two_said: bool = False) -> list[dict]:
    """find_plans on text whose knobs are already written as abbreviations."""
    found = _found(text)
    shared_layout = _layout_words(text)
    vs = next((v for v in [*KNOB_VS.finditer(text), *KNOB_AND.finditer(text)]
               if (v.group("a"), v.group("ra")) != (v.group("b"), v.group("rb"))), None)
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
    if sep is None and COMPARED.search(text):
        sep = _joiner_between_plans(text, found, first_pos, two_said) or _clause_between_plans(text, found)
    if sep is None and re.match(r"\s*why\s+not\b", text):
        sep = re.search(r"\bnot\b", text)
    if sep is None:  # "why that over tp8 pp16": the plan under discussion against the one named
        sep = next((s for s in PLAN_SEPARATOR.finditer(text, 0, first_pos)
                    if OURS.search(re.split(r"[.?!;:\n]", text[:s.start()])[-1])), None)
    if sep is not None:
        first = {k: v for pos, k, v in found if pos < sep.start()}
        rest = [(pos, k, v) for pos, k, v in found if pos > sep.start()]
        # Knobs in an earlier clause than the contrast are the setup both plans share: "tp8 pp1 mb1 (8k):
        # keep zero-1 instead of zero-3", "full recompute, zero1 for both: CP=4 or TP=4".
        brk = [b.start() for b in SHARED_BREAK.finditer(text, 0, sep.start())]
        leading = {k: v for pos, k, v in found if brk and pos < brk[-1]}
        # ... unless the other plan sets one of them again: then that clause is the first plan's own start
        # ("tp4 pp4 and zero1 or tp8": TP is what is contrasted, so PP4 belongs to the first plan only).
        renamed = {k for _, k, _ in rest} & set(leading)
        if leading and not renamed and any(brk[-1] < pos < sep.start() for pos, _, _ in found):
            shared_layout = {**shared_layout, **leading}
            first = {k: v for pos, k, v in found if brk[-1] < pos < sep.start()}
        if not rest and first and BASELINE.match(text, sep.end()):
            # "vpp=2 vs plain 1F1B", "cp4 or without cp": the same plan with the contrasted knobs off
            return [{**shared_layout, **first}, {**shared_layout, **{k: KNOB_OFF.get(k, v) for k, v in first.items()}}]
        if rest:
            second: dict = {}
            shared: dict = {}
            brk = next((b for b in SHARED_BREAK.finditer(text) if b.start() > rest[0][0]), None)
            for pos, k, v in rest:
                if brk is not None and pos > brk.start() and k not in first:
                    shared[k] = v
                else:
                    second.setdefault(k, v)
            clause = re.split(r"[.?!;:\n]", text[:sep.start()])[-1]
            if first or re.search(r"\bnot\b", text[:sep.end()]) or OURS.search(clause):
                a = {**shared_layout, **shared, **first}
                b = {**shared_layout, **shared, **second}
                return [a if first else {}, b]
    plan: dict = {}
    for _, knob, value in found:
        plan.setdefault(knob, value)
    return [{**shared_layout, **plan}]  # a degree written out is the plan named ("why no TP? i'd use tp=8")
