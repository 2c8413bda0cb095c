"""Settings named in an offline answer as the surface's user sets them: `shardwise ask` the CLI flag, the terminal
chat in words, REST and the page's chat the field (as the tools wrote it). The engine's sentence is
engine/validity/experts.py's: "if you run DeepEP, pass {moe_dispatcher} deepep"."""

from __future__ import annotations

import pytest

from shardwise.agent.service import ChatService
from shardwise.agent.setting_spelling import spell_settings

from support.chat import turns

WARNING = ("[expert_all_to_all_pricing] … if you run DeepEP, pass moe_dispatcher deepep, which sends far less; not "
           "overlapped (pass moe_a2a_overlap if you run --overlap-moe-expert-parallel-comm); although moe_a2a_overlap "
           "is set (moe_a2a_overlap_not_applied); `moe_dispatcher` deepep")


def test_the_field_is_left_as_written():
    assert spell_settings(WARNING, "field") == WARNING


def test_the_terminal_command_names_the_flag():
    text = spell_settings(WARNING, "flags")
    assert "pass `--moe-dispatcher deepep`," in text and "pass `--moe-a2a-overlap` if you run" in text
    assert "although `--moe-a2a-overlap` is set" in text
    # a rule id and a deliberate code span are not respelled
    assert "[expert_all_to_all_pricing]" in text and "(moe_a2a_overlap_not_applied)" in text
    assert "`moe_dispatcher` deepep" in text


def test_the_chat_says_it_in_words():
    text = spell_settings(WARNING, "words")
    assert "ask for the deepep MoE dispatcher," in text and "ask with the expert all-to-all overlap if" in text
    assert " moe_dispatcher deepep" not in text.replace("`moe_dispatcher` deepep", "")


def test_an_unknown_spelling_is_refused_in_one_line():
    with pytest.raises(ValueError, match="not one of field, flags, words"):
        ChatService(setting_spelling="yaml")


MOE = "mixtral 8x7b on 64 h100, 4k context, gbs 512, what plan?"


@pytest.mark.parametrize("spelling, said, unsaid", [
    ("flags", "pass `--moe-dispatcher deepep`", "pass moe_dispatcher"),
    ("words", "ask for the deepep MoE dispatcher", "pass moe_dispatcher"),
    ("field", "pass moe_dispatcher deepep", "--moe-dispatcher deepep"),
])
def test_the_answer_and_its_stored_copy_name_the_setting_for_the_surface(tmp_path, spelling, said, unsaid):
    from shardwise.agent.config import AgentConfig

    service = ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"), setting_spelling=spelling)
    [done] = turns(service, MOE)
    assert said in done.answer and unsaid not in done.answer
    stored = [m for _, m in service.store.load(done.session_id).messages if m.get("role") == "assistant"]
    assert said in stored[-1]["content"]  # the next turn's history reads what the user read
