"""The `$ shardwise …` examples in README.md and docs/*.md show what the command prints today: each one is run
in-process and its output compared with the page line by line (whitespace-normalised). A refit that moves a
figure fails here until the page is re-run, instead of leaving the README's first example stale."""

import pytest

from support.cli_runner import run
from support.shown_commands import ROOT, normalised, prepare_scratch, shown_commands

COMMANDS = shown_commands()


def test_the_readme_first_example_is_among_the_checked_commands():
    readme = (ROOT / "README.md").read_text().splitlines()
    heading = readme.index("## First example") + 1  # 1-based line of the section's heading
    first = min((c for c in COMMANDS if c.page == "README.md" and c.line > heading), key=lambda c: c.line)
    assert first.argv[0] == "recommend" and first.line - heading <= 3, first.id  # the section opens with it
    assert len(COMMANDS) >= 4, [c.id for c in COMMANDS]  # README's two, calibrate's, post-training's, search's


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
