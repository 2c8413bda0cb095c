"""Text naming settings `{like_this}`: plain names for REST and the chat, any other spelling on request."""

from __future__ import annotations

from shardwise.engine.errors import SettingsInputError
from shardwise.engine.export.result import ExportRefused
from shardwise.engine.setting_text import SettingsText, settings_text


def flag(name: str) -> str:  # a CLI-like spelling, written here so the engine tests need no CLI
    return "--" + name.replace("_", "-")


def test_plain_text_drops_the_braces_and_a_spelling_replaces_them():
    said = settings_text("use {precision} bf16 or raise {gpus_per_node}", "precision", "gpus_per_node")
    assert str(said) == "use precision bf16 or raise gpus_per_node"
    assert said.spelled(flag) == "use --precision bf16 or raise --gpus-per-node"


def test_braces_that_name_no_listed_setting_stay_as_written():
    # a model's name or a JSON snippet may hold braces of its own
    said = settings_text("model {weird} with {gpus}", "gpus")
    assert str(said) == "model {weird} with gpus" and said.spelled(flag) == "model {weird} with --gpus"


def test_joined_text_keeps_every_setting_and_takes_plain_text_literally():
    said = "[rule] " + settings_text("set {mode}", "mode") + "; " + settings_text("or {format}", "format")
    assert isinstance(said, SettingsText) and said.settings == ("mode", "format")
    assert said.spelled(flag) == "[rule] set --mode; or --format"


def test_a_refusal_is_plain_as_str_and_spelled_on_request():
    exc = SettingsInputError.from_text(settings_text("{gpus} must be positive", "gpus"))
    assert str(exc) == "gpus must be positive" and exc.spelled(flag) == "--gpus must be positive"


def test_an_export_refusal_composes_its_reason_and_hint():
    exc = ExportRefused("nanotron", "no FP8", settings_text("use {precision} bf16", "precision"), rule="fp8")
    assert str(exc) == "cannot export this plan to nanotron: no FP8; use precision bf16"
    assert exc.spelled(flag) == "cannot export this plan to nanotron: no FP8; use --precision bf16"
    assert (exc.reason, exc.hint, exc.rule) == ("no FP8", "use precision bf16", "fp8")
    assert ExportRefused("launch", "odd hosts").hint == ""  # no hint, no trailing "; "
    assert str(ExportRefused("launch", "odd hosts")) == "cannot export this plan to launch: odd hosts"
