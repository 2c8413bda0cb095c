"""`calibrate --measured-csv`: a row whose values do not line up with the header is refused (exit 2, one
line), not read shifted. Before, an unquoted "7,000" was read as 7 tokens/s/GPU (the "000" dropped as an
extra value) and fitted: compute scale clipped to its bound, a profile saying the cluster runs at half speed."""

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
