"""Scenario settings as the page's form names them: the page's spelling of engine text that names settings.

The engine writes a setting `{moe_dispatcher}` (engine/setting_text.py); REST says `moe_dispatcher`, the CLI
`--moe-dispatcher` (cli/flags.py), and the page the label of the control the user sees: “MoE dispatcher”.
A setting the form has no control for is named as the API field it is ("the API field moe_a2a_overlap"), so a
note never points at a control the page does not have. tests/web/test_page_setting_labels.py checks each
label against the form's own <label> and that every setting an engine message names is spelled.
"""

from __future__ import annotations

import re
from typing import Any

from ..engine.errors import SettingsInputError

# setting -> the <label> text of the form control that sets it (web/templates/_form.html).
FORM_LABELS = {"model": "Model", "params": "Parameters", "gpu": "GPU", "network": "Network", "gpus": "GPUs",
               "num_gpus": "GPUs", "gpus_per_node": "GPUs per node", "seq_len": "Sequence length",
               "global_batch": "Global batch", "global_batch_tokens": "Global batch", "mode": "Training",
               "response_len": "Response tokens (GRPO/PPO)", "precision": "Precision", "framework": "Framework",
               "moe_dispatcher": "MoE dispatcher", "cuda_graphs": "CUDA graphs", "grad_reduce_dtype": "Gradient dtype",
               "fp8_param_gather": "FP8 weights", "recompute_modules": "Recompute modules",
               "mean_doc_len": "Packed docs (mean tokens)", "moe_a2a_overlap": "Expert A2A overlap",
               "lora_rank": "LoRA rank", "prompt_len": "Prompt tokens (GRPO/PPO)",
               "group_size": "Samples per prompt (GRPO/PPO)"}

# Settings the page sets with something other than a labelled control.
PAGE_PLACES = {"format": "the config tab"}  # export formats are the tabs under "Configs for the recommended plan"


def label_for(setting: str) -> str:
    """moe_dispatcher -> “MoE dispatcher”; a setting with no control -> 'the API field moe_a2a_overlap'."""
    label = FORM_LABELS.get(setting)
    return f"“{label}”" if label else PAGE_PLACES.get(setting, f"the API field {setting}")


def page_text(item: Any) -> str:
    """A warning, violation or input error as the page says it: settings by their form labels."""
    if isinstance(item, SettingsInputError) or hasattr(item, "spelled"):
        return item.spelled(label_for)
    return str(item)


def page_validation_message(message: str, entries: list[dict[str, str]]) -> str:
    """web/errors.describe_validation's one line with a form field named by its label: 'gpus: Input should be …'
    -> '“GPUs”: Input should be …' (a nested field such as profile.compute_scale keeps its name)."""
    for field in dict.fromkeys(e["field"] for e in entries):
        if field in FORM_LABELS:
            message = re.sub(rf"(?<![\w.]){re.escape(field)}: ", lambda _: f"{label_for(field)}: ", message)
    return message
