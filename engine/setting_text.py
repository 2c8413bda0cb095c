"""Text that names scenario settings, written once and spelled by each surface its own way.

A template names a setting as `{gpu}`, `{seq_len}`. REST bodies and the chat's tools call the setting
by that name (gpu, seq_len), so the plain text (`str`) is the template with the braces dropped; the CLI
renders `spelled(flag_for)` instead (--gpu, --seq-len). Refusals carry it as a SettingsInputError
(errors.py); warnings and notes that travel inside results carry it as a SettingsText.
"""

from __future__ import annotations

from typing import Callable

from pydantic import BaseModel, ConfigDict


def spell_settings(template: str, settings: tuple[str, ...], spell: Callable[[str], str]) -> str:
    text = template
    for name in settings:  # str.replace, not format: a model's name may hold braces of its own
        text = text.replace("{" + name + "}", spell(name))
    return text


class SettingsText(BaseModel):
    """A sentence naming settings `{like_this}`; `settings` lists the names its template uses."""

    model_config = ConfigDict(frozen=True)

    template: str
    settings: tuple[str, ...] = ()

    def spelled(self, spell: Callable[[str], str]) -> str:
        return spell_settings(self.template, self.settings, spell)

    def __str__(self) -> str:
        return self.spelled(lambda name: name)

    def __add__(self, other: "SettingsText | str") -> "SettingsText":
        """Joined to more text (plain text is taken literally): a prefix or suffix keeps the settings."""
        if isinstance(other, SettingsText):
            return SettingsText(template=self.template + other.template,
                                settings=tuple(dict.fromkeys(self.settings + other.settings)))
        return SettingsText(template=self.template + other, settings=self.settings)

    def __radd__(self, other: str) -> "SettingsText":
        return SettingsText(template=other + self.template, settings=self.settings)


def settings_text(template: str, *settings: str) -> SettingsText:
    """`settings_text("use {precision} bf16", "precision")`."""
    return SettingsText(template=template, settings=settings)


def as_settings_text(text: "str | SettingsText") -> SettingsText:
    """Plain text as a template naming no setting (its braces, if any, stay literal)."""
    return text if isinstance(text, SettingsText) else SettingsText(template=text)
