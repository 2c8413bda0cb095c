"""The `$ shardwise …` examples the README and docs/*.md show: each fenced block whose first line that is not a
`#` comment starts with `$ shardwise`, the command (continued over lines ending in a backslash) and the output
printed under it — so a test can run the command and check the page still shows what the product prints."""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import shardwise

ROOT = Path(shardwise.__file__).parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = "```"
PROMPT = "$ shardwise "


@dataclass(frozen=True)
class ShownCommand:
    page: str  # path relative to the repository root
    line: int  # 1-based line of the `$ shardwise` prompt
    argv: tuple[str, ...]  # what follows `shardwise`, split as a shell would
    output: tuple[str, ...]  # the lines shown under the command

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def shown_commands(pages: list[Path] = PAGES, root: Path = ROOT) -> list[ShownCommand]:
    return [command for page in pages for command in _commands_on(page, root)]


def _commands_on(page: Path, root: Path) -> list[ShownCommand]:
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        if not lines[i].startswith(FENCE):
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(FENCE)), len(lines))
        body = lines[i + 1:end]
        start = next((k for k, text in enumerate(body) if not text.startswith("#")), len(body))
        if start < len(body) and body[start].startswith(PROMPT):
            found.append(_command(str(page.relative_to(root)), i + 2 + start, body[start:]))
        i = end + 1
    return found


def _command(page: str, line: int, body: list[str]) -> ShownCommand:
    command, k = body[0][len(PROMPT):], 0
    while command.endswith("\\"):  # a shell continuation line
        k += 1
        command = command[:-1] + " " + body[k].strip()
    return ShownCommand(page, line, tuple(shlex.split(command)), tuple(body[k + 1:]))


def normalised(lines) -> list[str]:
    """Whitespace-normalised lines (runs of blanks are one space; trailing blank lines dropped): a page may
    re-indent an example, never change a word or a figure of it."""
    out = [re.sub(r"\s+", " ", text).strip() for text in lines]
    while out and not out[-1]:
        out.pop()
    return out


def prepare_scratch(directory: Path) -> None:
    """Make `directory` a place to run the examples as written: the relative paths they name (logs under
    tests/fixtures) resolve to copies, and what they save (`--save mine.json`) lands there, not in the repository."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "logs", directory / "tests" / "fixtures" / "logs")


def write_output(command: ShownCommand, printed: list[str]) -> None:
    """Write `printed` into the page in place of the output `command` shows (the prompt lines are kept)."""
    page = ROOT / command.page
    lines = page.read_text().splitlines(keepends=True)
    first = command.line - 1
    while lines[first].rstrip("\n").endswith("\\"):
        first += 1
    start = first + 1
    lines[start:start + len(command.output)] = [text + "\n" for text in printed]
    page.write_text("".join(lines))

