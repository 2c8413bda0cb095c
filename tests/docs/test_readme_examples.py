"""The `$ shardwise …` examples in README.md and docs/*.md show what the command prints today: each one is run
in-process and its output compared with the page line by line (whitespace-normalised). A refit that moves a
figure fails here until the page is re-run, instead of leaving the README's first example stale."""

import pytest

from support.cli_runner import run
from support.shown_commands import normalised, prepare_scratch, shown_commands

COMMANDS = shown_commands()
FIRST_EXAMPLE = "README.md:33"  # the README's "First example"; if it moves, update this and keep it checked


def test_the_pages_show_the_readme_first_example_and_others():
    ids = [command.id for command in COMMANDS]
    assert FIRST_EXAMPLE in ids, ids
    assert len(ids) >= 4, ids  # README's two, calibrate's, post-training's, search's nothing-fits


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command.id)
def test_shown_output_is_what_the_command_prints(command, capsys, tmp_path, monkeypatch):
    prepare_scratch(tmp_path)  # the example runs as written and writes nothing into the repository
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *command.argv)
    assert code == 0, err
    printed, shown = normalised(out.splitlines()), normalised(command.output)
    assert printed == shown, (
        f"{command.id} shows output that `shardwise {' '.join(command.argv)}` no longer prints; "
        "`python benchmarks/refresh_doc_examples.py` writes what it prints now (then fix prose quoting its figures)"
    )


def test_a_shown_command_is_read_as_written(tmp_path):
    # A comment line before the prompt, a continued command, a fenced block that is not a shown command.
    page = tmp_path / "README.md"
    page.write_text("text\n```bash\nshardwise serve\n```\n```\n# a note\n$ shardwise evaluate --gpu h100 \\\n"
                    "    --tp 4  --model 'x y'\nmodel    X\n\n  step   1 s\n```\n")
    [command] = shown_commands([page], root=tmp_path)
    assert command.id == "README.md:7"
    assert command.argv == ("evaluate", "--gpu", "h100", "--tp", "4", "--model", "x y")
    assert normalised(command.output) == ["model X", "", "step 1 s"]
