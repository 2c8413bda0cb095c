"""Scenario settings named in an offline answer, spelled for the surface the answer is read on.

Engine warnings reach the chat's tool results as plain text with the REST field names ("if you run DeepEP, pass
moe_dispatcher deepep"; engine/setting_text.py drops the braces). That is right for REST and the page's chat,
which send those fields; in `shardwise ask` (a terminal command) the user's way to set it is the CLI flag
(`--moe-dispatcher deepep`, cli/flags.py), and in the terminal chat the user says it in words ("ask for the
deepep MoE dispatcher"). Only code-like names (with an underscore) are respelled, never inside backticks or a
rule id's brackets ("[moe_dispatcher_not_offered]"), so an answer's deliberate `moe_dispatcher` stays as written.
"""

from __future__ import annotations

import re

SPELLINGS = ("field", "flags", "words")  # REST and the page; `shardwise ask`; `shardwise chat`

# The settings engine messages name (engine/training.py SETTING_NAMES and the validity rules' `{…}`), in words
WORDS = {"moe_dispatcher": "MoE dispatcher", "moe_a2a_overlap": "expert all-to-all overlap",
         "cuda_graphs": "CUDA graphs setting", "recompute_modules": "recompute modules",
         "grad_reduce_dtype": "gradient-reduction dtype", "fp8_param_gather": "FP8 parameter all-gather",
         "seq_len": "sequence length", "global_batch": "global batch", "gpus_per_node": "GPUs per node",
         "num_gpus": "GPU count", "train_tokens": "token budget", "lora_rank": "LoRA rank"}

_NAMES = "|".join(sorted(WORDS, key=len, reverse=True))
# "pass moe_dispatcher deepep" (a value follows) / "pass moe_a2a_overlap if …" / a name alone
_PASS_VALUE = re.compile(rf"(?<![\w`\[])pass\s+({_NAMES})\s+([a-z0-9][\w.-]*)(?![\w`\]])(?=[\s,;.)]|$)")
_NAME = re.compile(rf"(?<![\w`\[\-])({_NAMES})(?![\w`\]])")
_NOT_VALUES = {"if", "and", "or", "to", "with", "when", "for", "is", "unset", "off", "on"}


def _flag(name: str) -> str:
    from ..cli.flags import flag_for  # the CLI's own spelling, checked against its parser (tests/cli)

    return flag_for(name)


def spell_settings(text: str, spelling: str = "field") -> str:
    """`text` with its setting names spelled as `spelling` says ("field" leaves it as the tools wrote it)."""
    if spelling == "field" or not text:
        return text
    if spelling == "flags":
        text = _PASS_VALUE.sub(lambda m: f"pass `{_flag(m.group(1))} {m.group(2)}`"
                               if m.group(2) not in _NOT_VALUES else m.group(0), text)
        return _NAME.sub(lambda m: f"`{_flag(m.group(1))}`", text)
    if spelling == "words":
        text = _PASS_VALUE.sub(lambda m: f"ask for the {m.group(2)} {WORDS[m.group(1)]}"
                               if m.group(2) not in _NOT_VALUES else m.group(0), text)
        text = re.sub(rf"(?<![\w`\[])pass\s+({_NAMES})(?![\w`\]])", lambda m: f"ask with the {WORDS[m.group(1)]}", text)
        return _NAME.sub(lambda m: f"the {WORDS[m.group(1)]}", text)
    raise ValueError(f"setting spelling {spelling!r} is not one of {', '.join(SPELLINGS)}")
