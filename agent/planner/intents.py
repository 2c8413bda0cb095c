"""Which question family a message belongs to, from its words, its entities and the state.

Deterministic rules in priority order; the first that matches wins. Each returns an
Intent naming the family and, where it matters, its detail (the concept, the format).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..state import ConversationState
from .entities import Entities, normalise

INJECTION = re.compile(
    r"ignore\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|above|earlier)?\s*(?:instructions|rules|prompts?)"
    r"|system\s*prompt|developer\s*(?:message|prompt)|your\s+(?:instructions|rules|prompt)|api[\s_-]?key"
    r"|openai_api_key|\bjailbreak|\bdan\s+mode|reveal\s+(?:your|the)\s+(?:prompt|instructions|secrets?)"
    r"|print\s+(?:your|the)\s+(?:prompt|instructions|config)|environment\s+variables?|\benv\s+vars?\b")
GREETING = re.compile(r"^(?:hi|hello|hey|yo|hiya|good\s+(?:morning|afternoon|evening)|thanks?(?:\s+you)?|thx|ty)\b[\s!.?]*$")
HELP = re.compile(r"\bhelp\b|what\s+can\s+you\s+do|how\s+do\s+(?:i|you)\s+use|what\s+(?:do|can)\s+you\s+(?:know|answer)|usage")
EXPORT = re.compile(r"\bconfig(?:uration)?s?\b|\bexport\b|\byaml\b|\bjson\b|\btoml\b|\bcommand[\s-]?line\b|\bargs\b|"
                    r"\bflags\b|\blaunch\b|\btorchrun\b|\bsrun\b|\bscript\b|\brecipe\b")
EXPLAIN = re.compile(r"\bwhat\s+(?:is|are|'s|does)\b|\bwhat's\b|\bexplain\b|\bhow\s+does\b|\bhow\s+do\b|\bmeaning\b|"
                     r"\bdefine\b|\bdefinition\b|\btell\s+me\s+about\b|\bwhy\s+does\b|\bin\s+simple\s+terms\b|\beli5\b")
WHY = re.compile(r"\bwhy\b|\bhow\s+come\b|\breason\b|\bjustify\b|\bbetter\s+than\b|\bover\b|\bvs\.?\b|\bversus\b|\binstead\b")
WHAT_IF = re.compile(r"\bwhat\s+if\b|\bwhat\s+about\b|\bhow\s+about\b|\band\s+(?:with|if|on|for)\b|\binstead\b|"
                     r"\bswitch(?:ed|ing)?\s+to\b|\bif\s+we\b|\bwould\s+(?:it|that)\s+change\b|\bupgrade|\bmove\s+to\b|"
                     r"\bwith\s+\w+\s+instead\b|\bdouble\b|\bhalve\b|^\s*(?:and|now|then)\b")
MEMORY = re.compile(r"\bmemory\b|\bgib\b|\bvram\b|\bhbm\b|\boom\b|out\s+of\s+memory|\bfit(?:s)?\b|how\s+much\s+(?:ram|mem)")
EVALUATE = re.compile(r"\bevaluate\b|\bcheck\b|\bis\s+(?:this|that|it)\b|\bwould\b|\bdoes\b|\bhow\s+(?:fast|good|slow)\b|"
                      r"\bpredict\b|\bwhat\s+about\b|\bhow\s+about\b|\btry\b|\bwork\b|\bvalid\b")
RECOMMEND = re.compile(r"\brecommend|\bbest\b|\bfastest\b|\boptimal\b|\bshould\s+(?:i|we)\b|\bwhat\s+(?:plan|parallelism|strategy|"
                       r"setup|layout|sharding|config)\b|\bhow\s+(?:should|do|can)\s+(?:i|we)\s+(?:train|shard|split|parallel)|"
                       r"\bsuggest|\bplan\b|\bparallelism\b|\bwhich\s+(?:plan|strategy)\b|\btrain\b|\bfine[\s-]?tun")
LIST_MODELS = re.compile(r"\b(?:which|what|list)\s+(?:\w+\s+)?models\b|\bmodels?\s+(?:do\s+you|can\s+you)\s+(?:know|support)")
LIST_HARDWARE = re.compile(r"\b(?:which|what|list)\s+(?:\w+\s+)?(?:gpus|hardware|accelerators|networks|interconnects)\b|"
                           r"\bgpus?\s+(?:do\s+you|can\s+you)\s+(?:know|support)")
MODEL_FACTS = re.compile(r"how\s+many\s+(?:params|parameters|layers|heads|experts)|\barchitecture\s+of\b|\bparams?\s+(?:does|of)\b|"
                         r"\bhow\s+big\s+is\b|\bparameter\s+count\b")
DOMAIN = re.compile(r"\bgpus?\b|\btrain|\bmodel\b|\bparallel|\bmemory\b|\bbatch\b|\btokens?\b|\bllm\b|\bfine[\s-]?tun|"
                    r"\bzero\b|\bfsdp\b|\bdeepspeed\b|\bmegatron\b|\bnodes?\b|\bcluster\b|\bthroughput\b|\bmfu\b")


@dataclass(frozen=True)
class Intent:
    family: str  # recommend | evaluate | memory | compare | why_best | what_if | explain | export | lookup_model
    #              | list_models | list_hardware | help | greeting | injection | out_of_domain | not_understood
    detail: str | None = None


def classify(message: str, e: Entities, state: ConversationState) -> Intent:
    text = normalise(message)
    has_scenario = state.scenario is not None
    new_scenario = e.has_scenario()
    if INJECTION.search(text):
        return Intent("injection")
    if GREETING.match(text):
        return Intent("greeting")
    if HELP.search(text) and not new_scenario and not e.plans:
        return Intent("help")
    if LIST_MODELS.search(text) and not e.model:
        return Intent("list_models")
    if LIST_HARDWARE.search(text) and not e.gpu:
        return Intent("list_hardware")
    if MODEL_FACTS.search(text) and (e.model or e.params) and not e.gpu:
        return Intent("lookup_model")
    if e.export_format and (EXPORT.search(text) or state.export_format and len(text.split()) <= 6) or EXPORT.search(text) and re.search(r"\b(?:give|export|write|generate|show|get|need|want)\b", text):
        return Intent("export", e.export_format)
    if len(e.plans) == 2 and (WHY.search(text) or "compare" in text):
        return Intent("compare")
    if re.search(r"\bcompare\b", text) and len(e.plans) == 2:
        return Intent("compare")
    if e.concept and EXPLAIN.search(text) and not (len(e.plans) == 2 and WHY.search(text)) and not new_scenario:
        return Intent("explain", e.concept)
    if re.search(r"\bwhy\b", text) and not e.plans and not (e.concept and EXPLAIN.search(text)):
        return Intent("why_best")  # without a scenario yet, the answer asks for one
    if has_scenario and new_scenario and (WHAT_IF.search(text) or not (e.model or e.params) and not e.plans
                                          and len(text.split()) <= 8):
        return Intent("what_if")
    if e.plans and (has_scenario or new_scenario) and not RECOMMEND.search(text) or e.plans and EVALUATE.search(text):
        return Intent("memory" if MEMORY.search(text) and not re.search(r"\b(?:fast|speed|throughput|mfu|step)\b", text)
                      else "evaluate")
    if MEMORY.search(text) and (has_scenario or new_scenario) and not RECOMMEND.search(text):
        return Intent("memory")
    if new_scenario or RECOMMEND.search(text) and has_scenario:
        return Intent("recommend")
    if e.concept and (EXPLAIN.search(text) or len(text.split()) <= 4):
        return Intent("explain", e.concept)
    if e.model or e.params:
        return Intent("lookup_model")
    if DOMAIN.search(text):
        return Intent("not_understood")
    return Intent("out_of_domain")
