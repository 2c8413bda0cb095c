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
