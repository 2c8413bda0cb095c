"""`validate --profile` with flags it does not use: refused (exit 2, one line) instead of dropped. Before,
`validate --profile --json` printed the text report and `--source torchtitan` still reported every family."""

import pytest

from support.cli_runner import run


@pytest.mark.parametrize("flags, named", [(["--json"], "--json"), (["--source", "torchtitan"], "--source"),
                                          (["--no-memory", "--json"], "--json, --no-memory")])
def test_flags_the_profile_check_ignores_are_refused(capsys, flags, named):
    code, out, err = run(capsys, "validate", "--profile", *flags)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{named} would be ignored" in err


def test_a_profile_file_after_the_switch_says_where_files_go(capsys):
    # Every other command's --profile takes a file (P.json from calibrate --save); here it is a switch, and
    # `validate --profile mine.json` said only "unrecognized arguments: mine.json".
    code, out, err = run(capsys, "validate", "--profile", "mine.json")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "takes no file (mine.json)" in err and "--profile FILE to recommend, evaluate" in err
    code, out, err = run(capsys, "validate", "--summary", "stray")  # without --profile: argparse's own words
    assert code == 2 and "unrecognized arguments: stray" in err
