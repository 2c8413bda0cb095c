"""The chat shows the engine's refusals with setting names (the tools' argument names), never CLI flags.

The offline planner renders a tool's errors (prompts/offline/tool_error.md.j2) and an export refusal's
reason and hint as the dispatcher returns them; the engine's templates (named) say the settings plainly.
"""

from __future__ import annotations

from support.chat import ask


def test_a_refusal_in_the_chat_names_the_settings(make_service):  # engine/post_training/modes.py
    [(_, answer)] = ask(make_service(), "llama 3.1 8b full fine-tune on 8 h100 with prompt length 512, what plan?")
    assert ("prompt_len describe rollout generation and apply only to mode grpo or ppo (and their -lora/-qlora "
            "variants), not full") in answer
    assert "--" not in answer


def test_an_export_refusal_in_the_chat_names_the_settings(make_service):  # engine/export/megatron.py
    [(_, answer)] = ask(make_service(), "export llama 3.1 8b on 8 h100 lora to megatron")
    assert "(export format megatron-bridge (peft=lora) or use mode full)" in answer and "--" not in answer
