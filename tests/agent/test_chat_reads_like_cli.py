"""The chat's offline answers say what the CLI says, the way it says it (branch chatpolish12):
- a what-if's changes by their plan-label names ('ZeRO 3 → 2', 'SP on → off': present.knob_change), never a tool
  argument's ('zero_stage 3 → 2', 'sequence_parallel True → False');
- a change that rounds to zero reads '+0.0', never '-0.0'; counts in words ('1 other plan is', '170 other plans are');
- a step time's change in the unit the step is written in (present.duration_ms: seconds from ten seconds up), so
  '12.5 s' never sits beside '-2,565.8 ms';
- after "and with LoRA?" the "_Understood:_" line is the scenario the numbers were computed for (LoRA).

Expected values are the tool results' own fields in the same test, or the formatting contract written out here;
never the planner's answer copied in."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.understood import mode_words
from shardwise.agent.service import ChatService
from shardwise.present import knob_change
from shardwise.prompts.change_words import change_words
from shardwise.prompts.render import _signed, environment
from shardwise.prompts.step_units import duration_in, step_amount, step_change

from support.chat import turns

SETUP = "best plan for llama 3 8b on 8 H100, seq 4096, batch 256"


@pytest.fixture(scope="module")
def lora_turns(tmp_path_factory):
    service = ChatService(AgentConfig(session_db=tmp_path_factory.mktemp("chat") / "s.sqlite3"))
    return turns(service, SETUP, "and with LoRA?")


def result(done, name: str) -> dict:
    return next(c["result"] for c in done.tool_calls if c["name"] == name)


def test_after_and_with_lora_the_understood_line_is_the_lora_scenario(lora_turns):
    what_if = result(lora_turns[1], "what_if")
    assert what_if["before"]["mode"] == "full" and what_if["after"]["mode"] == "lora"
    understood = lora_turns[1].answer.splitlines()[0]
    assert understood.startswith("_Understood:_")
    assert mode_words("lora") in understood and mode_words("full") not in understood
    # the recommendation before it was full training, and said so
    assert mode_words("full") in lora_turns[0].answer.splitlines()[0]


def test_what_if_changes_are_said_as_plan_labels(lora_turns):
    answer, what_if = lora_turns[1].answer, result(lora_turns[1], "what_if")
    assert what_if["plan_changes"], "the LoRA what-if moves the best plan (its ZeRO stage)"
    for c in what_if["plan_changes"]:
        assert knob_change(c["field"], c["before"], c["after"]) in answer
        assert f"{c['field']} {c['before']} → " not in answer  # the raw argument, e.g. "zero_stage 3 → "
    assert "zero_stage" not in answer and "sequence_parallel" not in answer
    assert "**What if training full → lora?**" in answer  # the input 'mode' in words (prompts/change_words.py)


def test_a_step_change_is_in_the_unit_of_the_step(lora_turns):
    answer, what_if = lora_turns[1].answer, result(lora_turns[1], "what_if")
    before, after, change = (what_if["before_best"]["step_ms"], what_if["after_best"]["step_ms"],
                             what_if["step_ms_change"])
    assert max(before, after) >= 10_000, "a step of seconds: present.duration_ms writes it in s"
    row = next(line for line in answer.splitlines() if line.startswith("| step |"))
    # one unit on the row, the step's: seconds with one decimal from 1 s up
    assert row == f"| step | {before / 1000:,.1f} s | {after / 1000:,.1f} s | {change / 1000:+,.1f} s |"
    assert " ms" not in row


def test_why_it_wins_says_the_saving_in_the_unit_of_the_step(lora_turns):
    recommend = result(lora_turns[0], "recommend_plans")
    saved, step = recommend["why_best"]["step_ms_saved"], recommend["best"]["step_ms"]
    assert step >= 10_000 and 0 < saved < 100  # 12.5 s against a runner-up tens of ms slower
    # under 0.1 s, three decimals keep the digits a 1-decimal '0.0 s' would lose
    assert f"({saved / 1000:.3f} s less per step)" in lora_turns[0].answer


def test_near_ties_are_counted_in_words(lora_turns):
    recommend = result(lora_turns[0], "recommend_plans")
    n = recommend["near_best"]
    assert n > 1
    assert f"{n:,} other plans are predicted within" in lora_turns[0].answer
    assert "plan(s)" not in lora_turns[0].answer
    template = environment().from_string('{{ n|count_noun("other plan") }} {{ "is" if n == 1 else "are" }}')
    assert template.render(n=1) == "1 other plan is" and template.render(n=2) == "2 other plans are"


@pytest.mark.parametrize("value, expected", [(-0.04, "+0.0"), (-0.0, "+0.0"), (0.04, "+0.0"), (-0.05001, "-0.1"),
                                             (2.94, "+2.9"), (-1234.56, "-1,234.6")])
def test_a_change_that_rounds_to_zero_has_no_minus(value, expected):
    # the sign is read off the printed digits, as present.signed does for the CLI
    assert _signed(value, 1) == expected


def test_step_units_contract():
    # a step under ten seconds is written in ms (present.duration_ms), so is its change
    assert step_change(-123.44, 900.0, 776.6) == "-123.4 ms"
    assert step_change(-0.04, 900.0) == "+0.0 ms"
    # a step of ten seconds or more is written in s, and so is its change, with the digits a small change needs
    assert step_change(-2565.8, 12_500.0, 9934.2) == "-2.6 s"
    assert step_change(150.0, 23_900.0) == "+0.15 s"
    assert step_change(-32.3, 12_500.0) == "-0.032 s"
    assert step_amount(-73.0, 24_500.0) == "0.073 s"
    # both ends of a before/after row in one unit, the longer step's
    assert duration_in(9977.3, 12_500.0) == "10.0 s" and duration_in(12_500.0, 9977.3) == "12.5 s"
    assert duration_in(412.3, 900.0) == "412.3 ms"


def test_inputs_and_knobs_in_words():
    assert change_words("sequence_parallel", True, False) == "SP on → off"
    assert change_words("zero_stage", 3, 1) == "ZeRO 3 → 1"
    assert change_words("moe_dispatcher", "alltoall", "deepep") == "MoE dispatcher alltoall → deepep"
    assert change_words("seq_len", 4096, 8192) == "sequence 4096 → 8192"
    assert change_words("precision", "bf16", "fp8") == "precision bf16 → fp8"


def test_the_what_if_tool_line_says_the_change_in_words(lora_turns):
    import json

    from shardwise.tools import dispatch

    call = next(c for c in lora_turns[1].tool_calls if c["name"] == "what_if")
    outcome = dispatch("what_if", json.dumps(call["arguments"]))
    what_if = outcome.result
    assert outcome.ok and what_if.changed_inputs
    summary = outcome.summary()
    for c in what_if.changed_inputs:
        assert change_words(c.field, c.before, c.after) in summary
    assert "mode full→lora" not in summary


def test_a_comparison_writes_both_steps_in_one_unit(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"))
    [done] = turns(service, "llama 3 70b on 64 H100, seq 4096, batch 512: compare TP=8 PP=1 ZeRO-1 with TP=4 PP=4 ZeRO-1")
    compare = result(done, "compare_plans")
    a, b = compare["a"]["step_ms"], compare["b"]["step_ms"]
    row = next(line for line in done.answer.splitlines() if line.startswith("| step |"))
    # the longer step decides the unit (seconds from ten seconds up, present.duration_ms), for both
    assert row == f"| step | {duration_in(a, b)} | {duration_in(b, a)} |"
    unit = "s" if max(a, b) >= 10_000 else "ms"
    assert row.count(f" {unit} |") == 2
