"""Post-training in plain words: "can we GRPO Qwen2.5-7B on 8 H100s with 1k-token responses?",
"DPO with LoRA", "PPO (RLHF) with 8 samples per prompt and 512-token prompts".

`find_post_training(text)` returns the algorithm and the rollout lengths it names, and the text with
those length phrases blanked, so "1k-token responses" is not also read as the sequence length."""

from __future__ import annotations

import re
from dataclasses import dataclass

K = 1024
LENGTH = r"(\d+(?:\.\d+)?)\s*(k)?"
ALGORITHMS = ((r"\bgrpo\b", "grpo"), (r"\bdpo\b|direct\s+preference\s+optimi[sz]ation", "dpo"),
              (r"\bppo\b|\brlhf\b", "ppo"))
RESPONSE = [rf"{LENGTH}\s*-?\s*tok(?:en)?s?\s+(?:long\s+)?(?:responses?|completions?|generations?|outputs?|answers?)",
            rf"(?:responses?|completions?|generations?|outputs?|answers?)\s+(?:length\s+)?(?:of|up\s+to|=|:)?\s*{LENGTH}"
            r"(?:\s*-?\s*tok(?:en)?s?)?",
            rf"(?:generat\w*|sampl\w*)\s+(?:up\s+to\s+)?{LENGTH}\s*-?\s*tok(?:en)?s?",
            rf"{LENGTH}\s+response\s+tok(?:en)?s?",
            # "4k responses", "2048 completions" — not "8 responses per prompt" (a group size)
            r"(?<![\w.])(\d+(?:\.\d+)?)\s*(k)\s*-?\s*(?:long\s+)?(?:responses?|completions?|generations?)\b",
            r"(?<![\w.])(\d{3,})()\s*-?\s*(?:long\s+)?(?:responses?|completions?|generations?)\b"
            r"(?!\s+(?:per|for\s+each|each)\s+prompt)"]
PROMPT = [rf"{LENGTH}\s*-?\s*tok(?:en)?s?\s+prompts?", rf"prompts?\s+(?:length\s+)?(?:of|up\s+to|=|:)?\s*{LENGTH}"
          r"(?:\s*-?\s*tok(?:en)?s?)?", rf"{LENGTH}\s+prompt\s+tok(?:en)?s?"]
GROUP = [r"group\s*(?:size)?\s*(?:of|=|:)?\s*(\d+)", r"(\d+)\s+(?:samples?|responses?|completions?|generations?|rollouts?)"
         r"\s+(?:per|for\s+each|each)\s+prompt", r"\bn\s*=\s*(\d+)\s+(?:samples|rollouts)"]


@dataclass
class PostTrainingWords:
    algorithm: str | None = None
    prompt_len: int | None = None
    response_len: int | None = None
    group_size: int | None = None


def _length(m: re.Match) -> int:
    return int(float(m.group(1)) * (K if m.group(2) else 1))


def _first(patterns: list[str], text: str) -> re.Match | None:
    found = [m for m in (re.search(p, text) for p in patterns) if m]
    return min(found, key=lambda m: m.start()) if found else None


def _blank(text: str, m: re.Match | None) -> str:
    return text if m is None else text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]


def find_post_training(text: str) -> tuple[PostTrainingWords, str]:
    """(what the message says about post-training, the text with its rollout-length phrases blanked)."""
    words = PostTrainingWords()
    for pattern, algorithm in ALGORITHMS:
        if re.search(pattern, text):
            words.algorithm = algorithm
            break
    response = _first(RESPONSE, text)
    if response:
        words.response_len = _length(response)
    text = _blank(text, response)
    prompt = _first(PROMPT, text)
    if prompt:
        words.prompt_len = _length(prompt)
    text = _blank(text, prompt)
    group = _first(GROUP, text)
    if group:
        words.group_size = int(group.group(1))
    return words, _blank(text, group)


def combined_mode(weights: str | None, algorithm: str | None) -> str | None:
    """'lora' + 'dpo' -> 'dpo-lora'; None + 'grpo' -> 'grpo'; 'qlora' + None -> 'qlora'."""
    if algorithm is None:
        return weights
    return algorithm if weights in (None, "full") else f"{algorithm}-{weights}"


def rollout_mode(mode: str | None) -> bool:
    """GRPO and PPO (and their LoRA/QLoRA variants) generate rollouts with prompt and response lengths; every
    other mode (full, LoRA, QLoRA, DPO; None is the default, full) trains on sequences of one length."""
    return mode is not None and mode.split("-")[0] in ("grpo", "ppo")
