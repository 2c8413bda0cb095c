"""The words the reading model looks for, by what they mean: a request for an alternative, a comparison,
a metric, a change said as news, and the ways people point at a plan in the dialogue ("it", "yours",
"the runner-up", "your original pick"). Features of a clause, not whole phrasings: each is combined with
what the clause names (plans, scenario facts) and with the dialogue state before it decides an act."""

from __future__ import annotations

import re

from .intents import CHANGE_MARKER, EXPLAIN_STRONG, WHAT_IF_MARKER, WHY_CONCEPT

EXPLAIN_CUE = re.compile(EXPLAIN_STRONG.pattern + "|" + WHY_CONCEPT.pattern + r"|\bwhat'?s\b|\bwhats\b|\bthe\s+point\s+of\b|"
                         r"\bsame\s+(?:thing\s+)?as\b|\bhow\s+is\b[^.?!]{0,30}\b(?:counted|computed|measured|defined)\b|"
                         r"\bactually\s+(?:do|does|doing|shard\w*|mean\w*)\b")
# A request for the best plan worded as an alternative to one named or assumed: "what would you pick
# instead", "is there anything faster", "something better than both", "the closest thing that fits",
# "how far off the best plan are we", "best way to split it".
ALTERNATIVE = re.compile(r"\bwhat\s+would\s+(?:you|u)\s+(?:pick|choose|run|use|do|go\s+with|recommend|change|suggest)\b|"
                         r"\b(?:anything|something|a\s+plan|a\s+layout|(?<!which\s)one)\s+(?:\w+\s+)?(?:faster|better|quicker|cheaper)\b|"
                         r"\b(?:a|any)\s+(?:better|faster|quicker)\s+(?:plan|layout|setup|config|option|way|split)\b|"
                         r"\bbetter\s+than\s+both\b|\bclosest\s+(?:thing|plan|layout|config|setup|one|option)\b|"
                         r"\bclosest\s+(?:\w+\s+)?(?:that|which)\s+(?:fits|works|runs)\b|"
                         r"\bfar\s+(?:off|from)\s+(?:the\s+)?(?:best|optimal|optimum)\b|\bbest\s+way\s+to\s+(?:split|shard|lay|run|train)\b|"
                         r"\b(?:what|which)\s+(?:\w+\s+)?(?:setup|plan|layout|config|parallel\w*)\s+(?:would|should|do)\s+(?:you|u|we|i)\b|"
                         r"\b(?:what|which)\s+(?:\w+\s+){0,2}(?:you|u)(?:'d|\s+would)\s+(?:\w+\s+)?(?:run|pick|choose|use|go\s+with|"
                         r"recommend|change|do\s+differently|suggest)\b")
# The plan under discussion named by pointing at it, also on new hardware: "does that plan (same degrees) fit on H200s?"
REFERS = re.compile(r"\b(?:that|this|your|the\s+same|our\s+current)\s+(?:plan|layout|config|setup|one)\b|\bsame\s+degrees\b|"
                    r"\bsame\s+(?:plan|layout|config|parallelism)\b|"  # "move the same job (same plan) to h200"
                    r"\b(?:does|will|would)\s+(?:it|that|this)\s+(?:even\s+)?(?:fit|work|run)\b")
METRIC = re.compile(r"\bmfu\b|\bthroughput\b|\bstep\s*time\b|\btokens?\s*/\s*s\b|\bhow\s+(?:fast|slow|quick)\b|\bhow\s+long\b")
FIT = re.compile(r"\bfits?\b|\boom\b|\bmemory\b")
# A comparison said outright, even beside words that usually ask for a concept ("vs no interleaving, how much do we lose?")
COMPARE_STRONG = re.compile(r"\bvs\.?\b|\bversus\b|\binstead\b|\bcompared\s+(?:to|with)\b|"
                            r"\bhow\s+much\s+(?:do|would|will)\s+(?:we|i|you)\s+(?:lose|gain|save)\b")
# A follow-up that changes the setup without asking: "ok now with 128 gpus", "switch to H200s"
CHANGE_SAID = re.compile(WHAT_IF_MARKER.pattern + "|" + CHANGE_MARKER.pattern + r"|\bnow\b")
ORIGINAL = re.compile(r"\b(?:your|the)\s+(?:original|first|initial|earlier|old)\s+(?:pick|plan|recommendation|choice|one|layout)\b|"
                      r"\byour\s+(?:pick|recommendation|choice)\b|\bthe\s+recommended\s+(?:one|plan|layout)\b|\bwhat\s+you\s+"
                      r"(?:picked|recommended|suggested)\b")
RUNNER_UP = re.compile(r"\brunner[\s-]?up\b|\bsecond[\s-]+(?:best|place|fastest)\b|\bnext[\s-]+best\b")
YOUR_PLAN = re.compile(r"\byou\s+(?:chose|choose|picked|pick|recommend\w*|suggest\w*|went\s+with)\b|\byour\s+(?:plan|pick|choice|"
                       r"recommendation|layout)\b|\bthat\s+(?:tp|pp|cp|ep|vpp|zero|dp)\b")
EVALUATE_IT = re.compile(r"\b(?:evaluate|check|score|test|re-?run|rerun)\s+(?:it|that|this|the\s+plan|that\s+plan|yours)\b")
# The best plan asked for by name ("megatron args for the best plan", "the optimal config"), not the plan on the table
BEST_ASKED = re.compile(r"\b(?:best|optimal|optimum|fastest)\s+(?:\w+\s+)?(?:plan|layout|setup|config|split|one)\b")
PLAN_TOO = re.compile(r"\b(?:the|a|your)\s+(?:best\s+)?plan\b|\bplan\s*(?:\+|&|and|,)")
# A comparison asked with one plan named: the other side is the plan under discussion.
COMPARE_CUE = re.compile(r"\bwhy\s+not\b|\bwhy\s+no\b|\bwhy\b[^.?!]*\bover\b|\bvs\.?\b|\bversus\b|\bcompar\w*\b|\b(?:better|faster|slower|cheaper)\s+than\b|"
                         r"\bagainst\b|\binstead\b|\brather\s+than\b|\bbeats?\b|\bstack\s+up\b|\bover\s+(?:yours|it|that|this|the)\b|"
                         r"\bwhich\s+(?:is|one|wins)\b|\bhelps?\b|\b(?:be|is|are|run)\s+(?:\w+\s+){0,3}(?:faster|slower|better|quicker)\b|"
                         r"\bhow\s+much\s+(?:do|would|will)\s+(?:we|i|you)\s+(?:lose|gain|save)\b|\bhow\s+(?:much\s+)?(?:worse|better|slower|faster)\b")
# What, in the user's words, is the plan under discussion (the last recommended, evaluated, what-if
# winner or exported plan): "it", "that", "yours", "the winner", "what you picked", "the recommended one".
DISCUSSED = re.compile(r"\b(?:it|its|that(?:\s+one|\s+plan)?|this(?:\s+one|\s+plan)?|yours|ours|the\s+winner|your\s+(?:plan|pick|choice|"
                       r"recommendation|layout|setup|answer|one)|what\s+you\s+(?:picked|chose|recommended|suggested|proposed)|"
                       r"the\s+(?:recommended|current|suggested|chosen|best|fastest|top|winning)\s+(?:one|plan|layout|pick))\b")
# The user's own plan pointed at ("ours", "mine", "our current run", "what we run"): ConversationState.user_plan;
# and the assistant's ("yours", "your pick"): the recommendation.
OURS_REF = re.compile(r"\b(?:ours|mine|(?:our|my)\s+(?:[\w.-]+\s+){0,2}(?:plan|setup|config|layout|run|one|job|recipe)|"
                      r"what\s+(?:we|i)\s+(?:run|have|use|had|do))\b")
YOURS_REF = re.compile(r"\b(?:yours|your\s+(?:[\w.-]+\s+){0,1}(?:plan|pick|choice|recommendation|layout|setup|config|one)|"
                       r"what\s+you\s+(?:picked|chose|recommended|suggested|proposed))\b")
GAP = re.compile(r"\b(?:gap|difference|diff|delta)\b")  # "the gap between yours and ours"
# A named plan said to be the best, brought to be checked: "someone told me TP=16 is optimal for 70B - is it?",
# "is tp8 pp2 really the fastest?". Checking it takes the plan's own numbers and the best plan beside it.
CLAIMED_BEST = re.compile(r"\b(?:is|are|'s|be|was|were)\s+(?:really\s+|actually\s+|truly\s+)?(?:the\s+)?"
                          r"(?:optimal|optimum|best|fastest|ideal|way\s+to\s+go)\b|\boptimal\b|\boptimum\b|"
                          r"\b(?:really|actually|truly)\s+(?:the\s+)?(?:best|fastest|ideal)\b")
