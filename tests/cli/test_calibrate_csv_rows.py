"""`calibrate`: a --measured-csv row whose values do not line up with the header is refused (exit 2, one
line), not read shifted. Before, an unquoted "7,000" was read as 7 tokens/s/GPU (the "000" dropped as an
extra value) and fitted: compute scale clipped to its bound, a profile saying the cluster runs at half speed.
And a --profile given to calibrate is refused, not ignored."""

import pytest

from support.cli_runner import run

HEADER = "model,gpu,gpus,tp,measured_tokens_per_s_per_gpu"  # 5 columns


@pytest.mark.parametrize("row, needle", [
    ("llama-3.1-8b,h100,16,2,7,000", "line 2 has 6 values but the header has 5 columns (a number written with a "
                                     "thousands comma?"),
    ("llama-3.1-8b,h100,16,2", "line 2 has 4 values but the header has 5 columns (give every column a value"),
])
def test_a_row_not_lined_up_with_the_header_is_refused(capsys, tmp_path, row, needle):
    path = tmp_path / "runs.csv"
    path.write_text(f"{HEADER}\n{row}\n")
    code, out, err = run(capsys, "calibrate", "--measured-csv", path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_a_quoted_thousands_comma_is_the_number(capsys, tmp_path):
    # "7,000" quoted is one CSV value; calibrate's number parser drops the comma: the same run as 7000.
    fits = []
    for value in ('"7,000"', "7000"):
        path = tmp_path / "runs.csv"
        path.write_text(f"{HEADER}\nllama-3.1-8b,h100,16,2,{value}\n")
        code, out, err = run(capsys, "calibrate", "--measured-csv", path, "--json")
        assert code == 0, err
        fits.append(out)
    assert fits[0] == fits[1]


def test_a_profile_given_to_calibrate_is_refused_not_ignored(capsys, tmp_path):
    # calibrate inherited --profile from the shared scenario flags and never read it (a malformed file passed):
    # the fit starts from the shipped calibration whatever is given, so the flag is refused, on a row too.
    bad = tmp_path / "p.json"
    bad.write_text("{not json")
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16",
                         "--measured-tokens-per-s-per-gpu", "7000", "--profile", bad)
    assert code == 2 and "does not take --profile" in err and len(err.strip().splitlines()) == 1
    path = tmp_path / "runs.csv"
    path.write_text(f"{HEADER},profile\nllama-3.1-8b,h100,16,2,7000,{bad}\n")
    code, out, err = run(capsys, "calibrate", "--measured-csv", path)
    assert code == 2 and "line 2: calibrate fits a profile" in err
    code, out, err = run(capsys, "calibrate", "--help")
    assert "--profile" not in out.replace("for --profile", "")  # only the --save help names it
