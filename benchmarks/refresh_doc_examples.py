"""Re-run every `$ shardwise …` example shown in README.md and docs/*.md and write what it prints now into the
page (the examples tests/docs/test_readme_examples.py checks). Prose that quotes an example's figures is not
touched: read the paragraph around each example it reports as changed.

    PYTHONPATH=<dir with shardwise -> worktree> python benchmarks/refresh_doc_examples.py [PAGE:LINE ...]
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

import shardwise
from shardwise.cli.main import main

sys.path.insert(0, str(Path(shardwise.__file__).parent / "tests"))
from support.shown_commands import normalised, prepare_scratch, shown_commands, write_output  # noqa: E402


def printed_by(argv: tuple[str, ...]) -> tuple[int, list[str]]:
    with tempfile.TemporaryDirectory() as scratch:
        prepare_scratch(Path(scratch))
        here, out = os.getcwd(), io.StringIO()
        os.chdir(scratch)
        try:
            with contextlib.redirect_stdout(out):
                code = main(list(argv))
        finally:
            os.chdir(here)
    return code, out.getvalue().splitlines()


def refresh(only: set[str]) -> None:
    for command in reversed(shown_commands()):  # bottom of each page first: earlier line numbers stay valid
        if only and command.id not in only:
            continue
        code, printed = printed_by(command.argv)
        if code != 0:
            print(f"{command.id}: exit {code}, left as it is")
            continue
        changed = normalised(printed) != normalised(command.output)
        if changed:
            write_output(command, printed)
        print(f"{command.id}: {'rewritten' if changed else 'unchanged'}")


if __name__ == "__main__":
    refresh(set(sys.argv[1:]))
