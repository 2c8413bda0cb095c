"""Which question family a message belongs to, from its words, its entities and the state.

Deterministic rules in priority order; the first that matches wins. Each returns an Intent
naming the family and, where it matters, its detail (the concept, the format).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..state import ConversationState
from .entities import Entities, extract, normalise, own_words
from .catalog_asked import catalogs_asked
from .measured import calibration_asked_without_a_figure
from .names import UNSUPPORTED_ACCELERATORS
from .pasted import INJECTION, without_instructions

GREETING = re.compile(r"^(?:hi|hello|hey|yo|hiya|good\s+(?:morning|afternoon|evening)|thanks?(?:\s+you)?|thx|ty)\b[\s!.?]*$")
HELP = re.compile(r"^\s*help\b|what\s+can\s+you\s+do|how\s+do\s+(?:i|you)\s+use|what\s+(?:do|can)\s+you\s+(?:know|answer)|"
                  r"what\s+info(?:rmation)?\s+do\s+you\s+need|\busage\b")
OUT_OF_SCOPE = re.compile(  # near the domain, but not what shardwise answers
    r"learning[\s-]?rate|\blr\s+schedule|hyper[\s-]?param|warm[\s-]?up\s+steps|\bdataset\b|\bdata\s*mix|tokeni[sz]er|"
    r"\bserv(?:e|ing)\b|\binference\b|\bvllm\b|\btgi\b|req(?:uest)?s?\s*/\s*s|requests?\s+per\s+second|\blatency\b|"
    r"\bbook\b|\breserve\b|\bpurchase\b|\bbuy\b(?!\s+(?:me|us|you|them)\b)|\bsign\s+up\b|\bquota\b|"
    # reading or summarising papers and articles ("tl;dr the llama 3 paper")
    r"\btl\s*;?\s*dr\b|\bsummari[sz]e\s+(?:the|this|that)\s+(?:\w+\s+){0,3}(?:paper|article|blog|post|thread)\b|"
    r"\b(?:the|this|that)\s+(?:\w+\s+){0,3}paper\s+(?:in|as)\s+(?:\d+|a\s+few|some)\s+(?:bullets?|sentences?|lines?|words)")
# Cluster operations and general scripting: requeueing jobs, watching nodes, retries, cron. Not a
# training plan; for a plan's launch lines there is the export ("the launch script for this plan").
CLUSTER_OPS = re.compile(r"\b(?:auto[\s-]?)?(?:re-?queu\w*|resubmit\w*|re-?start(?:s|ing)?\s+(?:my|the|our|a)\s+(?:\w+\s+)?jobs?|"
                         r"retr(?:y|ies)\s+(?:my|the|our|a|failed)\s+(?:\w+\s+)?jobs?)\b|"
                         r"\bnodes?\s+(?:dies|died|dying|fails?|failed|failing|goes\s+down|went\s+down|crash\w*|hangs?)\b|"
                         r"\b(?:watchdog|health[\s-]?checks?|cron[\s-]?(?:job|tab)|crontab|log\s+rotation|dashboards?|"
                         r"alert(?:s|ing)?\s+(?:when|if|on)|monitor(?:ing)?\s+(?:my|the|our)\s+(?:nodes?|jobs?|cluster|gpus?))\b")
SCRIPT_REQUEST = re.compile(r"\b(?:write|make|create|code|generate|give)\s+(?:me\s+|us\s+)?(?:up\s+)?(?:a|an|some)\s+"
                            r"(?:\w+\s+){0,2}?(?:bash|shell|python|perl|powershell)\s+(?:script|one[\s-]?liner|function)\b")
LAUNCH_WORDS = re.compile(r"\blaunch\w*|\btorchrun\b|\bconfig|\bplan\b|\bdeepspeed\b|\bmegatron\b|\bfsdp\b|\bparallel")
# Training dynamics rather than parallelism: loss spikes, divergence, NaNs, gradient norms.
OPTIMISATION = re.compile(r"\bloss\s+(?:spikes?|spik(?:ed|ing)|diverg\w*|explod\w*|blows?\s+up|blew\s+up|curves?|plateau\w*|"
                          r"(?:is|goes|went)\s+nan|scal(?:e|ing))\b|\bgrad(?:ient)?[\s_-]*norms?\b|\bnans?\b|"
                          r"\bdiverg(?:e|es|ed|ing|ence)\b|\b(?:training\s+)?instabilit(?:y|ies)\b|\bconverg(?:e|es|ed|ence)\b")
# Cloud providers' prices compared: shardwise has no price lists to compare, only a rate the user gives.
VENDOR = (r"\b(?:lambda(?:\s+labs)?|coreweave|aws|gcp|google\s+cloud|azure|oci|oracle\s+cloud|runpod|vast(?:\.ai)?|"
          r"together(?:\.ai)?|crusoe|nebius|paperspace|voltage\s+park|fluidstack|hyperstack)\b")
# A token budget's cost or time asked ("what would 500B tokens cost", "how long for 2T tokens", "spend on 1T")
COST_ASKED = re.compile(r"\bcost\w*|\bhow\s+much\b|\bprice\w*|\bspend\w*|\bbudget\b|\$|\bdollars?\b|\busd\b|"
                        r"\bhow\s+long\b|\bhow\s+many\s+(?:days|hours|gpu[\s-]?hours)\b|\bgpu[\s-]?hours?\b")
PRICE = r"\b(?:cheaper|cheapest|pricier|more\s+expensive|pric(?:e|es|ed|ing)|costs?|charges?|billed)\b"
PRICING = re.compile(rf"{PRICE}[^.?!]*{VENDOR}|{VENDOR}[^.?!]*{PRICE}|"
                     rf"\bwhich\s+(?:cloud|provider|vendor|host)s?\b[^.?!]*{PRICE}|{PRICE}[^.?!]*\b(?:cloud|provider|vendor)s?\b")
# Whether a setup can work at all ("can I QLoRA X on one H100?", "is it doable", "if not, the smallest
# setup that works"): the engine's search answers it, with what would make it fit when nothing does.
FEASIBILITY = re.compile(r"\bcan\s+(?:i|we|you|one)\b(?!\s+(?:explain|tell|describe|help|show\s+me\s+(?:what|how)))|"
                         r"\bis\s+(?:it|this|that)\s+(?:even\s+)?(?:possible|feasible|doable)\b|\bdoable\b|\bfeasible\b|"
                         r"\b(?:does|will|would)\s+it\s+(?:even\s+)?fit\b|"
                         r"\b(?:smallest|minimum|minimal|fewest)\s+(?:\w+\s+){0,2}(?:setup|cluster|config|gpus|nodes|hardware)\b")
# A question, by its mark or its opening word ("does SP save memory", "is zero-3 the same as fsdp")
QUESTION = re.compile(r"\?|^(?:\W*(?:ok|so|and|but|hmm|quick\s+q|also)\W+)*(?:does|do|is|are|will|would|can|could|should|"
                      r"how|why|what|whats|what's|when|which)\b")
GREETING_TAIL = re.compile(r"^(?:thx|thanks?|ty|ok|cool|great)[!.,]*\s+")
EXPORT = re.compile(r"\bconfig(?:uration)?s?\b|\bexport\b|\byaml\b|\bjson\b|\btoml\b|\bcommand[\s-]?line\b|\bargs\b|"
                    r"\bflags\b|\blaunch\b|\btorchrun\b|\bsrun\b|\bscript\b|\brecipe\b|\bds_config|\bsettings\b|\boverrides\b")
# A file asked for: a request verb governing an export word ("give me the ds config", "need a launch script",
# "deepspeed json pls"), not a verb anywhere in the message ("want to qlora mistral … -- what settings")
EXPORT_VERB = re.compile(r"\b(?:give|gimme|dump|send|export|write|generate|show|get|need|want)\b(?:\s+[\w.-]+){0,4}?\s+"
                         rf"(?:{EXPORT.pattern})|(?:{EXPORT.pattern})(?:\s+[\w.-]+){{0,2}}?\s*(?:pls|plz|please)\b|^\W*export\b")
EXPLAIN_STRONG = re.compile(r"\bwhat\s+(?:(?:actually|exactly|really|even)\s+)?(?:is|are|does)\b|"
                            r"\bwalk\s+(?:me\s+|us\s+)?thr(?:u|ough)\b|\bhow\s+(?:exactly\s+)?(?:does|do)\b[^.?!]{0,40}\bwork\b|\bexplain\b|\bhow\s+does\b|\bhow\s+do\s+(?!i\b|we\b)|\bmeaning\b|"
                            r"\bdefine\b|\bdefinition\b|\btell\s+me\s+(?:more\s+)?about\b|\bin\s+simple\s+terms\b|\beli5\b|"
                            r"\bhow\s+much\s+(?:\w+\s+){0,2}(?:does|do)\b|\bwhat\s+(?:does|do)\b[^.?!]{0,40}\b(?:buy|save|gain)\b|\bshow\s+me\s+the\s+(?:memory\s+)?math\b|"
                            # "how big is the bubble", "how is MFU counted for an MoE", "is ZeRO-3 the same thing as FSDP"
                            r"\bhow\s+(?:big|large|bad)\s+is\b|\bhow\s+is\b[^.?!]{0,30}\b(?:counted|computed|calculated|measured|defined)\b|"
                            r"\bsame\s+(?:thing\s+)?as\s+(?!before|yours|ours|above|now|last)|\bdifference\s+between\b|\bthe\s+point\s+of\b")
EXPLAIN = re.compile(EXPLAIN_STRONG.pattern + r"|\bwhat's\b|\bwhats\b")
# Asking which plan to use ("whats the best setup, mb/recompute etc"): the knobs named are choices, not concepts.
RECOMMEND_CUE = re.compile(r"\b(?:best|fastest|optimal|recommended?)\s+(?:\w+\s+)?(?:setup|plan|layout|config|parallelism|"
                           r"strategy|sharding|way)\b|\b(?:what|which)\s+(?:plan|setup|layout|parallelism|settings)\b")
COMPARE_WORDS = re.compile(r"\bdifference\b|\bfaster\b|\bslower\b|\bwhich\b|\bbetter\b|\bwins?\b|\bcompare\b|\bwhy\b")
WHY = re.compile(r"\bwhy\b|\bhow\s+come\b")
# "why does ZeRO-1 shard only…", "how come LoRA lets a 7B train on one card": a question about the idea
WHY_CONCEPT = re.compile(r"\bwhy\s+(?:does|do|is|are)\b|"
                         r"\bhow\s+come\b[^.?!]{0,60}?\b(?:lets?|makes?|allows?|enables?|gets?\s+away|saves?|cuts?)\b")
# "what is ZeRO-3 actually doing", "explain tp=8": the idea behind a knob, not a plan to evaluate
WHAT_IS = re.compile(r"^(?:\W*\w+\W+){0,2}?(?:what\s+(?:(?:actually|exactly|really)\s+)?(?:is|are)\b|explain\b|eli5\b)|"
                     r"\bexplain\b|\bsame\s+(?:thing\s+)?as\s+(?!before|yours|ours|above|now|last)|\bdifference\s+between\b|"
                     r"\bwhat\s+(?:actually\s+|exactly\s+|really\s+)?(?:is|are)\s+(?:a\s+|the\s+)?(?:zero|tp|pp|cp|ep|vpp|etp|recompute)\b")
# What holds the plan back: the binding constraint the recommendation reports
LIMITS = re.compile(r"\bwhat(?:'s|\s+is)?\s+(?:limiting|holding\s+(?:it|us|this)\s+back|the\s+bottleneck)\b|\bbottleneck\b|"
                    r"\bwhat\s+limits\b|\bbinding\s+constraint\b|\b(?:memory|compute|communication|comms|bandwidth|network)[\s-]bound\b")
# The best plan asked for with a degree pinned: "recommend something with ep 8", "best layout using tp 4"
RECOMMEND_WITH = re.compile(r"\b(?:recommend|suggest|find)\b[^.?!]{0,30}\b(?:with|using|keeping|at)\b|"
                            r"\bbest\s+(?:plan|layout|setup|config)\s+(?:with|using|keeping|at)\b")
# A metric's value asked for ("what's the MFU?", "what is its throughput"), not the idea behind it
METRIC_VALUE = re.compile(r"\bwhat(?:'s|s|\s+is|\s+are)\s+(?:the|its|our|your|that|this)\s+(?:\w+\s+){0,2}"
                          r"(?:mfu|throughput|tokens?\s*/\s*s|step\s*time)\b|\band\s+(?:the\s+)?mfu\b")
# A metric judged ("MFU looks low", "the bubble seems huge"): why it is what it is
METRIC_JUDGED = re.compile(r"\b(?:looks?|seems?|is|so|feels?)\s+(?:so\s+|really\s+|pretty\s+|quite\s+|kinda\s+|very\s+)?"
                           r"(?:low|high|bad|poor|big|huge|large|small|terrible)\b")
WHAT_IF_MARKER = re.compile(
    r"\bwhat\s+if\b|\bwhat\s+about\b|\bhow\s+about\b|\bwhat\s+changes\s+if\b|\bhow\s+would\b[^?.]*?\bchange\b|"
    r"\b(?:and\s+)?if\s+we\b|\band\s+(?:with|on|for)\b|\bswitch(?:ed|ing)?\s+to\b|\bmove\s+to\b|\bupgrade\s+to\b|"
    r"\b(?:vs\.?|versus|compared\s+(?:to|with)|against)\s+(?:having|using|getting|running\s+on)\b|"  # "losing vs having IB"
    r"\bsame\s+(?:thing|setup|run|model)?\s*but\b")  # "same thing but on 64 H200s"
# A change stated as news rather than asked as "what if": "the new cluster only has 25GbE", "getting a
# quote for 16 H100s instead", "bump the batch to 8M tokens", "we only get half that many GPUs". The
# change is the sentence the word is in; the sentences before it are the current setup.
FROM_TO = r"\bfrom\s+[a-z-]*\d[\w.,-]*\s*(?:[a-z]+\s+)?(?=to\s+[a-z-]*\d)"  # "from 8k to 64k": the change is after "to"
CHANGE_MARKER = re.compile(
    r"\binstead\b(?!\s+of)|\bonly\s+(?:has|have|had|gets?|got|getting)\b|\bnew\s+(?:cluster|hardware|nodes?|machines?|"
    r"setup|box(?:es)?)\b|\bbump(?:ed|ing)?\b|\b(?:increas|decreas|reduc|rais|doubl|halv)(?:e|es|ed|ing)\b|\bhalf\b|"
    r"\bassum(?:e|ing)\b|\bmov(?:e|ed|ing)\s+(?:over\s+)?to\b|\bswitch(?:ed|ing)?\b|\bswap(?:ped|ping)?\b|"
    r"\bchang(?:e|ed|ing)\s+(?:it\s+|that\s+)?to\b|\b(?:would|does|will|could|do)\b[^.?!]{0,40}\bchange\b|\bquote\s+for\b|\bgo(?:ing)?\s+to\b|\b(?:drop(?:ped|ping)?|cut(?:ting)?|shrink(?:ing)?|scal(?:e|ed|ing)\s+(?:down|up|back)|go(?:ing)?\s+(?:down|up))\s+(?:it\s+)?to\b|\bupgrad(?:e|ed|ing)\b"
    # a new requirement: "product now wants 64k ctx", "the team now needs 16 nodes"; "from 8k to 64k"
    r"|\bnow\s+(?:wants?|needs?|requires?|asks?\s+for|expects?|mandates?)\b|"
    # a setting weighed for the run on the table: "is it worth turning on deepep for our run?", "would enabling
    # fp8 help our throughput here?" (a what-if only when the sentence names a setting: what_if_split)
    r"\bworth\s+(?:it\s+)?(?:turn(?:ing)?\s+on|enabl(?:e|ing)|switch(?:ing)?|us(?:e|ing)|try(?:ing)?|going)\b|"
    r"\b(?:would|will|could|does|do)\b[^.?!]{0,40}\bhelp\b|" + FROM_TO)
SENTENCE_START = re.compile(r"(?:^|[.?!;:]\s+|\s+--?\s+|\n)")
# A value of a plan asked for ("what does the planner pick", "whats the DP degree"), not the idea behind it.
PLAN_VALUE = re.compile(r"\b(?:pick|choose|select|recommend|suggest|go\s+with|land\s+on)s?\b|"
                        r"\b(?:tp|pp|dp|cp|ep|vpp|etp|zero)\s+(?:degree|size|stage)\b|\bwhich\s+(?:tp|pp|dp|cp|ep|zero)\b")
# "Where does the memory go", "breakdown pls (weights vs optimizer vs activations)": the memory estimate.
BREAKDOWN = re.compile(r"\bmemory\s*(?:break\s*down|split)\b|\bbreak\s*down\b|where\s+(?:does|did|do)\s+(?:all\s+)?"
                       r"(?:the\s+|my\s+|our\s+)?(?:memory|vram|hbm)\b|what\s+(?:takes|eats|uses)\s+(?:up\s+)?(?:all\s+)?"
                       r"(?:the\s+)?(?:memory|vram)")
# "Where does the time go in one step", "time breakdown", "what eats the step time": the step's parts (evaluate_plan's
# time terms: compute, each communication, the optimizer phase), of the plan named or under discussion
TIME_BREAKDOWN = re.compile(r"\bwhere\s+(?:does|did|do|is)\s+(?:all\s+)?(?:the\s+|my\s+|our\s+)?(?:step\s+)?time\s+(?:go|goes|spent|going)\b|"
                            r"\b(?:step[\s-]?)?time\s*(?:break\s*down|split)\b|\bbreak\s*down\s+(?:of\s+)?(?:the\s+)?(?:step(?:\s+time)?|time)\b|"
                            r"\bwhat\s+(?:takes|eats|dominates|uses)\s+(?:up\s+)?(?:all\s+|most\s+(?:of\s+)?)?(?:the\s+)?(?:step(?:\s+time)?|time)\b|"
                            r"\bwhere\s+(?:is|are)\s+(?:the\s+)?(?:step(?:\s+time)?|time|seconds)\s+(?:spent|going)\b")
# Why a mixture of experts needs the memory of its total size, not of its active parameters.
ACTIVE_VS_TOTAL = re.compile(r"\bactive\b[^.?!]{0,30}\b(?:params?|parameters|experts?|weights)\b|\d\s*b\s+(?:are\s+|is\s+)?active\b|"
                             r"\b(?:params?|parameters)\b[^.?!]{0,20}\bactive\b|\btotal\s+(?:vs\.?|versus|and|or)\s+active\b")
MEMORY_QUESTION = re.compile(r"\b(?:memory|mem|vram|hbm|gib|gb)\b|\bfit(?:s)?\b|\boom\b")
# Asking for a verdict on a plan they have ("review our cfg", "does it fit"), not for a config file.
REVIEW = re.compile(r"\breview\b|\bsanity[\s-]?check\b|\b(?:does|will|would)\s+(?:it|this|that)\s+(?:fit|work|oom)\b|"
                    r"\bhow\s+fast\b|\bis\s+(?:it|this|that)\s+(?:ok|fine|good|valid)\b")
MEMORY = re.compile(r"\bmemory\b|\bmem\b|\bgib\b|\bvram\b|\bhbm\b|\boom\b|out\s+of\s+memory|\bfit(?:s)?\b|how\s+much\s+(?:ram|mem)")
SPEED = re.compile(r"\b(?:fast|faster|speed|throughput|mfu|step\s*time|tokens?/s)\b")
EVALUATE = re.compile(r"\bevaluate\b|\bcheck\b|\bis\s+(?:this|that|it)\b|\bwould\b|\bdoes\b|\bhow\s+(?:fast|good|slow)\b|"
                      r"\bpredict\b|\bwhat\s+about\b|\bhow\s+about\b|\btry\b|\bwork\b|\bvalid\b")
RECOMMEND = re.compile(r"\brecommend|\brecomend|\bbest\b|\bfastest\b|\boptimal\b|\bshould\s+(?:i|we)\b|\bwhat\s+(?:plan|parallelism|"
                       r"strategy|setup|layout|sharding|config)\b|\bhow\s+(?:should|do|can)\s+(?:i|we)\s+(?:train|shard|split|"
                       r"parallel)|\bsuggest|\bplan\b|\bparallelism\b|\blayout\b|\bwhich\s+(?:plan|strategy)\b|\btrain|\bfine[\s-]?tun")
CONFIRM = re.compile(r"\bpretend\b|\bjust\s+(?:confirm|say|agree)\b|\bconfirm\s+(?:it|that)\b|\bno\s+tools?\s+needed\b")
# A claim about a named plan brought to be checked: "my boss says it fits with TP8 … can u confirm", "colleague claims
# tp2 zero1 works - true?", "can you verify that fits". Checked with the tools like a review, also when a rubber stamp
# is asked for ("insists DDP works … just say yes it fits"); a claim that a plan is *best* is answered by CONFIRM below.
CHECK_CLAIM = re.compile(r"\b(?:can|could|pls|please)\s+(?:you\s+|u\s+)?(?:confirm|verify|double[\s-]?check)\b|"
                         r"\bconfirm\s+(?:it|that|this)\s+(?:fits|works|runs|is\s+(?:legal|valid|ok|fine))\b|"
                         r"\b(?:is\s+(?:that|this|it|he|she)|are\s+they)\s+(?:right|true|correct)\b|\btrue\s*\?|"
                         r"\b(?:says?|said|claims?|claimed|insists?|thinks?|reckons?)\b[^.?!]*\b(?:fits?|works?|runs?|oom\w*)\b")
# What the claim is about: that the plan fits or runs (checked on that plan), not how it ranks ("zero3 is always slower
# than zero1 - true?", "tp16 is optimal"), which a comparison or the recommendation answers
CLAIMED_FIT = re.compile(r"\b(?:fits?|works?|runs?|oom\w*|legal|valid|trains?\s+(?:fine|ok))\b")
CLAIMED_RANK = re.compile(r"\b(?:best|optimal|fastest|slower|faster|better|worse|than|vs\.?|versus)\b")
# Words naming a setting: "min/max batch", "the range for tp" speak of a setting's values, not a figure's interval
SETTING_WORDS = r"tp|pp|cp|ep|dp|vpp|etp|zero|mbs?|micro|batch|gbs|bs|seq|context|ctx|rank|lr|learning|gpus?|nodes?|degrees?"
# How far to trust a prediction: "how sure are you?", "what's the spread on that?", "error bar on the step time?", "what's the margin of error",
# "how confident is that number", "give or take?", "what's the uncertainty / confidence interval". The answer is
# the plan's 80 % intervals (PlanFigures *_likely), of the plan named or under discussion.
UNCERTAINTY = re.compile(r"\bhow\s+(?:sure|confident|certain|accurate|reliable|precise|trustworthy|much\s+(?:can|should)\s+"
                         r"(?:i|we)\s+trust)\b|\berror[\s-]*bars?\b|\bmargins?\s+of\s+error\b|\buncertaint(?:y|ies)\b|"
                         r"\bconfidence\s+(?:interval|band|range|bounds?)\b|\bgive\s+or\s+take\b|\bplus\s+or\s+minus\b|±|"
                         r"\b(?:error|prediction)\s+(?:band|range|interval)\b|\b\d+\s*%\s+(?:interval|band)\b|"
                         r"\b(?:your|the)\s+confidence\b|\bhow\s+far\s+off\s+(?:could|might|can)\b|"
                         r"\b(?:likely|plausible)\s+range\b|\brange\s+(?:on|for|around)\s+(?:that|this|it)\b|"
                         # "what's the spread on that?", "how much could the step time vary", "variance on the step"
                         # (not the verb: "spread the experts across nodes")
                         r"\b(?:the|what'?s|its)\s+spread\b(?!\s+(?:across|over|between)\b)|\bspread\s+(?:on|of|in|around)\s+"
                         r"(?:that|this|it|the)\b|\bhow\s+much\s+(?:could|might|can|does|would)\s+(?:it|that|this|the\s+\w+(?:\s+\w+)?)\s+vary\b|"
                         r"\b(?:variance|variability)\s+(?:on|of|in)\s+(?:that|this|it|the)\b|"
                         # "and the same for step time - low/high?", "min/max on the step?", "upper and lower bounds",
                         # "best case / worst case": the two ends of the interval
                         # (not "lower or higher tp", "min/max batch": two values of a setting)
                         r"\b(?:low(?:er)?\s*(?:/|-|and|or|&)\s*high(?:er)?|high(?:er)?\s*(?:/|-|and|or|&)\s*low(?:er)?|"
                         rf"min\s*(?:/|-|and|or|&)\s*max)\b(?![\s-]*(?:{SETTING_WORDS}))|"
                         r"\b(?:upper|lower)\s+(?:(?:and|or|&|/)\s*(?:upper|lower)\s+)?bounds?\b|"
                         r"\b(?:upper|lower)\s*(?:/|and|&)\s*(?:upper|lower)\b|"
                         r"\bbest[\s-]*case\s*(?:/|-|and|or|&|vs\.?)\s*worst[\s-]*case\b|\bworst[\s-]*case\s*(?:/|-|and|or|&|vs\.?)\s*best[\s-]*case\b|"
                         # one end alone: "and worst case step time for that one?", "a pessimistic step time" (the
                         # interval's slow end; not "the worst plan", which ranks plans)
                         r"\bworst[\s-]*case\b|\b(?:pessimistic|conservative)\s+(?:estimate|case|figure|step|throughput|number)\b|"
                         # "so what's the range now?" (not "the range of batch sizes", "in the range 2-8")
                         rf"\b(?:the|what'?s|whats|its|new|narrower|tighter)\s+ranges?\b(?!\s*(?:between|of|from|\d|[=:]|for\s+(?:the\s+)?(?:{SETTING_WORDS})))|"
                         # "so what's the interval now with the calibration in?", "the band on it", "tighter intervals"
                         r"\b(?:the|what'?s|whats|its|new|narrower|tighter)\s+(?:intervals?|bands?)\b(?!\s+(?:between|of)\s+(?:checkpoint|log|sav|eval))")
LIST_MODELS = re.compile(r"\b(?:which|what|list)\s+(?:\w+\s+)?models\b|\bmodels?\s+(?:do\s+you|can\s+you)\s+(?:know|support)")
LIST_HARDWARE = re.compile(r"\b(?:which|what|list)\s+(?:\w+\s+)?(?:gpus|hardware|accelerators|networks|interconnects)\b|"
                           r"\bgpus?\s+(?:do\s+you|can\s+you)\s+(?:know|support)")
MODEL_FACTS = re.compile(r"how\s+many\s+(?:params|parameters|layers|heads|experts)|\barchitecture\s+of\b|\bparams?\s+(?:does|of)\b|"
                         r"\bhow\s+big\s+is\b|\bparameter\s+count\b")
DOMAIN = re.compile(r"\bgpus?\b|\btrain|\bmodel\b|\bparallel|\bmemory\b|\bbatch\b|\btokens?\b|\bllm\b|\bfine[\s-]?tun|"
                    r"\bzero\b|\bfsdp\b|\bdeepspeed\b|\bmegatron\b|\bnodes?\b|\bcluster\b|\bthroughput\b|\bmfu\b|\bplan\b")


@dataclass(frozen=True)
class Intent:
    family: str  # recommend | evaluate | memory | compare | why_best | what_if | explain | export | lookup_model
    #              | list_models | list_hardware | unknown | clarify | help | greeting | injection
    #              | out_of_domain | not_understood
    detail: str | None = None
    injected: bool = False  # the message carried instructions for the assistant; the rest is answered


ANSWERABLE = ("recommend", "evaluate", "memory", "compare", "why_best", "what_if", "explain", "export", "lookup_model",
              "list_models", "list_hardware", "unknown", "clarify")


def without_injection(message: str) -> str:
    """The message without the lines (in a one-line message, the sentences) that instruct the assistant."""
    return without_instructions(message)


# The plan on the table kept while the setup changes: "same plan", "keep the layout", "the same job on h200"
SAME_PLAN = re.compile(r"\bsame\s+(?:plan|layout|config|parallelism|job|run)\b|"
                       r"\bkeep(?:ing)?\s+(?:the\s+|our\s+|that\s+)?(?:plan|layout|config|parallelism)\b")


def sp_switched(e: Entities) -> bool:
    """The message's only plan knob switches sequence parallelism ("turn SP off", "without sequence parallelism")."""
    return len(e.plans) == 1 and set(e.plans[0]) == {"sequence_parallel"}


def what_if_split(message: str) -> tuple[Entities, Entities] | None:
    """("the scenario before the what-if", "the change") when the message asks a what-if."""
    text = normalise(message)
    marker = WHAT_IF_MARKER.search(text)
    start = marker.start() if marker else None
    if marker is None:
        news = CHANGE_MARKER.search(text)
        if news is None:
            return _current_then_new(text)
        start = max(m.end() for m in SENTENCE_START.finditer(text[:news.start()]))
    change_text = re.sub(r"\binstead\s+of\b.*?(?=[,.;?!)]|$)", " ", text[start:])
    change_text = re.sub(FROM_TO, " ", change_text)
    change = extract(change_text)
    if not change.has_scenario():
        return None
    return extract(text[:start]), change


def restates_only(e: Entities, scenario) -> bool:
    """The words name scenario settings, each as the conversation already has it, and nothing relative ("what
    would you run instead on the same 64 gpus?"): no change to ask a what-if about."""
    relative = (e.gpus_factor, e.batch_factor, e.nodes_added, e.gpus_added)
    if scenario is None or not e.has_scenario() or any(x is not None for x in relative) or e.same_tokens or e.batch_with_gpus or e.plans:
        return False
    return e.scenario_patch().merged_over(scenario) == scenario


# The setup said as the current one ("currently 8k ctx", "right now we're on 16 GPUs"); a later sentence that
# gives the same setting another value ("… needs 32k ctx") is the change.
CURRENT = re.compile(r"\bcurrently\b|\bright\s+now\b|\bat\s+the\s+moment\b|\bat\s+present\b|\btoday\b")
RESTATED = ("gpu", "gpus", "seq_len", "global_batch", "global_batch_tokens", "mode", "precision", "framework", "network")


def _current_then_new(text: str) -> tuple[Entities, Entities] | None:
    current = CURRENT.search(text)
    later = next((m for m in SENTENCE_START.finditer(text, current.end()) if m.end() > current.end()), None) \
        if current else None
    if later is None:
        return None
    before, change = extract(text[:later.end()]), extract(text[later.end():])
    restated = [f for f in RESTATED if getattr(before, f, None) is not None and getattr(change, f, None) is not None
                and getattr(before, f) != getattr(change, f)]
    return (before, change) if restated else None


def asks_export(text: str) -> bool:
    """Whether words ask for a config file ("config", "json", "export", "args"), as the export intent reads them."""
    return EXPORT.search(normalise(text)) is not None


def classify(message: str, e: Entities, state: ConversationState) -> Intent:
    # The user's own words decide the question; quoted lines ("> …") are what they pasted.
    text = GREETING_TAIL.sub("", normalise(own_words(message)))
    has_scenario = state.scenario is not None
    new_scenario = e.has_scenario()
    if new_scenario and e.concept == "cuda_graphs" and not replace(e, cuda_graphs=None).has_scenario():
        new_scenario = False  # "cuda graphs?": the words name the topic; alone they are no setup to plan
    why = WHY.search(text) is not None
    if INJECTION.search(normalise(message)):
        # Answer the real question if there is one, as if the instructions were not there; never follow them.
        rest = without_injection(message)
        if rest.strip() and not INJECTION.search(normalise(rest)):
            inner = classify(rest, extract(rest), state)
            if inner.family in ANSWERABLE:
                return Intent(inner.family, inner.detail, injected=True)
        return Intent("recommend", "injection") if (e.model or e.params) and e.gpu else Intent("injection")
    if GREETING.match(normalise(message)):
        return Intent("greeting")
    if e.concept == "intervals" and not e.plans:  # "what does 'likely' mean, 80 % of what?": the entry, not one plan's
        return Intent("explain", "intervals")
    if UNCERTAINTY.search(text) and (e.plans or state.plan is not None or has_scenario or new_scenario) \
            and not e.scenario_patch().merged_over(state.scenario).missing():
        # "how sure are you about that number?": the intervals of the plan named or under discussion, else the best
        return Intent("evaluate" if e.plans or state.plan is not None else "recommend", "uncertainty")
    if (e.train_tokens or e.price_per_gpu_hour is not None) and COST_ASKED.search(text) and not e.plans \
            and not e.scenario_patch().merged_over(state.scenario).missing():
        # "what would it cost for 500B tokens?", "cost for 1T tokens at $2/gpu-hour?": the best plan with its cost
        return Intent("recommend")
    if e.concept == "calibration" and not e.plans:  # "what does calibrating change?": the entry, not the how-to
        return Intent("explain", "calibration")
    if e.concept == "moe_dispatcher" and not e.plans:  # "which frameworks even have deepep?": the engine's rule, listed
        return Intent("explain", "moe_dispatcher")
    if calibration_asked_without_a_figure(message, state.profile is not None) and not e.plans:  # the raw message: a pasted log read as written
        return Intent("help", "calibrate")  # "can you calibrate to our cluster?": what to tell it, and the command
    if has_scenario and LIMITS.search(text) and not e.plans and not e.concept:
        return Intent("why_best")  # "what's limiting it?": the binding constraint of the plan on the table
    if HELP.search(text) and not e.plans and not (e.model or e.params):
        return Intent("help")
    if OUT_OF_SCOPE.search(text):
        return Intent("out_of_domain")
    if (CLUSTER_OPS.search(text) or SCRIPT_REQUEST.search(text) and not LAUNCH_WORDS.search(text)) \
            and not (e.model or e.params or e.plans):
        return Intent("out_of_domain", "scripting")
    if OPTIMISATION.search(text) and not e.plans:
        return Intent("out_of_domain", "optimisation")
    if PRICING.search(text):
        return Intent("out_of_domain", "pricing")
    if e.unknown and not (e.model or e.params) or any(u in UNSUPPORTED_ACCELERATORS.values() for u in e.unknown) \
            or e.unlisted_gpu:  # "32 tenstorrent blackhole p150 cards": an accelerator the catalog lacks
        return Intent("unknown")
    if e.conflicts:
        return Intent("clarify")
    if sp_switched(e) and (has_scenario and not new_scenario or not has_scenario and new_scenario) \
            and not (EXPLAIN_STRONG.search(text) or WHY_CONCEPT.search(text) or RECOMMEND_CUE.search(text)):
        # "what if sequence parallel was off?", "turn SP off", "with SP": the plan under discussion with SP switched
        return Intent("what_if", "sequence_parallel")
    if sp_switched(e) and RECOMMEND_CUE.search(text) and (has_scenario or new_scenario):
        return Intent("recommend")  # "best plan without SP?": SP alone names no plan of its own; the search, with a note
    gpus_asked, models_asked = catalogs_asked(text)  # "which gpus and models do you actually support?"
    if (LIST_MODELS.search(text) or models_asked) and not e.model:
        # "which gpus + which models can you plan for?": both lists, the GPUs first
        both = (LIST_HARDWARE.search(text) or gpus_asked) and not e.gpu
        return Intent("list_models", "with_hardware" if both else None)
    if (LIST_HARDWARE.search(text) or gpus_asked) and not e.gpu:
        return Intent("list_hardware")
    if MODEL_FACTS.search(text) and (e.model or e.params) and not e.gpu:
        return Intent("lookup_model")
    if e.plans and (REVIEW.search(text) or CHECK_CLAIM.search(text) and CLAIMED_FIT.search(text) and not CLAIMED_RANK.search(text)) \
            and not re.search(r"\b(?:export|generate|write)\b", text):
        return Intent("memory" if MEMORY.search(text) and not SPEED.search(text) else "evaluate")
    if e.export_format and (EXPORT.search(text) or state.export_format and len(text.split()) <= 6) or \
            EXPORT.search(text) and EXPORT_VERB.search(text):
        return Intent("export", e.export_format)
    if CONFIRM.search(text):
        return Intent("recommend", "ignore_plan")
    if len(e.plans) == 2 and COMPARE_WORDS.search(text):
        return Intent("compare")
    if ACTIVE_VS_TOTAL.search(text) and MEMORY_QUESTION.search(text) and (has_scenario or new_scenario) \
            and not e.plans:
        return Intent("memory", "total_vs_active")  # "only 3B active, so why so much more memory than a 3B?"
    concept_of_knob = {"zero": "zero", "tp": "tensor_parallel", "pp": "pipeline_bubble", "cp": "context_parallel",
                       "ep": "expert_parallel", "vpp": "virtual_pipeline", "recompute": "activation_recompute"}
    if not e.concept and (WHY_CONCEPT.search(text) or WHAT_IS.search(text)) and len(e.plans) == 1 and len(e.plans[0]) == 1:
        knob = next(iter(e.plans[0]))  # "why does ZeRO-1 shard only…", "what is ZeRO-3 doing": ZeRO itself
        if knob in concept_of_knob:
            e.concept = concept_of_knob[knob]
    if e.concept == "cuda_graphs" and (has_scenario or new_scenario) and not (EXPLAIN_STRONG.search(text)
                                                                            or WHY_CONCEPT.search(text)):
        e.concept = None  # "… with full cuda graphs, what's the throughput?": a setup option said, not asked about
    if BREAKDOWN.search(text) and (has_scenario or new_scenario) and not e.plans:
        return Intent("memory")
    if TIME_BREAKDOWN.search(text) and (has_scenario or new_scenario) and len(e.plans) <= 1:
        # "where does the time go in one step of that? is the optimizer a noticeable chunk?": the step's parts
        return Intent("evaluate" if e.plans or state.plan is not None else "recommend")
    if e.concept and PLAN_VALUE.search(text) and (has_scenario or new_scenario) and not e.plans \
            and not re.search(r"\bexplain\b|\bwhat\s+(?:is|are)\s+(?:a\s+|the\s+)?(?:concept|idea)", text):
        e.concept = None  # "what does the planner pick, whats the DP degree": a recommendation
    if e.concept and FEASIBILITY.search(text) and not e.plans and not EXPLAIN_STRONG.search(text) \
            and not e.scenario_patch().missing():
        e.concept = None  # "can I QLoRA <model> on <gpus>?": the mode of a setup to plan, not the glossary entry
    if e.concept in ("lora", "qlora") and e.mode == e.concept and not e.plans and not EXPLAIN_STRONG.search(text) and not WHY_CONCEPT.search(text) \
            and not e.scenario_patch().missing():
        e.concept = None  # "want to qlora llama 70b on 8 a100s, how do i shard it": the mode of a setup to plan
    if not e.concept and len(e.plans) == 1 and len(e.plans[0]) == 1 and next(iter(e.plans[0])) in concept_of_knob \
            and not (has_scenario or new_scenario) and EXPLAIN_STRONG.search(text):
        e.concept = concept_of_knob[next(iter(e.plans[0]))]  # "how much memory does ZeRO-3 save?": ZeRO itself
    if e.concept and all(len(p) <= 1 for p in e.plans) and len(e.plans) <= 1 and not (has_scenario or new_scenario) \
            and QUESTION.search(text) and not FEASIBILITY.search(text):
        return Intent("explain", e.concept)  # "does SP save memory or just comm?": with no setup, the idea is the answer
    if e.concept in (None, "mfu") and METRIC_VALUE.search(text) and has_scenario and not new_scenario and not e.plans \
            and not why:
        return Intent("evaluate" if state.plan is not None else "recommend")  # "what's the MFU?": the number
    if e.concept in ("mfu", "pipeline_bubble", "memory_breakdown") and why and METRIC_JUDGED.search(text) and not e.plans:
        return Intent("explain", e.concept)  # "MFU on that looks low. why, is it the MoE?": the metric explained
    if e.concept and (not why or WHY_CONCEPT.search(text) or re.search(r"\bexplain\b", text)) and (
            EXPLAIN_STRONG.search(text) or WHY_CONCEPT.search(text)
            or EXPLAIN.search(text) and not (e.plans and (SPEED.search(text) or MEMORY.search(text)))
            and not RECOMMEND_CUE.search(text)):
        return Intent("explain", e.concept)
    if len(e.plans) == 2:
        return Intent("compare")
    if why and not e.plans:
        return Intent("why_best")  # without a scenario yet, the answer asks for one
    split = what_if_split(message)
    if state.plan is not None and has_scenario and not e.plans and SAME_PLAN.search(text) and (new_scenario or split):
        return Intent("evaluate")  # "move the same job (same plan) to h200s": that plan on the new setup, not a new search
    if split is not None and (has_scenario or split[0].has_scenario()) and not restates_only(split[1], state.scenario):
        return Intent("what_if")
    if has_scenario and new_scenario and not (e.model or e.params) and not e.plans and len(text.split()) <= 8 \
            and not restates_only(e, state.scenario):
        return Intent("what_if")
    if len(e.plans) == 1 and e.plans[0] and RECOMMEND_WITH.search(text) and (has_scenario or new_scenario):
        return Intent("recommend")  # "recommend something with ep 8": the best plan with that degree pinned
    if e.plans:
        if MEMORY.search(text) and not SPEED.search(text):
            return Intent("memory")
        if has_scenario or new_scenario:
            return Intent("evaluate")
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
