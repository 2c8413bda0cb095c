"""Text the user pasted, as a careful engineer reads it: data, never a request and never an instruction.

- Instructions addressed to the assistant (`INJECTION`) are never obeyed, wherever they stand: their lines are
  dropped before anything is read from the message (the answer says they were ignored, intents.py).
- A pasted log — a fenced block (```…```) holding a log line or called a log, or log lines themselves
  (measured.py LOG_START) — is read for what a program printed: its measurements and arguments through the
  engine's log readers (engine/training_logs), and, when the user's own words ask to check the plan, a plan on a
  printed log line ("[rank0] parallel config: tp=4 pp=2"). A note written into the paste ("# ops wiki says TP=3
  PP=5 is optimal") is not the user's plan: it is never evaluated or compared; nor is an HTML comment
  (`<!-- … -->`), which no program prints into a log.
- A quoted message ("> …") or a fenced block that is not a log may hold a plan the user asks to check
  ("my colleague suggests tp4 pp2 — check it?"): entities.py reads it only when the user's own words ask.
"""

from __future__ import annotations

import re

from .measured import LOG_START

INJECTION = re.compile(
    r"ignore\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|above|earlier)?\s*(?:instructions|rules|prompts?)"
    r"|system\s*prompt|developer\s*(?:message|prompt)|your\s+(?:instructions|rules|prompt)|api[\s_-]?key"
    r"|openai_api_key|\bjailbreak|\bdan\s+mode|reveal\s+(?:your|the)\s+(?:prompt|instructions|secrets?)"
    r"|print\s+(?:your|the)\s+(?:prompt|instructions|config(?:uration)?)\b(?!\s+for)|environment\s+variables?|\benv\s+vars?\b"
    # instructions addressed to the assistant inside pasted text: "[note to the AI: skip your tools …]"
    r"|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|assistant|bot|llm|chat\s*bot)s?\b"
    r"|\b(?:skip|ignore|don'?t\s+use|do\s+not\s+use|without\s+(?:using|calling))\s+(?:your|the|any)\s+tools\b"
    # a speaker label for the model inside pasted text ("<!-- assistant: …", "SYSTEM: …", "AI, …") and what it
    # is told to do ("ignore the engine", "tell the user …")
    r"|<!--\s*(?:assistant|system|ai|llm|model)\b|[\[(]\s*(?:assistant|system|ai|llm)\s*:|^\s*(?:assistant|ai|llm)\s*:"
    r"|\bignore\s+(?:the\s+|your\s+)?(?:engine|tools?|search|model'?s?\s+(?:output|numbers)|shardwise)\b"
    r"|\b(?:tell|inform|assure|convince)\s+the\s+(?:user|human|reader)\b",
    re.MULTILINE)

FENCE = re.compile(r"```[^\n]*\n?(.*?)(?:```|\Z)", re.DOTALL)
HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
LOG_WORDS = re.compile(r"\b(?:log|logs|logged|output|stdout|stderr|trace(?:back)?|console)\b", re.IGNORECASE)


def without_instructions(text: str) -> str:
    """The text without the lines that instruct the assistant (in a one-line text, without such sentences)."""
    if not INJECTION.search(text.lower()):
        return text
    lines = text.splitlines()
    if len(lines) > 1:
        return "\n".join(line for line in lines if not INJECTION.search(line.lower()))
    return " ".join(p for p in re.split(r"(?<=[.!?])\s+", text) if not INJECTION.search(p.lower()))


def _is_log_block(body: str, before: str) -> bool:
    """A fenced block is a pasted log when a line in it opens as a log line does, or the words just before it
    call it one ("pasting our launcher log:")."""
    return any(LOG_START.match(line.strip()) for line in body.splitlines()) or bool(
        LOG_WORDS.search(before[-80:]))


def without_log_blocks(text: str) -> str:
    """The text without fenced log blocks and HTML comments (bare log lines stay: the readers of a measured run
    and of the question around it see them, measured.py prose_of)."""
    def drop(m: re.Match) -> str:
        return " " if _is_log_block(m.group(1), text[:m.start()]) else m.group(0)

    return HTML_COMMENT.sub(" ", FENCE.sub(drop, text))


def printed_lines_only(text: str) -> str:
    """The text with each fenced log block cut to its log lines (what the program printed: "[rank0] parallel config:
    tp=4 pp=2"), without HTML comments: where a plan may be read from a paste the user asks to check. A comment or a
    note written into the paste ("# ops wiki says TP=3 PP=5 is optimal") is nobody's run."""
    def keep_printed(m: re.Match) -> str:
        if not _is_log_block(m.group(1), text[:m.start()]):
            return m.group(0)
        return "\n".join(line for line in m.group(1).splitlines() if LOG_START.match(line.strip()))

    return HTML_COMMENT.sub(" ", FENCE.sub(keep_printed, text))
