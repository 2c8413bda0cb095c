"""What must never reach the user: the API key and the system prompt's own sentences.

The model is told never to reveal them; this is the belt to that brace. Text streams
through `LeakGuard`, which holds back as many characters as the longest protected string
so that an echo is replaced before any of it is shown (an occurrence that starts in the
released part of the buffer is already complete in the buffer, so it was already caught).
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8  # shorter "keys" (placeholders such as "none") are not secrets
MIN_SENTENCE_CHARS = 40  # shorter prompt sentences are common phrases, not the prompt


def prompt_sentences(prompt: str) -> list[str]:
    """The distinctive sentences of a prompt (markdown bullets and headings stripped)."""
    sentences = []
    for line in prompt.splitlines():
        line = re.sub(r"^\s*(?:[-*#>]+|\d+\.)\s*", "", line).strip()
        for sentence in re.split(r"(?<=[.!?:;])\s+", line):
            sentence = sentence.strip()
            if len(sentence) >= MIN_SENTENCE_CHARS:
                sentences.append(sentence)
    return sorted(set(sentences), key=len, reverse=True)


class LeakGuard:
    def __init__(self, secrets: list[str] = (), protected_prompt: str = ""):
        self.secrets = [s for s in secrets if s and len(s) >= MIN_SECRET_CHARS]
        self.sentences = prompt_sentences(protected_prompt) if protected_prompt else []
        self.hold = max((len(s) for s in [*self.secrets, *self.sentences]), default=0)
        self.buffer = ""
        self.redactions = 0

    def _clean(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                self.redactions += text.count(secret)
                text = text.replace(secret, REDACTED)
        for sentence in self.sentences:
            if sentence in text:
                self.redactions += text.count(sentence)
                text = text.replace(sentence, REDACTED)
        return text

    def feed(self, text: str) -> str:
        """Add streamed text; return what is safe to show now."""
        self.buffer = self._clean(self.buffer + text)
        if len(self.buffer) <= self.hold:
            return ""
        cut = len(self.buffer) - self.hold
        released, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return released

    def flush(self) -> str:
        released, self.buffer = self._clean(self.buffer), ""
        return released

    def clean(self, text: str) -> str:
        """A whole text at once (stored answers, done events)."""
        return self._clean(text)
