"""`--profile FILE` on bad files: exit 2 and one line naming the flag and what was wrong, never a
traceback (issue 14 acceptance: "bad profiles/logs get one-line errors, exit 2")."""

import json

import pytest

from shardwise.cli.main import main as cli

RUN = ["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "16", "--tp", "2"]
GOOD = {"gpu": "h100-sxm", "precision": "bf16", "framework": "megatron", "compute_scale": 0.9}


@pytest.mark.parametrize("content,said", [
    ("{bad", "is not JSON"),
    ("[1]", "is not a valid calibration profile: profile:"),
    (json.dumps({**GOOD, "gpu": "zzz"}), "gpu: unknown gpu 'zzz'"),
    (json.dumps({**GOOD, "precision": "fp3"}), "precision: Input should be 'bf16' or 'fp8'"),
    (json.dumps({**GOOD, "compute_scale": float("nan")}), "compute_scale: Input should be a finite number"),
    # bounds from engine/assumptions/calibration_bounds.py (COMPUTE_SCALE_BOUNDS = 0.5-1.25)
    (json.dumps({**GOOD, "compute_scale": 9}), "compute_scale: compute_scale 9 is outside the allowed 0.5-1.25"),
])
def test_bad_profile_file_is_one_line_exit_2(tmp_path, capsys, content, said):
    path = tmp_path / "p.json"
    path.write_text(content)
    capsys.readouterr()
    assert cli([*RUN, "--profile", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert f"--profile {str(path)!r}" in err and said in err


def test_a_profile_saved_with_a_utf8_bom_reads_as_the_same_profile(tmp_path, capsys):
    # RFC 8259 §8.1: parsers MAY ignore a BOM; Windows editors write "UTF-8 with BOM". It was "is not JSON".
    plain, bom = tmp_path / "plain.json", tmp_path / "bom.json"
    plain.write_text(json.dumps(GOOD))
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    outs = []
    for path in (plain, bom):
        capsys.readouterr()
        assert cli([*RUN, "--profile", str(path), "--json"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and json.loads(outs[0])["calibration"].startswith("calibrated: compute ×0.900")


def test_a_directory_is_said_as_one(tmp_path, capsys):
    """`--profile somedir` read "is not JSON (IsADirectoryError: [Errno 21] …)"; it says the path cannot be read."""
    capsys.readouterr()
    assert cli([*RUN, "--profile", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"shardwise: error: --profile {str(tmp_path)!r} cannot be read (Is a directory): give the JSON "
                   "file itself")
